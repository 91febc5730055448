//! Allocations are counted exactly (the same in every process of a tree, checked by
//! [`super::determinism`]), so any increase, in count or in bytes, is a regression.

use tdbench_contract::Metric;

use super::Grouped;
use crate::results::ViolationKind;
use crate::results::{Comparison, Violation};

pub fn compare(grouped: &Grouped) -> (Vec<Comparison>, Vec<Violation>) {
    let mut comparisons = Vec::new();
    let mut violations = Vec::new();
    for (key, by_role) in grouped {
        let Some((b, c)) = by_role.firsts() else { continue };
        for (metric, base, curr) in
            [(Metric::Allocations, b.allocations_per_op, c.allocations_per_op), (Metric::Bytes, b.bytes_per_op, c.bytes_per_op)]
        {
            let regression = curr > base;
            if regression {
                violations.push(Violation::at(ViolationKind::AllocationRegression, key, format!("{metric} per op {base} → {curr}")));
            }
            comparisons.push(Comparison::exact(key, metric, base, curr, by_role.baseline.len().min(by_role.current.len()), regression));
        }
    }
    (comparisons, violations)
}
