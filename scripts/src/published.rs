//! The published copy of a run (`report/results.json`): everything a report is drawn from, typed
//! and compact, committed with every publish.
//!
//! What it leaves out of the run's own `results.json`: each sample's list of batches (the gate
//! judged from them; the run folder keeps them) and, per sample, what the run's provenance
//! already says (nonce, machine, settings, tree, corpus hash). What it writes once instead of
//! once per sample: consecutive samples of one lane, implementation and tree form a
//! [`SampleRun`], which names them once, gives what every sample of it measured alike (the
//! corpus, each operation's proof and sizes) once, and holds each per-sample figure as a column.
//! A full default run's copy went from 3.1 MB (one object per sample, at 7bca109) to about a
//! third of that; [`from_published`] gives back exactly the samples [`to_published`] was given,
//! minus their batches, in the same order.

use serde::{Deserialize, Serialize};
use tdbench_contract::{
    BatchStats, Compressed, CorpusSummary, InProcess, Machine, Operation, OperationResult, Proof, Role, RunVerdict, SCHEMA_VERSION,
    Settings, Tree, WorkerResult,
};

use crate::profile::Profile;
use crate::results::{Comparison, Provenance, Results, Violation};

/// The published copy; [`Results`] with its samples as [`SampleRun`]s.
#[derive(Debug, Serialize, Deserialize)]
pub struct Published {
    pub schema_version: u32,
    pub verdict: RunVerdict,
    pub provenance: Provenance,
    pub violations: Vec<Violation>,
    pub comparisons: Vec<Comparison>,
    pub notes: Vec<String>,
    pub profiles: Vec<Profile>,
    /// Every sample, in the run's order.
    pub sample_runs: Vec<SampleRun>,
}

/// Consecutive samples of one lane, implementation and tree that measured the same corpus and
/// produced the same outputs (the gate requires both of a valid run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRun {
    pub lane: String,
    pub implementation: String,
    pub role: Role,
    pub lane_payloads: usize,
    pub lane_json_bytes: usize,
    pub lane_synthetic_payloads: usize,
    /// Only where the samples' provenance is not the run's — a run the gate refused — so that
    /// the copy still loses nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_provenance: Option<SampleProvenance>,
    /// One entry per sample, here and in every column of [`OperationColumns`].
    pub sample: Vec<u32>,
    pub counted: Vec<bool>,
    pub in_process: Vec<Option<InProcess>>,
    pub operations: Vec<OperationColumns>,
}

/// What a sample says of where it ran, which a valid run's provenance says once for all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleProvenance {
    pub schema_version: u32,
    pub nonce: String,
    pub tree: Tree,
    pub machine: Machine,
    pub settings: Settings,
    pub corpus_sha256: String,
}

/// One operation of a [`SampleRun`]: what its samples measured alike, then a column per figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationColumns {
    pub operation: Operation,
    pub encoded_bytes: f64,
    pub proof: Proof,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed: Option<Compressed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_updates: Option<u64>,
    pub ops_per_batch: Vec<u64>,
    pub iterations: Vec<u64>,
    pub allocations_per_op: Vec<f64>,
    pub bytes_per_op: Vec<f64>,
    pub instructions_per_op: Vec<Option<f64>>,
    pub instruction_profile: Vec<Option<String>>,
    pub stats: Vec<Option<BatchStats>>,
}

/// The provenance a sample of `role` has in a valid run: the run's own.
fn expected_provenance(provenance: &Provenance, role: Role) -> Option<SampleProvenance> {
    let tree = match role {
        Role::Baseline => provenance.baseline.as_ref()?,
        Role::Current => &provenance.current,
    };
    Some(SampleProvenance {
        schema_version: SCHEMA_VERSION,
        nonce: provenance.nonce.clone(),
        tree: Tree { commit: tree.commit.clone(), dirty: tree.dirty },
        machine: provenance.machine.clone()?,
        settings: provenance.settings.worker.clone(),
        corpus_sha256: provenance.corpus_sha256.clone(),
    })
}

fn provenance_of(sample: &WorkerResult) -> SampleProvenance {
    SampleProvenance {
        schema_version: sample.schema_version,
        nonce: sample.nonce.clone(),
        tree: sample.tree.clone(),
        machine: sample.machine.clone(),
        settings: sample.settings.clone(),
        corpus_sha256: sample.corpus.sha256.clone(),
    }
}

/// A run of one sample, its columns one long.
fn run_of(sample: &WorkerResult, provenance: &Provenance) -> SampleRun {
    let own = provenance_of(sample);
    SampleRun {
        lane: sample.lane.clone(),
        implementation: sample.implementation.clone(),
        role: sample.role,
        lane_payloads: sample.corpus.lane_payloads,
        lane_json_bytes: sample.corpus.lane_json_bytes,
        lane_synthetic_payloads: sample.corpus.lane_synthetic_payloads,
        own_provenance: (expected_provenance(provenance, sample.role).as_ref() != Some(&own)).then_some(own),
        sample: vec![sample.sample],
        counted: vec![sample.counted],
        in_process: vec![sample.in_process],
        operations: sample
            .operations
            .iter()
            .map(|op| OperationColumns {
                operation: op.operation,
                encoded_bytes: op.encoded_bytes,
                proof: op.proof.clone(),
                compressed: op.compressed,
                stream_updates: op.stream_updates,
                ops_per_batch: vec![op.ops_per_batch],
                iterations: vec![op.iterations],
                allocations_per_op: vec![op.allocations_per_op],
                bytes_per_op: vec![op.bytes_per_op],
                instructions_per_op: vec![op.instructions_per_op],
                instruction_profile: vec![op.instruction_profile.clone()],
                stats: vec![op.stats],
            })
            .collect(),
    }
}

