//! The job a worker runs and the settings it measures with: declared once, parsed by clap in
//! the worker and the runner alike (the runner flattens [`Settings`] into its own options), and
//! written back into a command line by [`Job::to_args`].

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::enums::{Operation, Role};

/// Operations counted per allocation pass by default. Counts are exact, so one pass over a
/// lane's payloads says all there is: 48 is one whole pass over the largest lane (`mix`) and
/// several over the others (4 to 16 payloads), so every payload weighs the same. Before, 200
/// operations cost the slow implementations most of a paired process (json-value's messages
/// decode: 200 × 1.1 ms on each side and each kernel) and were no whole pass over `mix`.
pub const ALLOCATION_ITERATIONS: u64 = 48;

/// Target length of a timed batch by default, in µs. In-process pairs compare the two trees
/// quarter round by quarter round, and the noise here is mostly jitter a few hundred µs long
/// that hits one batch and not its neighbour: shorter batches give more quarters to take the
/// median of. A/A pairs on messages (AMD EPYC, 20 processes each): json-td encode spread 0.86%
/// with 1 ms batches against 2.29% with 5 ms, decode 0.69% against 1.38%, protobuf decode
/// 0.80% against 1.29%.
pub const BATCH_US: u64 = 1000;

/// The state of a tree (its commit, and whether tracked files had uncommitted changes) as the
/// runner read it once, when it made the plan, handed to every process it starts in an
/// environment variable per tree ([`TreeState::variable`]). A process records it and never
/// re-reads the checkout: an editor's swap file, or a commit made while a run goes on, would
/// otherwise fail every later sample as "metadata differs". Both trees' variables go to every
/// process, so both trees' processes start with the same environment, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeState {
    pub commit: String,
    pub dirty: bool,
}

impl TreeState {
    /// The variable that carries `role`'s tree.
    pub fn variable(role: Role) -> &'static str {
        match role {
            Role::Baseline => "TDBENCH_BASELINE_TREE",
            Role::Current => "TDBENCH_CURRENT_TREE",
        }
    }

    /// As the variable holds it: `COMMIT clean` or `COMMIT dirty`.
    pub fn to_value(&self) -> String {
        format!("{} {}", self.commit, if self.dirty { "dirty" } else { "clean" })
    }

    pub fn parse(value: &str) -> Option<TreeState> {
        let (commit, state) = value.split_once(' ')?;
        let dirty = match state {
            "dirty" => true,
            "clean" => false,
            _ => return None,
        };
        (!commit.is_empty()).then(|| TreeState { commit: commit.to_string(), dirty })
    }

    /// `role`'s tree as this process's environment gives it, if it does.
    pub fn from_environment(role: Role) -> Option<TreeState> {
        std::env::var(Self::variable(role)).ok().and_then(|v| Self::parse(&v))
    }
}

/// How a worker (and a counter) measures. Every process of a run gets the same settings, and
/// the gate refuses a sample whose settings are not the plan's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Args)]
pub struct Settings {
    /// Timed phase of each worker, in ms
    //
    // Why 100 and not longer: in A/A in-process pairs here, pairs spread across processes 2–5
    // times more than each process's own blocks predict (messages at 300 ms: bincode encode
    // 1.27% across, 0.25% within), so what limits a comparison is how many processes it has,
    // not how long each times. A third of the time per process costs a little precision each
    // and buys twice the processes for the same run time.
    #[arg(long = "duration-ms", visible_alias = "duration", value_name = "MS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub duration_ms: u64,
    /// Warm-up before the timed phase, in ms
    #[arg(long = "warmup-ms", visible_alias = "warmup", value_name = "MS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub warmup_ms: u64,
    /// Target length of one timed batch, in µs (whole passes over the lane's payloads, so a
    /// batch can be longer)
    #[arg(long = "batch-us", value_name = "US", default_value_t = BATCH_US,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub batch_us: u64,
    /// Operations in each worker's allocation pass, from the lane's first payload (the default,
    /// 48, is a whole number of passes over every lane's payloads)
    #[arg(long, value_name = "N", default_value_t = ALLOCATION_ITERATIONS, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub allocation_iterations: u64,
    /// Passes over the lane's payloads in the loop callgrind counts
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    #[serde(default = "one")]
    pub instruction_cycles: u64,
}

fn one() -> u64 {
    1
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            duration_ms: 100,
            warmup_ms: 30,
            batch_us: BATCH_US,
            allocation_iterations: ALLOCATION_ITERATIONS,
            instruction_cycles: 3,
        }
    }
}

impl Settings {
    /// The flags that give a worker these settings.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--duration-ms".into(),
            self.duration_ms.to_string(),
            "--warmup-ms".into(),
            self.warmup_ms.to_string(),
            "--batch-us".into(),
            self.batch_us.to_string(),
            "--allocation-iterations".into(),
            self.allocation_iterations.to_string(),
            "--instruction-cycles".into(),
            self.instruction_cycles.to_string(),
        ]
    }
}

