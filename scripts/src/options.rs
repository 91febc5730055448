//! `./run.sh` options: parsed by hand (a dozen flags do not need a parser crate), refused with
//! the list of valid values when unknown.

use std::path::PathBuf;

pub const USAGE: &str = "\
usage: ./run.sh [options]

Builds the baseline (a git worktree) and the current tree, runs every implementation on every
selected lane, each worker in its own fresh process in balanced order (A B ... then ... B A),
merges and gates the samples, and writes everything to the output folder.

  --data LANES               lanes to run, comma-separated, or `all` (default: all)
  --serializer IMPLS         implementations, comma-separated, or `all` (default: all)
  --baseline REF             git commit to compare against (default: HEAD; a clean checkout
                             then runs an A/A comparison, uncommitted work is measured
                             against the last commit)
  --baseline-worktree DIR    where the baseline worktree lives (default: baseline/tree)
  --no-baseline              compare formats only: no baseline, no gate
  --measure WHAT             time, instructions or both (default: time). `instructions` runs a
                             fixed loop under valgrind's callgrind: exact, repeatable counts that
                             hold a 1% line on a noisy machine, blind to cache, allocator and
                             latency effects; `time` sees those, within the noise it reports
  --instruction-cycles N     passes over a lane's payloads in the counted loop (default: 3)
  --duration MS              timed phase of each worker, ms (default: 300)
  --warmup MS                warm-up of each worker, ms (default: 60)
  --rounds N                 rounds; each runs every worker twice, forward then reversed,
                             giving 2 pairs per comparison (default: 3; 1 under
                             --measure instructions, whose counts do not vary)
  --confirm-rounds N         rounds re-run for comparisons the first pass finds slower
                             (default: 8; 0 disables confirmation)
  --allocation-iterations N  operations in each worker's allocation pass (default: 200)
  --threshold PERCENT        latency regression that fails the gate (default: 1)
  --allow-format-change      accept encodings that differ between baseline and current
  --output DIR               where samples, results.json and summary.md go (default: build)
  --report DIR               where a passing run's report is drawn (default: report)
  --ci                       plain progress lines, a markdown summary for a pull request
  --validate-only            validate the corpus with every implementation and stop
  -h, --help                 this text

Exit status: 0 pass, 1 regression or violation, 2 usage or environment error.
";

#[derive(Debug, Clone)]
pub struct Options {
    pub lanes: Option<Vec<String>>,
    pub implementations: Option<Vec<String>>,
    pub baseline: String,
    pub baseline_worktree: PathBuf,
    pub no_baseline: bool,
    pub measure: String,
    pub instruction_cycles: u64,
    pub duration_ms: u64,
    pub warmup_ms: u64,
    pub rounds: u32,
    pub confirm_rounds: u32,
    pub allocation_iterations: u64,
    pub threshold: f64,
    pub allow_format_change: bool,
    pub output: PathBuf,
    pub report: PathBuf,
    pub ci: bool,
    pub validate_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lanes: None,
            implementations: None,
            baseline: "HEAD".into(),
            baseline_worktree: PathBuf::from("baseline/tree"),
            no_baseline: false,
            measure: "time".into(),
            instruction_cycles: 3,
            duration_ms: 300,
            warmup_ms: 60,
            rounds: 3,
            confirm_rounds: 8,
            allocation_iterations: 200,
            threshold: 1.0,
            allow_format_change: false,
            output: PathBuf::from("build"),
            report: PathBuf::from("report"),
            ci: false,
            validate_only: false,
        }
    }
}

/// `Ok(None)` after `--help`.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut o = Options::default();
    let mut rounds_given = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|_| format!("{arg} takes a whole number, not `{v}`"));
        let list = |v: String| -> Option<Vec<String>> {
            if v == "all" { None } else { Some(v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()) }
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--data" => o.lanes = list(value()?),
            "--serializer" => o.implementations = list(value()?),
            "--baseline" => o.baseline = value()?,
            "--baseline-worktree" => o.baseline_worktree = PathBuf::from(value()?),
            "--no-baseline" => o.no_baseline = true,
            "--duration" => o.duration_ms = number(value()?)?,
            "--warmup" => o.warmup_ms = number(value()?)?,
            "--rounds" => {
                o.rounds = number(value()?)?.max(1) as u32;
                rounds_given = true;
            }
            "--measure" => {
                let v = value()?;
                if !["time", "instructions", "both"].contains(&v.as_str()) {
                    return Err(format!("unknown --measure `{v}`; valid: time, instructions, both"));
                }
                o.measure = v;
            }
            "--instruction-cycles" => o.instruction_cycles = number(value()?)?.max(1),
            "--confirm-rounds" => o.confirm_rounds = number(value()?)? as u32,
            "--allocation-iterations" => o.allocation_iterations = number(value()?)?.max(1),
            "--threshold" => {
                let v = value()?;
                o.threshold = v.trim_end_matches('%').parse().map_err(|_| format!("--threshold takes a percentage, not `{v}`"))?;
            }
            "--allow-format-change" => o.allow_format_change = true,
            "--output" => o.output = PathBuf::from(value()?),
            "--report" => o.report = PathBuf::from(value()?),
            "--ci" => o.ci = true,
            "--validate-only" => o.validate_only = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if o.measure == "instructions" && !rounds_given {
        o.rounds = 1;
    }
    Ok(Some(o))
}

/// Checks a requested list against the valid names; `None` means all of them.
pub fn select(requested: &Option<Vec<String>>, valid: &[String], what: &str, flag: &str) -> Result<Vec<String>, String> {
    match requested {
        None => Ok(valid.to_vec()),
        Some(names) => {
            for name in names {
                if !valid.contains(name) {
                    return Err(format!("unknown {what} `{name}` in {flag}; valid: all, {}", valid.join(", ")));
                }
            }
            if names.is_empty() {
                return Err(format!("{flag} names no {what}"));
            }
            Ok(names.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn defaults_and_flags() {
        let o = parse(args("--data messages,status --rounds 2 --threshold 2% --ci")).unwrap().unwrap();
        assert_eq!(o.lanes, Some(vec!["messages".to_string(), "status".to_string()]));
        assert_eq!(o.rounds, 2);
        assert_eq!(o.threshold, 2.0);
        assert!(o.ci && !o.no_baseline);
        assert!(parse(args("--help")).unwrap().is_none());
        assert!(parse(args("--bogus")).unwrap_err().contains("--bogus"));
        assert!(parse(args("--rounds x")).unwrap_err().contains("whole number"));
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let valid = vec!["json".to_string(), "tl".to_string()];
        let err = select(&Some(vec!["jsn".into()]), &valid, "implementation", "--serializer").unwrap_err();
        assert_eq!(err, "unknown implementation `jsn` in --serializer; valid: all, json, tl");
        assert_eq!(select(&None, &valid, "x", "--y").unwrap(), valid);
    }
}
