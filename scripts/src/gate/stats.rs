//! The statistics of the gate: paired log-ratios and Student-t intervals, with the quantile
//! computed here (a few dozen lines beat a statistics dependency).

/// Summary of paired samples as log-ratios `ln(current / baseline)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    pub pairs: usize,
    /// Mean log-ratio.
    pub mean: f64,
    /// Standard error of the mean log-ratio.
    pub standard_error: f64,
}

impl Paired {
    pub fn of(pairs: &[(f64, f64)]) -> Option<Paired> {
        let logs: Vec<f64> = pairs.iter().filter(|(b, c)| *b > 0.0 && *c > 0.0).map(|(b, c)| (c / b).ln()).collect();
        if logs.len() < 2 {
            return None;
        }
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let variance = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Some(Paired { pairs: logs.len(), mean, standard_error: (variance / n).sqrt() })
    }

    /// The ratio current/baseline the pairs estimate.
    pub fn ratio(&self) -> f64 {
        self.mean.exp()
    }

    /// Two-sided interval of the ratio at confidence `1 - alpha`; its lower end is the
    /// one-sided lower bound at confidence `1 - alpha / 2`.
    pub fn interval(&self, alpha: f64) -> (f64, f64) {
        let half = self.half_width(alpha);
        ((self.mean - half).exp(), (self.mean + half).exp())
    }

    /// The smallest slowdown (as a fraction) whose interval at `1 - alpha` would exclude no
    /// change, had it been the estimate: what this comparison could have detected.
    pub fn detectable(&self, alpha: f64) -> f64 {
        self.half_width(alpha).exp() - 1.0
    }

    fn half_width(&self, alpha: f64) -> f64 {
        student_t_quantile(1.0 - alpha / 2.0, (self.pairs - 1) as f64) * self.standard_error
    }

    /// One-sided p-value of "current is no slower than baseline".
    pub fn p_slower(&self) -> f64 {
        if self.standard_error == 0.0 {
            return if self.mean > 0.0 { 0.0 } else { 1.0 };
        }
        1.0 - student_t_cdf(self.mean / self.standard_error, (self.pairs - 1) as f64)
    }
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
    for _ in 0..200 {
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
        let pairs = [(100.0, 103.0), (100.0, 102.9), (100.0, 103.1), (100.0, 103.0)];
        let p = Paired::of(&pairs).unwrap();
        assert!((p.ratio() - 1.03).abs() < 1e-3);
        let (low, high) = p.interval(0.05);
        assert!(low > 1.02 && high < 1.04, "{low} {high}");
        assert!(p.p_slower() < 1e-4);
        assert!(Paired::of(&[(1.0, 1.0)]).is_none());
    }
}
