//! `./run.sh --calibrate N`: the gate's false alarms and power on this machine, measured on the
//! changes a user makes rather than modelled.
//!
//! N rounds, each of four runs in turn, so drift over the calibration falls on every case
//! alike: identical code (an A/A run: every comparison unchanged by its counts, timed by the
//! backstop alone), then a real change — a slowdown of 1%, 1.5% and 3% of one codec's decode's
//! own time, planted in its source ([`crate::plant`]) and committed in a scratch worktree of
//! its own (`baseline/calibration-PERCENT`, built once) — as a user's commit is run. A false
//! alarm is a regression on any comparison the change did not touch; a catch is the planted
//! decode judged a regression. The real changes also show whether the counts of every
//! untouched comparison stayed equal in both trees: what lets the gate spend no time on them.
//!
//! A plant adds a few dozen instructions (its clock reads) to a decode of tens of thousands, so
//! its count moves far less than its time: exactly what the gate's `bounded` rule decides by
//! counts when time cannot gate it. A plant that ends `bounded` is a real slowdown the rule
//! passed; the table counts those apart, which measures what the rule gives up.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tdbench_contract::{Metric, Operation, Role, Verdict};
use xshell::{Shell, cmd};

use super::Session;
use super::build::{self, Trees};
use super::failure::{Failure, environment};
// A median run, estimate or pair count is one that a run really had.
use crate::median::upper_median as median;
use crate::plan::{Build, Plan, TreeInfo};
use crate::results::{Class, Results};

/// Slowdowns planted as real changes, in percent of the decode's own time.
const PLANTED: [f64; 3] = [1.0, 1.5, 3.0];

/// A case of a round: identical code, or a planted change of that many percent.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Case {
    Identical,
    Planted(f64),
}

impl Case {
    fn label(self) -> String {
        match self {
            Case::Identical => "identical".into(),
            Case::Planted(p) => format!("planted-{p}"),
        }
    }
}

/// What one calibration run showed.
struct Outcome {
    case: Case,
    /// Latency regressions on comparisons the change did not touch.
    false_alarms: usize,
    /// Comparisons the change did not touch whose counts differed between the trees.
    untouched_changed: Vec<String>,
    /// Per lane, the planted decode.
    planted: Vec<PlantedDecode>,
    /// Every latency comparison of the backstop with nothing planted: its log change and that
    /// change's standard error from its own pairs.
    unplanted: Vec<(f64, f64)>,
    /// Violations other than latency regressions: the run measured something wrong.
    other: Vec<String>,
    /// How long the run took, in seconds.
    seconds: f64,
}

impl Outcome {
    fn of(results: &Results, case: Case, codec: &str, seconds: f64) -> Outcome {
        let is_planted = |implementation: &str, operation: Operation| {
            matches!(case, Case::Planted(_)) && implementation == codec && operation == Operation::Decode
        };
        let latency = results.comparisons.iter().filter(|c| c.metric == Metric::Latency);
        let (planted, others): (Vec<_>, Vec<_>) = latency.partition(|c| is_planted(&c.implementation, c.operation));
        Outcome {
            case,
            false_alarms: others.iter().filter(|c| c.verdict == Verdict::Regression).count(),
            untouched_changed: others.iter().filter(|c| c.class == Some(Class::Changed)).map(|c| c.key().to_string()).collect(),
            planted: planted
                .iter()
                .map(|c| PlantedDecode {
                    verdict: c.verdict,
                    change: c.change,
                    detectable: c.detectable,
                    pairs: c.pairs,
                    count_change: results
                        .comparisons
                        .iter()
                        .find(|i| i.metric == Metric::Instructions && i.key() == c.key())
                        .map(|i| i.change),
                })
                .collect(),
            unplanted: others
                .iter()
                .filter(|c| c.class == Some(Class::Unchanged))
                .filter_map(|c| Some(((1.0 + c.change).ln(), c.standard_error?)))
                .collect(),
            other: results
                .violations
                .iter()
                .filter(|v| v.kind != crate::results::ViolationKind::LatencyRegression)
                .map(|v| format!("{}: {}", v.kind, v.message))
                .collect(),
            seconds,
        }
    }
}

