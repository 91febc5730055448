//! The merger: reads a run's plan and worker files (and nothing else), rejects what cannot be
//! trusted, gates allocations and latency, and writes `results.json` and `summary.md`.
//! It is re-runnable on a saved output folder: `cargo run --release -p tdbench-scripts --bin merge -- DIR`.
//!
//! Latency is judged from pairs of adjacent samples (baseline and current, next to each other
//! in the balanced order), as log-ratios of each process's fastest batch. The family of all
//! latency comparisons is held to a 5% chance of any false alarm (Bonferroni): a comparison
//! fails only when its one-sided lower bound at 1 − 5%/m is above no change (the gate only
//! ever claims "slower", so the bound is one-sided) and its estimate is above the threshold.
//! Reported intervals are the two-sided 1 − 10%/m intervals whose lower end is that bound. A first pass
//! screens every comparison; one whose estimate is above the threshold and nominally
//! significant (p < 0.05) is re-run with fresh samples, and the verdict comes from those alone,
//! so the selection does not bias it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use tdbench::worker::machine::Machine;
use tdbench::worker::result::{OperationResult, WorkerResult, SCHEMA_VERSION};

use crate::plan::{Plan, PlanSettings, TreeInfo};
use crate::stats::Paired;

/// Family-wise false-alarm rate of the latency gate.
pub const FAMILY_ALPHA: f64 = 0.05;
/// Nominal one-sided significance that sends a comparison to confirmation.
pub const SCREEN_P: f64 = 0.05;
/// Instruction counts of one role must agree this closely (relative). They are exact for the
/// same binary and input — repeated counts were identical in every test here — so any
/// difference means nondeterminism in the measured path; the tolerance only absorbs float
/// rounding of the per-op division.
pub const INSTRUCTION_TOLERANCE: f64 = 1e-9;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    pub kind: String,
    pub lane: Option<String>,
    pub implementation: Option<String>,
    pub operation: Option<String>,
    pub message: String,
}

impl Violation {
    fn general(kind: &str, message: String) -> Violation {
        Violation { kind: kind.into(), lane: None, implementation: None, operation: None, message }
    }

