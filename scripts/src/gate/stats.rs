//! The statistics of the gate: paired log-ratios and Student-t intervals, with the quantile
//! computed here (a few dozen lines beat a statistics dependency).

/// Share of pairs winsorized at each end for the spread that power projections use.
pub const TRIM: f64 = 0.2;

/// Paired samples as log-ratios `ln(current / baseline)`, judged by the Wilcoxon signed-rank
/// test with its Hodges–Lehmann estimate and interval (the median and order statistics of the
/// Walsh averages). Exact for any symmetric noise — and with baseline and current adjacent in
/// balanced order, identical code gives exactly that — so heavy tails (single pairs at ±50% in
/// published runs) neither raise false alarms nor drag the estimate. The winsorized standard
/// error is kept for projecting power onto other numbers of pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Paired {
    pub pairs: usize,
    /// Hodges–Lehmann estimate of the log-ratio.
    pub mean: f64,
    /// Standard error of a 20%-winsorized mean: the spread power projections use.
    pub standard_error: f64,
    pub df: f64,
    /// Walsh averages (x_i + x_j) / 2, i ≤ j, sorted.
    walsh: Vec<f64>,
}

impl Paired {
    /// `None` for fewer than two usable pairs (both figures positive and finite).
    pub fn of(pairs: &[(f64, f64)]) -> Option<Paired> {
        let logs: Vec<f64> =
            pairs.iter().filter(|(b, c)| b.is_finite() && c.is_finite() && *b > 0.0 && *c > 0.0).map(|(b, c)| (c / b).ln()).collect();
        Paired::of_logs(&logs)
    }