/// One lane's planted decode in one run.
struct PlantedDecode {
    verdict: Verdict,
    /// Time's estimate of the change.
    change: f64,
    detectable: Option<f64>,
    pairs: usize,
    /// How far the plant moved the decode's instruction count (absent if it was not counted).
    count_change: Option<f64>,
}

impl PlantedDecode {
    fn caught(&self) -> bool {
        self.verdict == Verdict::Regression
    }
}

/// What calibrating needs beyond the session of identical code.
pub struct Calibrating<'a> {
    pub root: &'a Path,
    pub rounds: u32,
    pub codec: &'a str,
    pub publish: Option<PathBuf>,
    pub ci: bool,
}

pub fn run(session: &Session, plan: Plan, output: &Path, how: Calibrating) -> Result<ExitCode, Failure> {
    // Identical code on both sides, or a "false alarm" could be a real change.
    let identical = plan.baseline.as_ref().is_some_and(|b| b.commit == plan.current.commit && !b.dirty) && !plan.current.dirty;
    if !identical {
        return Err(environment("calibration starts from identical code: run it on a clean checkout with --baseline HEAD"));
    }
    let codec = how.codec;
    if !plan.catalog.iter().any(|i| i.name == codec && i.operations.contains(&Operation::Decode)) {
        return Err(environment(format!("--calibrate-on `{codec}`: not a codec with a decode in this run")));
    }
    if !plan.settings.measure.counts() || !plan.settings.measure.times() {
        return Err(environment("calibration measures the default procedure: counts first, then time (--measure both)"));
    }
    // The planted trees, each built once: a scratch worktree at the baseline commit with the
    // plant committed on top.
    let mut planted: Vec<(f64, Trees)> = Vec::new();
    for percent in PLANTED {
        planted.push((percent, planted_trees(how.root, session.trees, codec, percent, how.ci)?));
    }
    let mut outcomes = Vec::new();
    let mut machine = None;
    let file = output.join("calibration.md");
    let mut text = String::new();
    for round in 1..=how.rounds {
        let cases = std::iter::once((Case::Identical, session.trees)).chain(planted.iter().map(|(p, t)| (Case::Planted(*p), t)));
        for (case, trees) in cases {
            eprintln!(
                "calibration round {round} of {}: {}",
                how.rounds,
                match case {
                    Case::Identical => "identical code".to_string(),
                    Case::Planted(p) => format!("a committed change: {p}% planted in {codec} decode"),
                }
            );
            let mut plan = plan.clone();
            plan.current = trees.current.info.clone();
            let run = output.join("calibration").join(format!("{}-{round}", case.label()));
            let (results, seconds) = match finished_earlier(&run, &plan) {
                Some(earlier) => {
                    eprintln!("calibration round {round}: {} kept from a stopped calibration", run.display());
                    earlier
                }
                None => {
                    let started = std::time::Instant::now();
                    let case_session = Session { trees, entries: session.entries, corpus: session.corpus.clone(), ci: session.ci };
                    let results = case_session.measure(plan, &run)?;
                    let seconds = started.elapsed().as_secs_f64();
                    let _ = std::fs::write(run.join(ELAPSED), format!("{seconds:.1}\n"));
                    (results, seconds)
                }
            };
            outcomes.push(Outcome::of(&results, case, codec, seconds));
            machine = machine.or(results.provenance.machine.map(|m| format!("{}, {} cores, {}", m.cpu, m.cores, m.os)));
        }
        // The table so far, after every round: a calibration takes hours, and one stopped
        // half-way keeps what its finished rounds measured, saying how many those were.
        let so_far =
            if round < how.rounds { format!(" (stopped after {round} of {} rounds: not finished)", how.rounds) } else { String::new() };
        text = table(&outcomes, codec, &plan, &measured(&plan, machine.as_deref(), round, &so_far));
        crate::files::write_atomically(&file, &text).map_err(environment)?;
    }
    // The last round's table is the whole calibration's.
    print!("{text}");
    println!("calibration: {}", file.display());
    if let Some(report) = how.publish {
        // The published README shows it too: drawn again from the published results.
        let results = crate::files::read_results(&report.join("results.json")).map_err(environment)?;
        crate::report::publish(&report, |staging| {
            crate::files::write_atomically(&staging.join("calibration.md"), &text)?;
            crate::report::write(&results, staging)
        })
        .map_err(environment)?;
        println!("published: {} (and its section in README.md)", report.join("calibration.md").display());
    }
    let broken: Vec<&String> = outcomes.iter().flat_map(|o| &o.other).collect();
    Ok(if broken.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A calibration run's wall-clock seconds, beside its results.
const ELAPSED: &str = "elapsed-seconds";

/// The results and seconds of a run that an earlier calibration in this folder finished, when
/// it measured what this one would: the same baseline commit, settings, lanes and
/// implementations, and the same case (the current tree's reference names the plant). A
/// calibration takes hours; one stopped half-way (a restarted machine, a cancelled job) is
/// continued by running the same command again, and keeps every run it finished.
fn finished_earlier(run: &Path, plan: &Plan) -> Option<(Results, f64)> {
    if run.join("INCOMPLETE").exists() {
        return None;
    }
    let results = crate::files::read_results(&run.join("results.json")).ok()?;
    let earlier = &results.provenance;
    let baseline_commit = |baseline: &Option<TreeInfo>| baseline.as_ref().map(|t| t.commit.clone());
    // A planted tree is committed anew by every calibration, so its commit differs; whether
    // the run was identical code does not.
    let identical = |current: &TreeInfo, baseline: &Option<TreeInfo>| Some(&current.commit) == baseline_commit(baseline).as_ref();
    let same = baseline_commit(&earlier.baseline) == baseline_commit(&plan.baseline)
        && earlier.current.reference == plan.current.reference
        && identical(&earlier.current, &earlier.baseline) == identical(&plan.current, &plan.baseline)
        && earlier.settings == plan.settings
        && earlier.lanes == plan.lanes
        && earlier.implementations == plan.implementations;
    if !same {
        return None;
    }
    let seconds = std::fs::read_to_string(run.join(ELAPSED)).ok().and_then(|s| s.trim().parse().ok()).or_else(|| {
        // Runs from before the seconds were kept: from the samples folder's creation to the
        // results, which leaves out the few seconds before the first sample.
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let took = modified(&run.join("results.json"))?.duration_since(modified(&run.join("samples"))?).ok()?;
        Some(took.as_secs_f64())
    })?;
    Some((results, seconds))
}

/// The trees of a planted case: the baseline as it is, and as the current tree a scratch
/// worktree (`baseline/calibration-PERCENT`) at the baseline's commit with the plant committed
/// on top (a commit on no branch), both built as a run builds them.
fn planted_trees(root: &Path, trees: &Trees, codec: &str, percent: f64, ci: bool) -> Result<Trees, Failure> {
    let base = trees.baseline.as_ref().ok_or_else(|| environment("calibration needs a baseline"))?;
    let sh = Shell::new().map_err(|e| environment(e.to_string()))?;
    sh.change_dir(root);
    let dir = root.join(format!("baseline/calibration-{percent}"));
    let info = crate::git::prepare_baseline(&sh, root, &dir, "calibration", &base.info.commit).map_err(environment)?;
    crate::plant::apply(&dir, codec, Operation::Decode, percent).map_err(environment)?;
    let message = format!("calibration: {percent}% of {codec} decode's own time, planted");
    cmd!(sh, "git -C {dir} -c user.name=tdbench -c user.email=tdbench@localhost commit -q -a -m {message}")
        .quiet()
        .run()
        .map_err(|e| environment(format!("cannot commit the plant in {}: {e}", dir.display())))?;
    let in_tree = Shell::new().map_err(|e| environment(e.to_string()))?;
    in_tree.change_dir(&dir);
    let commit = crate::git::commit_of(&in_tree, "HEAD").map_err(environment)?;
    eprintln!("calibration tree: {} {} ({message})", dir.display(), &commit[..10]);
    let info = TreeInfo { reference: message, commit, dirty: false, ..info };
    let current = build::build(info, dir.join("target"), Role::Current, Build::Measurement, ci, true, true)?;
    let baseline = build::build(base.info.clone(), base.target.clone(), Role::Baseline, base.build, ci, true, true)?;
    Ok(Trees { current, baseline: Some(baseline), linked: Default::default() })
}

/// The table's provenance line: commit, machine, date, rounds.
fn measured(plan: &Plan, machine: Option<&str>, rounds: u32, note: &str) -> String {
    let baseline = plan.baseline.as_ref().map_or("?", |b| &b.commit[..b.commit.len().min(12)]);
    format!(
        "Measured at commit `{baseline}` on {}, {} (UTC), {rounds} round(s){note}.",
        machine.unwrap_or("an unknown machine"),
        crate::report::chart::date(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()))
    )
}

/// Wilson's 95% interval for `k` of `n`.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n, z) = (k as f64, n as f64, 1.959964f64);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The run-level spread identical code shows: comparisons with nothing to find, whose changes
/// spread across runs more than their own pairs say they should. Estimated as
/// √(mean(change²) − mean(standard error²)) over every such comparison of every run (the true
/// change is zero), with the raw spread √mean(change²) and the pairs' √mean(se²) beside it.
/// `None` without comparisons.
pub fn run_spread(unplanted: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    if unplanted.is_empty() {
        return None;
    }
    let n = unplanted.len() as f64;
    let changes = unplanted.iter().map(|(m, _)| m * m).sum::<f64>() / n;
    let own = unplanted.iter().map(|(_, se)| se * se).sum::<f64>() / n;
    Some(((changes - own).max(0.0).sqrt(), changes.sqrt(), own.sqrt()))
}

fn table(outcomes: &[Outcome], codec: &str, plan: &Plan, measured: &str) -> String {
    let percent = |(low, high): (f64, f64)| format!("{:.0}–{:.0}%", low * 100.0, high * 100.0);
    let of = |k: usize, n: usize| format!("{k} of {n} ({})", percent(wilson(k, n)));
    let minutes =
        |runs: &[&Outcome]| median(runs.iter().map(|o| o.seconds).collect()).map_or("—".into(), |s| format!("{:.1} min", s / 60.0));
    let mut out = String::new();
    // The machine is named in the provenance line: the section is kept across publishes, and
    // the run it is shown beside may be on another.
    writeln!(out, "## Gate calibration\n").unwrap();
    writeln!(
        out,
        "`./run.sh --calibrate` on lanes {}, every implementation, default settings: each round runs identical code, then \
         three real changes — a slowdown of 1%, 1.5% and 3% of `{codec}` decode's own time, planted in `src/codecs/` and \
         committed in a scratch worktree — as a user's commit is run. A false alarm is a latency regression on a \
         comparison the change did not touch; a catch is the planted decode judged a regression. One not caught was \
         passed by its counts (`bounded`: the plant's few instructions moved them by under a quarter of the threshold, \
         and time could not gate it), left undecided (`not-gated`: exit 3 under `--ci`), or passed by time. \
         Intervals: Wilson 95%. {measured}\n",
        plan.lanes.join(", "),
    )
    .unwrap();
    let identical: Vec<&Outcome> = outcomes.iter().filter(|o| o.case == Case::Identical).collect();
    let alarmed = identical.iter().filter(|o| o.false_alarms > 0).count();
    writeln!(out, "### Identical code\n").unwrap();
    writeln!(out, "| runs | runs with a false alarm | untouched comparisons whose counts differed | median run |").unwrap();
    writeln!(out, "|---|---|---|---|").unwrap();
    writeln!(
        out,
        "| {} | {} | {} | {} |\n",
        identical.len(),
        of(alarmed, identical.len()),
        identical.iter().map(|o| o.untouched_changed.len()).sum::<usize>(),
        minutes(&identical)
    )
    .unwrap();
    writeln!(out, "### A real change to one codec\n").unwrap();
    writeln!(
        out,
        "| planted in `{codec}` decode | runs | runs with a false alarm elsewhere | untouched comparisons whose counts differed | \
         planted decode caught | not caught: passed by counts (`bounded`) / undecided / passed by time | \
         median count moved | median estimate | median pairs | median detectable (80%) | median run |"
    )
    .unwrap();
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|").unwrap();
    for percent in PLANTED {
        let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.case == Case::Planted(percent)).collect();
        let alarmed = runs.iter().filter(|o| o.false_alarms > 0).count();
        let decodes: Vec<&PlantedDecode> = runs.iter().flat_map(|o| &o.planted).collect();
        let caught = decodes.iter().filter(|d| d.caught()).count();
        let ended = |verdict: Verdict| decodes.iter().filter(|d| d.verdict == verdict).count();
        writeln!(
            out,
            "| {percent}% | {} | {} | {} | {} | {} / {} / {} | {} | {} | {} | {} | {} |",
            runs.len(),
            of(alarmed, runs.len()),
            runs.iter().map(|o| o.untouched_changed.len()).sum::<usize>(),
            of(caught, decodes.len()),
            ended(Verdict::Bounded),
            ended(Verdict::NotGated),
            ended(Verdict::Pass),
            median(decodes.iter().filter_map(|d| d.count_change).map(|c| c * 100.0).collect())
                .map_or("—".into(), |c| format!("{c:+.3}%")),
            median(decodes.iter().map(|d| d.change * 100.0).collect()).map_or("—".into(), |e| format!("{e:+.2}%")),
            median(decodes.iter().map(|d| d.pairs as f64).collect()).map_or("—".into(), |p| format!("{p:.0}")),
            median(decodes.iter().filter_map(|d| d.detectable).map(|d| d * 100.0).collect()).map_or("—".into(), |d| format!("{d:.1}%")),
            minutes(&runs),
        )
        .unwrap();
    }
    let changed: Vec<&String> = outcomes.iter().flat_map(|o| &o.untouched_changed).collect();
    if !changed.is_empty() {
        writeln!(out, "\nUntouched comparisons whose counts differed (timed in full for it):\n").unwrap();
        let mut named: Vec<&String> = changed.clone();
        named.sort();
        named.dedup();
        for c in named {
            writeln!(out, "- {c} ({} run(s))", changed.iter().filter(|x| **x == c).count()).unwrap();
        }
    }
    let unplanted: Vec<(f64, f64)> = outcomes.iter().flat_map(|o| o.unplanted.iter().copied()).collect();
    if let Some((spread, changes, own)) = run_spread(&unplanted) {
        let pct = |log: f64| (log.exp() - 1.0) * 100.0;
        writeln!(
            out,
            "\nRun-level spread: **{:.2}%**. Over {} unchanged comparisons timed by the backstop, changes spread {:.2}% across \
             runs where their own pairs account for {:.2}%; what is left moves a whole run's pairs together, and no number of \
             pairs within a run can see it. These runs held each latency verdict's bound above `--run-spread {}`; a runner \
             that measures more should pass its own figure.",
            pct(spread),
            unplanted.len(),
            pct(changes),
            pct(own),
            plan.settings.run_spread_percent
        )
        .unwrap();
    }
    let broken: Vec<&String> = outcomes.iter().flat_map(|o| &o.other).collect();
    if !broken.is_empty() {
        writeln!(out, "\nViolations other than latency regressions (these runs measured something wrong):\n").unwrap();
        for v in broken {
            writeln!(out, "- {v}").unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_known_values() {
        let (low, high) = wilson(19, 20);
        assert!((low - 0.7639).abs() < 1e-3 && (high - 0.9911).abs() < 1e-3, "{low} {high}");
        let (low, high) = wilson(0, 20);
        assert!(low == 0.0 && (high - 0.1611).abs() < 1e-3, "{high}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn the_run_spread_is_what_changes_show_beyond_their_own_pairs() {
        // Seeded: 400 comparisons, each a run-level shift of spread 0.3% plus its own error
        // of 0.2%; the estimate finds the 0.3%.
        let mut state = 7u64;
        let mut uniform = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut normal = || (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
        let unplanted: Vec<(f64, f64)> = (0..400).map(|_| (0.003 * normal() + 0.002 * normal(), 0.002)).collect();
        let (spread, changes, own) = run_spread(&unplanted).unwrap();
        assert!((spread - 0.003).abs() < 0.0004, "{spread}");
        assert!((changes - 0.0036).abs() < 0.0004 && (own - 0.002).abs() < 1e-12, "{changes} {own}");
        // Changes no wider than their pairs: no run-level spread.
        assert_eq!(run_spread(&[(0.001, 0.002), (-0.001, 0.002)]).unwrap().0, 0.0);
        assert_eq!(run_spread(&[]), None);
    }

    #[test]
    fn the_table_counts_false_alarms_and_catches_by_case() {
        let outcome = |case, false_alarms, caught: bool, uncaught| Outcome {
            case,
            false_alarms,
            untouched_changed: Vec::new(),
            planted: if case == Case::Identical {
                Vec::new()
            } else {
                let verdict = if caught { Verdict::Regression } else { uncaught };
                vec![PlantedDecode { verdict, change: 0.012, detectable: Some(0.009), pairs: 48, count_change: Some(0.0002) }]
            },
            unplanted: vec![(0.001, 0.002)],
            other: Vec::new(),
            seconds: 90.0,
        };
        let outcomes = [
            outcome(Case::Identical, 0, false, Verdict::Pass),
            outcome(Case::Identical, 1, false, Verdict::Pass),
            outcome(Case::Planted(1.0), 0, true, Verdict::Pass),
            outcome(Case::Planted(1.0), 0, false, Verdict::Bounded),
            outcome(Case::Planted(1.0), 0, false, Verdict::NotGated),
            outcome(Case::Planted(1.5), 0, true, Verdict::Pass),
            outcome(Case::Planted(1.5), 0, false, Verdict::Pass),
            outcome(Case::Planted(3.0), 2, true, Verdict::Pass),
        ];
        let plan = crate::gate::fixture::plan(tdbench_contract::Measure::Both);
        let text = table(&outcomes, "json-td", &plan, "Measured here.");
        assert!(text.contains("| 2 | 1 of 2 (9–91%) | 0 | 1.5 min |"), "{text}");
        // A plant not caught is told apart by how it ended: passed by its counts, left
        // undecided, or passed by time.
        assert!(
            text.contains("| 1% | 3 | 0 of 3 (0–56%) | 0 | 1 of 3 (6–79%) | 1 / 1 / 0 | +0.020% | +1.20% | 48 | 0.9% | 1.5 min |"),
            "{text}"
        );
        assert!(text.contains("| 1.5% | 2 | 0 of 2 (0–66%) | 0 | 1 of 2 (9–91%) | 0 / 0 / 1 |"), "{text}");
        assert!(text.contains("| 3% | 1 | 1 of 1 (21–100%) | 0 | 1 of 1 (21–100%) | 0 / 0 / 0 |"), "{text}");
    }

    #[test]
    fn a_stopped_calibration_keeps_only_runs_that_measured_the_same_case() {
        let dir = std::env::temp_dir().join(format!("tdbench-calibration-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("samples")).unwrap();
        // The fixture is identical code: the current tree at the baseline's commit.
        let mut plan = crate::gate::fixture::plan(tdbench_contract::Measure::Both);
        plan.current.reference = "HEAD".into();
        let results = crate::gate::judge(&plan, crate::gate::fixture::samples(&plan), Vec::new());
        crate::files::write_run(&dir, &results).unwrap();
        std::fs::write(dir.join(ELAPSED), "42.5\n").unwrap();
        assert_eq!(finished_earlier(&dir, &plan).map(|(_, seconds)| seconds), Some(42.5));
        // Not kept: another baseline, other settings, a planted case, or a run that did not finish.
        let mut other = plan.clone();
        other.baseline.as_mut().unwrap().commit = "decaf".into();
        assert!(finished_earlier(&dir, &other).is_none());
        let mut other = plan.clone();
        other.settings.rounds += 1;
        assert!(finished_earlier(&dir, &other).is_none());
        let mut planted = plan.clone();
        planted.current.commit = "pl4nt".into();
        assert!(finished_earlier(&dir, &planted).is_none());
        std::fs::write(dir.join("INCOMPLETE"), "").unwrap();
        assert!(finished_earlier(&dir, &plan).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
