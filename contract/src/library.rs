//! The C ABI of a tree's kernel library (`libtdbench_kernels.so`), through which one harness
//! process loads the baseline's and the current tree's kernels side by side and alternates
//! timed batches between them (`paired` in the main crate).
//!
//! Why a C ABI: the two libraries come from two builds of possibly different commits, so no
//! Rust type may cross between them. Everything but the hot call crosses as JSON in C strings
//! ([`Opening`], [`Session`]); the hot call is `run(session, kernel, n)` and returns nothing.
//! A library whose [`VERSION`] differs is not loaded: the run falls back to process pairs.

use serde::{Deserialize, Serialize};

use crate::enums::Operation;
use crate::result::{Compressed, CorpusSummary, Proof};

/// Bumped on any change to the symbols below or to the JSON they exchange.
pub const VERSION: u32 = 1;

/// The file cargo builds for the `tdbench-kernels` crate (Linux).
pub const FILE_NAME: &str = "libtdbench_kernels.so";

/// `extern "C" fn() -> u32`: the library's [`VERSION`].
pub const SYMBOL_VERSION: &[u8] = b"tdbench_kernels_version\0";
/// `extern "C" fn(opening: *const c_char, error: *mut *mut c_char) -> *mut Session`: loads and
/// validates the lane and builds the implementation's kernels; null with `*error` set (free it
/// with [`SYMBOL_FREE`]) when it cannot.
pub const SYMBOL_OPEN: &[u8] = b"tdbench_kernels_open\0";
/// `extern "C" fn(session) -> *mut c_char`: the [`Session`] as JSON (free it with [`SYMBOL_FREE`]).
pub const SYMBOL_DESCRIBE: &[u8] = b"tdbench_kernels_describe\0";
/// `extern "C" fn(session, kernel: u32, n: u64)`: `n` operations of kernel `kernel`, cycling
/// through the lane's payloads where the last call stopped — the timed call.
pub const SYMBOL_RUN: &[u8] = b"tdbench_kernels_run\0";
/// `extern "C" fn(session, kernel: u32, n: u64, counts: *mut [u64; 2])`: allocations and bytes
/// asked for over `n` operations from the first payload, counted by the library's own
/// allocator (each library has its own, so each side's count is exact in a shared process).
pub const SYMBOL_COUNT_ALLOCATIONS: &[u8] = b"tdbench_kernels_count_allocations\0";
/// `extern "C" fn(text: *mut c_char)`: frees a string the library returned.
pub const SYMBOL_FREE: &[u8] = b"tdbench_kernels_free\0";
/// `extern "C" fn(session)`: closes what the session holds that must end before the process
/// does (a TDLib round trip's client: TDLib aborts a process that exits with a live one) and
/// frees the session. Optional: a library without it is older than TDLib round trips in one
/// process, and its tree's round trips keep processes of their own.
pub const SYMBOL_CLOSE: &[u8] = b"tdbench_kernels_close\0";

/// The line `paired --check-library FILE` prints when FILE can open TDLib round trips (it has
/// [`SYMBOL_CLOSE`]).
pub const CAN_OPEN_TDLIB: &str = "tdlib round trips: yes";

/// What to open: the same words a worker's [`crate::Job`] carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opening {
    pub implementation: String,
    pub lane: String,
    pub corpus_dir: String,
    pub operation: Option<Operation>,
}

/// An opened session: the lane it validated and the kernels it can run, in the order the
/// implementation's catalog lists its operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub corpus: CorpusSummary,
    pub kernels: Vec<KernelInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelInfo {
    pub operation: Operation,
    /// Payloads in one cycle: batches are whole cycles.
    pub cycle: u64,
    pub proof: Proof,
    pub encoded_bytes: f64,
    /// For an encode: its compressed sizes (a library older than them leaves them out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed: Option<Compressed>,
    /// A kernel that keeps what it decodes in an app store (a stream lane's): the stream's
    /// length, which its allocation pass counts at least, from an empty store. `cycle` is then
    /// a chunk of it. Absent for every other kernel, and in libraries older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keeps: Option<u64>,
}
