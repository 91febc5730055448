//! tdbench's scripts: the runner behind `./run.sh`, the gate that judges a run, and the report.
//! They know the worker only through `tdbench-contract`: its command line, its catalog and the
//! JSON it writes.
//!
//! Data flows one way: [`cli`] → [`runner`] (builds, plans, starts workers) → [`gate`] (reads the
//! plan and the samples, judges) → [`results`] → [`files`], [`summary`] and [`report`].

pub mod cli;
pub mod files;
pub mod gate;
pub mod git;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod summary;
