//! Latency, judged from pairs of baseline and current — both trees' kernels timed in one
//! process, or two processes next to each other in the balanced order — as log-ratios computed
//! here from the raw batches, never taken from a worker's summary, and judged by the Wilcoxon
//! signed-rank test with its Hodges–Lehmann estimate and interval ([`Paired`]): exact under the
//! symmetric noise identical code gives, whatever its tails.
//!
//! One false-alarm budget covers the whole run: [`FAMILY_ALPHA`] (5%), half for direct verdicts
//! of the screen, half for confirmations, each Bonferroni-divided over its comparisons; a false
//! alarm in the run is one of the two, so the run's chance of any is at most 5%.
//!
//! The screen is sequential. A comparison neither gated nor slower after its first look gets
//! more pairs, look after look (their sizes fixed by the plan beforehand), while its last look
//! could still gate it and the run's time for looks lasts; its share of the screen's budget is
//! spent over those looks in advance ([`spend`]), so going on while undecided costs no false
//! alarms. A comparison is a `regression` when its one-sided bound at its look's level
//! excludes no change and its estimate is above half the threshold. One the screen finds slower
//! by that rule at a nominal 5% is re-run on as many fresh pairs as its screen had (at least
//! the confirmation rounds') and judged on those alone, so the selection does not bias it.
//!
//! Every comparison also states the slowdown it would have caught with 80% power (the whole
//! procedure's power at the look it stopped at, screen and confirmation, from its own noise):
//! at most the threshold, it is gated (`pass`); above, it is `not-gated` — it passes, with a
//! warning, unless `--strict`. The floors (`clone`, `memcpy`, TDLib's empty call) are reported
//! as `reference`, outside the family.

use std::collections::{BTreeMap, BTreeSet};

use tdbench_contract::{ImplementationKind, Metric, Operation, Stage, Verdict, WorkerResult};

use super::stats::{Paired, Power, TRIM, detectable, shift_margin, signed_rank_critical, signed_rank_tail, spend, student_t_cdf, widened};
use super::{ByRole, Grouped, Measured};
use crate::plan::{Looks, Plan};
use crate::results::{Comparison, GATE_LEVELS, Key, Violation};

/// Family-wise false-alarm budget of the whole latency gate, confirmation included.
pub const FAMILY_ALPHA: f64 = 0.05;
/// The screen's share of the budget, for its direct verdicts.
const SCREEN_ALPHA: f64 = FAMILY_ALPHA / 2.0;
/// Confirmation's share.
const CONFIRM_ALPHA: f64 = FAMILY_ALPHA / 2.0;
/// Nominal one-sided significance that sends a comparison to confirmation.
pub const SCREEN_P: f64 = 0.05;
/// The power at which a comparison's detectable slowdown is stated.
pub const POWER: f64 = 0.8;

/// A process's fastest batch (on a stream lane, its fastest whole pass), from its batches;
/// `None` when it has none, or any that is not a positive number ([`super::integrity`] reports
/// those).
fn fastest(m: &Measured) -> Option<f64> {
    let batches = &m.op.batches_ns_per_op;
    if batches.is_empty() || batches.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    // A stream lane's fastest is of whole passes, not of its cheapest chunk.
    m.op.expected_stats().map(|stats| stats.fastest)
}

/// One pair's log-ratio, current over baseline.
///
/// In one process: the median, over its blocks (A B B A B A A B), of each block's
/// log(current/baseline) time. A block compares batches milliseconds apart, so drift within the process cancels, and
/// the median ignores the blocks a neighbour hit. (Measured here in A/A harness processes on a
/// noisy spell: its spread across processes was 1.2–3.0%, the fastest batches' 5.5–8.1%.)
/// In two processes: the ratio of their fastest batches, across processes the most stable
/// statistic on this machine kind (`../shared/NOISE.md`).
fn log_ratio(baseline: &Measured, current: &Measured) -> Option<f64> {
    let (b, c) = (fastest(baseline)?, fastest(current)?);
    let block = match (baseline.in_process, current.in_process) {
        (Some(a), Some(b)) if a == b && a > 0 => a as usize,
        _ => return Some((c / b).ln()),
    };
    let (b, c) = (&baseline.op.batches_ns_per_op, &current.op.batches_ns_per_op);
    let sum = |batches: &[f64]| batches.iter().sum::<f64>();
    let blocks: Vec<f64> = b.chunks_exact(block).zip(c.chunks_exact(block)).map(|(b, c)| (sum(c) / sum(b)).ln()).collect();
    middle(blocks)
}

