//! The paired harness: one process loads the baseline's and the current tree's kernel
//! libraries ([`tdbench_contract::library`]), checks that both validated the same lane into the
//! same kernels, warms both, then alternates equal batches between them in A B B A B A A B blocks for
//! the timed phase, so that drift, frequency changes and neighbours hit both trees alike.
//!
//! Why: on this machine kind the speed of a process drifts by tens of percent over seconds, and
//! two processes a second apart differ by several percent; batches a few milliseconds apart in
//! one process differ by far less (`../shared/NOISE.md`: +1.45% seen in 8 of 8 such processes,
//! in 0–1 of 3 process pairs). Each library is its own layout draw, so layout luck stays noise
//! across processes, as it is for process pairs. Allocation counts come from each library's
//! own counting allocator: exact, as in a process of its own.

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use libloading::Library;
use tdbench_contract::library::{self, Opening, Session};
use tdbench_contract::{BatchStats, InProcess, OperationResult, PairedJob, PairedResult, Role, SCHEMA_VERSION, Tree, WorkerResult};

use super::{batch_size, machine};

type Open = unsafe extern "C" fn(*const c_char, *mut *mut c_char) -> *mut c_void;
type Describe = unsafe extern "C" fn(*const c_void) -> *mut c_char;
type Run = unsafe extern "C" fn(*mut c_void, u32, u64);
type CountAllocations = unsafe extern "C" fn(*mut c_void, u32, u64, *mut [u64; 2]);
type Free = unsafe extern "C" fn(*mut c_char);
type Close = unsafe extern "C" fn(*mut c_void);

/// A function of the library, copied out of its symbol: valid while the library stays loaded.
///
/// # Safety
/// `T` must be the symbol's real type.
unsafe fn symbol<T: Copy>(library: &Library, name: &[u8]) -> Result<T, libloading::Error> {
    unsafe { library.get::<T>(name).map(|s| *s) }
}

/// One tree's library with its session open.
struct Side {
    role: Role,
    run: Run,
    count_allocations: CountAllocations,
    session: *mut c_void,
    description: Session,
    /// Closes the session (a TDLib client with it); absent in libraries older than TDLib round
    /// trips in one process, which never open one.
    close: Option<Close>,
    /// Kept last: the library stays loaded while its functions can be called.
    _library: Library,
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Some(close) = self.close {
            // SAFETY: the session is this library's and is not used again.
            unsafe { close(self.session) }
        }
    }
}

impl Side {
    /// Loads `path`, checks its ABI version and opens the job's lane in it.
    fn open(role: Role, path: &Path, opening: &Opening) -> Result<Side, String> {
        let name = format!("the {role} tree's kernel library {}", path.display());
        // SAFETY: the library is one of tdbench's own builds; loading runs no code of ours but
        // Rust's std initialisation, and every symbol is checked against its ABI version first.
        unsafe {
            let library = Library::new(path).map_err(|e| format!("cannot load {name}: {e}"))?;
            let version: extern "C" fn() -> u32 =
                symbol(&library, library::SYMBOL_VERSION).map_err(|e| format!("{name} has no ABI version: {e}"))?;
            if version() != library::VERSION {
                return Err(format!("{name} speaks ABI {}, this harness {}", version(), library::VERSION));
            }
            let missing = |e: libloading::Error| format!("{name}: {e}");
            let open: Open = symbol(&library, library::SYMBOL_OPEN).map_err(missing)?;
            let describe: Describe = symbol(&library, library::SYMBOL_DESCRIBE).map_err(missing)?;
            let run: Run = symbol(&library, library::SYMBOL_RUN).map_err(missing)?;
            let count_allocations: CountAllocations = symbol(&library, library::SYMBOL_COUNT_ALLOCATIONS).map_err(missing)?;
            let free: Free = symbol(&library, library::SYMBOL_FREE).map_err(missing)?;
            let close: Option<Close> = symbol(&library, library::SYMBOL_CLOSE).ok();
            let request = CString::new(serde_json::to_string(opening).expect("an opening serializes")).expect("JSON has no NUL");
            let mut error = std::ptr::null_mut();
            let session = open(request.as_ptr(), &mut error);
            if session.is_null() {
                let message = taken(error, free).unwrap_or_else(|| "it could not open the lane and gave no reason".into());
                return Err(format!("{name}: {message}"));
            }
            let text = taken(describe(session), free).ok_or_else(|| format!("{name}: it opened the lane but did not describe it"))?;
            let description = serde_json::from_str(&text).map_err(|e| format!("{name}: unreadable session: {e}"))?;
            Ok(Side { role, run, count_allocations, session, description, close, _library: library })
        }
    }

