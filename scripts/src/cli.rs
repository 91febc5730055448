//! `./run.sh`'s options, parsed by clap: every value checked for its range before anything is
//! built, the worker's settings flattened in from the contract (declared once).

use std::path::PathBuf;

use clap::Parser;
use tdbench_contract::{Measure, Settings};

use crate::plan::Build;

const ABOUT: &str = "\
Builds the baseline (a git worktree) and the current tree with one codegen unit, counts every
comparison's instructions and allocations in both trees first, then times the comparisons whose
counts changed (and the rest with a light backstop), each worker in its own fresh process in
balanced order (A B ... then ... B A), merges and gates the samples, and writes everything to
the output folder. A comparison whose counts are equal in both trees ran the same machine code:
it is unchanged.";

const AFTER: &str = "\
Publishing: a run writes its report into OUTPUT/report. Only the full default run (every lane,
every implementation, default settings) of a tree with no uncommitted changes, or a run given
--publish, also writes the published report/ (README.md, throughput.png, size.png, the published
results.json; the full default run also its in-app.md and in-app.json), and only when the gate
passed.

Exit status: 0 pass, 1 regression or violation (or a crashed worker), 2 usage or environment
error (a bad value, a tree that does not build, a missing tool, a checkout or output folder another
run is using, an --output or --report that is the checkout or not a run's folder), 3 under
--ci: passed, but a comparison whose counts changed could not be gated at the threshold.";

#[derive(Debug, Clone, Parser)]
#[command(name = "./run.sh", about = ABOUT, after_help = AFTER, args_override_self = true)]
pub struct Options {
    /// Lanes to run, comma-separated, or `all`
    #[arg(long = "data", value_name = "LANES", value_delimiter = ',', default_value = "all")]
    pub lanes: Vec<String>,
    /// Implementations, comma-separated, or `all`
    #[arg(long = "serializer", value_name = "IMPLS", value_delimiter = ',', default_value = "all")]
    pub implementations: Vec<String>,
    /// Git commit to compare against (a clean checkout then runs an A/A comparison;
    /// uncommitted work is measured against the last commit)
    #[arg(long, value_name = "REF", default_value = "HEAD")]
    pub baseline: String,
    /// Where the baseline worktree lives
    #[arg(long, value_name = "DIR", default_value = "baseline/tree")]
    pub baseline_worktree: PathBuf,
    /// How the baseline tree's measured binaries are built: the measurement build both trees
    /// get by default (one codegen unit: each function's code depends on its own source), or
    /// the tree's own release profile — with `--baseline HEAD`, a run that measures what the
    /// measurement build does to every figure (a diagnostic: its differences are the build's)
    #[arg(long, value_enum, value_name = "BUILD", default_value = "measurement")]
    pub baseline_build: Build,
    /// Compare formats only: no baseline, no gate
    #[arg(long)]
    pub no_baseline: bool,
    /// both: count every comparison in both trees first (instructions under valgrind, and
    /// allocations), then time the ones whose counts changed with the run's budget and the rest
    /// with a light backstop; time: time every comparison in full (no valgrind needed);
    /// instructions: count only, failing on more than --threshold more instructions
    #[arg(long, value_enum, default_value_t = Measure::Both)]
    pub measure: Measure,
    #[command(flatten)]
    pub settings: Settings,
    /// Rounds of the first look at a comparison whose counts changed (and at every one under
    /// --measure time, and at TDLib round trips); each runs its workers twice, forward then
    /// reversed, giving 2 pairs [default: 8]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: Option<u32>,
    /// Rounds of the timed backstop of a (lane, implementation) whose counts are all unchanged
    #[arg(long, value_name = "N", default_value_t = BACKSTOP_ROUNDS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub backstop_rounds: u32,
    /// The slowdown, in percent, the backstop holds unchanged comparisons (and TDLib round
    /// trips, which counts cannot judge) to: what counts cannot see still fails beyond it
    #[arg(long, value_name = "PERCENT", default_value = BACKSTOP_THRESHOLD, value_parser = percent)]
    pub backstop_threshold: f64,
    /// Looks the screen may take at a comparison timed in full, the first included: one neither
    /// slower nor gated after a look gets --look-rounds more rounds, while its last look could
    /// still gate it (1: no further looks)
    #[arg(long, value_name = "N", default_value_t = LOOKS, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub looks: u32,
    /// Rounds each further look adds
    #[arg(long, value_name = "N", default_value_t = LOOK_ROUNDS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub look_rounds: u32,
    /// Seconds the further looks may take in all; when spent, what is undecided stays so
    #[arg(long, value_name = "S", default_value_t = LOOK_SECONDS, value_parser = clap::value_parser!(u32).range(0..=86400))]
    pub look_seconds: u32,
    /// Rounds re-run for comparisons the screen finds above half their threshold without a
    /// verdict, at least; a screen that took further looks gets as many rounds as it had. At
    /// least 1: a flagged comparison left unconfirmed could not be judged
    #[arg(long, value_name = "N", default_value_t = CONFIRM_ROUNDS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub confirm_rounds: u32,
    /// The line the gate holds, in percent (above 0, at most 100): a changed comparison fails
    /// when its one-sided lower confidence bound is above half of it, and is gated when it would
    /// catch a slowdown of that size with 80% power (and of 1.5 times it with 95%) or its
    /// one-sided upper bound is below it; under
    /// --measure instructions, more instructions than that fail
    #[arg(long, value_name = "PERCENT", default_value = "1", value_parser = percent)]
    pub threshold: f64,
    /// How far, in percent (one standard deviation), a latency comparison can move from run to
    /// run with identical code although its own pairs agree: a latency regression's confidence
    /// bound must clear that shift's tail too. `--calibrate` measures it on this machine; the
    /// default is what calibration measured on the machine kind the report names (0 trusts
    /// the pairs alone)
    #[arg(long, value_name = "PERCENT", default_value = RUN_SPREAD, value_parser = spread)]
    pub run_spread: f64,
    /// Accept encodings that differ between baseline and current
    #[arg(long)]
    pub allow_format_change: bool,
    /// Fail, not only warn, when a latency comparison could not have caught a slowdown of the
    /// threshold (80% power) and its pairs do not bound it below the threshold
    #[arg(long)]
    pub strict: bool,
    /// Leave the TDLib round trips out (by default a run that measures their lanes fetches
    /// libtdjson when it is absent, with scripts/install-tdjson.sh)
    #[arg(long)]
    pub no_tdlib: bool,
    /// Time each tree's latency samples in processes of their own, as before in-process pairs
    /// (default: both trees' kernels in one process per sample, batches alternating, when both
    /// trees build the kernel library; TDLib round trips always have processes of their own)
    #[arg(long)]
    pub process_pairs: bool,
    /// Calibrate the gate on this machine: N rounds, each of identical code and of three real
    /// changes — a slowdown of 1%, 1.5% and 3% of --calibrate-on's decode's own time, planted
    /// in its source and committed in a scratch worktree (baseline/calibration-PERCENT) — run as
    /// a user's change is. Prints the false alarms on comparisons the change did not touch and
    /// the share of planted slowdowns caught, with 95% intervals. Needs a clean checkout and
    /// --baseline HEAD. With --publish, also writes report/calibration.md
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=200))]
    pub calibrate: Option<u32>,
    /// The codec whose decode calibration's real changes slow
    #[arg(long, value_name = "CODEC", default_value = "json-td")]
    pub calibrate_on: String,
    /// Where samples, results.json, summary.md and the run's report go
    #[arg(long, value_name = "DIR", default_value = "build")]
    pub output: PathBuf,
    /// Where the run's report is drawn [default: OUTPUT/report]
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Also write the published report/ from this run, when the gate passes (the full default
    /// run of a tree with no uncommitted changes does so without it)
    #[arg(long)]
    pub publish: bool,
    /// Plain progress lines and a markdown summary for a pull request; a comparison whose counts
    /// changed (by more than a quarter of the threshold) that the run could not gate at the
    /// threshold fails the run (exit 3)
    #[arg(long)]
    pub ci: bool,
    /// Accept a run whose only violations are regressions (latency, allocations, instructions),
    /// saying REASON: it exits 0. A violation of any other kind (a sample that cannot be
    /// trusted, a format change) or a crashed worker still fails. For a commit that means to
    /// be slower (`.ci/run` passes its `Perf-Regression-Accepted:` trailer)
    #[arg(long, value_name = "REASON")]
    pub accept_regressions: Option<String>,
    /// Instead of comparing trees: the in-app measurement of the current tree — each codec
    /// (--serializer) decodes the start-up stream in a fresh process, corpus-style and into an
    /// app store beside a 60 Hz ticker; --rounds rounds of forward then reversed order
    /// [default: 1]. Writes OUTPUT/in-app/in-app.md and in-app.json; with --publish, also
    /// report/in-app.md, shown in report/README.md. The full default run measures it too
    /// (every codec under all three allocators, one round) for the report it publishes
    #[arg(long, conflicts_with_all = ["calibrate", "validate_only", "no_baseline"])]
    pub in_app: bool,
    /// With --in-app: the host allocators, comma-separated, each a separate build of the in-app
    /// binary (system, mimalloc, jemalloc); the report sets their figures side by side and flags
    /// where the ranking of formats changes between them
    #[arg(long, value_name = "ALLOCATORS", value_delimiter = ',', default_value = "system", requires = "in_app", value_parser = ["system", "mimalloc", "jemalloc"])]
    pub allocator: Vec<String>,
    /// Instead of comparing trees: the schema-skew measurement of the current tree. Each format
    /// (protobuf twice: numbered by position, and by the committed number map) writes the lanes
    /// of --data with TDLib 1.8.66's models and reads them with 1.8.65's and with 1.8.60's, and
    /// back, in a fresh process per format; per format and direction, the outcome (read correctly, refused, or
    /// wrong values without an error, and which fields) and the skewed read's decode time and
    /// allocations against the same-release read of the same payloads. Writes
    /// OUTPUT/schema-skew/schema-skew.md and .json; with --publish, also report/schema-skew.md,
    /// shown in report/README.md
    #[arg(long, conflicts_with_all = ["calibrate", "validate_only", "no_baseline", "in_app"])]
    pub schema_skew: bool,
    /// Validate the corpus with every implementation and stop
    #[arg(long)]
    pub validate_only: bool,
}

