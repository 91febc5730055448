//! Counts first: which latency comparisons a change touched, told from the counts both trees
//! took before anything was timed, and how much time each (lane, implementation) group gets.
//!
//! A comparison whose instruction count and instruction profile (instructions per function)
//! are equal in both trees ran the same machine code doing the same work: `unchanged`, judged
//! at once at the threshold, and timed only by a light backstop for what counts cannot see.
//! The run's timing budget goes to the others. Both the runner (to schedule) and the gate (to
//! judge) call these functions on the same count samples, so a saved run is judged as it was
//! scheduled.

use std::collections::BTreeMap;

use tdbench_contract::{ImplementationKind, Operation, OperationResult, Role, WorkerResult};

use super::{ByRole, Grouped};
use crate::plan::{Plan, Schedule};
use crate::results::{Class, Key};

/// Floors are references: reported, outside every family, never a regression.
pub fn is_reference(plan: &Plan, key: &Key) -> bool {
    key.operation == Operation::EmptyCall || plan.implementation(&key.implementation).is_some_and(|i| i.kind == ImplementationKind::Floor)
}

/// The first count of `role`'s tree for a key, if the run counted it.
fn counted<'a>(by_role: &ByRole<'a>, role: Role) -> Option<&'a OperationResult> {
    by_role.role(role).iter().find(|m| m.counted).map(|m| m.op)
}

/// How far a comparison's count may move between the trees although every function of the
/// program itself counted the same: the C library's `memcpy`, `memcmp` and `malloc` take more or
/// fewer instructions by where their operands lie, and any change moves the program's constants
/// and heap. Seen at 55ee4fe after an edit to tl.rs: json decode's `memcmp` +1,479 instructions
/// in 37 million (0.004%), json-td decode's `memcpy` +24. A tenth of a percent is a tenth of the
/// threshold.
pub const LIBRARY_TOLERANCE: f64 = 0.001;

/// The same in instructions per operation, for operations so short that a tenth of a percent is
/// less than one call's alignment handling: an edit to json_td.rs moved json-value's `status`
/// decode, whose program counted the same in every function, from 7,997.75 to 8,005.75 (+8,
/// 0.1%), and the gate timed it as changed. Four times that, but never more than
/// [`LIBRARY_SLACK_SHARE`] of the count, so that on the shortest operations (a few hundred
/// instructions) it stays a small share of the threshold.
pub const LIBRARY_SLACK_PER_OP: f64 = 32.0;

/// The most of a count [`LIBRARY_SLACK_PER_OP`] may be: 0.4%, under half the 1% threshold.
pub const LIBRARY_SLACK_SHARE: f64 = 0.004;

/// Whether two counts say the same machine code did the same work: every function of the
/// program counted the same instructions (equal profiles), and the totals agree within what the
/// C library's alignment luck moves: [`LIBRARY_TOLERANCE`] of the count, or where that is less,
/// [`LIBRARY_SLACK_PER_OP`] up to [`LIBRARY_SLACK_SHARE`] of it.
pub fn same_work(baseline: &OperationResult, current: &OperationResult) -> bool {
    let (Some(b), Some(c)) = (baseline.instructions_per_op, current.instructions_per_op) else { return false };
    let slack = (LIBRARY_TOLERANCE * b.abs()).max(LIBRARY_SLACK_PER_OP.min(LIBRARY_SLACK_SHARE * b.abs()));
    baseline.instruction_profile.is_some() && baseline.instruction_profile == current.instruction_profile && (c - b).abs() <= slack
}

/// The share of the threshold within which a changed comparison's instruction count may move
/// and still be decided by its counts when time cannot gate it ([`Verdict::Bounded`]): a
/// quarter. Every change moves the program's constants, and some code's count moves with
/// where its data lies although its machine code is the same: json-sonic encode's, by
/// 0.02–0.2% in every real change measured here (docs/calibration.md), whose time, too noisy
/// to gate at 1%, then left the run undecided and failed `--ci` (exit 3). Time still judges
/// such a comparison in full: a slowdown it sees is a regression, as for any other.
///
/// [`Verdict::Bounded`]: tdbench_contract::Verdict::Bounded
pub const COUNT_BOUND_SHARE: f64 = 0.25;

/// How far a comparison's instructions per operation moved from the baseline to the current
/// tree (a fraction), when both trees counted it.
pub(crate) fn count_change(by_role: &ByRole) -> Option<f64> {
    let baseline = counted(by_role, Role::Baseline)?.instructions_per_op?;
    let current = counted(by_role, Role::Current)?.instructions_per_op?;
    (baseline > 0.0).then(|| current / baseline - 1.0)
}