    fn run(&self, kernel: usize, n: u64) {
        // SAFETY: the session is this library's, the kernel index one it described.
        unsafe { (self.run)(self.session, kernel as u32, n) }
    }

    fn timed(&self, kernel: usize, n: u64) -> f64 {
        let started = Instant::now();
        self.run(kernel, n);
        started.elapsed().as_nanos() as f64 / n as f64
    }

    fn allocations(&self, kernel: usize, n: u64) -> [u64; 2] {
        let mut counts = [0u64; 2];
        // SAFETY: as in `run`; `counts` is two writable u64s.
        unsafe { (self.count_allocations)(self.session, kernel as u32, n, &mut counts) };
        counts
    }
}

/// Runs a paired job; the error says why nothing was measured.
pub fn run(paired: &PairedJob) -> Result<PairedResult, String> {
    let job = &paired.job;
    let opening = Opening {
        implementation: job.implementation.clone(),
        lane: job.lane.clone(),
        corpus_dir: std::path::absolute(&job.corpus_dir).unwrap_or(job.corpus_dir.clone()).display().to_string(),
        operation: job.operation,
    };
    // Loaded in the order the blocks open, which alternates across samples: whatever loading
    // first does (addresses, a warmer page cache) falls on each tree alike.
    let open = |role| match role {
        Role::Baseline => Side::open(role, &paired.baseline_library, &opening),
        Role::Current => Side::open(role, &paired.current_library, &opening),
    };
    let second_role = if job.role == Role::Baseline { Role::Current } else { Role::Baseline };
    let (first, second) = in_arenas_of_their_own(|| open(job.role), || open(second_role));
    let (first, second) = (&first?, &second?);
    let (baseline, current) = if job.role == Role::Baseline { (first, second) } else { (second, first) };
    let operations = |side: &Side| side.description.kernels.iter().map(|k| (k.operation, k.cycle)).collect::<Vec<_>>();
    if operations(baseline) != operations(current) || baseline.description.corpus != current.description.corpus {
        return Err(format!(
            "the two trees open `{}` on `{}` differently: baseline {:?}, current {:?}",
            job.implementation,
            job.lane,
            operations(baseline),
            operations(current)
        ));
    }
    // Outputs that differ are a format change: measured, and judged by the gate's format check.
    let timed = time_blocks(first, second, &job.settings);

    let result = |side: &Side, tree: &Path| {
        let (commit, dirty) = machine::tree_state(tree, side.role);
        let n = job.settings.allocation_iterations.max(1);
        let operations = side
            .description
            .kernels
            .iter()
            .enumerate()
            .map(|(k, kernel)| {
                let batches = if side.role == first.role { &timed.first[k] } else { &timed.second[k] };
                // A store kernel counts its whole stream (the library empties the store first).
                let n = kernel.keeps.map_or(n, |stream| n.max(stream));
                let [allocations, bytes] = side.allocations(k, n);
                OperationResult {
                    operation: kernel.operation,
                    encoded_bytes: kernel.encoded_bytes,
                    proof: kernel.proof.clone(),
                    stats: match kernel.keeps {
                        Some(stream) => BatchStats::of_stream(batches, timed.ops_per_batch[k], stream),
                        None => BatchStats::of(batches),
                    },
                    batches_ns_per_op: batches.clone(),
                    ops_per_batch: timed.ops_per_batch[k],
                    iterations: timed.ops_per_batch[k] * batches.len() as u64,
                    allocations_per_op: allocations as f64 / n as f64,
                    bytes_per_op: bytes as f64 / n as f64,
                    instructions_per_op: None,
                    instruction_profile: None,
                    compressed: kernel.compressed,
                    stream_updates: kernel.keeps,
                }
            })
            .collect();
        WorkerResult {
            schema_version: SCHEMA_VERSION,
            implementation: job.implementation.clone(),
            lane: job.lane.clone(),
            role: side.role,
            nonce: job.nonce.clone(),
            sample: job.sample,
            tree: Tree { commit, dirty },
            machine: machine::current(),
            settings: job.settings.clone(),
            corpus: side.description.corpus.clone(),
            operations,
            in_process: Some(InProcess { pid: std::process::id(), first: first.role, batches_per_block: BLOCK as u32 }),
            counted: false,
        }
    };
    Ok(PairedResult { baseline: result(baseline, &paired.baseline_tree), current: result(current, &job.tree) })
}