/// The timing schedule's defaults (see docs/method.md, "Counts first, then time").
pub const ROUNDS: u32 = 8;
pub const LOOKS: u32 = 6;
pub const LOOK_ROUNDS: u32 = 8;
pub const LOOK_SECONDS: u32 = 240;
pub const CONFIRM_ROUNDS: u32 = 8;
pub const BACKSTOP_ROUNDS: u32 = 2;
pub const BACKSTOP_THRESHOLD: &str = "5";

/// `--run-spread`'s default: the run-level spread `--calibrate` measured on this project's
/// machine kind (docs/method.md, "A shift the pairs cannot see"): none. Calibration at 3200da1 found changes with
/// nothing planted spread 0.47% across runs where their own pairs accounted for 0.50%; and in
/// A/A in-process pairs here the spread of pairs across processes is what each process's own
/// batches predict (json-td's messages decode: 0.96% and 0.84%), so nothing is left over for a
/// shift shared by a run's pairs.
pub const RUN_SPREAD: &str = "0";

/// A run-level spread: a percentage from 0 to 10.
fn spread(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim_end_matches('%').parse().map_err(|_| format!("`{text}` is not a percentage"))?;
    if value.is_finite() && (0.0..=10.0).contains(&value) { Ok(value) } else { Err(format!("{value} is not from 0 to 10")) }
}

