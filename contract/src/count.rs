//! A count: every countable implementation of one lane, in one tree, counted by one `counter`
//! process — instructions per operation under callgrind and allocations — so the gate can tell
//! which comparisons a change touched before any time is spent on them.
//!
//! The counter prints one [`crate::WorkerResult`] per implementation (marked `counted`), with
//! every operation's instruction count and its instruction profile's fingerprint.

use std::path::PathBuf;

use clap::Args;

use crate::enums::Role;
use crate::job::Settings;

/// One `counter` process: a lane in one tree.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct CountJob {
    /// One lane (see `worker --list`)
    #[arg(long, value_name = "LANE")]
    pub lane: String,
    /// The implementations to count, comma-separated, in this order. Both trees of a run are
    /// given the same list (one a tree lacks is skipped), so the counted processes start alike
    #[arg(long, value_name = "IMPLS", value_delimiter = ',', required = true)]
    pub implementations: Vec<String>,
    /// Which tree the counter was built from, echoed in the results
    #[arg(long, value_enum, default_value_t = Role::Current)]
    pub role: Role,
    /// Ties the results to one run, echoed
    #[arg(long, default_value = "manual")]
    pub nonce: String,
    /// Count index, echoed: a run counts each lane twice per tree to show the counts repeat
    #[arg(long, default_value_t = 0)]
    pub sample: u32,
    /// Corpus folder
    #[arg(long = "corpus", value_name = "DIR", default_value = "corpus")]
    pub corpus_dir: PathBuf,
    /// The source tree this counter was built from, for its commit and dirty flag
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub tree: PathBuf,
    /// Keep each kernel's callgrind output in DIR, as `IMPLEMENTATION-OPERATION.callgrind`
    /// (per-function counts: where the instructions go)
    #[arg(long, value_name = "DIR")]
    pub keep_callgrind: Option<PathBuf>,
    #[command(flatten)]
    pub settings: Settings,
}

impl CountJob {
    /// The counter's command line for this job (without the program).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--lane".into(),
            self.lane.clone(),
            "--implementations".into(),
            self.implementations.join(","),
            "--role".into(),
            self.role.to_string(),
            "--nonce".into(),
            self.nonce.clone(),
            "--sample".into(),
            self.sample.to_string(),
            "--corpus".into(),
            self.corpus_dir.display().to_string(),
            "--tree".into(),
            self.tree.display().to_string(),
        ];
        if let Some(dir) = &self.keep_callgrind {
            args.extend(["--keep-callgrind".into(), dir.display().to_string()]);
        }
        args.extend(self.settings.to_args());
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_count_job_survives_its_own_command_line() {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            job: CountJob,
        }
        let job = CountJob {
            lane: "messages".into(),
            implementations: vec!["json".into(), "tl".into()],
            role: Role::Baseline,
            nonce: "abc".into(),
            sample: 1,
            corpus_dir: "/x/corpus".into(),
            tree: ".".into(),
            keep_callgrind: Some("/x/keep".into()),
            settings: Settings::default(),
        };
        let parsed = Cli::try_parse_from(std::iter::once("counter".to_string()).chain(job.to_args())).unwrap();
        assert_eq!(parsed.job, job);
    }
}