/// The median, the two middle values averaged when their number is even: an upper median
/// would lean every in-process pair towards "slower".
fn middle(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// Log-ratios of the pairs of samples `keep` selects, paired by sample index.
fn pairs(by_role: &ByRole, keep: impl Fn(u32) -> bool) -> Vec<f64> {
    let current: BTreeMap<u32, &Measured> = by_role.current.iter().filter(|m| keep(m.sample)).map(|m| (m.sample, m)).collect();
    by_role.baseline.iter().filter(|m| keep(m.sample)).filter_map(|b| log_ratio(b, current.get(&b.sample)?)).collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Floors are references: reported, outside the family, never a regression.
fn is_reference(plan: &Plan, key: &Key) -> bool {
    key.operation == Operation::EmptyCall || plan.implementation(&key.implementation).is_some_and(|i| i.kind == ImplementationKind::Floor)
}

/// The comparisons in the family: pairs in both trees, not a floor.
fn family(plan: &Plan, grouped: &Grouped) -> f64 {
    grouped.iter().filter(|(key, r)| !r.baseline.is_empty() && !r.current.is_empty() && !is_reference(plan, key)).count().max(1) as f64
}

/// Whether the pairs show a slowdown at one-sided level `alpha`: the estimate is above half the
/// threshold and the pairs' bound, widened for a run-level shift of spread `run_spread`
/// ([`widened`]), excludes no change.
fn slower(paired: &Paired, alpha: f64, threshold: f64, run_spread: f64) -> bool {
    paired.ratio() > 1.0 + threshold / 2.0 && bounds(paired, alpha, run_spread).0 > 1.0
}

/// The pairs' one-sided bounds at level `alpha` each (as ratios), widened for a run-level shift
/// of spread `run_spread`: pairs of one run share such a shift, so no number of pairs within a
/// run can tell it from a slowdown, and a runner whose calibration measures one passes it as
/// `--run-spread`. (0, ∞) when the pairs are too few for that level.
fn bounds(paired: &Paired, alpha: f64, run_spread: f64) -> (f64, f64) {
    let (low, high) = paired.interval(2.0 * alpha);
    if !(low > 0.0 && high.is_finite()) {
        return (0.0, f64::INFINITY);
    }
    let margin = shift_margin(run_spread, alpha);
    let estimate = paired.mean;
    (widened(estimate, low.ln(), margin).exp(), (-widened(-estimate, -high.ln(), margin)).exp())
}

/// Whether the screen sends a comparison to confirmation: slower by the regression rule at a
/// nominal level ([`SCREEN_P`], with no run-level shift: a flag only buys fresh pairs), but not
/// at its look's own share of the family's budget (that is a regression already).
fn flags(screen: &Paired, rules: &Rules) -> bool {
    slower(screen, SCREEN_P, rules.threshold, 0.0) && !slower(screen, rules.direct_alpha(screen.pairs), rules.threshold, rules.run_spread)
}

fn flagged(plan: &Plan, grouped: &Grouped) -> BTreeSet<Key> {
    let rules = Rules::of(plan, grouped, 0);
    let screen_samples = plan.screen_samples();
    grouped
        .iter()
        .filter(|(key, _)| !is_reference(plan, key))
        .filter_map(|(key, by_role)| {
            let screen = Paired::of_logs(&pairs(by_role, |k| k < screen_samples))?;
            flags(&screen, &rules).then(|| key.clone())
        })
        .collect()
}

/// Where the screen stands after a look: what the runner confirms, and what it looks at again.
#[derive(Debug, Default)]
pub struct Screened {
    /// Slower by the screen's nominal rule: to be confirmed on fresh pairs.
    pub flagged: BTreeSet<Key>,
    /// Neither a regression nor gated, with looks left that could gate it if its spread holds
    /// (the others stop for futility): each with what further looks would buy it.
    pub undecided: BTreeMap<Key, Prospect>,
}

/// What further looks could buy an undecided comparison if its spread holds: the log-slowdown
/// it would detect now, after its next look, and after its last; and the coarsest level it is
/// not gated at now that its next look would gate it at, of the summary's ([`GATE_LEVELS`])
/// and the threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prospect {
    pub now: f64,
    pub next: f64,
    pub last: f64,
    pub next_gains: Option<f64>,
}

impl Prospect {
    fn new(now: f64, next: f64, last: f64, threshold: f64) -> Prospect {
        let levels = GATE_LEVELS.iter().copied().chain([threshold]);
        let gained = levels.filter(|&level| now.exp() - 1.0 > level && next.exp() - 1.0 <= level);
        Prospect { now, next, last, next_gains: gained.reduce(f64::max) }
    }
}

/// Which of two groups of comparisons (the operations one worker process measures) gets its
/// further look first. The run's time for looks runs out long before every undecided
/// comparison had its looks (published run at 2db6663: 37 of some 110 groups had one), so it
/// goes where a look changes what the run can see: the group whose next look would gate more of
/// its comparisons at a level they miss now, then at the coarser level (a comparison that
/// cannot see 3% is blind to what one at 1.3% catches more often than not), then the one whose
/// last look would detect the least.
///
/// (Ordered by the last look alone, as before, looks went to comparisons near 1% that already
/// saw 3%, while comparisons at 3.1–4.5% one look short of 3% got none; ordered by the coarsest
/// level alone, a full A/A run gated 5 more at 3% and 19 fewer at 1%.)
pub fn look_first(a: &[Prospect], b: &[Prospect]) -> std::cmp::Ordering {
    let gains = |group: &[Prospect]| {
        let mut levels: Vec<f64> = group.iter().filter_map(|p| p.next_gains).collect();
        levels.sort_by(|x, y| y.total_cmp(x));
        levels
    };
    let least_last = |group: &[Prospect]| group.iter().map(|p| p.last).fold(f64::INFINITY, f64::min);
    let (ga, gb) = (gains(a), gains(b));
    let by_level = || ga.iter().zip(&gb).map(|(x, y)| y.total_cmp(x)).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal);
    gb.len().cmp(&ga.len()).then_with(by_level).then_with(|| least_last(a).total_cmp(&least_last(b)))
}

