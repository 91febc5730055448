//! Latency, judged from pairs of adjacent processes (baseline and current, next to each other
//! in the balanced order), as log-ratios of each process's fastest batch — computed here from
//! the raw batches, never taken from a worker's summary.
//!
//! The family of all latency comparisons is held to a 5% chance of any false alarm
//! (Bonferroni): a comparison fails only when its one-sided lower bound at 1 − 5%/m is above no
//! change (the gate only ever claims "slower") and its estimate is above the threshold.
//! Reported intervals are the two-sided 1 − 10%/m intervals whose lower end is that bound. A
//! first pass screens every comparison; one whose estimate is above the threshold and nominally
//! significant (p < 0.05) is re-run with fresh samples, and the verdict comes from those alone,
//! so the selection does not bias it.

use std::collections::{BTreeMap, BTreeSet};

use tdbench_contract::{Metric, Stage, Verdict, WorkerResult};

use super::stats::Paired;
use super::{ByRole, Grouped, Measured};
use crate::plan::Plan;
use crate::results::{Comparison, Key, Violation};

/// Family-wise false-alarm rate of the latency gate.
pub const FAMILY_ALPHA: f64 = 0.05;
/// Nominal one-sided significance that sends a comparison to confirmation.
pub const SCREEN_P: f64 = 0.05;

/// A process's fastest batch, from its batches; `None` when it has none, or any that is not a
/// positive number ([`super::integrity`] reports those).
fn fastest(m: &Measured) -> Option<f64> {
    let batches = &m.op.batches_ns_per_op;
    if batches.is_empty() || batches.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    Some(batches.iter().copied().fold(f64::INFINITY, f64::min))
}

/// (baseline, current) fastest batches of the samples `keep` selects, paired by sample index.
fn pairs(by_role: &ByRole, keep: impl Fn(u32) -> bool) -> Vec<(f64, f64)> {
    let of = |list: &[Measured]| -> BTreeMap<u32, f64> {
        list.iter().filter(|m| keep(m.sample)).filter_map(|m| Some((m.sample, fastest(m)?))).collect()
    };
    let (baseline, current) = (of(&by_role.baseline), of(&by_role.current));
    baseline.iter().filter_map(|(k, b)| current.get(k).map(|c| (*b, *c))).collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The comparisons that have pairs in both trees: the family the false-alarm budget covers.
fn family(grouped: &Grouped) -> f64 {
    grouped.values().filter(|r| !r.baseline.is_empty() && !r.current.is_empty()).count().max(1) as f64
}

fn flagged(plan: &Plan, grouped: &Grouped) -> BTreeSet<Key> {
    let threshold = plan.settings.threshold_percent / 100.0;
    let family = family(grouped);
    let screen_samples = plan.screen_samples();
    grouped
        .iter()
        .filter_map(|(key, by_role)| {
            let paired = Paired::of(&pairs(by_role, |k| k < screen_samples))?;
            let (low, _) = paired.interval(2.0 * FAMILY_ALPHA / family);
            let slower = paired.ratio() > 1.0 + threshold;
            (slower && low <= 1.0 && paired.p_slower() < SCREEN_P).then(|| key.clone())
        })
        .collect()
}

/// The first pass over every latency comparison: which ones need confirmation.
pub fn screen_flags(plan: &Plan, samples: &[WorkerResult]) -> BTreeSet<Key> {
    flagged(plan, &super::group(samples))
}

/// One comparison's verdict and the pairs and significance it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Judged {
    pub paired: Paired,
    pub alpha: f64,
    pub stage: Stage,
    pub verdict: Verdict,
}

/// The verdict rules, apart from where the pairs come from. `family` is the number of latency
/// comparisons, `confirm_family` the number the screen flagged.
pub(crate) fn judge(screen: Paired, confirm: Option<Paired>, flagged: bool, family: f64, confirm_family: f64, threshold: f64) -> Judged {
    let slower = |paired: &Paired, alpha: f64| paired.ratio() > 1.0 + threshold && paired.interval(alpha).0 > 1.0;
    let verdict = |regression: bool, otherwise: Verdict| if regression { Verdict::Regression } else { otherwise };
    match (flagged, confirm) {
        (false, _) => {
            let alpha = 2.0 * FAMILY_ALPHA / family;
            Judged { paired: screen, alpha, stage: Stage::Screen, verdict: verdict(slower(&screen, alpha), Verdict::Pass) }
        }
        (true, Some(confirm)) => {
            let alpha = 2.0 * FAMILY_ALPHA / confirm_family;
            Judged { paired: confirm, alpha, stage: Stage::Confirm, verdict: verdict(slower(&confirm, alpha), Verdict::NotConfirmed) }
        }
        (true, None) => Judged { paired: screen, alpha: 2.0 * FAMILY_ALPHA / family, stage: Stage::Screen, verdict: Verdict::Inconclusive },
    }
}