impl SampleRun {
    /// Whether `next`, a run of one sample, can join this run: everything it names once is equal.
    fn admits(&self, next: &SampleRun) -> bool {
        let shared = |op: &OperationColumns| (op.operation, op.encoded_bytes, op.proof.clone(), op.compressed, op.stream_updates);
        (&self.lane, &self.implementation, self.role, self.lane_payloads, self.lane_json_bytes, self.lane_synthetic_payloads)
            == (&next.lane, &next.implementation, next.role, next.lane_payloads, next.lane_json_bytes, next.lane_synthetic_payloads)
            && self.own_provenance == next.own_provenance
            && self.operations.len() == next.operations.len()
            && self.operations.iter().zip(&next.operations).all(|(a, b)| shared(a) == shared(b))
    }

    fn append(&mut self, next: SampleRun) {
        self.sample.extend(next.sample);
        self.counted.extend(next.counted);
        self.in_process.extend(next.in_process);
        for (op, next) in self.operations.iter_mut().zip(next.operations) {
            op.ops_per_batch.extend(next.ops_per_batch);
            op.iterations.extend(next.iterations);
            op.allocations_per_op.extend(next.allocations_per_op);
            op.bytes_per_op.extend(next.bytes_per_op);
            op.instructions_per_op.extend(next.instructions_per_op);
            op.instruction_profile.extend(next.instruction_profile);
            op.stats.extend(next.stats);
        }
    }

    /// The samples back, each with the run's provenance unless it had its own.
    fn samples(self, provenance: &Provenance) -> Result<Vec<WorkerResult>, String> {
        let n = self.sample.len();
        let columns_agree = self.counted.len() == n
            && self.in_process.len() == n
            && self.operations.iter().all(|op| {
                [
                    op.ops_per_batch.len(),
                    op.iterations.len(),
                    op.allocations_per_op.len(),
                    op.bytes_per_op.len(),
                    op.instructions_per_op.len(),
                    op.instruction_profile.len(),
                    op.stats.len(),
                ]
                .iter()
                .all(|&len| len == n)
            });
        if !columns_agree {
            return Err(format!("the samples of {} on {} have columns of different lengths", self.implementation, self.lane));
        }
        let own = match self.own_provenance.clone().or_else(|| expected_provenance(provenance, self.role)) {
            Some(own) => own,
            None => return Err(format!("{} on {}: the run's provenance lacks this tree or its machine", self.implementation, self.lane)),
        };
        Ok((0..n)
            .map(|i| WorkerResult {
                schema_version: own.schema_version,
                implementation: self.implementation.clone(),
                lane: self.lane.clone(),
                role: self.role,
                nonce: own.nonce.clone(),
                sample: self.sample[i],
                tree: own.tree.clone(),
                machine: own.machine.clone(),
                settings: own.settings.clone(),
                corpus: CorpusSummary {
                    sha256: own.corpus_sha256.clone(),
                    lane_payloads: self.lane_payloads,
                    lane_json_bytes: self.lane_json_bytes,
                    lane_synthetic_payloads: self.lane_synthetic_payloads,
                },
                operations: self
                    .operations
                    .iter()
                    .map(|op| OperationResult {
                        operation: op.operation,
                        encoded_bytes: op.encoded_bytes,
                        proof: op.proof.clone(),
                        batches_ns_per_op: Vec::new(),
                        ops_per_batch: op.ops_per_batch[i],
                        stats: op.stats[i],
                        iterations: op.iterations[i],
                        allocations_per_op: op.allocations_per_op[i],
                        bytes_per_op: op.bytes_per_op[i],
                        instructions_per_op: op.instructions_per_op[i],
                        instruction_profile: op.instruction_profile[i].clone(),
                        compressed: op.compressed,
                        stream_updates: op.stream_updates,
                    })
                    .collect(),
                in_process: self.in_process[i],
                counted: self.counted[i],
            })
            .collect())
    }
}

/// The published copy of `results`.
pub fn to_published(results: &Results) -> Published {
    let mut sample_runs: Vec<SampleRun> = Vec::new();
    for sample in &results.samples {
        let next = run_of(sample, &results.provenance);
        match sample_runs.last_mut() {
            Some(run) if run.admits(&next) => run.append(next),
            _ => sample_runs.push(next),
        }
    }
    Published {
        schema_version: results.schema_version,
        verdict: results.verdict,
        provenance: results.provenance.clone(),
        violations: results.violations.clone(),
        comparisons: results.comparisons.clone(),
        notes: results.notes.clone(),
        profiles: results.profiles.clone(),
        sample_runs,
    }
}

/// The run a published copy was made from, without its batches.
pub fn from_published(published: Published) -> Result<Results, String> {
    let mut samples = Vec::new();
    for run in published.sample_runs {
        samples.extend(run.samples(&published.provenance)?);
    }
    Ok(Results {
        schema_version: published.schema_version,
        verdict: published.verdict,
        provenance: published.provenance,
        violations: published.violations,
        comparisons: published.comparisons,
        notes: published.notes,
        profiles: published.profiles,
        samples,
    })
}