/// The screen over every latency comparison, on the samples so far.
pub fn screen(plan: &Plan, samples: &[WorkerResult]) -> Screened {
    let grouped = super::group(samples);
    let flagged = flagged(plan, &grouped);
    let rules = Rules::of(plan, &grouped, flagged.len());
    let screen_samples = plan.screen_samples();
    let undecided = grouped
        .iter()
        .filter(|(key, _)| !is_reference(plan, key) && !flagged.contains(*key))
        .filter_map(|(key, by_role)| {
            let screen = Paired::of_logs(&pairs(by_role, |k| k < screen_samples))?;
            Some((key.clone(), worth_another_look(&screen, &rules)?))
        })
        .collect();
    Screened { flagged, undecided }
}

/// Whether an unflagged comparison gets another look: it is neither a regression nor gated,
/// has looks left, and its last look, if its spread holds, would gate it at the threshold or at
/// least at the largest level the summary counts ([`GATE_LEVELS`]); if not, it stops (the
/// futility rule). Gives what its looks would buy it.
///
/// Why not only "could gate it at the threshold": a comparison that 30 pairs bring from 4% to
/// 1.3% cannot be gated at 1%, but it then catches a 1.5% slowdown more often than not, and
/// the summary counts it at 3%. Its looks cost no false alarms (their levels are spent in
/// advance), only time, and the run's time for looks goes where they gain most ([`look_first`]).
fn worth_another_look(screen: &Paired, rules: &Rules) -> Option<Prospect> {
    let most = rules.looks.most();
    let judged = judge(screen.clone(), None, false, *rules);
    if screen.pairs >= most || judged.verdict != Verdict::NotGated {
        return None;
    }
    let projected = |pairs: usize| {
        let error = screen.standard_error * (screen.pairs as f64 / pairs as f64).sqrt();
        screen_detectable(pairs, error, trimmed_df(pairs), rules, true)
    };
    let next = rules.looks.pairs(rules.looks.reached(screen.pairs) + 1).min(most);
    let prospect = Prospect::new(judged.detectable, projected(next), projected(most), rules.threshold);
    let worth = rules.threshold.max(GATE_LEVELS[GATE_LEVELS.len() - 1]);
    (prospect.last.exp() - 1.0 <= worth).then_some(prospect)
}

/// What the verdict rules need to know of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rules {
    /// Regression threshold, as a fraction.
    pub threshold: f64,
    /// Comparisons in the family.
    pub family: f64,
    /// Comparisons the screen flagged.
    pub flagged: f64,
    /// Fresh pairs a confirmation gets at least.
    pub confirm_pairs: usize,
    /// The looks the screen may take.
    pub looks: Looks,
    /// Spread (log) of the run-level shift a comparison's pairs share ([`bounds`]).
    pub run_spread: f64,
}

impl Rules {
    fn of(plan: &Plan, grouped: &Grouped, flagged: usize) -> Rules {
        Rules {
            threshold: plan.settings.threshold_percent / 100.0,
            family: family(plan, grouped),
            flagged: flagged as f64,
            confirm_pairs: 2 * plan.settings.confirm_rounds as usize,
            looks: plan.looks(),
            run_spread: (1.0 + plan.settings.run_spread_percent / 100.0).ln(),
        }
    }

    /// The one-sided level of a direct verdict at the look `pairs` pairs reached: that look's
    /// share of the comparison's part of the screen's budget.
    fn direct_alpha(&self, pairs: usize) -> f64 {
        let looks: Vec<usize> = (1..=self.looks.count).map(|look| self.looks.pairs(look)).collect();
        spend(SCREEN_ALPHA / self.family, &looks)[self.looks.reached(pairs) - 1]
    }

    /// The one-sided level of each confirmation when `flagged` comparisons are confirmed:
    /// confirmation's budget shared among them. Fresh pairs are independent of the screen that
    /// selected them, so the selection cannot bias them — unless the run's pairs share a shift,
    /// which the screen then selects for and the confirmation shares: with a run-level spread,
    /// each comparison of the family gets its share whether flagged or not. (Seeded simulation
    /// with a 0.25% shift: 36 of 300 A/A runs raised a false alarm sharing among the flagged.)
    fn confirm_alpha(&self, flagged: f64) -> f64 {
        CONFIRM_ALPHA / if self.run_spread > 0.0 { self.family } else { flagged }
    }

    /// Fresh pairs the confirmation of a screen of `screen_pairs` takes: as many as the screen
    /// had, and at least `confirm_pairs` (none when confirmation is off).
    pub fn confirm_pairs_after(&self, screen_pairs: usize) -> usize {
        if self.confirm_pairs < 2 { 0 } else { self.confirm_pairs.max(screen_pairs) }
    }
}

/// One comparison's verdict, the pairs and one-sided level it rests on, and the log-slowdown
/// it would have caught with [`POWER`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    pub paired: Paired,
    pub alpha: f64,
    pub stage: Stage,
    pub verdict: Verdict,
    pub detectable: f64,
}

/// Power of one stage: its test rejects and its estimate clears half the threshold.
#[derive(Clone, Copy)]
struct StagePower {
    test: Power,
    /// Spread of the estimate: its pairs' and the run-level shift's.
    spread: f64,
    df: f64,
    half_threshold: f64,
    can_reject: bool,
}