// SAFETY: a side's session belongs to its library, which lets any one thread at a time use
// it; the harness opens each side on a thread of its own, then uses both from one thread.
unsafe impl Send for Side {}

/// Runs `first` and then `second`, each on a thread of its own that lives until both are done:
/// glibc gives each such thread a fresh malloc arena, so whatever each allocates (here: a
/// library's corpus, decoded values and buffers) lies at the same offsets in its own arena,
/// whichever ran first. The harness opens each side this way, then times both on its own thread.
///
/// Why: opened one after the other on one heap, the second library's values landed wherever
/// the first's left room, and copies out of them ran at another speed. In A/A runs of the
/// string and bytes lanes (six rounds): `bytes-1k` bincode encode pairs spread 8.1% across
/// processes, +6.9% in those whose baseline loaded first against the others; `string-64k`
/// msgpack encode 9.1% (order effect 8.9%), tl encode 6.4%. Opened this way: 2.0%, 1.1%, 1.0%,
/// and those lanes' comparisons gated at 3% went from 43 to 52 of 68.
pub fn in_arenas_of_their_own<T: Send>(
    first: impl FnOnce() -> Result<T, String> + Send,
    second: impl FnOnce() -> Result<T, String> + Send,
) -> (Result<T, String>, Result<T, String>) {
    // A thread that ends hands its arena to the next thread that starts: both stay until both
    // are done, and the second starts only when the first is done.
    let (first_done, both_done) = (Barrier::new(2), Barrier::new(2));
    std::thread::scope(|scope| {
        let a = scope.spawn(|| {
            let result = caught(first);
            first_done.wait();
            both_done.wait();
            result
        });
        first_done.wait();
        let b = scope.spawn(|| {
            let result = caught(second);
            both_done.wait();
            result
        });
        let joined = |handle: std::thread::ScopedJoinHandle<'_, Result<T, String>>| handle.join().unwrap_or_else(|_| Err(PANICKED.into()));
        (joined(a), joined(b))
    })
}

const PANICKED: &str = "opening a library panicked";

/// `f`'s result, a panic turned into an error, so that no thread misses its barriers.
fn caught<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Err(PANICKED.into()))
}

/// Batches per side in one block: a quarter of the eight-batch round (A B B A or B A A B).
pub const BLOCK: usize = 2;

/// Batches per kernel of the side that opens each block and of the other, and the operations
/// in every batch (the same for both sides).
struct Timed {
    first: Vec<Vec<f64>>,
    second: Vec<Vec<f64>>,
    ops_per_batch: Vec<u64>,
}

/// One kernel at a time: a warm-up runs both sides alike and sizes one batch from their mean
/// speed, so each side's batch does the same work; then that kernel runs rounds of eight
/// batches, A B B A B A A B, back to back for its share of twice the duration (each side gets
/// about what a process of its own would), then the next kernel. Every other round swaps A and
/// B, and a kernel's rounds end after an even number. A block, the unit the gate compares, is a
/// quarter round: A B B A or B A A B, two batches per side a few milliseconds apart, so the
/// median over a process's blocks shrugs off the bursts a neighbour causes (seen here:
/// stretches of batches three to six times slower), and half of its blocks are opened by each
/// side.
///
/// Why one kernel at a time: the first batch after another kernel ran is cold (its code and
/// data were evicted): seen here, json-td's messages encode ran about 100 µs in the first batch
/// of every round and 60 µs in the others, when rounds of encode and decode took turns. That
/// batch fell on whichever side opened the round, so quarter ratios swung by ±20% and a pair's
/// median by ±2% (A/A, 5 ms batches); swapping the opener every round only cancelled its bias.
/// Pairing already cancels drift, so nothing is gained by spreading a kernel over the process.
fn time_blocks(first: &Side, second: &Side, settings: &tdbench_contract::Settings) -> Timed {
    let kernels = &first.description.kernels;
    let warmup = Duration::from_millis(settings.warmup_ms.max(1)) / (2 * kernels.len()) as u32;
    let share = Duration::from_millis(2 * settings.duration_ms) / kernels.len() as u32;
    let mut timed = Timed { first: vec![Vec::new(); kernels.len()], second: vec![Vec::new(); kernels.len()], ops_per_batch: Vec::new() };
    for (k, kernel) in kernels.iter().enumerate() {
        // The second side warms up on exactly as many operations as the first took: their
        // cursors stay together, so on a stream lane (batches of a chunk, not of whole cycles)
        // both sides' batch k runs the same updates.
        let speed = |side: &Side, at_least: u64| {
            let started = Instant::now();
            let mut ops = 0u64;
            while (at_least == 0 && started.elapsed() < warmup) || ops == 0 || ops < at_least {
                side.run(k, kernel.cycle);
                ops += kernel.cycle;
            }
            (started.elapsed().as_nanos() as f64 / ops as f64, ops)
        };
        let (a, warmed) = speed(first, 0);
        let (b, _) = speed(second, warmed);
        let n = batch_size(settings, (a + b) / 2.0, kernel.cycle);
        timed.ops_per_batch.push(n);
        let started = Instant::now();
        // The opener flips every round: an eight-batch round balances positions, and two rounds
        // balance which side opens.
        let mut flip = false;
        // An even number of rounds, at least two: each side opens as many as the other.
        // A stream kernel runs at least one whole pass a side, so its statistics are of the stream.
        let short_of_a_pass = |batches: usize| kernel.keeps.is_some_and(|stream| (batches as u64) * n < stream);
        while started.elapsed() < share || flip || timed.first[k].len() < 8 || short_of_a_pass(timed.first[k].len()) {
            for opens in [true, false, false, true, false, true, true, false] {
                let (side, batches) = if opens != flip { (first, &mut timed.first[k]) } else { (second, &mut timed.second[k]) };
                batches.push(side.timed(k, n));
            }
            flip = !flip;
        }
    }
    timed
}