    /// From log-ratios directly.
    pub fn of_logs(logs: &[f64]) -> Option<Paired> {
        let n = logs.len();
        if n < 2 || logs.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut sorted = logs.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
        for i in 0..n {
            for j in i..n {
                walsh.push((sorted[i] + sorted[j]) / 2.0);
            }
        }
        walsh.sort_by(f64::total_cmp);
        let mean = median_of_sorted(&walsh);
        let g = (TRIM * n as f64).floor() as usize;
        let winsorized: Vec<f64> = sorted.iter().map(|x| x.clamp(sorted[g], sorted[n - g - 1])).collect();
        let w_mean = winsorized.iter().sum::<f64>() / n as f64;
        let w_var = winsorized.iter().map(|x| (x - w_mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let kept = (n - 2 * g) as f64;
        let standard_error = (w_var * (n - 1) as f64 / (kept * (kept - 1.0).max(1.0))).sqrt();
        Some(Paired { pairs: n, mean, standard_error, df: (kept - 1.0).max(1.0), walsh })
    }

    /// The ratio current/baseline the pairs estimate.
    pub fn ratio(&self) -> f64 {
        self.mean.exp()
    }

    /// Two-sided interval of the ratio at confidence `1 - alpha`; its lower end is the
    /// one-sided lower bound at confidence `1 - alpha / 2` (0 when the pairs are too few for
    /// that confidence, infinite above).
    pub fn interval(&self, alpha: f64) -> (f64, f64) {
        let m = self.walsh.len();
        match signed_rank_critical(self.pairs, alpha / 2.0) {
            // Reject "centre ≤ θ" when more than `w` Walsh averages exceed θ.
            Some(w) => (self.walsh[m - w].exp(), self.walsh[w - 1].exp()),
            None => (0.0, f64::INFINITY),
        }
    }

    /// One-sided p-value of "current is no slower than baseline": the chance, under symmetric
    /// noise around no change, of at least this many positive Walsh averages.
    pub fn p_slower(&self) -> f64 {
        let positive = self.walsh.iter().filter(|w| **w > 0.0).count();
        signed_rank_tail(self.pairs, positive)
    }

    /// Per-pair spread implied by the standard error, to project it onto another number of
    /// pairs.
    pub fn spread(&self) -> f64 {
        self.standard_error * (self.pairs as f64).sqrt()
    }
}

fn median_of_sorted(x: &[f64]) -> f64 {
    let m = x.len();
    if m % 2 == 1 { x[m / 2] } else { (x[m / 2 - 1] + x[m / 2]) / 2.0 }
}

/// Pairs up to which the signed-rank distribution is counted exactly; above, its normal
/// approximation (with continuity correction) is used.
const EXACT_PAIRS: usize = 100;

/// P(W+ ≥ w) for the signed-rank statistic of `n` pairs under the null.
pub fn signed_rank_tail(n: usize, w: usize) -> f64 {
    let m = n * (n + 1) / 2;
    if w == 0 {
        return 1.0;
    }
    if w > m {
        return 0.0;
    }
    if n > EXACT_PAIRS {
        let mean = m as f64 / 2.0;
        let sd = (n as f64 * (n as f64 + 1.0) * (2.0 * n as f64 + 1.0) / 24.0).sqrt();
        return 1.0 - normal_cdf((w as f64 - 0.5 - mean) / sd);
    }
    tails(n)[w]
}

/// P(W+ ≥ w) for every w, for `n` pairs: counted once per `n` and kept (a run asks for the same
/// few sizes for every comparison, and counting is O(n³)).
fn tails(n: usize) -> std::rc::Rc<Vec<f64>> {
    thread_local! {
        static TAILS: std::cell::RefCell<std::collections::HashMap<usize, std::rc::Rc<Vec<f64>>>> = Default::default();
    }
    TAILS.with(|cache| {
        cache
            .borrow_mut()
            .entry(n)
            .or_insert_with(|| {
                let m = n * (n + 1) / 2;
                // counts[s]: subsets of the ranks 1..=n summing to s.
                let mut counts = vec![0.0f64; m + 1];
                counts[0] = 1.0;
                for rank in 1..=n {
                    for s in (rank..=rank * (rank + 1) / 2).rev() {
                        counts[s] += counts[s - rank];
                    }
                }
                let total = 2f64.powi(n as i32);
                let mut tail = vec![0.0; m + 2];
                for w in (0..=m).rev() {
                    tail[w] = tail[w + 1] + counts[w] / total;
                }
                std::rc::Rc::new(tail)
            })
            .clone()
    })
}

/// The smallest `w` with P(W+ ≥ w) ≤ `alpha`: the count of Walsh averages above θ that rejects
/// "centre ≤ θ". `None` when even all of them (P = 2^-n) is not rare enough.
pub fn signed_rank_critical(n: usize, alpha: f64) -> Option<usize> {
    let m = n * (n + 1) / 2;
    if signed_rank_tail(n, m) > alpha {
        return None;
    }
    // The tail falls as w grows: bisect for the first w where it is within alpha.
    let (mut low, mut high) = (0, m);
    while low < high {
        let mid = (low + high) / 2;
        if signed_rank_tail(n, mid) <= alpha { high = mid } else { low = mid + 1 }
    }
    Some(high)
}

/// Spends a one-sided level `alpha` over looks at `pairs[j]` pairs (increasing): the level each
/// look's signed-rank test is held to, summing to at most `alpha`. However the looks are reached
/// — a comparison goes on only while undecided — a false alarm needs some look to reject at its
/// own level, so the chance of one is at most the sum (Bonferroni over looks: it ignores how
/// alike looks on shared pairs are, which only makes it safer). Each look gets a share in
/// proportion to its pairs, so later, better-informed looks get more; a look whose pairs could
/// not reach its share even all positive (2^-n above it) gets none, and the others share it.
pub fn spend(alpha: f64, pairs: &[usize]) -> Vec<f64> {
    let mut usable: Vec<bool> = vec![true; pairs.len()];
    loop {
        let total: f64 = pairs.iter().zip(&usable).filter(|(_, u)| **u).map(|(n, _)| *n as f64).sum();
        let share = |j: usize| if usable[j] && total > 0.0 { alpha * pairs[j] as f64 / total } else { 0.0 };
        let shares: Vec<f64> = (0..pairs.len()).map(share).collect();
        // Dropping a look only raises the others' shares, so this ends within `pairs.len()` rounds.
        let dropped: Vec<usize> = (0..pairs.len()).filter(|&j| usable[j] && signed_rank_critical(pairs[j], shares[j]).is_none()).collect();
        if dropped.is_empty() {
            return shares;
        }
        for j in dropped {
            usable[j] = false;
        }
    }
}

fn normal_cdf(z: f64) -> f64 {
    // Through Student's t with very many degrees of freedom: one implementation of the tails.
    student_t_cdf(z, 1e7)
}

/// Quantile of the standard normal distribution.
pub fn normal_quantile(p: f64) -> f64 {
    student_t_quantile(p, 1e7)
}

/// Power of a one-sided level-`alpha` t-test, as a function of the true log-slowdown: by
/// default of "no change"; [`Power::with_shift`] makes it the test [`widened`] describes, whose
/// estimate also moves by a run-level shift its own pairs cannot see.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Power {
    critical: f64,
    se: f64,
    df: f64,
    /// Spread of the run-level shift, added to the estimate's own.
    shift: f64,
    /// The shift's margin at the test's level, combined with the pairs' in quadrature.
    shift_margin: f64,
}

impl Power {
    /// For standard error `se` and `df` degrees of freedom (the critical value computed once).
    pub fn new(se: f64, df: f64, alpha: f64) -> Power {
        Power { critical: student_t_quantile(1.0 - alpha, df), se, df, shift: 0.0, shift_margin: 0.0 }
    }

