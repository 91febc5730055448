//! `./run.sh --calibrate N`: the latency gate's false-alarm rate and power on this machine,
//! measured rather than modelled.
//!
//! N rounds, each of three runs in turn — identical code, then a slowdown of 1.5% and of 3%
//! planted in every decode of one implementation in the current tree — so drift over the
//! calibration falls on every case alike. The plant is an exact share of each decode's own
//! time ([`tdbench::worker::planted_loop`] in the kernel library); the baseline side times its
//! decodes the same way without spinning. The plan records it, and the gate refuses a planted
//! sample anywhere else, so a normal run can never measure planted code.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tdbench_contract::{Metric, Operation, Verdict};

use super::{Failure, Session, environment};
use crate::plan::{Calibration, Plan};
use crate::results::Results;

/// Slowdowns planted, in percent; 0 is identical code.
const CASES: [f64; 3] = [0.0, 1.5, 3.0];

/// What one calibration run showed.
struct Outcome {
    planted: f64,
    /// Latency regressions on comparisons with nothing planted.
    false_alarms: usize,
    /// Per lane: whether the planted decode was a regression, its estimate and detectable change.
    planted_decodes: Vec<(bool, f64, Option<f64>)>,
    /// Every latency comparison in the family with nothing planted: its log change and that
    /// change's standard error from its own pairs.
    unplanted: Vec<(f64, f64)>,
    /// Violations other than latency regressions: the run measured something wrong.
    other: Vec<String>,
}

impl Outcome {
    fn of(results: &Results, planted: f64, implementation: &str) -> Outcome {
        let is_planted = |lane_impl: (&str, Operation)| lane_impl == (implementation, Operation::Decode) && planted > 0.0;
        let latency = results.comparisons.iter().filter(|c| c.metric == Metric::Latency);
        let (planted_decodes, others): (Vec<_>, Vec<_>) = latency.partition(|c| is_planted((c.implementation.as_str(), c.operation)));
        Outcome {
            planted,
            false_alarms: others.iter().filter(|c| c.verdict == Verdict::Regression).count(),
            planted_decodes: planted_decodes.iter().map(|c| (c.verdict == Verdict::Regression, c.change, c.detectable)).collect(),
            unplanted: others
                .iter()
                .filter(|c| c.verdict != Verdict::Reference)
                .filter_map(|c| Some(((1.0 + c.change).ln(), c.standard_error?)))
                .collect(),
            other: results
                .violations
                .iter()
                .filter(|v| v.kind != "latency regression")
                .map(|v| format!("{}: {}", v.kind, v.message))
                .collect(),
        }
    }
}

