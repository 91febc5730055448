//! tdbench's scripts: the runner behind `./run.sh`, the merger that gates a run, and (to come)
//! the report. They know the worker only by its command line and the JSON it writes.

pub mod git;
pub mod merge;
pub mod options;
pub mod plan;
pub mod report;
pub mod runner;
pub mod stats;
pub mod summary;