impl StagePower {
    /// For `pairs` pairs. The signed-rank test is modelled as a t-test at the level it can
    /// really reach (its exact tail at its critical count: with few pairs, well below `alpha`;
    /// with so few that even all positive is not rare enough, it never rejects), with the
    /// spread widened by its efficiency against the t-test under normal noise (0.955), and its
    /// bound widened for the run-level shift ([`widened`]).
    fn new(pairs: usize, se: f64, df: f64, alpha: f64, threshold: f64, run_spread: f64) -> StagePower {
        let reachable = signed_rank_critical(pairs, alpha).map(|w| signed_rank_tail(pairs, w));
        let se = se / 0.955f64.sqrt();
        StagePower {
            test: Power::new(se, df, reachable.unwrap_or(alpha)).with_shift(run_spread, alpha),
            spread: (se * se + run_spread * run_spread).sqrt(),
            df,
            half_threshold: (1.0 + threshold / 2.0).ln(),
            can_reject: reachable.is_some(),
        }
    }

    fn at(&self, effect: f64) -> f64 {
        if !self.can_reject {
            return 0.0;
        }
        let clears = if self.spread > 0.0 { 1.0 - student_t_cdf((self.half_threshold - effect) / self.spread, self.df) } else { 1.0 };
        self.test.at(effect) * clears
    }
}

/// Pairs left after trimming `n`, less one.
fn trimmed_df(n: usize) -> f64 {
    (n as f64 - 2.0 * (TRIM * n as f64).floor() - 1.0).max(1.0)
}

/// The log-slowdown a screen of `pairs` pairs with this standard error catches with [`POWER`]:
/// directly, at its look's level, or (`confirmable`: a flag will get its confirmation) by being
/// flagged and then confirmed on fresh pairs with the same spread, one more comparison in the
/// confirmation's family. A direct verdict is also slower at the flag's nominal level, and a
/// confirmation is independent of the screen, so the chance is P(direct) + (P(flag) −
/// P(direct)) · P(confirmed).
fn screen_detectable(pairs: usize, standard_error: f64, df: f64, rules: &Rules, confirmable: bool) -> f64 {
    let t = rules.threshold;
    let direct = StagePower::new(pairs, standard_error, df, rules.direct_alpha(pairs), t, rules.run_spread);
    let n = rules.confirm_pairs_after(pairs);
    let later = (n >= 2 && confirmable).then(|| {
        let se = standard_error * (pairs as f64 / n as f64).sqrt();
        let flag = StagePower::new(pairs, standard_error, df, SCREEN_P, t, 0.0);
        (flag, StagePower::new(n, se, trimmed_df(n), rules.confirm_alpha(rules.flagged + 1.0), t, rules.run_spread))
    });
    let power = |e: f64| {
        let d = direct.at(e);
        d + later.map_or(0.0, |(flag, confirm)| (flag.at(e) - d).max(0.0) * confirm.at(e))
    };
    detectable(power, POWER)
}

/// The verdict rules, apart from where the pairs come from.
pub(crate) fn judge(screen: Paired, confirm: Option<Paired>, is_flagged: bool, rules: Rules) -> Judged {
    let t = rules.threshold;
    let unconfirmed = is_flagged && confirm.is_none();
    let (paired, alpha, stage, regression, detectable) = match (is_flagged, confirm) {
        (true, Some(confirm)) => {
            let alpha = rules.confirm_alpha(rules.flagged.max(1.0));
            let stage = StagePower::new(confirm.pairs, confirm.standard_error, confirm.df, alpha, t, rules.run_spread);
            let d = detectable(|e| stage.at(e), POWER);
            let regression = slower(&confirm, alpha, t, rules.run_spread);
            (confirm, alpha, Stage::Confirm, regression, d)
        }
        _ => {
            let alpha = rules.direct_alpha(screen.pairs);
            let d = screen_detectable(screen.pairs, screen.standard_error, screen.df, &rules, !unconfirmed);
            let regression = slower(&screen, alpha, t, rules.run_spread);
            // A look that cannot reject shows its interval at the comparison's whole share.
            let shown = if alpha > 0.0 { alpha } else { SCREEN_ALPHA / rules.family };
            (screen, shown, Stage::Screen, regression, d)
        }
    };
    let verdict = if regression {
        Verdict::Regression
    } else if detectable.exp() - 1.0 <= t + 1e-12 {
        Verdict::Pass
    } else {
        Verdict::NotGated
    };
    Judged { paired, alpha, stage, verdict, detectable }
}