fn percent(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim_end_matches('%').parse().map_err(|_| format!("`{text}` is not a percentage"))?;
    if value.is_finite() && value > 0.0 && value <= 100.0 { Ok(value) } else { Err(format!("{value} is not above 0 and at most 100")) }
}

/// A comma list as asked: `None` for all, else the names once each, in the order given.
pub fn requested(names: &[String]) -> Option<Vec<String>> {
    if names.iter().any(|n| n == "all") {
        return None;
    }
    let mut unique: Vec<String> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !unique.iter().any(|u| u == name) {
            unique.push(name.to_string());
        }
    }
    Some(unique)
}

impl Options {
    pub fn rounds(&self) -> u32 {
        self.rounds.unwrap_or(ROUNDS)
    }

    /// Whether a passing run rewrites the published report/: asked to with `--publish`, or the
    /// full default run of a tree with no uncommitted changes. A published report names the
    /// commit it measured; a dirty tree's would name one whose code it did not measure, and a
    /// run made to check an edit before committing it must leave report/ alone.
    pub fn publishes(&self, current_tree_dirty: bool) -> bool {
        self.publish || (self.is_full_default_run() && !current_tree_dirty)
    }

    /// Every lane, every implementation, every setting at its default: the run whose report
    /// is the published one.
    pub fn is_full_default_run(&self) -> bool {
        let defaults = Options::try_parse_from(["./run.sh"]).expect("the defaults parse");
        requested(&self.lanes).is_none()
            && requested(&self.implementations).is_none()
            && !self.no_baseline
            && self.baseline_build == defaults.baseline_build
            && self.measure == defaults.measure
            && self.settings == defaults.settings
            && self.rounds.is_none()
            && self.backstop_rounds == defaults.backstop_rounds
            && self.backstop_threshold == defaults.backstop_threshold
            && self.confirm_rounds == defaults.confirm_rounds
            && (self.looks, self.look_rounds, self.look_seconds) == (defaults.looks, defaults.look_rounds, defaults.look_seconds)
            && self.threshold == defaults.threshold
            && self.run_spread == defaults.run_spread
            && !self.allow_format_change
            && !self.strict
            && self.accept_regressions.is_none()
            && !self.process_pairs
            && !self.no_tdlib
            && self.calibrate.is_none()
            && !self.in_app
            && !self.schema_skew
    }