/// Which rules a latency comparison is judged by.
pub(crate) fn class(plan: &Plan, key: &Key, by_role: &ByRole) -> Class {
    if is_reference(plan, key) {
        return Class::Reference;
    }
    if plan.implementation(&key.implementation).is_some_and(|i| i.timed_only()) {
        return Class::RoundTrip;
    }
    match (counted(by_role, Role::Baseline), counted(by_role, Role::Current)) {
        (Some(b), Some(c)) if same_work(b, c) => Class::Unchanged,
        _ => Class::Changed,
    }
}

/// Every key's class.
pub(crate) fn classes(plan: &Plan, grouped: &Grouped) -> BTreeMap<Key, Class> {
    grouped.iter().map(|(key, by_role)| (key.clone(), class(plan, key, by_role))).collect()
}

/// A lane and an implementation: what one worker process measures, every operation of it.
pub type Group = (String, String);

pub fn group_of(key: &Key) -> Group {
    (key.lane.clone(), key.implementation.clone())
}

/// How long each group is timed: in full when any of its comparisons changed (or cannot be
/// counted), with the backstop when every one is unchanged or a reference. A run that does not
/// count both trees (`--measure time`, a baseline without a counter, no baseline) times every
/// group in full.
pub(crate) fn schedules(plan: &Plan, grouped: &Grouped) -> BTreeMap<Group, Schedule> {
    let mut schedules: BTreeMap<Group, Schedule> = BTreeMap::new();
    let counts = plan.counts_both_trees();
    for (key, class) in classes(plan, grouped) {
        let full = !counts || matches!(class, Class::Changed | Class::RoundTrip);
        let entry = schedules.entry(group_of(&key)).or_insert(Schedule::Backstop);
        if full {
            *entry = Schedule::Full;
        }
    }
    schedules
}

/// [`schedules`] from samples as loaded.
pub fn schedules_of(plan: &Plan, samples: &[WorkerResult]) -> BTreeMap<Group, Schedule> {
    schedules(plan, &super::group(samples))
}

#[cfg(test)]
mod tests {
    use tdbench_contract::Measure;

    use super::*;
    use crate::gate::fixture;

    #[test]
    fn a_group_is_timed_in_full_when_a_count_changed_and_by_the_backstop_when_none_did() {
        let plan = fixture::plan(Measure::Both);
        let mut samples = fixture::samples(&plan);
        let group = |name: &str| ("status".to_string(), name.to_string());
        let same = schedules_of(&plan, &samples);
        assert_eq!((same[&group("tl")], same[&group("clone")]), (Schedule::Backstop, Schedule::Backstop));
        // tl's decode counted ten more instructions per op (0.7%) in the current tree.
        for s in samples.iter_mut().filter(|s| s.counted && s.role == Role::Current && s.implementation == "tl") {
            s.operations[1].instructions_per_op = s.operations[1].instructions_per_op.map(|n| n + 10.0);
        }
        let changed = schedules_of(&plan, &samples);
        assert_eq!((changed[&group("tl")], changed[&group("clone")]), (Schedule::Full, Schedule::Backstop));
        // A run that does not count both trees times everything in full.
        let timed = fixture::plan(Measure::Time);
        assert!(schedules_of(&timed, &fixture::samples(&timed)).values().all(|s| *s == Schedule::Full));
    }

    #[test]
    fn the_c_library_s_alignment_luck_is_not_a_change_but_a_function_s_count_is() {
        let op = |instructions: f64, profile: &str| OperationResult {
            operation: Operation::Decode,
            encoded_bytes: 1.0,
            proof: tdbench_contract::Proof { sha256: String::new() },
            stats: None,
            batches_ns_per_op: Vec::new(),
            ops_per_batch: 0,
            iterations: 1,
            allocations_per_op: 0.0,
            bytes_per_op: 0.0,
            instructions_per_op: Some(instructions),
            instruction_profile: Some(profile.into()),
            compressed: None,
            stream_updates: None,
        };
        assert!(same_work(&op(100_000.0, "a"), &op(100_000.0, "a")));
        // memcmp took 40 more instructions in 100,000: the same work.
        assert!(same_work(&op(100_000.0, "a"), &op(100_040.0, "a")));
        // More than a tenth of a percent: not the C library's luck.
        assert!(!same_work(&op(100_000.0, "a"), &op(100_200.0, "a")));
        // A short operation: a tenth of a percent is less than one call's alignment handling.
        assert!(same_work(&op(7_997.75, "a"), &op(8_005.75, "a")));
        assert!(same_work(&op(8_000.0, "a"), &op(7_968.0, "a")));
        assert!(!same_work(&op(8_000.0, "a"), &op(8_040.0, "a")));
        // The shortest: never more than 0.4% of the count.
        assert!(same_work(&op(500.0, "a"), &op(502.0, "a")));
        assert!(!same_work(&op(500.0, "a"), &op(503.0, "a")));
        // The same total, another function's count: changed.
        assert!(!same_work(&op(100_000.0, "a"), &op(100_000.0, "b")));
    }
}
