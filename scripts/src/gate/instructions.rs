//! Instruction counts are exact and repeatable. Under `--measure instructions` the threshold is
//! a true line on them: a count more than `--threshold` above the baseline's is a regression.
//! Counting first (`both`), they only tell which comparisons changed ([`super::counts`]), and
//! time decides: a comparison is `unchanged` when its count and profile are equal, else its
//! count is shown as it moved. A count that is missing, zero or not a number makes no
//! comparison (and [`super::integrity`] says why).

use tdbench_contract::{Measure, Metric, OperationResult, Verdict};

use super::counts::same_work;
use super::{ByRole, Grouped};
use crate::plan::Plan;
use crate::results::ViolationKind;
use crate::results::{Comparison, Violation};

/// The first count of each tree.
fn counted<'a>(by_role: &ByRole<'a>) -> Option<(&'a OperationResult, &'a OperationResult)> {
    let first = |list: &[super::Measured<'a>]| list.iter().find(|m| m.counted && m.op.instructions_per_op.is_some()).map(|m| m.op);
    Some((first(&by_role.baseline)?, first(&by_role.current)?))
}

pub fn compare(plan: &Plan, grouped: &Grouped) -> (Vec<Comparison>, Vec<Violation>) {
    let threshold = plan.settings.threshold_percent / 100.0;
    let gates = plan.settings.measure == Measure::Instructions;
    let mut comparisons = Vec::new();
    let mut violations = Vec::new();
    for (key, by_role) in grouped {
        let Some((b, c)) = counted(by_role) else { continue };
        let (Some(base), Some(curr)) = (b.instructions_per_op, c.instructions_per_op) else { continue };
        if !(base.is_finite() && base > 0.0 && curr.is_finite() && curr > 0.0) {
            continue;
        }
        let change = curr / base - 1.0;
        let regression = gates && change > threshold;
        if regression {
            violations.push(Violation::at(
                ViolationKind::InstructionRegression,
                key,
                format!(
                    "{base:.1} → {curr:.1} instructions per op ({:+.3}%) exceeds the {:.1}% threshold",
                    change * 100.0,
                    plan.settings.threshold_percent
                ),
            ));
        }
        let counts = |list: &[super::Measured]| list.iter().filter(|m| m.counted).count();
        let mut comparison =
            Comparison::exact(key, Metric::Instructions, base, curr, counts(&by_role.baseline).min(counts(&by_role.current)), regression);
        if same_work(b, c) {
            comparison.verdict = Verdict::Unchanged;
        }
        comparisons.push(comparison);
    }
    (comparisons, violations)
}
