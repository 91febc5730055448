//! tdbench's scripts: the runner behind `./run.sh`, the gate that judges a run, and the report.
//! They know the worker only through `tdbench-contract`: its command line, its catalog and the
//! JSON it writes.
//!
//! Data flows one way: [`cli`] → [`runner`] (builds, plans, counts, starts workers) → [`gate`]
//! (reads the plan, the counts, the samples and the profiles, judges) → [`results`] →
//! [`files`] (the published copy: [`published`]), [`summary`] and [`report`]. [`profile`] reads
//! callgrind's output into the report's "Where the time goes". `./run.sh --in-app` is merged by
//! [`gate::in_app`] and drawn by [`report::in_app`]. [`plant`] writes calibration's real changes
//! into a scratch tree. [`median`] is the one statistics toolbox's medians.

pub mod cli;
pub mod files;
pub mod gate;
pub mod git;
pub mod median;
pub mod plan;
pub mod plant;
pub mod profile;
pub mod published;
pub mod report;
pub mod results;
pub mod runner;
pub mod summary;