/// One worker process: one implementation on one lane, from one tree.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct Job {
    /// A codec, floor or TDLib round trip (see --list)
    #[arg(long, value_name = "NAME")]
    pub implementation: String,
    /// One lane (see --list)
    #[arg(long, value_name = "LANE")]
    pub lane: String,
    /// Which tree the worker was built from, echoed in the result
    #[arg(long, value_enum, default_value_t = Role::Current)]
    pub role: Role,
    /// Ties the result to one run, echoed
    #[arg(long, default_value = "manual")]
    pub nonce: String,
    /// Sample index, echoed
    #[arg(long, default_value_t = 0)]
    pub sample: u32,
    /// Corpus folder
    #[arg(long = "corpus", value_name = "DIR", default_value = "corpus")]
    pub corpus_dir: PathBuf,
    /// The source tree this worker was built from, for its commit and dirty flag
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub tree: PathBuf,
    /// Measure only this operation (default: all of the implementation's)
    #[arg(long, value_enum)]
    pub operation: Option<Operation>,
    #[command(flatten)]
    pub settings: Settings,
}

impl Job {
    /// The worker's command line for this job (without the program).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--implementation".into(),
            self.implementation.clone(),
            "--lane".into(),
            self.lane.clone(),
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
        if let Some(operation) = self.operation {
            args.extend(["--operation".into(), operation.to_string()]);
        }
        args.extend(self.settings.to_args());
        args
    }
}

/// One harness process (`paired`): the job, timed in both trees at once. `job.role` names the
/// tree whose batch opens each A B B A B A A B block; `job.tree` is the current tree.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct PairedJob {
    #[command(flatten)]
    pub job: Job,
    /// The baseline tree's kernel library
    #[arg(long, value_name = "FILE")]
    pub baseline_library: PathBuf,
    /// The current tree's kernel library
    #[arg(long, value_name = "FILE")]
    pub current_library: PathBuf,
    /// The baseline's source tree, for its commit and dirty flag
    #[arg(long, value_name = "DIR")]
    pub baseline_tree: PathBuf,
}

impl PairedJob {
    /// The harness's command line for this job (without the program).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = self.job.to_args();
        for (flag, path) in [
            ("--baseline-library", &self.baseline_library),
            ("--current-library", &self.current_library),
            ("--baseline-tree", &self.baseline_tree),
        ] {
            args.extend([flag.to_string(), path.display().to_string()]);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        job: Job,
    }

    #[test]
    fn a_job_survives_its_own_command_line() {
        let job = Job {
            implementation: "tl".into(),
            lane: "status".into(),
            role: Role::Baseline,
            nonce: "abc".into(),
            sample: 7,
            corpus_dir: "/x/corpus".into(),
            tree: ".".into(),
            operation: Some(Operation::Decode),
            settings: Settings { duration_ms: 20, ..Settings::default() },
        };
        let parsed = Cli::try_parse_from(std::iter::once("worker".to_string()).chain(job.to_args())).unwrap();
        assert_eq!(parsed.job, job);
    }

    #[test]
    fn a_paired_job_survives_its_own_command_line() {
        #[derive(Parser)]
        struct Harness {
            #[command(flatten)]
            paired: PairedJob,
        }
        let paired = PairedJob {
            job: Job {
                implementation: "json-td".into(),
                lane: "messages".into(),
                role: Role::Current,
                nonce: "n".into(),
                sample: 3,
                corpus_dir: "/c".into(),
                tree: "/t/current".into(),
                operation: None,
                settings: Settings::default(),
            },
            baseline_library: "/w/003-b.so".into(),
            current_library: "/w/003-c.so".into(),
            baseline_tree: "/t/baseline".into(),
        };
        let parsed = Harness::try_parse_from(std::iter::once("paired".to_string()).chain(paired.to_args())).unwrap();
        assert_eq!(parsed.paired, paired);
    }

    #[test]
    fn values_out_of_range_are_refused() {
        let parse = |extra: &[&str]| Cli::try_parse_from(["worker", "--implementation", "tl", "--lane", "status"].iter().chain(extra));
        assert!(parse(&[]).is_ok());
        for bad in [["--duration-ms", "0"], ["--allocation-iterations", "0"], ["--batch-us", "0"], ["--role", "other"], ["--sample", "-1"]]
        {
            assert!(parse(&bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_tree_state_reads_back_as_written() {
        let state = TreeState { commit: "0123abcd".into(), dirty: true };
        assert_eq!(TreeState::parse(&state.to_value()), Some(state));
        assert_eq!(TreeState::parse("0123abcd clean").map(|s| s.dirty), Some(false));
        assert_eq!(TreeState::parse("0123abcd"), None);
        assert_eq!(TreeState::parse("0123abcd maybe"), None);
        assert_eq!(TreeState::parse(" clean"), None);
    }
}
