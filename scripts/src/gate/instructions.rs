//! Instruction counts are exact and repeatable, so the threshold is a true line: a count more
//! than `--threshold` above the baseline's is a regression. A count that is missing, zero or not
//! a number makes no comparison (and [`super::integrity`] says why).

use tdbench_contract::Metric;

use super::Grouped;
use crate::plan::Plan;
use crate::results::{Comparison, Violation};

pub fn compare(plan: &Plan, grouped: &Grouped) -> (Vec<Comparison>, Vec<Violation>) {
    let threshold = plan.settings.threshold_percent / 100.0;
    let mut comparisons = Vec::new();
    let mut violations = Vec::new();
    for (key, by_role) in grouped {
        let Some((b, c)) = by_role.firsts() else { continue };
        let (Some(base), Some(curr)) = (b.instructions_per_op, c.instructions_per_op) else { continue };
        if !(base.is_finite() && base > 0.0 && curr.is_finite() && curr > 0.0) {
            continue;
        }
        let change = curr / base - 1.0;
        let regression = change > threshold;
        if regression {
            violations.push(Violation::at(
                "instruction regression",
                key,
                format!(
                    "{base:.1} → {curr:.1} instructions per op ({:+.3}%) exceeds the {:.1}% threshold",
                    change * 100.0,
                    plan.settings.threshold_percent
                ),
            ));
        }
        let pairs = by_role.baseline.len().min(by_role.current.len());
        comparisons.push(Comparison::exact(key, Metric::Instructions, base, curr, pairs, regression));
    }
    (comparisons, violations)
}
