//! The JSON a worker prints: self-describing, so the gate and the report read only files and a
//! saved run can be merged and drawn again without re-running anything.

use serde::{Deserialize, Serialize};

use crate::enums::{Operation, Role};
use crate::job::Settings;

/// Bumped when a field changes meaning; the gate refuses versions it does not know.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    pub schema_version: u32,
    pub implementation: String,
    pub lane: String,
    pub role: Role,
    /// Echoed from the runner: proves the file belongs to this run and this slot.
    pub nonce: String,
    pub sample: u32,
    pub tree: Tree,
    pub machine: Machine,
    pub settings: Settings,
    pub corpus: CorpusSummary,
    pub operations: Vec<OperationResult>,
    /// Set when this result shares its process with the other tree's result of the same sample
    /// (both trees' kernel libraries loaded side by side, batches alternating); absent for a
    /// process of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<InProcess>,
    /// From a count (`counter`): instructions and allocations of every operation, no time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
}

/// What the `paired` harness prints: one result per tree, from one process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedResult {
    pub baseline: WorkerResult,
    pub current: WorkerResult,
}

/// The process a pair of results shared: the gate checks that both sides name the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InProcess {
    pub pid: u32,
    /// The tree whose batch opens each A B B A B A A B block.
    pub first: Role,
    /// Batches of each side in one block, in the order they ran: the gate compares the two
    /// trees block by block.
    pub batches_per_block: u32,
}

/// What the worker says of the tree it was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    pub commit: String,
    pub dirty: bool,
}

/// Where a worker ran, so the gate can refuse to compare samples from different machines,
/// compilers or profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu: String,
    pub os: String,
    pub cores: usize,
    pub rustc: String,
    pub target: String,
    pub profile: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusSummary {
    /// SHA-256 of every corpus payload (file, line and bytes), not only this lane's.
    pub sha256: String,
    pub lane_payloads: usize,
    pub lane_json_bytes: usize,
    /// How many of the lane's payloads come from `synthetic*` files (reports mark them `~`).
    #[serde(default)]
    pub lane_synthetic_payloads: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationResult {
    pub operation: Operation,
    /// Mean bytes per payload of this implementation's encoding (input of decode, output of
    /// encode).
    pub encoded_bytes: f64,
    pub proof: Proof,
    /// ns/op of every timed batch, in the order they ran (empty under `instructions`). The gate
    /// computes its statistics from these, never from `stats` alone.
    #[serde(default)]
    pub batches_ns_per_op: Vec<f64>,
    pub ops_per_batch: u64,
    /// Summary of the batches, for readers; the gate refuses a sample where it disagrees with
    /// `batches_ns_per_op`.
    pub stats: Option<BatchStats>,
    pub iterations: u64,
    pub allocations_per_op: f64,
    pub bytes_per_op: f64,
    /// In a count: instructions per operation of the measured loop.
    pub instructions_per_op: Option<f64>,
    /// In a count: SHA-256 of the counted loop's instructions per function of the program itself
    /// ([`crate::callgrind::own_costs`], not the C library's). Equal profiles, and totals within
    /// a hair, in two trees: the same functions did the same work, so the machine code that ran
    /// did not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_profile: Option<String>,
    /// For an encode: mean bytes per payload of its encoding compressed on its own (what a
    /// compressed message would carry). Absent from decodes and from workers older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed: Option<Compressed>,
    /// A stream lane's kernel (decodes kept in the app store): the stream's length, and `stats`
    /// are of whole passes ([`BatchStats::of_stream`]). Absent everywhere else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_updates: Option<u64>,
}

impl OperationResult {
    /// What `stats` must be, from the batches: of whole passes on a stream lane.
    pub fn expected_stats(&self) -> Option<BatchStats> {
        match self.stream_updates {
            Some(stream) => BatchStats::of_stream(&self.batches_ns_per_op, self.ops_per_batch, stream),
            None => BatchStats::of(&self.batches_ns_per_op),
        }
    }
}

/// Mean compressed bytes per payload: gzip at level 6 (MTProto's `gzip_packed`) and zstd at
/// level 3, each payload's encoding compressed alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Compressed {
    pub gzip_bytes: f64,
    pub zstd_bytes: f64,
}

/// What the worker did, checkable without trusting it: SHA-256 over every payload's output
/// (encodings for encode, canonical TDLib JSON of the decoded values for decode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    pub sha256: String,
}

/// Per-process statistics of the batches; the fastest batch is the one to compare across
/// processes on this machine kind (`../shared/NOISE.md`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchStats {
    pub fastest: f64,
    pub p10: f64,
    pub median: f64,
    pub mean: f64,
    pub batches: usize,
}

impl BatchStats {
    /// `None` for no batches.
    pub fn of(samples: &[f64]) -> Option<BatchStats> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        Some(BatchStats {
            fastest: sorted[0],
            p10: at(0.1),
            median: at(0.5),
            mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
            batches: sorted.len(),
        })
    }

    /// For a stream lane, whose batches are chunks of `ops_per_batch` consecutive updates of a
    /// `cycle`-update stream: the statistics of whole passes through the stream (the mean of
    /// each run of consecutive batches covering one), so that `fastest` is the fastest pass and
    /// not the cheapest chunk (a run of options is a tenth of a run of chats). Fewer batches
    /// than a pass: their mean, as one. `batches` stays the count of timed batches.
    pub fn of_stream(samples: &[f64], ops_per_batch: u64, cycle: u64) -> Option<BatchStats> {
        let per_pass = (cycle.div_ceil(ops_per_batch.max(1)) as usize).max(1);
        let passes: Vec<f64> = samples.chunks_exact(per_pass).map(|c| c.iter().sum::<f64>() / c.len() as f64).collect();
        let mean = (!samples.is_empty()).then(|| samples.iter().sum::<f64>() / samples.len() as f64);
        let whole = if passes.is_empty() { mean.into_iter().collect() } else { passes };
        BatchStats::of(&whole).map(|stats| BatchStats { batches: samples.len(), ..stats })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_statistics_are_of_whole_passes() {
        // A 4-update stream in chunks of 2: passes of (1, 9) and (3, 7) average 5 each; the
        // cheapest chunk (1) is not a pass.
        let stats = BatchStats::of_stream(&[1.0, 9.0, 3.0, 7.0, 2.0], 2, 4).unwrap();
        assert_eq!((stats.fastest, stats.median, stats.batches), (5.0, 5.0, 5));
        // Less than a pass: the mean of what ran.
        assert_eq!(BatchStats::of_stream(&[1.0, 3.0], 2, 10).unwrap().fastest, 2.0);
        assert!(BatchStats::of_stream(&[], 2, 10).is_none());
    }
}
