//! The contract between tdbench's runner, its worker and its gate.
//!
//! The runner starts a worker with a [`Job`] (its command line is [`Job::to_args`], parsed back
//! by clap in the worker from the same type), the worker prints one [`WorkerResult`], and the
//! gate reads those files. What the runner needs to know about implementations and lanes it
//! asks the worker (`worker --list`, a [`Catalog`]), so the runner and the gate build without
//! the codecs: a tree whose codecs do not compile is reported as such, not as a runner that
//! does not build.
//!
//! Every word that crosses a process boundary is an enum here, serialized in kebab-case: the
//! JSON is the same as it was when these were strings, so results of earlier workers still
//! read.

pub mod callgrind;
mod catalog;
mod count;
mod enums;
mod in_app;
mod job;
pub mod library;
pub mod names;
mod result;
pub mod skew;

pub use catalog::{Catalog, ImplementationInfo, ImplementationKind, TdlibStatus};
pub use count::CountJob;
pub use enums::{Measure, Metric, Operation, Role, RunVerdict, Stage, Verdict};
pub use in_app::{DecodePass, IN_APP_SCHEMA_VERSION, InAppResult, Lateness, StoreSummary, StreamSummary};
pub use job::{Job, PairedJob, Settings, TreeState};
pub use result::{
    BatchStats, Compressed, CorpusSummary, InProcess, Machine, OperationResult, PairedResult, Proof, SCHEMA_VERSION, Tree, WorkerResult,
};
