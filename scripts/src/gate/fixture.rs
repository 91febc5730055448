//! A small synthetic run for the gate's tests: one lane, a codec and a floor, both trees, every
//! figure plausible, so each test changes one thing and sees the one violation it should.

use tdbench_contract::{
    BatchStats, CorpusSummary, ImplementationInfo, ImplementationKind, InProcess, Machine, Measure, Operation, OperationResult, Proof,
    Role, SCHEMA_VERSION, Settings, Stage, Tree, WorkerResult,
};

use crate::plan::{Entry, Pairing, Plan, PlanSettings, TreeInfo, count_slots, lane_slots};

/// A run of `measure`: counted twice per tree when it counts, then timed for ten rounds when it
/// times (both schedules get ten: enough for the signed-rank test to reach the family's
/// significance on the screen alone).
pub fn plan(measure: Measure) -> Plan {
    let tree =
        |reference: &str| TreeInfo { reference: reference.into(), commit: "c0ffee".into(), dirty: false, path: "/t".into(), build: None };
    let info = |name: &str, kind, operations: Vec<Operation>| ImplementationInfo {
        name: name.into(),
        kind,
        lanes: vec!["status".into()],
        operations,
    };
    let both = |name: &str| Entry { implementation: name.into(), roles: vec![Role::Baseline, Role::Current] };
    Plan {
        nonce: "n0nce".into(),
        command: vec!["./run.sh".into()],
        lanes: vec!["status".into()],
        implementations: vec!["tl".into(), "clone".into()],
        catalog: vec![
            info("tl", ImplementationKind::Codec, vec![Operation::Encode, Operation::Decode]),
            info("clone", ImplementationKind::Floor, vec![Operation::Decode]),
        ],
        baseline: Some(tree("HEAD")),
        current: tree("working tree"),
        settings: PlanSettings {
            measure,
            worker: Settings::default(),
            rounds: 10,
            backstop_rounds: 10,
            backstop_threshold_percent: 5.0,
            look_rounds: 0,
            looks: 1,
            look_seconds: 0,
            confirm_rounds: 0,
            threshold_percent: 1.0,
            run_spread_percent: 0.0,
            allow_format_change: false,
            strict: false,
        },
        // Timed, the codec's pairs share a process, the floor's do not: both kinds are covered.
        pairing: Pairing { in_process: if measure.times() { vec!["tl".into()] } else { Vec::new() }, note: String::new() },
        left_out: Vec::new(),
        slots: [
            if measure.counts() { count_slots("status", &[both("tl"), both("clone")], 2) } else { Vec::new() },
            if measure.times() { lane_slots("status", &[both("tl"), both("clone")], 10, 0, Stage::Screen) } else { Vec::new() },
        ]
        .concat(),
    }
}

/// One sample per slot; every batch near 100 ns (the same in both trees), instructions and their
/// profile in counts.
pub fn samples(plan: &Plan) -> Vec<WorkerResult> {
    plan.slots
        .iter()
        .map(|slot| {
            let info = plan.implementation(&slot.implementation).unwrap();
            let operations = info
                .operations
                .iter()
                .map(|&operation| {
                    let wobble = (slot.sample % 3) as f64;
                    let counted = slot.stage == Stage::Count;
                    let batches = if counted { Vec::new() } else { vec![103.0 + wobble, 100.0 + wobble, 101.0] };
                    OperationResult {
                        operation,
                        encoded_bytes: 60.0,
                        proof: Proof { sha256: format!("{}-{operation}", info.name) },
                        stats: BatchStats::of(&batches),
                        batches_ns_per_op: batches,
                        ops_per_batch: 1000,
                        iterations: 3000,
                        allocations_per_op: 3.0,
                        bytes_per_op: 120.0,
                        instructions_per_op: counted.then_some(1500.0),
                        instruction_profile: counted.then(|| format!("{:064x}", 1500)),
                        compressed: None,
                        stream_updates: None,
                    }
                })
                .collect();
            WorkerResult {
                schema_version: SCHEMA_VERSION,
                implementation: slot.implementation.clone(),
                lane: slot.lane.clone(),
                role: slot.role,
                nonce: plan.nonce.clone(),
                sample: slot.sample,
                tree: Tree { commit: "c0ffee".into(), dirty: false },
                machine: Machine {
                    cpu: "test cpu".into(),
                    os: "test os".into(),
                    cores: 2,
                    rustc: "rustc".into(),
                    target: "x86_64".into(),
                    profile: "release".into(),
                },
                settings: plan.settings.worker.clone(),
                corpus: CorpusSummary { sha256: "corpus".into(), lane_payloads: 16, lane_json_bytes: 2000, lane_synthetic_payloads: 0 },
                operations,
                // Even samples run forward (baseline first), odd ones in reverse.
                in_process: plan.in_process(&slot.implementation).then(|| InProcess {
                    pid: 1000 + slot.sample,
                    first: if slot.sample % 2 == 0 { Role::Baseline } else { Role::Current },
                    batches_per_block: 1,
                }),
                counted: slot.stage == Stage::Count,
            }
        })
        .collect()
}
