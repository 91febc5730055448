//! Allocations are counted exactly (the same in every process of a tree, checked by
//! [`super::determinism`]), so any increase, in count or in bytes, is a regression.

use tdbench_contract::{Metric, Stage, Verdict};

use super::Grouped;
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
                violations.push(Violation::at("allocation regression", key, format!("{metric} per op {base} → {curr}")));
            }
            comparisons.push(Comparison {
                lane: key.lane.clone(),
                implementation: key.implementation.clone(),
                operation: key.operation,
                metric,
                baseline: base,
                current: curr,
                change: if base > 0.0 {
                    curr / base - 1.0
                } else if curr > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                },
                interval: None,
                detectable: None,
                pairs: by_role.baseline.len().min(by_role.current.len()),
                stage: Stage::Screen,
                verdict: if regression { Verdict::Regression } else { Verdict::Pass },
            });
        }
    }
    (comparisons, violations)
}
