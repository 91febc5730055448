//! Whether the samples can be trusted at all: each planned sample present once, from this run,
//! in its slot; from the plan's trees (commit and dirty flag), on one machine, with the plan's
//! settings and one corpus; with exactly the operations the catalog promises; with figures that
//! are numbers a measurement can give (the batch summary recomputed from the batches); and, once
//! everything is compared, every comparison the plan implies.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use tdbench_contract::{Metric, Role, SCHEMA_VERSION, Stage, WorkerResult};

use crate::plan::Plan;
use crate::results::ViolationKind;
use crate::results::{Comparison, Key, Violation};

/// Reads every slot of the plan; each sample must be where the plan put it and say so.
pub fn load_samples(output: &Path, plan: &Plan) -> (Vec<WorkerResult>, Vec<Violation>) {
    let mut samples = Vec::new();
    let mut violations = Vec::new();
    let mut expected = BTreeSet::new();
    for slot in &plan.slots {
        let path = slot.file(output);
        expected.insert(path.clone());
        let name = slot.name();
        let Ok(text) = std::fs::read_to_string(&path) else {
            violations.push(Violation::general(ViolationKind::MissingSample, format!("{name}: {} is missing", path.display())));
            continue;
        };
        let result: WorkerResult = match serde_json::from_str(&text) {
            Ok(result) => result,
            Err(e) => {
                violations.push(Violation::general(ViolationKind::UnreadableSample, format!("{name}: {}: {e}", path.display())));
                continue;
            }
        };
        if result.schema_version != SCHEMA_VERSION {
            violations.push(Violation::general(
                ViolationKind::UnreadableSample,
                format!("{name}: schema version {} (this gate reads {SCHEMA_VERSION})", result.schema_version),
            ));
            continue;
        }
        if result.nonce != plan.nonce {
            violations.push(Violation::general(
                ViolationKind::ReusedSample,
                format!("{name}: carries nonce {} of another run (this run: {})", result.nonce, plan.nonce),
            ));
            continue;
        }
        if (result.lane.as_str(), result.implementation.as_str(), result.role, result.sample, result.counted)
            != (slot.lane.as_str(), slot.implementation.as_str(), slot.role, slot.sample, slot.stage == Stage::Count)
        {
            violations.push(Violation::general(
                ViolationKind::ReorderedSample,
                format!(
                    "{name}: the file holds {}/{} {} {} {}",
                    result.lane,
                    result.implementation,
                    result.role,
                    if result.counted { "count" } else { "sample" },
                    result.sample
                ),
            ));
            continue;
        }
        samples.push(result);
    }
    for file in json_files(&output.join("samples")) {
        if !expected.contains(&file) {
            violations
                .push(Violation::general(ViolationKind::DuplicateSample, format!("{} is not a slot of this run's plan", file.display())));
        }
    }
    (samples, violations)
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(json_files(&path));
            } else if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files
}

fn sample_name(s: &WorkerResult) -> String {
    format!("{}/{} {} {} {}", s.lane, s.implementation, s.role, if s.counted { "count" } else { "sample" }, s.sample)
}

/// Every worker ran on one machine and compiler, with the plan's settings, on one corpus, built
/// from the commit and in the state (clean or not) the plan recorded for its tree.
pub fn check_provenance(plan: &Plan, samples: &[WorkerResult]) -> Vec<Violation> {
    let mut violations = Vec::new();
    let Some(first) = samples.first() else { return violations };
    for s in samples {
        let name = sample_name(s);
        let mut differs =
            |message: String| violations.push(Violation::general(ViolationKind::MetadataDiffers, format!("{name}: {message}")));
        if s.machine != first.machine {
            differs(format!("ran on {:?}, others on {:?}", s.machine, first.machine));
        }
        if s.settings != plan.settings.worker {
            differs(format!("settings {:?} are not the plan's {:?}", s.settings, plan.settings.worker));
        }
        if s.corpus.sha256 != first.corpus.sha256 {
            differs(format!("measured another corpus ({})", s.corpus.sha256));
        }
        match plan.tree(s.role) {
            None => differs(format!("a {} sample in a run without that tree", s.role)),
            Some(tree) => {
                if s.tree.commit != tree.commit {
                    differs(format!("built from {} but the plan's {} tree is {}", s.tree.commit, s.role, tree.commit));
                }
                if s.tree.dirty != tree.dirty {
                    differs(format!(
                        "its tree was {} but the plan recorded the {} tree {}",
                        if s.tree.dirty { "dirty" } else { "clean" },
                        s.role,
                        if tree.dirty { "dirty" } else { "clean" }
                    ));
                }
            }
        }
    }
    violations
}