/// Whether `path` is a kernel library this harness can load (the runner asks before it plans
/// in-process pairs, and falls back to process pairs, saying so, when not), and whether it can
/// also open TDLib round trips (it closes sessions: [`library::SYMBOL_CLOSE`]).
/// A text the library handed over (then freed with its own `free`), or `None` for a null
/// pointer: a library may fail without a message, and reading NULL would crash the harness.
///
/// # Safety
/// `text` is null or a NUL-terminated string from the library that `free` releases.
unsafe fn taken(text: *mut c_char, free: Free) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null, and by the contract a NUL-terminated string of the library's.
    let owned = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    // SAFETY: the library's own text, freed once.
    unsafe { free(text) };
    Some(owned)
}

/// Loads the library at `path` as a run would, before any sample depends on it: its ABI
/// version, every symbol a run calls, and an open that must fail cleanly (a lane no library
/// has), with a message. A library that passes cannot crash the harness the ways seen so far:
/// one that answered NULL from open without a message passed a version check alone, then
/// killed `paired` with a segmentation fault.
pub fn check_library(path: &Path) -> Result<Capabilities, String> {
    let name = path.display();
    // SAFETY: as in `Side::open`; every pointer the library returns is checked before use.
    unsafe {
        let library = Library::new(path).map_err(|e| format!("cannot load {name}: {e}"))?;
        let version: extern "C" fn() -> u32 =
            symbol(&library, library::SYMBOL_VERSION).map_err(|e| format!("{name} has no ABI version: {e}"))?;
        if version() != library::VERSION {
            return Err(format!("{name} speaks ABI {}, this harness {}", version(), library::VERSION));
        }
        let missing = |e: libloading::Error| format!("{name}: {e}");
        let open: Open = symbol(&library, library::SYMBOL_OPEN).map_err(missing)?;
        symbol::<Describe>(&library, library::SYMBOL_DESCRIBE).map_err(missing)?;
        symbol::<Run>(&library, library::SYMBOL_RUN).map_err(missing)?;
        symbol::<CountAllocations>(&library, library::SYMBOL_COUNT_ALLOCATIONS).map_err(missing)?;
        let free: Free = symbol(&library, library::SYMBOL_FREE).map_err(missing)?;
        let close = symbol::<Close>(&library, library::SYMBOL_CLOSE).ok();
        let nowhere = Opening { implementation: String::new(), lane: String::new(), corpus_dir: String::new(), operation: None };
        let request = CString::new(serde_json::to_string(&nowhere).expect("an opening serializes")).expect("JSON has no NUL");
        let mut error = std::ptr::null_mut();
        let session = open(request.as_ptr(), &mut error);
        if !session.is_null() {
            if let Some(close) = close {
                close(session);
            }
            return Err(format!("{name} opened a session for no lane at all: it does not check what it is asked"));
        }
        if taken(error, free).is_none_or(|m| m.trim().is_empty()) {
            return Err(format!("{name} failed an open without saying why: a run could not name what went wrong"));
        }
        Ok(Capabilities { tdlib: close.is_some() })
    }
}

/// What a loadable kernel library can open beyond codecs and floors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub tdlib: bool,
}