    fn at(kind: &str, key: &Key, message: String) -> Violation {
        Violation {
            kind: kind.into(),
            lane: Some(key.lane.clone()),
            implementation: Some(key.implementation.clone()),
            operation: Some(key.operation.clone()),
            message,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub lane: String,
    pub implementation: String,
    pub operation: String,
    /// `latency` (ns/op, fastest batch), `allocations` or `bytes` (per op).
    pub metric: String,
    pub baseline: f64,
    pub current: f64,
    /// current/baseline − 1.
    pub change: f64,
    /// Family-wise interval of the change, where there is one.
    pub interval: Option<(f64, f64)>,
    /// The smallest slowdown this comparison could have detected.
    pub detectable: Option<f64>,
    pub pairs: usize,
    /// `screen`, or `confirm` when the verdict comes from confirmation samples.
    pub stage: String,
    /// `pass`, `regression`, `not confirmed` (screen flagged it, confirmation did not),
    /// `inconclusive` (flagged, no confirmation samples).
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub nonce: String,
    pub command: Vec<String>,
    /// What the run was asked to measure, so a report can say what is missing.
    pub lanes: Vec<String>,
    pub implementations: Vec<String>,
    pub baseline: Option<TreeInfo>,
    pub current: TreeInfo,
    pub machine: Option<Machine>,
    pub settings: PlanSettings,
    pub merged_at_unix: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    /// `pass` or `fail`.
    pub verdict: String,
    pub provenance: Provenance,
    pub violations: Vec<Violation>,
    pub comparisons: Vec<Comparison>,
    pub samples: Vec<WorkerResult>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub lane: String,
    pub implementation: String,
    pub operation: String,
}

/// Reads every slot of the plan; each sample must be where the plan put it and say so.
pub fn load_samples(output: &Path, plan: &Plan) -> (Vec<WorkerResult>, Vec<Violation>) {
    let mut samples = Vec::new();
    let mut violations = Vec::new();
    let mut expected = BTreeSet::new();
    for slot in &plan.slots {
        let path = slot.file(output);
        expected.insert(path.clone());
        let name = format!("{}/{} {} sample {}", slot.lane, slot.implementation, slot.role, slot.sample);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(_) => {
                violations.push(Violation::general("missing sample", format!("{name}: {} is missing", path.display())));
                continue;
            }
        };
        let result: WorkerResult = match serde_json::from_str(&text) {
            Ok(result) => result,
            Err(e) => {
                violations.push(Violation::general("unreadable sample", format!("{name}: {}: {e}", path.display())));
                continue;
            }
        };
        if result.schema_version != SCHEMA_VERSION {
            violations.push(Violation::general(
                "unreadable sample",
                format!("{name}: schema version {} (this merger reads {SCHEMA_VERSION})", result.schema_version),
            ));
            continue;
        }
        if result.nonce != plan.nonce {
            violations.push(Violation::general("reused sample", format!("{name}: carries nonce {} of another run (this run: {})", result.nonce, plan.nonce)));
            continue;
        }
        if (result.lane.as_str(), result.implementation.as_str(), result.role.as_str(), result.sample)
            != (slot.lane.as_str(), slot.implementation.as_str(), slot.role.as_str(), slot.sample)
        {
            violations.push(Violation::general(
                "reordered sample",
                format!(
                    "{name}: the file holds {}/{} {} sample {}",
                    result.lane, result.implementation, result.role, result.sample
                ),
            ));
            continue;
        }
        samples.push(result);
    }
    for file in json_files(&output.join("samples")) {
        if !expected.contains(&file) {
            violations.push(Violation::general("duplicate sample", format!("{} is not a slot of this run's plan", file.display())));
        }
    }
    (samples, violations)
}

fn json_files(dir: &Path) -> Vec<std::path::PathBuf> {
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

/// Every worker must have run on the same machine, compiler, settings and corpus, and each
/// tree's samples must come from the commit the plan names.
pub fn check_metadata(plan: &Plan, samples: &[WorkerResult]) -> Vec<Violation> {
    let mut violations = Vec::new();
    let Some(first) = samples.first() else { return violations };
    for s in samples {
        let name = format!("{}/{} {} sample {}", s.lane, s.implementation, s.role, s.sample);
        if s.machine != first.machine {
            violations.push(Violation::general("metadata differs", format!("{name}: ran on {:?}, others on {:?}", s.machine, first.machine)));
        }
        if s.settings != first.settings {
            violations.push(Violation::general("metadata differs", format!("{name}: settings {:?} differ from {:?}", s.settings, first.settings)));
        }
        if s.corpus.sha256 != first.corpus.sha256 {
            violations.push(Violation::general("metadata differs", format!("{name}: measured another corpus ({})", s.corpus.sha256)));
        }
        let tree = if s.role == "baseline" { plan.baseline.as_ref() } else { Some(&plan.current) };
        if let Some(tree) = tree {
            if s.tree.commit != tree.commit {
                violations.push(Violation::general(
                    "metadata differs",
                    format!("{name}: built from {} but the plan's {} tree is {}", s.tree.commit, s.role, tree.commit),
                ));
            }
        }
    }
    violations
}

type Grouped<'a> = BTreeMap<Key, BTreeMap<String, Vec<(&'a WorkerResult, &'a OperationResult)>>>;

fn group(samples: &[WorkerResult]) -> Grouped<'_> {
    let mut grouped: Grouped = BTreeMap::new();
    for s in samples {
        for op in &s.operations {
            let key = Key { lane: s.lane.clone(), implementation: s.implementation.clone(), operation: op.operation.clone() };
            grouped.entry(key).or_default().entry(s.role.clone()).or_default().push((s, op));
        }
    }
    grouped
}

/// Pairs of (baseline, current) fastest-batch ns/op with the same sample index.
fn pairs(by_role: &BTreeMap<String, Vec<(&WorkerResult, &OperationResult)>>, keep: impl Fn(u32) -> bool) -> Vec<(f64, f64)> {
    let fastest = |role: &str| -> BTreeMap<u32, f64> {
        by_role
            .get(role)
            .map(|v| v.iter().filter(|(s, _)| keep(s.sample)).filter_map(|(s, op)| op.stats.map(|st| (s.sample, st.fastest))).collect())
            .unwrap_or_default()
    };
    let (baseline, current) = (fastest("baseline"), fastest("current"));
    baseline.iter().filter_map(|(k, b)| current.get(k).map(|c| (*b, *c))).collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The first pass over every latency comparison: which ones need confirmation.
pub fn screen_flags(plan: &Plan, samples: &[WorkerResult]) -> BTreeSet<Key> {
    let screen_samples = 2 * plan.settings.rounds;
    let threshold = plan.settings.threshold_percent / 100.0;
    let grouped = group(samples);
    let family = grouped.len().max(1) as f64;
    grouped
        .iter()
        .filter_map(|(key, by_role)| {
            let paired = Paired::of(&pairs(by_role, |k| k < screen_samples))?;
            let (low, _) = paired.interval(2.0 * FAMILY_ALPHA / family);
            let slower = paired.ratio() > 1.0 + threshold;
            (slower && low <= 1.0 && paired.p_slower() < SCREEN_P).then(|| key.clone())
        })
        .collect()
}

/// Allocation, format and latency comparisons, and the violations they find.
pub fn compare(plan: &Plan, samples: &[WorkerResult]) -> (Vec<Comparison>, Vec<Violation>) {
    let mut comparisons = Vec::new();
    let mut violations = Vec::new();
    let grouped = group(samples);
    let screen_samples = 2 * plan.settings.rounds;
    let threshold = plan.settings.threshold_percent / 100.0;
    let flagged = screen_flags(plan, samples);
    let family = grouped.len().max(1) as f64;
    let confirm_family = flagged.len().max(1) as f64;

    for (key, by_role) in &grouped {
        // Within one role, every process must have done the same thing the same way.
        for (role, entries) in by_role {
            let (_, first) = entries[0];
            for (s, op) in entries {
                if op.allocations_per_op != first.allocations_per_op || op.bytes_per_op != first.bytes_per_op {
                    violations.push(Violation::at(
                        "nondeterministic allocations",
                        key,
                        format!(
                            "{role} sample {}: {} allocations / {} bytes per op, sample {}: {} / {}",
                            s.sample, op.allocations_per_op, op.bytes_per_op, entries[0].0.sample, first.allocations_per_op, first.bytes_per_op
                        ),
                    ));
                }
                if op.proof != first.proof || op.encoded_bytes != first.encoded_bytes {
                    violations.push(Violation::at("nondeterministic output", key, format!("{role} sample {}: output differs from sample {}", s.sample, entries[0].0.sample)));
                }
            }
        }
        let (Some(base), Some(curr)) = (by_role.get("baseline"), by_role.get("current")) else { continue };
        let (b, c) = (base[0].1, curr[0].1);

        if (b.encoded_bytes != c.encoded_bytes || b.proof != c.proof) && !plan.settings.allow_format_change {
            violations.push(Violation::at(
                "format change",
                key,
                format!(
                    "encoding differs from the baseline ({:.1} → {:.1} bytes per payload, proof {} → {}); pass --allow-format-change if intended",
                    b.encoded_bytes, c.encoded_bytes, &b.proof.sha256[..12], &c.proof.sha256[..12]
                ),
            ));
        }

        for (metric, base_value, curr_value) in [
            ("allocations", b.allocations_per_op, c.allocations_per_op),
            ("bytes", b.bytes_per_op, c.bytes_per_op),
        ] {
            let regression = curr_value > base_value;
            if regression {
                violations.push(Violation::at(
                    "allocation regression",
                    key,
                    format!("{metric} per op {base_value} → {curr_value}"),
                ));
            }
            comparisons.push(Comparison {
                lane: key.lane.clone(),
                implementation: key.implementation.clone(),
                operation: key.operation.clone(),
                metric: metric.into(),
                baseline: base_value,
                current: curr_value,
                change: if base_value > 0.0 { curr_value / base_value - 1.0 } else if curr_value > 0.0 { f64::INFINITY } else { 0.0 },
                interval: None,
                detectable: None,
                pairs: base.len().min(curr.len()),
                stage: "screen".into(),
                verdict: if regression { "regression" } else { "pass" }.into(),
            });
        }

        if let (Some(base_count), Some(curr_count)) = (b.instructions_per_op, c.instructions_per_op) {
            for (role, entries) in by_role {
                let first = entries[0].1.instructions_per_op.unwrap_or(0.0);
                for (s, op) in entries {
                    let count = op.instructions_per_op.unwrap_or(0.0);
                    if (count - first).abs() > INSTRUCTION_TOLERANCE * first.abs().max(1.0) {
                        violations.push(Violation::at(
                            "nondeterministic instructions",
                            key,
                            format!("{role} sample {}: {count} instructions per op, sample {}: {first}", s.sample, entries[0].0.sample),
                        ));
                    }
                }
            }
            let change = curr_count / base_count - 1.0;
            let regression = change > threshold;
            if regression {
                violations.push(Violation::at(
                    "instruction regression",
                    key,
                    format!("{base_count:.1} → {curr_count:.1} instructions per op ({:+.3}%) exceeds the {:.1}% threshold", change * 100.0, plan.settings.threshold_percent),
                ));
            }
            comparisons.push(Comparison {
                lane: key.lane.clone(),
                implementation: key.implementation.clone(),
                operation: key.operation.clone(),
                metric: "instructions".into(),
                baseline: base_count,
                current: curr_count,
                change,
                interval: None,
                detectable: None,
                pairs: base.len().min(curr.len()),
                stage: "screen".into(),
                verdict: if regression { "regression" } else { "pass" }.into(),
            });
        }

        let base_fastest: Vec<f64> = base.iter().filter_map(|(_, op)| op.stats.map(|s| s.fastest)).collect();
        let curr_fastest: Vec<f64> = curr.iter().filter_map(|(_, op)| op.stats.map(|s| s.fastest)).collect();
        let Some(screen) = Paired::of(&pairs(by_role, |k| k < screen_samples)) else { continue };
        let confirm = Paired::of(&pairs(by_role, |k| k >= screen_samples));
        let (paired, alpha, stage, verdict) = if flagged.contains(key) {
            match confirm {
                Some(confirm) => {
                    let alpha = 2.0 * FAMILY_ALPHA / confirm_family;
                    let (low, _) = confirm.interval(alpha);
                    let regression = confirm.ratio() > 1.0 + threshold && low > 1.0;
                    (confirm, alpha, "confirm", if regression { "regression" } else { "not confirmed" })
                }
                None => (screen, 2.0 * FAMILY_ALPHA / family, "screen", "inconclusive"),
            }
        } else {
            let alpha = 2.0 * FAMILY_ALPHA / family;
            let (low, _) = screen.interval(alpha);
            let regression = screen.ratio() > 1.0 + threshold && low > 1.0;
            (screen, alpha, "screen", if regression { "regression" } else { "pass" })
        };
        let (low, high) = paired.interval(alpha);
        if verdict == "regression" {
            violations.push(Violation::at(
                "latency regression",
                key,
                format!(
                    "{:+.2}% (interval {:+.2}% to {:+.2}%, {} pairs, {stage}) exceeds the {:.1}% threshold",
                    (paired.ratio() - 1.0) * 100.0,
                    (low - 1.0) * 100.0,
                    (high - 1.0) * 100.0,
                    paired.pairs,
                    plan.settings.threshold_percent
                ),
            ));
        }
        comparisons.push(Comparison {
            lane: key.lane.clone(),
            implementation: key.implementation.clone(),
            operation: key.operation.clone(),
            metric: "latency".into(),
            baseline: median(base_fastest),
            current: median(curr_fastest),
            change: paired.ratio() - 1.0,
            interval: Some((low - 1.0, high - 1.0)),
            detectable: Some(paired.detectable(alpha)),
            pairs: paired.pairs,
            stage: stage.into(),
            verdict: verdict.into(),
        });
    }
    (comparisons, violations)
}

/// Merges a run folder: the full results, whatever the verdict.
pub fn merge(output: &Path) -> Result<Results, String> {
    let plan_path = output.join("plan.json");
    let plan: Plan = serde_json::from_str(
        &std::fs::read_to_string(&plan_path).map_err(|e| format!("cannot read {}: {e}", plan_path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", plan_path.display()))?;
    let (samples, mut violations) = load_samples(output, &plan);
    violations.extend(check_metadata(&plan, &samples));
    let (comparisons, compare_violations) = compare(&plan, &samples);
    violations.extend(compare_violations);
    let verdict = if violations.is_empty() { "pass" } else { "fail" };
    Ok(Results {
        schema_version: 1,
        verdict: verdict.into(),
        provenance: Provenance {
            nonce: plan.nonce.clone(),
            command: plan.command.clone(),
            lanes: plan.lanes.clone(),
            implementations: plan.implementations.clone(),
            baseline: plan.baseline.clone(),
            current: plan.current.clone(),
            machine: samples.first().map(|s| s.machine.clone()),
            settings: plan.settings.clone(),
            merged_at_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        },
        violations,
        comparisons,
        samples,
    })
}

/// Writes `results.json` (atomically) and `summary.md`.
pub fn write(output: &Path, results: &Results) -> Result<(), String> {
    let json = serde_json::to_string_pretty(results).expect("results serialize");
    let path = output.join("results.json");
    let partial = output.join("results.json.partial");
    std::fs::write(&partial, json)
        .and_then(|_| std::fs::rename(&partial, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::write(output.join("summary.md"), crate::summary::markdown(results))
        .map_err(|e| format!("cannot write summary.md: {e}"))
}