/// Each sample holds exactly the operations its implementation's catalog entry promises, and
/// every figure is one a measurement can give.
pub fn check_contents(plan: &Plan, samples: &[WorkerResult]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for s in samples {
        let name = sample_name(s);
        let Some(info) = plan.implementation(&s.implementation) else {
            violations.push(Violation::general(
                ViolationKind::UnplannedImplementation,
                format!("{name}: `{}` is not in the plan's catalog", s.implementation),
            ));
            continue;
        };
        let found: Vec<_> = s.operations.iter().map(|o| o.operation).collect();
        for operation in &info.operations {
            if !found.contains(operation) {
                violations.push(Violation::general(
                    ViolationKind::MissingOperation,
                    format!("{name}: no `{operation}`, which {} measures", info.name),
                ));
            }
        }
        let mut seen = HashSet::new();
        for op in &s.operations {
            let key = Key { lane: s.lane.clone(), implementation: s.implementation.clone(), operation: op.operation };
            let mut invalid = |what: String| violations.push(Violation::at(ViolationKind::InvalidValue, &key, format!("{name}: {what}")));
            if !info.operations.contains(&op.operation) || !seen.insert(op.operation) {
                invalid(format!("`{}` is not an operation {} measures once", op.operation, info.name));
                continue;
            }
            if !s.counted {
                if op.batches_ns_per_op.is_empty() {
                    invalid("no timed batches".into());
                } else if let Some(bad) = op.batches_ns_per_op.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                    invalid(format!("a batch of {bad} ns/op"));
                } else if op.stream_updates.is_some_and(|n| n != s.corpus.lane_payloads as u64) {
                    invalid(format!("a stream of {:?} updates on a lane of {}", op.stream_updates, s.corpus.lane_payloads));
                } else if op.stats != op.expected_stats() {
                    invalid(format!("its batch summary {:?} is not the summary of its batches", op.stats));
                }
            }
            if s.counted {
                match op.instructions_per_op {
                    Some(count) if count.is_finite() && count > 0.0 => {}
                    other => invalid(format!("instruction count {other:?}")),
                }
                if op.instruction_profile.as_ref().is_none_or(|p| p.len() != 64 || !p.bytes().all(|b| b.is_ascii_hexdigit())) {
                    invalid(format!("instruction profile {:?} is not a SHA-256", op.instruction_profile));
                }
            }
            for (what, x) in
                [("allocations per op", op.allocations_per_op), ("bytes per op", op.bytes_per_op), ("encoded bytes", op.encoded_bytes)]
            {
                if !(x.is_finite() && x >= 0.0) {
                    invalid(format!("{what} {x}"));
                }
            }
        }
    }
    violations
}

/// Samples the plan pairs in one process come in pairs that name the same process, opened by
/// the tree the balanced order put first; every other sample had a process of its own. A lone
/// or mismatched in-process sample cannot be paired honestly, so it is a violation, not a
/// silent fall back.
pub fn check_pairing(plan: &Plan, samples: &[WorkerResult]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for s in samples.iter().filter(|s| !s.counted) {
        let name = sample_name(s);
        let expected = plan.in_process(&s.implementation);
        let Some(process) = s.in_process else {
            if expected {
                violations.push(Violation::general(
                    ViolationKind::PairingDiffers,
                    format!("{name}: the plan pairs it in one process; it ran alone"),
                ));
            }
            continue;
        };
        if !expected {
            violations
                .push(Violation::general(ViolationKind::PairingDiffers, format!("{name}: claims a shared process the plan did not start")));
            continue;
        }
        let other = samples.iter().find(|o| {
            o.role != s.role
                && !o.counted
                && (o.lane.as_str(), o.implementation.as_str(), o.sample) == (s.lane.as_str(), s.implementation.as_str(), s.sample)
        });
        let opener = plan
            .slots
            .iter()
            .find(|slot| {
                slot.stage != Stage::Count
                    && (slot.lane.as_str(), slot.implementation.as_str(), slot.sample)
                        == (s.lane.as_str(), s.implementation.as_str(), s.sample)
            })
            .map(|slot| slot.role);
        match other {
            Some(o) if o.in_process == Some(process) && opener == Some(process.first) => {}
            Some(o) => violations.push(Violation::general(
                ViolationKind::PairingDiffers,
                format!("{name}: its process {process:?} is not its pair's {:?} (opened by {opener:?} in the plan)", o.in_process),
            )),
            None => violations.push(Violation::general(ViolationKind::PairingDiffers, format!("{name}: its in-process pair is missing"))),
        }
    }
    violations
}

/// The comparisons the plan implies: for every implementation measured in both trees on a lane,
/// each of its operations compared on allocations and bytes, on latency when its slots are
/// timed, and on instructions when the plan counts it in both trees (TDLib round trips are
/// timed only). One that is not there is a violation: a comparison must never vanish into a
/// pass.
pub fn check_coverage(plan: &Plan, comparisons: &[Comparison]) -> Vec<Violation> {
    let made: HashSet<(Key, Metric)> = comparisons.iter().map(|c| (c.key(), c.metric)).collect();
    let in_both_trees = |timed: bool| -> BTreeSet<(String, String)> {
        let stage_fits = |stage: Stage| (stage != Stage::Count) == timed;
        plan.slots
            .iter()
            .filter(|s| s.role == Role::Baseline && stage_fits(s.stage))
            .filter(|b| {
                plan.slots
                    .iter()
                    .any(|c| c.role == Role::Current && stage_fits(c.stage) && c.lane == b.lane && c.implementation == b.implementation)
            })
            .map(|s| (s.lane.clone(), s.implementation.clone()))
            .collect()
    };
    let (timed, counted) = (in_both_trees(true), in_both_trees(false));
    let in_both: BTreeSet<(String, String)> = timed.union(&counted).cloned().collect();
    let mut violations = Vec::new();
    for (lane, implementation) in in_both {
        let Some(info) = plan.implementation(&implementation) else { continue };
        for &operation in &info.operations {
            let key = Key { lane: lane.clone(), implementation: implementation.clone(), operation };
            let group = (lane.clone(), implementation.clone());
            let mut metrics = vec![Metric::Allocations, Metric::Bytes];
            if timed.contains(&group) {
                metrics.push(Metric::Latency);
            }
            if counted.contains(&group) && !info.timed_only() {
                metrics.push(Metric::Instructions);
            }
            for metric in metrics {
                if !made.contains(&(key.clone(), metric)) {
                    violations.push(Violation::at(
                        ViolationKind::MissingComparison,
                        &key,
                        format!("no {metric} comparison: the samples of one tree, or too many of them, lack it"),
                    ));
                }
            }
        }
    }
    violations
}
