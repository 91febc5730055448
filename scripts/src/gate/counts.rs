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
/// program itself counted the same: the C library's `memcpy` and `memcmp` take more or fewer
/// instructions by where their operands lie, and any change moves the program's constants and
/// heap. Seen at 55ee4fe after an edit to tl.rs: json decode's `memcmp` +1,479 instructions in
/// 37 million (0.004%), json-td decode's `memcpy` +24. A tenth of a percent is a tenth of the
/// threshold.
pub const LIBRARY_TOLERANCE: f64 = 0.001;

/// Whether two counts say the same machine code did the same work: every function of the
/// program counted the same instructions (equal profiles), and the totals agree within what the
/// C library's alignment luck moves ([`LIBRARY_TOLERANCE`]).
pub fn same_work(baseline: &OperationResult, current: &OperationResult) -> bool {
    let (Some(b), Some(c)) = (baseline.instructions_per_op, current.instructions_per_op) else { return false };
    baseline.instruction_profile.is_some()
        && baseline.instruction_profile == current.instruction_profile
        && (c - b).abs() <= LIBRARY_TOLERANCE * b.abs()
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