pub fn run(
    session: &Session,
    plan: Plan,
    output: &Path,
    rounds: u32,
    implementation: &str,
    publish: Option<PathBuf>,
) -> Result<ExitCode, Failure> {
    // Identical code on both sides, or a "false alarm" could be a real change.
    let identical = plan.baseline.as_ref().is_some_and(|b| b.commit == plan.current.commit && !b.dirty) && !plan.current.dirty;
    if !identical {
        return Err(environment("calibration compares identical code: run it on a clean checkout with --baseline HEAD"));
    }
    if !plan.catalog.iter().any(|i| i.name == implementation && i.operations.contains(&Operation::Decode)) {
        return Err(environment(format!("--calibrate-on `{implementation}`: not an implementation with a decode in this run")));
    }
    if !plan.in_process(implementation) {
        return Err(environment(format!(
            "calibration plants its slowdown in in-process pairs, which `{implementation}` does not have in this run ({})",
            plan.pairing.note
        )));
    }
    let mut outcomes = Vec::new();
    let mut machine = None;
    let file = output.join("calibration.md");
    let mut text = String::new();
    for round in 1..=rounds {
        for planted in CASES {
            let name = format!("{}-{round}", label(planted));
            eprintln!("calibration round {round} of {rounds}: {}", describe(planted, implementation));
            let mut plan = plan.clone();
            plan.calibration = Some(Calibration { implementation: implementation.into(), planted_percent: planted });
            let run = output.join("calibration").join(&name);
            let results = session.measure(plan, &run)?;
            // Each run's copies of the workers and kernel libraries (one per sample and tree,
            // some 1.5 GB a messages run) are needed only while it runs: twenty rounds of them
            // would fill a disk. The samples and results stay.
            let _ = std::fs::remove_dir_all(run.join("workers"));
            outcomes.push(Outcome::of(&results, planted, implementation));
            machine = machine.or(results.provenance.machine.map(|m| format!("{}, {} cores, {}", m.cpu, m.cores, m.os)));
        }
        // The table so far, after every round: a calibration takes hours, and one stopped
        // half-way keeps what its finished rounds measured, saying how many those were.
        let so_far = if round < rounds { format!(" (stopped after {round} of {rounds} rounds: not finished)") } else { String::new() };
        text = table(&outcomes, implementation, &plan, &measured(&plan, machine.as_deref(), round, &so_far));
        crate::files::write_atomically(&file, &text).map_err(environment)?;
    }
    // The last round's table is the whole calibration's.
    print!("{text}");
    println!("calibration: {}", file.display());
    if let Some(report) = publish {
        std::fs::create_dir_all(&report).map_err(|e| environment(e.to_string()))?;
        crate::files::write_atomically(&report.join("calibration.md"), &text).map_err(environment)?;
        println!("published: {}", report.join("calibration.md").display());
    }
    let broken: Vec<&String> = outcomes.iter().flat_map(|o| &o.other).collect();
    Ok(if broken.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The table's provenance line: commit, machine, date, rounds.
fn measured(plan: &Plan, machine: Option<&str>, rounds: u32, note: &str) -> String {
    format!(
        "Measured at commit `{}` on {}, {} (UTC), {rounds} round(s){note}.",
        &plan.current.commit[..plan.current.commit.len().min(12)],
        machine.unwrap_or("an unknown machine"),
        crate::report::chart::date(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()))
    )
}

fn label(planted: f64) -> String {
    if planted == 0.0 { "identical".into() } else { format!("planted-{planted}") }
}

fn describe(planted: f64, implementation: &str) -> String {
    if planted == 0.0 { "identical code".into() } else { format!("{planted}% planted in {implementation} decode") }
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

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
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

fn table(outcomes: &[Outcome], implementation: &str, plan: &Plan, measured: &str) -> String {
    let percent = |(low, high): (f64, f64)| format!("{:.0}–{:.0}%", low * 100.0, high * 100.0);
    let mut out = String::new();
    writeln!(out, "## Gate calibration on this machine\n").unwrap();
    writeln!(
        out,
        "`./run.sh --calibrate` on lanes {} ({} implementations, {}): each round runs identical code, then a slowdown \
         planted in every `{implementation}` decode of the current tree (an exact share of each decode's own time). \
         A false alarm is a latency regression where nothing was planted; a catch is the planted decode judged a \
         regression. Intervals: Wilson 95%. {measured}\n",
        plan.lanes.join(", "),
        // Those the lanes measure: TDLib round trips asked for run on their test lanes only.
        plan.catalog.iter().filter(|i| i.lanes.iter().any(|l| plan.lanes.contains(l))).count(),
        plan.pairing.note
    )
    .unwrap();
    writeln!(out, "| planted | runs | runs with a false alarm | planted decodes caught | median estimate | median detectable (80%) |")
        .unwrap();
    writeln!(out, "|---|---|---|---|---|---|").unwrap();
    for planted in CASES {
        let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.planted == planted).collect();
        let alarmed = runs.iter().filter(|o| o.false_alarms > 0).count();
        let decodes: Vec<&(bool, f64, Option<f64>)> = runs.iter().flat_map(|o| &o.planted_decodes).collect();
        let caught = decodes.iter().filter(|d| d.0).count();
        let (estimate, detectable) = (
            median(decodes.iter().map(|d| d.1 * 100.0).collect()),
            median(decodes.iter().filter_map(|d| d.2).map(|d| d * 100.0).collect()),
        );
        writeln!(
            out,
            "| {} | {} | {} of {} ({}) | {} | {} | {} |",
            if planted == 0.0 { "nothing".to_string() } else { format!("{planted}%") },
            runs.len(),
            alarmed,
            runs.len(),
            percent(wilson(alarmed, runs.len())),
            if planted == 0.0 {
                "—".to_string()
            } else {
                format!("{caught} of {} ({})", decodes.len(), percent(wilson(caught, decodes.len())))
            },
            estimate.map_or("—".into(), |e| format!("{e:+.2}%")),
            detectable.map_or("—".into(), |d| format!("{d:.1}%")),
        )
        .unwrap();
    }
    // Planted runs' other comparisons have nothing planted either.
    let unplanted: Vec<(f64, f64)> = outcomes.iter().flat_map(|o| o.unplanted.iter().copied()).collect();
    if let Some((spread, changes, own)) = run_spread(&unplanted) {
        let pct = |log: f64| (log.exp() - 1.0) * 100.0;
        writeln!(
            out,
            "\nRun-level spread: **{:.2}%**. Over {} latency comparisons with nothing planted, changes spread {:.2}% across \
             runs where their own pairs account for {:.2}%; what is left moves a whole run's pairs together, and no \
             number of pairs within a run can see it. These runs held each latency verdict's bound above \
             `--run-spread {}`; a runner that measures more should pass its own figure.",
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
}