pub fn compare(plan: &Plan, grouped: &Grouped) -> (Vec<Comparison>, Vec<Violation>) {
    let mut comparisons = Vec::new();
    let mut violations = Vec::new();
    if !plan.settings.worker.measure.times() {
        return (comparisons, violations);
    }
    let threshold = plan.settings.threshold_percent / 100.0;
    let flagged = flagged(plan, grouped);
    let family = family(grouped);
    let confirm_family = flagged.len().max(1) as f64;
    let screen_samples = plan.screen_samples();
    for (key, by_role) in grouped {
        let Some(screen) = Paired::of(&pairs(by_role, |k| k < screen_samples)) else { continue };
        let confirm = Paired::of(&pairs(by_role, |k| k >= screen_samples));
        let judged = judge(screen, confirm, flagged.contains(key), family, confirm_family, threshold);
        let (low, high) = judged.paired.interval(judged.alpha);
        if judged.verdict == Verdict::Regression {
            violations.push(Violation::at(
                "latency regression",
                key,
                format!(
                    "{:+.2}% (interval {:+.2}% to {:+.2}%, {} pairs, {}) exceeds the {:.1}% threshold",
                    (judged.paired.ratio() - 1.0) * 100.0,
                    (low - 1.0) * 100.0,
                    (high - 1.0) * 100.0,
                    judged.paired.pairs,
                    judged.stage,
                    plan.settings.threshold_percent
                ),
            ));
        }
        let medians = |list: &[Measured]| median(list.iter().filter_map(fastest).collect());
        comparisons.push(Comparison {
            lane: key.lane.clone(),
            implementation: key.implementation.clone(),
            operation: key.operation,
            metric: Metric::Latency,
            baseline: medians(&by_role.baseline),
            current: medians(&by_role.current),
            change: judged.paired.ratio() - 1.0,
            interval: Some((low - 1.0, high - 1.0)),
            detectable: Some(judged.paired.detectable(judged.alpha)),
            pairs: judged.paired.pairs,
            stage: judged.stage,
            verdict: judged.verdict,
        });
    }
    (comparisons, violations)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded pairs around `ratio` with relative noise `noise` (a small LCG: deterministic).
    fn pairs_around(ratio: f64, noise: f64, n: usize, seed: u64) -> Paired {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let pairs: Vec<(f64, f64)> = (0..n).map(|_| (100.0, 100.0 * ratio * (1.0 + noise * next()))).collect();
        Paired::of(&pairs).unwrap()
    }

    #[test]
    fn unflagged_and_unchanged_passes() {
        let j = judge(pairs_around(1.0, 0.01, 6, 1), None, false, 40.0, 1.0, 0.01);
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::Pass));
    }

    #[test]
    fn a_clear_slowdown_fails_on_the_screen() {
        let j = judge(pairs_around(1.10, 0.002, 6, 2), None, false, 40.0, 1.0, 0.01);
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::Regression));
    }

    #[test]
    fn a_slowdown_below_the_threshold_passes_however_certain() {
        let j = judge(pairs_around(1.005, 0.0001, 6, 3), None, false, 40.0, 1.0, 0.01);
        assert!(j.paired.interval(j.alpha).0 > 1.0, "significant");
        assert_eq!(j.verdict, Verdict::Pass);
    }

    #[test]
    fn flagged_then_confirmed_is_a_regression_of_the_confirm_stage() {
        let j = judge(pairs_around(1.03, 0.05, 6, 4), Some(pairs_around(1.05, 0.002, 16, 5)), true, 40.0, 2.0, 0.01);
        assert_eq!((j.stage, j.verdict, j.paired.pairs), (Stage::Confirm, Verdict::Regression, 16));
    }

    #[test]
    fn flagged_and_not_confirmed() {
        let j = judge(pairs_around(1.03, 0.05, 6, 6), Some(pairs_around(1.0, 0.01, 16, 7)), true, 40.0, 2.0, 0.01);
        assert_eq!((j.stage, j.verdict), (Stage::Confirm, Verdict::NotConfirmed));
    }

    #[test]
    fn flagged_without_confirmation_samples_is_inconclusive() {
        let j = judge(pairs_around(1.03, 0.05, 6, 8), None, true, 40.0, 1.0, 0.01);
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::Inconclusive));
    }
}
