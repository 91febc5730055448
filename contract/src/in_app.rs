//! What the in-app binary prints (`in-app`, started by `./run.sh --in-app`): one codec decoding
//! the start-up stream in a fresh process, corpus-style (decode, drop) and in situ (decode into a
//! store that keeps it, on a background thread, while a 60 Hz ticker runs beside it).

use serde::{Deserialize, Serialize};

use crate::result::{Machine, Tree};

/// Bumped when a field changes meaning.
pub const IN_APP_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InAppResult {
    pub schema_version: u32,
    pub implementation: String,
    /// Echoed from the runner: proves the file belongs to this run and this slot.
    pub nonce: String,
    pub sample: u32,
    pub tree: Tree,
    pub machine: Machine,
    pub allocator: String,
    pub stream: StreamSummary,
    /// Decode each update and drop it, as every corpus figure does.
    pub corpus: DecodePass,
    /// Decode each update on a background thread and apply it to the app store.
    pub in_situ: DecodePass,
    /// The store after one in-situ pass: the same for every codec, or the worker refuses.
    pub store: StoreSummary,
    /// The ticker with nothing else running, then while the in-situ passes ran.
    pub ticker_idle: Lateness,
    pub ticker_busy: Lateness,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamSummary {
    pub updates: u64,
    /// The stream as TDLib JSON, and in this codec's own encoding.
    pub json_bytes: u64,
    pub encoded_bytes: u64,
    /// The generator's seed: two results describe the same stream when it and `updates` agree.
    pub seed: u64,
}

/// Passes over the whole stream; figures are per update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodePass {
    /// ns per update of each pass, in the order they ran.
    pub pass_ns_per_update: Vec<f64>,
    /// Allocations per update over one pass (exact: the decoding thread's own count).
    pub allocations_per_update: f64,
    /// The highest live heap above the heap before the pass, in bytes (whole process).
    pub peak_heap_bytes: u64,
    /// Live heap left above the heap before the pass when it ended, with the store still held.
    pub retained_heap_bytes: u64,
}

/// How late the ticker's ticks started, in µs after their due time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lateness {
    pub ticks: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSummary {
    pub users: u64,
    pub chats: u64,
    pub messages: u64,
    pub files: u64,
}