    /// Whether latency pairs may share a process: timed, against a baseline.
    pub fn wants_in_process_pairs(&self) -> bool {
        self.measure.times() && !self.no_baseline && !self.process_pairs
    }
}

/// Checks a requested list against the valid names; `None` means all of them.
pub fn select(requested: Option<Vec<String>>, valid: &[String], what: &str, flag: &str) -> Result<Vec<String>, String> {
    match requested {
        None => Ok(valid.to_vec()),
        Some(names) => {
            if names.is_empty() {
                return Err(format!("{flag} names no {what}; valid: all, {}", valid.join(", ")));
            }
            if let Some(name) = names.iter().find(|n| !valid.contains(n)) {
                return Err(format!("unknown {what} `{name}` in {flag}; valid: all, {}", valid.join(", ")));
            }
            Ok(names)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Options, String> {
        Options::try_parse_from(std::iter::once("run").chain(line.split_whitespace())).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_flags() {
        let o = parse("--data messages,status,messages --rounds 2 --threshold 2% --ci --duration 20").unwrap();
        assert_eq!(requested(&o.lanes), Some(vec!["messages".to_string(), "status".to_string()]));
        assert_eq!((o.rounds(), o.threshold, o.settings.duration_ms), (2, 2.0, 20));
        assert!(o.ci && !o.no_baseline && !o.is_full_default_run());
        let defaults = parse("").unwrap();
        assert!(defaults.is_full_default_run());
        assert_eq!(
            (defaults.measure, defaults.rounds(), defaults.backstop_rounds, defaults.backstop_threshold),
            (Measure::Both, 8, 2, 5.0)
        );
        assert!(parse("--ci --baseline HEAD~1").unwrap().is_full_default_run());
        assert!(!parse("--measure time").unwrap().is_full_default_run());
        assert!(!parse("--backstop-threshold 10").unwrap().is_full_default_run());
        assert!(!parse("--baseline-build cargo-default").unwrap().is_full_default_run());
        // The last of a repeated flag wins, so a wrapper's defaults can be overridden.
        assert_eq!(parse("--confirm-rounds 1 --confirm-rounds 3").unwrap().confirm_rounds, 3);
    }

    #[test]
    fn a_full_default_run_publishes_only_a_tree_without_uncommitted_changes() {
        let (clean, dirty) = (false, true);
        assert!(parse("").unwrap().publishes(clean));
        assert!(parse("--ci --baseline HEAD~1").unwrap().publishes(clean));
        assert!(!parse("").unwrap().publishes(dirty));
        assert!(parse("--publish").unwrap().publishes(dirty));
        assert!(!parse("--data messages").unwrap().publishes(clean));
        assert!(parse("--data messages --publish").unwrap().publishes(clean));
    }

    #[test]
    fn bad_values_are_refused_by_the_parser() {
        for line in [
            "--rounds 0",
            "--rounds 99999999999",
            "--threshold -5",
            "--threshold nan",
            "--threshold 0",
            "--threshold inf",
            "--data --serializer x",
            "--duration 0",
            "--measure wall",
            "--bogus",
            "--confirm-rounds -1",
            "--confirm-rounds 0",
            "--backstop-rounds 0",
            "--backstop-threshold 0",
            "--allocation-iterations 0",
        ] {
            assert!(parse(line).is_err(), "`{line}` accepted");
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let valid = vec!["json".to_string(), "tl".to_string()];
        let err = select(Some(vec!["jsn".into()]), &valid, "implementation", "--serializer").unwrap_err();
        assert_eq!(err, "unknown implementation `jsn` in --serializer; valid: all, json, tl");
        assert_eq!(select(None, &valid, "x", "--y").unwrap(), valid);
        assert!(select(Some(vec![]), &valid, "lane", "--data").is_err());
    }
}
