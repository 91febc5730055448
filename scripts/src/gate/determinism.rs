//! Within one tree, every process of a key must have done the same work the same way: the same
//! allocations, the same output, and (when counted) the same instructions. A difference means
//! nondeterminism in the measured path, and no comparison of that key can be trusted.

use tdbench_contract::Role;

use super::Grouped;
use crate::results::Violation;
use crate::results::ViolationKind;

/// Instruction counts of one tree must agree this closely (relative). They are exact for the
/// same binary and input — repeated counts were identical in every test here — so the tolerance
/// only absorbs float rounding of the per-op division.
pub const INSTRUCTION_TOLERANCE: f64 = 1e-9;

pub fn check(grouped: &Grouped) -> Vec<Violation> {
    let mut violations = Vec::new();
    for (key, by_role) in grouped {
        for role in [Role::Baseline, Role::Current] {
            let measured = by_role.role(role);
            let Some(first) = measured.first() else { continue };
            for m in &measured[1..] {
                let (a, b) = (first.op, m.op);
                if a.allocations_per_op != b.allocations_per_op || a.bytes_per_op != b.bytes_per_op {
                    violations.push(Violation::at(
                        ViolationKind::NondeterministicAllocations,
                        key,
                        format!(
                            "{role} sample {}: {} allocations / {} bytes per op, sample {}: {} / {}",
                            m.sample, b.allocations_per_op, b.bytes_per_op, first.sample, a.allocations_per_op, a.bytes_per_op
                        ),
                    ));
                }
                if a.proof != b.proof || a.encoded_bytes != b.encoded_bytes {
                    violations.push(Violation::at(
                        ViolationKind::NondeterministicOutput,
                        key,
                        format!("{role} sample {}: output differs from sample {}", m.sample, first.sample),
                    ));
                }
                if let (Some(x), Some(y)) = (a.instructions_per_op, b.instructions_per_op)
                    && (x - y).abs() > INSTRUCTION_TOLERANCE * x.abs().max(1.0)
                {
                    violations.push(Violation::at(
                        ViolationKind::NondeterministicInstructions,
                        key,
                        format!("{role} sample {}: {y} instructions per op, sample {}: {x}", m.sample, first.sample),
                    ));
                }
            }
        }
    }
    violations
}