    /// The same test when a shift of spread `shift` moves the estimate too, its bound widened
    /// by the shift's margin at level `alpha` as [`widened`] does: P(estimate >
    /// √((critical·se)² + margin²)) for estimate ~ effect ± √(se² + shift²).
    pub fn with_shift(self, shift: f64, alpha: f64) -> Power {
        Power { shift, shift_margin: shift_margin(shift, alpha), ..self }
    }

    pub fn at(&self, effect: f64) -> f64 {
        let spread = (self.se * self.se + self.shift * self.shift).sqrt();
        let required = (self.critical * self.se).hypot(self.shift_margin);
        if !(spread > 0.0 && spread.is_finite()) {
            return if effect > required { 1.0 } else { 0.0 };
        }
        1.0 - student_t_cdf((required - effect) / spread, self.df)
    }
}

/// The margin a run-level shift of spread `shift` (log) needs at one-sided level `alpha`.
pub fn shift_margin(shift: f64, alpha: f64) -> f64 {
    if shift > 0.0 && alpha > 0.0 { normal_quantile(1.0 - alpha) * shift } else { 0.0 }
}

/// A one-sided lower bound (log) widened for a run-level shift: the pairs' own margin below the
/// estimate (`estimate − lower`, from their rank test) and the shift's margin at the same level
/// combined in quadrature, as the two independent errors of the estimate combine. With no
/// shift it is the pairs' own bound, exact under any symmetric noise; with pairs so many that
/// their margin vanishes it is the shift's normal bound. (Holding each to half the level and
/// adding the margins, as before, was valid too but asked about 40% more of a slowdown.)
pub fn widened(estimate: f64, lower: f64, shift_margin: f64) -> f64 {
    estimate - (estimate - lower).hypot(shift_margin)
}

/// The smallest log-slowdown whose power, by `power_at`, reaches `target`; infinite when even
/// a 20-fold slowdown would not.
pub fn detectable(power_at: impl Fn(f64) -> f64, target: f64) -> f64 {
    let (mut low, mut high) = (0.0, 3.0);
    if power_at(high) < target {
        return f64::INFINITY;
    }
    // 3 / 2^40: far below any figure worth printing.
    for _ in 0..40 {
        let mid = (low + high) / 2.0;
        if power_at(mid) >= target {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// CDF of Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// Inverse of [`student_t_cdf`] by bisection (monotone, so exact to the tolerance).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    let (mut low, mut high) = (-1e4, 1e4);
    // 2e4 / 2^64: below f64's resolution there.
    for _ in 0..64 {
        let mid = (low + high) / 2.0;
        if student_t_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9).
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let series = C[1..].iter().enumerate().fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

/// I_x(a, b) by its continued fraction (Lentz).
fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - regularized_incomplete_beta(b, a, 1.0 - x);
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp() / a;
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for numerator in
            [m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)), -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))]
        {
            d = 1.0 + numerator * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + numerator / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Standard table values.
        assert!((student_t_quantile(0.975, 5.0) - 2.5706).abs() < 1e-3);
        assert!((student_t_quantile(0.995, 10.0) - 3.1693).abs() < 1e-3);
        assert!((student_t_quantile(0.975, 1000.0) - 1.9623).abs() < 1e-3);
        assert!((student_t_cdf(0.0, 3.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn paired_ratios() {
        let pairs = [(100.0, 103.0), (100.0, 102.9), (100.0, 103.1), (100.0, 103.0), (100.0, 102.95), (100.0, 103.05)];
        let p = Paired::of(&pairs).unwrap();
        assert!((p.ratio() - 1.03).abs() < 1e-3);
        let (low, high) = p.interval(0.1);
        assert!(low > 1.02 && high < 1.04, "{low} {high}");
        assert!((p.p_slower() - 1.0 / 64.0).abs() < 1e-12, "all six above: the exact 2^-6");
        assert!(Paired::of(&[(1.0, 1.0)]).is_none());
        assert!(Paired::of(&[(1.0, 1.0), (0.0, 1.0), (1.0, f64::NAN)]).is_none(), "unusable pairs are not pairs");
        // Too few pairs for the confidence asked: an interval that excludes nothing.
        assert_eq!(p.interval(0.001), (0.0, f64::INFINITY));
    }

    #[test]
    fn signed_rank_tails_match_the_tables() {
        // n = 10: P(W+ ≥ 45) = 0.0244 ... (tables: P(W+ ≤ 10) = 0.0420, P(W+ ≤ 8) = 0.0244).
        assert!((signed_rank_tail(10, 55 - 8) - 0.0244).abs() < 5e-4);
        assert!((signed_rank_tail(10, 55 - 10) - 0.0420).abs() < 5e-4);
        assert_eq!(signed_rank_tail(6, 21), 1.0 / 64.0);
        assert_eq!(signed_rank_tail(6, 0), 1.0);
        assert_eq!(signed_rank_critical(6, 0.01), None);
        assert_eq!(signed_rank_critical(6, 1.0 / 64.0), Some(21));
        // The normal approximation takes over smoothly.
        let exact = signed_rank_tail(100, 3000);
        let approx = signed_rank_tail(101, 3000 + 51);
        assert!((exact - approx).abs() < 0.02, "{exact} {approx}");
    }

    #[test]
    fn one_wild_pair_moves_the_estimate_little() {
        let mut logs: Vec<f64> = (0..9).map(|i| 0.01 * (i as f64 - 4.0) / 4.0).collect();
        let calm = Paired::of_logs(&logs).unwrap();
        logs.push(0.5); // one pair at +65%
        let wild = Paired::of_logs(&logs).unwrap();
        assert!(wild.mean - calm.mean < 0.005, "estimate {} → {}", calm.mean, wild.mean);
        assert!(wild.standard_error < 3.0 * calm.standard_error, "{} vs {}", wild.standard_error, calm.standard_error);
    }

    #[test]
    fn spending_never_exceeds_the_budget_and_skips_looks_that_cannot_reject() {
        // Six pairs cannot reach 0.002 (2^-6 = 0.016): that look gets nothing.
        let shares = spend(0.002, &[6, 14, 22, 30]);
        assert_eq!(shares[0], 0.0);
        assert!((shares.iter().sum::<f64>() - 0.002).abs() < 1e-15);
        assert!(shares[1] < shares[2] && shares[2] < shares[3], "{shares:?}");
        for (n, share) in [14, 22, 30].iter().zip(&shares[1..]) {
            assert!(signed_rank_critical(*n, *share).is_some(), "{n} pairs at {share}");
        }
        // One look: all of it; no look can reject: nothing spent.
        assert!((spend(0.05, &[6])[0] - 0.05).abs() < 1e-15);
        assert_eq!(spend(1e-6, &[6, 10]), vec![0.0, 0.0]);
    }

    #[test]
    fn a_widened_bound_combines_the_margins_in_quadrature() {
        assert_eq!(widened(0.02, 0.01, 0.0), 0.01, "no shift: the pairs' own bound");
        assert!((widened(0.02, 0.02, 0.005) - 0.015).abs() < 1e-15, "no pair margin: the shift's");
        assert!((widened(0.02, 0.017, 0.004) - 0.015).abs() < 1e-15, "3 and 4 make 5");
        assert_eq!(shift_margin(0.0, 0.01), 0.0);
        assert!((shift_margin(0.002, 0.025) - 0.002 * 1.959964).abs() < 1e-6);
        // Power agrees with the widened rule: at an effect of exactly the required margin, half.
        let power = Power::new(0.001, 1e7, 0.025).with_shift(0.002, 0.025);
        let required = (1.959964f64 * 0.001).hypot(1.959964 * 0.002);
        assert!((power.at(required) - 0.5).abs() < 1e-4, "{}", power.at(required));
    }

    #[test]
    fn power_and_detectable_agree() {
        // At the detectable effect the power is the target; more effect, more power.
        let (se, df, alpha) = (0.01, 9.0, 0.001);
        let power = Power::new(se, df, alpha);
        let d = detectable(|e| power.at(e), 0.8);
        assert!((power.at(d) - 0.8).abs() < 1e-6);
        assert!(power.at(2.0 * d) > 0.99);
        assert!(power.at(0.0) <= alpha + 1e-9);
        // Roughly (critical t + t at 80%) standard errors.
        let expected = (student_t_quantile(1.0 - alpha, df) + 0.88) * se;
        assert!((d - expected).abs() < 0.2 * expected, "{d} vs {expected}");
        assert_eq!(detectable(|_| 0.0, 0.8), f64::INFINITY);
    }
}