pub fn compare(plan: &Plan, grouped: &Grouped) -> (Vec<Comparison>, Vec<Violation>) {
    let mut comparisons = Vec::new();
    let mut violations = Vec::new();
    if !plan.settings.worker.measure.times() {
        return (comparisons, violations);
    }
    let flagged = flagged(plan, grouped);
    let rules = Rules::of(plan, grouped, flagged.len());
    let screen_samples = plan.screen_samples();
    for (key, by_role) in grouped {
        let Some(screen) = Paired::of_logs(&pairs(by_role, |k| k < screen_samples)) else { continue };
        let confirm = Paired::of_logs(&pairs(by_role, |k| k >= screen_samples));
        let mut judged = judge(screen, confirm, flagged.contains(key), rules);
        if is_reference(plan, key) {
            judged.verdict = Verdict::Reference;
        }
        let (low, high) = bounds(&judged.paired, judged.alpha, rules.run_spread);
        let describe = || {
            format!(
                "{:+.2}% (interval {:+.2}% to {:+.2}%, {} pairs, {})",
                (judged.paired.ratio() - 1.0) * 100.0,
                (low - 1.0) * 100.0,
                (high - 1.0) * 100.0,
                judged.paired.pairs,
                judged.stage
            )
        };
        match judged.verdict {
            Verdict::Regression => violations.push(Violation::at(
                "latency regression",
                key,
                format!("{} is a slowdown beyond the {:.1}% threshold's line", describe(), plan.settings.threshold_percent),
            )),
            Verdict::NotGated if plan.settings.strict => violations.push(Violation::at(
                "not gated",
                key,
                format!(
                    "{}: could only have caught a slowdown of {:.1}% (80% power), not {:.1}% (--strict)",
                    describe(),
                    (judged.detectable.exp() - 1.0) * 100.0,
                    plan.settings.threshold_percent
                ),
            )),
            _ => {}
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
            // Too few pairs for the family's confidence bound nothing: no interval, rather
            // than one from -100% to infinity (which JSON cannot even carry).
            interval: (low > 0.0 && high.is_finite()).then_some((low - 1.0, high - 1.0)),
            // None: not even a 20-fold slowdown would have been caught.
            detectable: judged.detectable.is_finite().then(|| judged.detectable.exp() - 1.0),
            standard_error: Some(judged.paired.standard_error),
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
    use tdbench_contract::{Operation, OperationResult};

    /// Seeded per-pair log-ratios: normal noise of spread `sd` with heavy tails (one pair in ten
    /// five times wider), plus `effect`.
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            (-2.0 * self.uniform().ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
        }

        fn logs(&mut self, n: usize, sd: f64, effect: f64) -> Vec<f64> {
            (0..n).map(|_| effect + self.normal() * sd * if self.uniform() < 0.1 { 5.0 } else { 1.0 }).collect()
        }

        fn pairs(&mut self, n: usize, sd: f64, effect: f64) -> Paired {
            Paired::of_logs(&self.logs(n, sd, effect)).unwrap()
        }
    }

    const SCREEN_PAIRS: usize = 6;
    const CONFIRM_PAIRS: usize = 16;
    /// One look only, as before the screen was sequential.
    const ONE_LOOK: Looks = Looks { first: SCREEN_PAIRS, step: 0, count: 1 };
    /// The looks `./run.sh` takes by default (4 rounds, then 4 more at a time, four looks at
    /// most), so the simulations below judge the procedure a default run uses; a test checks
    /// it against the command line's own defaults.
    const LOOKS: Looks = Looks { first: 8, step: 8, count: 4 };

    #[test]
    fn the_simulated_looks_are_the_default_runs() {
        use clap::Parser;
        let options = crate::cli::Options::try_parse_from(["./run.sh"]).unwrap();
        let defaults =
            Looks { first: 2 * options.rounds() as usize, step: 2 * options.look_rounds as usize, count: options.looks as usize };
        assert_eq!(defaults, LOOKS);
    }

    /// One synthetic run of `m` comparisons, the first slowed by `effect` (log), through the
    /// whole procedure as the runner drives it: looks while undecided, confirmation of what the
    /// screen flags on as many fresh pairs as it had, verdicts. No run-level shift.
    fn simulate(noise: &mut Noise, m: usize, sd: f64, effect: f64, threshold: f64, looks: Looks) -> Vec<Judged> {
        let base = Rules { threshold, family: m as f64, flagged: 0.0, confirm_pairs: CONFIRM_PAIRS, looks, run_spread: 0.0 };
        simulate_shifted(noise, m, sd, effect, 0.0, base)
    }

    /// As [`simulate`], each comparison's pairs (screen and confirmation) also shifted by a
    /// draw of spread `shift` for the run, judged by `base`.
    fn simulate_shifted(noise: &mut Noise, m: usize, sd: f64, effect: f64, shift: f64, base: Rules) -> Vec<Judged> {
        let looks = base.looks;
        let shifts: Vec<f64> = (0..m).map(|_| noise.normal() * shift).collect();
        let effect_of = |i: usize| shifts[i] + if i == 0 { effect } else { 0.0 };
        let mut logs: Vec<Vec<f64>> = (0..m).map(|i| noise.logs(looks.first, sd, effect_of(i))).collect();
        let (flagged, rules) = loop {
            let screens: Vec<Paired> = logs.iter().map(|l| Paired::of_logs(l).unwrap()).collect();
            let flagged: Vec<bool> = screens.iter().map(|s| flags(s, &base)).collect();
            let rules = Rules { flagged: flagged.iter().filter(|f| **f).count() as f64, ..base };
            let again: Vec<usize> = (0..m).filter(|&i| !flagged[i] && worth_another_look(&screens[i], &rules).is_some()).collect();
            if again.is_empty() {
                break (flagged, rules);
            }
            for i in again {
                let more = noise.logs(looks.step, sd, effect_of(i));
                logs[i].extend(more);
            }
        };
        logs.iter()
            .enumerate()
            .map(|(i, l)| {
                let confirm = flagged[i].then(|| noise.pairs(rules.confirm_pairs_after(l.len()), sd, effect_of(i)));
                judge(Paired::of_logs(l).unwrap(), confirm, flagged[i], rules)
            })
            .collect()
    }

    #[test]
    fn an_in_process_pair_is_the_median_of_its_blocks() {
        let op = |batches: Vec<f64>| OperationResult {
            operation: Operation::Decode,
            encoded_bytes: 1.0,
            proof: tdbench_contract::Proof { sha256: String::new() },
            stats: None,
            batches_ns_per_op: batches,
            ops_per_batch: 1,
            iterations: 1,
            allocations_per_op: 0.0,
            bytes_per_op: 0.0,
            instructions_per_op: None,
            compressed: None,
            stream_updates: None,
        };
        // Four blocks: +2%, +2%, +10% (a neighbour), +4%: in one process the pair is the median
        // of the blocks, about +3%; as two processes, the fastest batches' +11%.
        let (b, c) = (
            op(vec![100.0, 100.0, 100.0, 100.0, 90.0, 110.0, 100.0, 100.0]),
            op(vec![102.0, 102.0, 100.0, 104.0, 110.0, 110.0, 104.0, 104.0]),
        );
        let measured = |op, in_process| Measured { sample: 0, op, in_process };
        let paired = log_ratio(&measured(&b, Some(2)), &measured(&c, Some(2))).unwrap();
        assert!((paired - (1.02f64.ln() + 1.04f64.ln()) / 2.0).abs() < 1e-12, "{paired}");
        let apart = log_ratio(&measured(&b, None), &measured(&c, None)).unwrap();
        assert!((apart - (100.0f64 / 90.0).ln()).abs() < 1e-12, "{apart}");
    }

    #[test]
    fn identical_code_raises_a_false_alarm_in_at_most_one_run_in_twenty() {
        // 400 A/A runs of 40 comparisons, 1% per-pair noise with heavy tails: at 1% threshold
        // most comparisons take further looks, every one a chance of a false flag.
        let mut noise = Noise(11);
        let runs = 400;
        let mut by_stage = [0, 0];
        let alarms = (0..runs)
            .filter(|_| {
                let run = simulate(&mut noise, 40, 0.01, 0.0, 0.01, LOOKS);
                for j in run.iter().filter(|j| j.verdict == Verdict::Regression) {
                    by_stage[(j.stage == Stage::Confirm) as usize] += 1;
                }
                run.iter().any(|j| j.verdict == Verdict::Regression)
            })
            .count();
        eprintln!("false alarms by stage (screen, confirm): {by_stage:?}");
        // 5% of 400 is 20; binomial noise on that count is about ±4.4.
        assert!(alarms <= 25, "{alarms} of {runs} A/A runs raised a false alarm");
    }

    #[test]
    fn a_run_level_shift_raises_false_alarms_unless_the_run_spread_holds_it() {
        // Pairs of one run sharing a shift of spread 0.25% (as calibration measured here),
        // 0.5% per-pair noise, 14 comparisons as in `--data messages`: trusting the pairs alone,
        // more pairs make the shift "significant"; holding bounds above the run spread keeps
        // the run's false alarms within the budget, and a planted 3% is still caught.
        let (shift, sd, m, runs) = (0.0025, 0.005, 14, 300);
        let rules = |run_spread: f64| Rules {
            threshold: 0.01,
            family: m as f64,
            flagged: 0.0,
            confirm_pairs: CONFIRM_PAIRS,
            looks: LOOKS,
            run_spread,
        };
        let alarms = |run_spread: f64, seed: u64| {
            let mut noise = Noise(seed);
            (0..runs)
                .filter(|_| {
                    simulate_shifted(&mut noise, m, sd, 0.0, shift, rules(run_spread)).iter().any(|j| j.verdict == Verdict::Regression)
                })
                .count()
        };
        let (trusting, held) = (alarms(0.0, 51), alarms(shift, 51));
        let caught = |effect: f64, seed: u64| {
            let mut noise = Noise(seed);
            (0..runs).filter(|_| simulate_shifted(&mut noise, m, sd, effect, shift, rules(shift))[0].verdict == Verdict::Regression).count()
        };
        let (three, one_and_a_half) = (caught(1.03f64.ln(), 52), caught(1.015f64.ln(), 53));
        eprintln!(
            "run shift 0.25%: false alarms in {trusting} of {runs} runs trusting the pairs, {held} holding the run spread; \
             planted 3% caught {three}, 1.5% {one_and_a_half} of {runs}"
        );
        // 5% of 300 is 15 (binomial spread about ±3.8).
        assert!(held <= 20, "{held} of {runs}");
        assert!(trusting >= 2 * held.max(10), "trusting the pairs: {trusting} of {runs}");
        assert!(three as f64 >= 0.95 * runs as f64, "3% caught in {three} of {runs}");
        // The shift's margin combined with the pairs' in quadrature, not added: still more
        // often caught than not at 1.5% (251 of 300 when written).
        assert!(one_and_a_half as f64 >= 0.7 * runs as f64, "1.5% caught in {one_and_a_half} of {runs}");
    }

    #[test]
    fn the_stated_detectable_slowdown_is_caught_about_four_times_in_five() {
        // The slowdown a comparison says it would catch with 80% power (the median over A/A
        // runs), planted exactly: the procedure must catch it about that often.
        for (seed, sd) in [(12, 0.004), (13, 0.01), (14, 0.02)] {
            let mut noise = Noise(seed);
            let mut stated: Vec<f64> = (0..100).map(|_| simulate(&mut noise, 40, sd, 0.0, 0.01, ONE_LOOK)[0].detectable).collect();
            stated.sort_by(f64::total_cmp);
            let effect = stated[50];
            let runs = 300;
            let caught =
                (0..runs).filter(|_| simulate(&mut noise, 40, sd, effect, 0.01, ONE_LOOK)[0].verdict == Verdict::Regression).count();
            let rate = caught as f64 / runs as f64;
            eprintln!("noise {sd}: stated {:.2}% detectable at 80%, caught in {rate:.2} of runs", (effect.exp() - 1.0) * 100.0);
            assert!((0.65..=0.95).contains(&rate), "noise {sd}: stated {:.2}%, caught {rate:.2}", (effect.exp() - 1.0) * 100.0);
        }
    }

    #[test]
    fn further_looks_gate_what_one_look_cannot_and_catch_it() {
        // Per-pair noise against a 3% threshold that six pairs rarely gate; looks up to 30
        // pairs mostly do, and a planted 3% is then caught about as often as gated ones
        // promise (80%) — not more often than the share gated allows.
        let threshold = 0.03;
        for (seed, sd) in [(21, 0.025), (23, 0.02)] {
            let gated = |looks: Looks| {
                let mut noise = Noise(seed);
                (0..100).filter(|_| simulate(&mut noise, 40, sd, 0.0, threshold, looks)[0].verdict == Verdict::Pass).count()
            };
            let (one, more) = (gated(ONE_LOOK), gated(LOOKS));
            let mut noise = Noise(seed + 100);
            let runs = 200;
            let planted = 1.03f64.ln();
            let caught =
                (0..runs).filter(|_| simulate(&mut noise, 40, sd, planted, threshold, LOOKS)[0].verdict == Verdict::Regression).count();
            eprintln!(
                "noise {sd}: gated at 3% in 100 A/A runs: {one} with one look, {more} with four; planted 3% caught in {caught} of {runs}"
            );
            assert!(more >= 70 && more >= one + 40, "one look {one}, four {more}");
            let promised = 0.8 * more as f64 / 100.0;
            assert!(caught as f64 >= (promised - 0.1) * runs as f64, "caught {caught} of {runs}, gated {more} of 100");
        }
    }

    #[test]
    fn a_later_look_judges_at_its_own_share_of_the_budget() {
        let rules = Rules { looks: LOOKS, ..rules() };
        let shares: Vec<f64> = (1..=4).map(|look| rules.direct_alpha(LOOKS.pairs(look))).collect();
        assert_eq!(shares[0], 0.0, "eight pairs cannot reach 2.5% of 40");
        assert!((shares.iter().sum::<f64>() - SCREEN_ALPHA / 40.0).abs() < 1e-15);
        // Between looks: the look reached.
        assert_eq!(rules.direct_alpha(20), shares[1]);
        // The last look's pairs all at +5%: a regression of the screen on its own, at that look.
        let j = judge(Noise(31).pairs(LOOKS.most(), 0.002, 0.05), None, false, rules);
        assert_eq!((j.stage, j.verdict, j.alpha), (Stage::Screen, Verdict::Regression, shares[3]));
    }

    #[test]
    fn a_comparison_that_no_look_could_gate_stops_for_futility() {
        let rules = Rules { looks: LOOKS, ..rules() };
        // 20% per-pair noise: not even 30 pairs would gate 1%.
        assert_eq!(worth_another_look(&Noise(41).pairs(SCREEN_PAIRS, 0.2, 0.0), &rules), None);
        // 0.6%: undecided after six pairs, worth more.
        let undecided = Noise(42).pairs(SCREEN_PAIRS, 0.006, 0.0);
        assert_eq!(judge(undecided.clone(), None, false, rules).verdict, Verdict::NotGated);
        assert!(worth_another_look(&undecided, &rules).is_some());
        // Quiet: gated at once, no more looks.
        assert_eq!(worth_another_look(&Noise(43).pairs(SCREEN_PAIRS, 0.0005, 0.0), &rules), None);
    }

    #[test]
    fn a_look_goes_first_where_it_gates_the_coarsest_level() {
        let pct = |p: f64| (1.0 + p / 100.0f64).ln();
        let prospect = |now, next, last| Prospect::new(pct(now), pct(next), pct(last), 0.01);
        let sees_3 = prospect(3.5, 2.4, 1.6);
        let sees_1 = prospect(1.3, 0.95, 0.7);
        let later = prospect(1.3, 1.1, 0.8);
        assert_eq!((sees_3.next_gains, sees_1.next_gains, later.next_gains), (Some(0.03), Some(0.01), None));
        let mut groups = vec![vec![later], vec![sees_1], vec![sees_3], vec![sees_3, later, sees_3], vec![later, sees_1]];
        groups.sort_by(|a, b| look_first(a, b));
        assert_eq!(groups, vec![vec![sees_3, later, sees_3], vec![sees_3], vec![sees_1], vec![later, sees_1], vec![later]]);
        // A threshold between the summary's levels is a level of its own.
        assert_eq!(Prospect::new(pct(2.3), pct(1.9), pct(1.5), 0.02).next_gains, Some(0.02));
    }

    #[test]
    fn with_time_for_few_looks_those_that_gain_a_level_first_gate_more() {
        // 60 comparisons, one per process group, per-pair spreads from 0.5% to 3%, time for 20
        // looks: each comparison's pairs are drawn once, so both orders see the same pairs.
        let rules = Rules { family: 60.0, looks: LOOKS, ..rules() };
        let mut noise = Noise(71);
        let drawn: Vec<Vec<f64>> = (0..60).map(|i| noise.logs(LOOKS.most(), 0.005 * 6f64.powf(i as f64 / 59.0), 0.0)).collect();
        let gated = |order: &dyn Fn(&[Prospect], &[Prospect]) -> std::cmp::Ordering| {
            let mut taken = vec![LOOKS.first; drawn.len()];
            let mut budget = 20;
            loop {
                let mut waiting: Vec<(usize, Prospect)> = (0..drawn.len())
                    .filter_map(|i| Some((i, worth_another_look(&Paired::of_logs(&drawn[i][..taken[i]]).unwrap(), &rules)?)))
                    .collect();
                if waiting.is_empty() || budget == 0 {
                    break;
                }
                waiting.sort_by(|a, b| order(&[a.1], &[b.1]));
                for (i, _) in waiting.into_iter().take(budget) {
                    taken[i] += LOOKS.step;
                    budget -= 1;
                }
            }
            let judged: Vec<Judged> =
                (0..drawn.len()).map(|i| judge(Paired::of_logs(&drawn[i][..taken[i]]).unwrap(), None, false, rules)).collect();
            [0.01, 0.03].map(|level| judged.iter().filter(|j| j.detectable.exp() - 1.0 <= level).count())
        };
        let least_last_first = |a: &[Prospect], b: &[Prospect]| a[0].last.total_cmp(&b[0].last);
        let (gain_first, least_last) = (gated(&look_first), gated(&least_last_first));
        eprintln!("gated at 1% and 3%: gains first {gain_first:?}, least last look first {least_last:?}");
        assert!(gain_first[1] > least_last[1], "{gain_first:?} against {least_last:?}");
        assert!(gain_first[0] + gain_first[1] > least_last[0] + least_last[1], "{gain_first:?} against {least_last:?}");
    }

    fn rules() -> Rules {
        Rules { threshold: 0.01, family: 40.0, flagged: 1.0, confirm_pairs: CONFIRM_PAIRS, looks: ONE_LOOK, run_spread: 0.0 }
    }

    #[test]
    fn quiet_and_unchanged_is_a_gated_pass() {
        let j = judge(Noise(1).pairs(SCREEN_PAIRS, 0.0005, 0.0), None, false, rules());
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::Pass));
        assert!(j.detectable.exp() - 1.0 <= 0.01);
    }

    #[test]
    fn noisy_and_unchanged_is_not_gated_and_says_what_it_could_see() {
        let j = judge(Noise(2).pairs(SCREEN_PAIRS, 0.05, 0.0), None, false, rules());
        assert_eq!(j.verdict, Verdict::NotGated);
        assert!(j.detectable.exp() - 1.0 > 0.05, "{}", j.detectable);
    }

    #[test]
    fn six_pairs_cannot_fail_a_comparison_on_the_screen_alone() {
        // 2^-6 is not rare enough for one comparison of forty: such a slowdown is sent to
        // confirmation (and, unflagged, could not have been caught: not gated).
        let j = judge(Noise(3).pairs(SCREEN_PAIRS, 0.03, 0.10), None, false, rules());
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::NotGated));
    }

    #[test]
    fn a_clear_slowdown_on_enough_pairs_fails_on_the_screen() {
        let rules = Rules { looks: Looks { first: 20, step: 0, count: 1 }, ..rules() };
        let j = judge(Noise(3).pairs(20, 0.002, 0.10), None, false, rules);
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::Regression));
    }

    #[test]
    fn a_significant_slowdown_below_half_the_threshold_passes() {
        let j = judge(Noise(4).pairs(20, 0.00001, 0.004), None, false, rules());
        assert!(j.paired.interval(2.0 * j.alpha).0 > 1.0, "significant");
        assert_eq!(j.verdict, Verdict::Pass);
    }

    #[test]
    fn flagged_then_confirmed_is_a_regression_of_the_confirm_stage() {
        let j = judge(Noise(5).pairs(SCREEN_PAIRS, 0.05, 0.03), Some(Noise(6).pairs(CONFIRM_PAIRS, 0.002, 0.05)), true, rules());
        assert_eq!((j.stage, j.verdict, j.paired.pairs), (Stage::Confirm, Verdict::Regression, CONFIRM_PAIRS));
    }

    #[test]
    fn flagged_and_not_confirmed_passes_on_the_confirmation() {
        let j = judge(Noise(7).pairs(SCREEN_PAIRS, 0.05, 0.03), Some(Noise(8).pairs(CONFIRM_PAIRS, 0.001, 0.0)), true, rules());
        assert_eq!((j.stage, j.verdict), (Stage::Confirm, Verdict::Pass));
    }

    #[test]
    fn flagged_without_confirmation_samples_is_not_gated() {
        let j = judge(Noise(9).pairs(SCREEN_PAIRS, 0.03, 0.03), None, true, rules());
        assert_eq!((j.stage, j.verdict), (Stage::Screen, Verdict::NotGated));
    }
}
