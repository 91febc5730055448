//! The count of one lane in one tree (`counter`): for every implementation, each operation's
//! allocations (counted here, natively) and instructions (counted under valgrind's callgrind),
//! with a fingerprint of where those instructions ran. The gate calls a comparison whose count
//! and fingerprint are equal in both trees `unchanged`, and spends no time on it beyond a light
//! backstop.
//!
//! One valgrind process per lane: valgrind's start and the corpus's load under it cost about
//! 0.7 s, which a process per implementation would pay some fourteen times a lane. Inside it,
//! the corpus is loaded once and every kernel is counted in a child forked from that process,
//! each child starting from the very same heap. Why that matters: a count depends on where
//! buffers land (glibc's `memcpy` takes more or fewer instructions by alignment), so a kernel
//! counted after other kernels would inherit their allocations, and a change to one codec would
//! move the counts of every codec counted after it. A forked child inherits only what every
//! kernel shares, and the process between forks allocates nothing.
//!
//! What else a count depends on is made equal in both trees: the program path (the runner
//! starts both trees' counters from paths of one length), the inner job (the same text: the
//! run's list of implementations, not the tree's), the environment (cleared) and the working
//! folder (`/`), and the output file's name (fixed length).

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tdbench_contract::{CountJob, ImplementationKind, Operation, OperationResult, SCHEMA_VERSION, Tree, WorkerResult, callgrind};

use super::kernel::hex;
use super::placement::output_buffer;
use super::{Kernel, corpus_summary, kernels, load_lane, machine, measured_loop, proof};
use crate::corpus::lanes;
use crate::registry::{self, Implementation};

/// The loop callgrind counts (`--toggle-collect`): warm-up calls [`measured_loop`] directly and
/// is not counted. Not inlined, so its name is in every profile.
#[inline(never)]
pub fn counted_loop(kernel: &Kernel, n: u64, cursor: &mut usize, buffer: &mut Vec<u8>) {
    measured_loop(kernel, n, cursor, buffer)
}

/// The function callgrind counts inside, as its option matches it.
const COUNTED: &str = "*counted_loop*";

/// Operations in the counted loop: whole cycles of the lane's payloads, so every payload weighs
/// the same.
pub fn counted_operations(instruction_cycles: u64, kernel: &Kernel) -> u64 {
    instruction_cycles.max(1) * kernel.len() as u64
}

/// What the valgrind process is told: the same text in both trees of a run.
#[derive(Debug, Serialize, Deserialize)]
struct InnerJob {
    lane: String,
    implementations: Vec<String>,
    corpus_dir: PathBuf,
    instruction_cycles: u64,
}

/// Whether valgrind can be run here; the error says how to get it.
pub fn check_valgrind() -> Result<(), String> {
    match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("instruction counts need valgrind on PATH (Debian: apt-get install valgrind)".into()),
    }
}

/// Whether this tree counts `implementation` on `lane`: not a TDLib round trip (TDLib's threads
/// make their counts vary), and measuring the lane.
fn countable(implementation: &Implementation, lane: &str) -> bool {
    implementation.kind() != ImplementationKind::Tdlib && implementation.measures(lane)
}

/// The implementations of `names` this tree knows and counts on `lane`, in that order.
fn countable_of(names: &[String], lane: &str) -> Vec<Implementation> {
    names.iter().filter_map(|name| registry::find(name)).filter(|i| countable(i, lane)).collect()
}

/// Counts a lane: one result per implementation this tree can count, in the job's order.
pub fn run(job: &CountJob) -> Result<Vec<WorkerResult>, String> {
    check_valgrind()?;
    let (corpus, lane) = load_lane(&job.lane, &job.corpus_dir, true)?;
    let payloads = corpus.lane(lane);
    let keep = lanes::lane(lane).is_some_and(|l| l.stream);
    let settings = &job.settings;

    // Natively: what each kernel produces and allocates.
    let mut measured: Vec<(Implementation, Vec<OperationResult>)> = Vec::new();
    for implementation in countable_of(&job.implementations, lane) {
        let kernels = kernels(implementation, &payloads, None, keep)?;
        let operations = kernels
            .iter()
            .map(|kernel| {
                // One cycle first, as a timed worker has run many before it counts: what a
                // kernel sets up on its first call is not an allocation per operation.
                let mut buffer = output_buffer();
                measured_loop(kernel, kernel.len() as u64, &mut 0, &mut buffer);
                let mut result = super::counted_result(kernel, settings.allocation_iterations, &mut buffer, proof(kernel));
                result.iterations = counted_operations(settings.instruction_cycles, kernel);
                result
            })
            .collect();
        measured.push((implementation, operations));
    }

    // Under callgrind: every kernel's instructions.
    let counts = count_instructions(job, lane)?;
    let (commit, dirty) = machine::tree_state(&job.tree, job.role);
    let mut results = Vec::new();
    for (implementation, mut operations) in measured {
        for op in &mut operations {
            let found = counts.iter().find(|c| c.implementation == implementation.name() && c.operation == op.operation.as_str());
            let count = found.ok_or_else(|| format!("no count of {} {} came back from valgrind", implementation.name(), op.operation))?;
            op.instructions_per_op = Some(count.instructions as f64 / op.iterations as f64);
            op.instruction_profile = Some(count.profile.clone());
        }
        results.push(WorkerResult {
            schema_version: SCHEMA_VERSION,
            implementation: implementation.name().into(),
            lane: lane.into(),
            role: job.role,
            nonce: job.nonce.clone(),
            sample: job.sample,
            tree: Tree { commit: commit.clone(), dirty },
            machine: machine::current(),
            settings: settings.clone(),
            corpus: corpus_summary(&corpus, lane),
            operations,
            in_process: None,
            counted: true,
        });
    }
    Ok(results)
}

/// One kernel's count, as the valgrind process reported it.
struct Count {
    implementation: String,
    operation: String,
    instructions: u64,
    /// SHA-256 of the program's own per-function counts ([`callgrind::own_costs`]).
    profile: String,
}

/// Runs the lane's kernels under callgrind ([`inner`]) and reads each one's count.
fn count_instructions(job: &CountJob, lane: &str) -> Result<Vec<Count>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the counter's own binary: {e}"))?;
    // The child runs from `/`, so the corpus folder must be absolute.
    let corpus_dir = std::path::absolute(&job.corpus_dir).map_err(|e| format!("corpus folder {}: {e}", job.corpus_dir.display()))?;
    let scratch = Scratch::new()?;
    let inner = InnerJob {
        lane: lane.into(),
        implementations: job.implementations.clone(),
        corpus_dir,
        instruction_cycles: job.settings.instruction_cycles,
    };
    let job_file = scratch.0.join("job.json");
    std::fs::write(&job_file, serde_json::to_string(&inner).expect("a job serializes")).map_err(|e| e.to_string())?;
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}/cg.%p", scratch.0.display()))
        .arg(format!("--toggle-collect={COUNTED}"))
        .arg(&exe)
        .arg("--inner")
        .arg(&job_file)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir("/")
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail = || stderr.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    if !output.status.success() {
        return Err(format!("the counted process under valgrind failed ({}):\n{}", output.status, tail()));
    }
    let mut counts = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [pid, implementation, operation, status] = fields[..] else {
            return Err(format!("the counted process printed `{line}`, not `PID IMPLEMENTATION OPERATION STATUS`"));
        };
        if status != "0" {
            return Err(format!("counting {implementation} {operation} failed (status {status}):\n{}", tail()));
        }
        let file = scratch.0.join(format!("cg.{pid}"));
        let text = std::fs::read_to_string(&file).map_err(|e| format!("callgrind wrote no {}: {e}", file.display()))?;
        let instructions = callgrind::total(&text).ok_or_else(|| format!("{} has no totals line", file.display()))?;
        let profile = hex(&Sha256::digest(callgrind::profile_text(&callgrind::own_costs(&text))));
        if let Some(dir) = &job.keep_callgrind {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let kept = dir.join(format!("{implementation}-{operation}.callgrind"));
            std::fs::write(&kept, &text).map_err(|e| format!("cannot write {}: {e}", kept.display()))?;
        }
        counts.push(Count { implementation: implementation.into(), operation: operation.into(), instructions, profile });
    }
    Ok(counts)
}

/// A folder of its own under the system's temporary folder, removed when dropped. Its name has
/// the same length in every process (16 random hex digits): the output file's name is part of
/// what valgrind and the counted process are given.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let mut bytes = [0u8; 8];
        if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_err() {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            bytes = (t.as_nanos() as u64 ^ u64::from(std::process::id())).to_le_bytes();
        }
        let dir = std::env::temp_dir().join(format!("tdbench-count-{}", hex(&bytes)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Inside valgrind: loads the corpus once, then counts each kernel in a child of its own, forked
/// from this very state, one after another; prints `PID IMPLEMENTATION OPERATION STATUS` per
/// kernel at the end. Everything the loop between forks touches is allocated before the first
/// fork, so every child starts from the same heap.
pub fn inner(job_file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(job_file).map_err(|e| format!("{}: {e}", job_file.display()))?;
    let job: InnerJob = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", job_file.display()))?;
    let (corpus, lane) = load_lane(&job.lane, &job.corpus_dir, false)?;
    let keep = lanes::lane(lane).is_some_and(|l| l.stream);
    // Sized by the job, not by what this tree has: the same allocations in both trees.
    let most = job.implementations.len() * Operation::ALL.len();
    let mut kernels: Vec<(Implementation, usize)> = Vec::with_capacity(most);
    for implementation in job.implementations.iter().filter_map(|name| registry::find(name)).filter(|i| countable(i, lane)) {
        kernels.extend((0..implementation.operations().len()).map(|k| (implementation, k)));
    }
    let mut children: Vec<(i32, i32)> = Vec::with_capacity(most);
    for &(implementation, k) in &kernels {
        // SAFETY: this process has one thread (valgrind runs it alone), so the child may do
        // anything the parent could; it leaves with `_exit`, never returning here.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            let status = match count_one(&corpus, lane, implementation, k, keep, job.instruction_cycles) {
                Ok(()) => 0,
                Err(message) => {
                    eprintln!("counter: {} on {lane}: {message}", implementation.name());
                    1
                }
            };
            // SAFETY: ends the child at once; callgrind writes its counts as the process ends.
            unsafe { libc::_exit(status) }
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked; `status` is a valid place for its status.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        children.push((pid, status));
    }
    for (&(implementation, k), (pid, status)) in kernels.iter().zip(&children) {
        let operation = implementation.operations()[k];
        let code = if libc::WIFEXITED(*status) { libc::WEXITSTATUS(*status) } else { 128 + libc::WTERMSIG(*status) };
        println!("{pid} {} {operation} {code}", implementation.name());
    }
    Ok(())
}

/// In a forked child: the implementation's kernels, then kernel `k` warmed up (two cycles, which
/// also grows its buffer) and counted.
fn count_one(
    corpus: &crate::corpus::Corpus,
    lane: &str,
    implementation: Implementation,
    k: usize,
    keep: bool,
    cycles: u64,
) -> Result<(), String> {
    let payloads = corpus.lane(lane);
    let kernels = kernels(implementation, &payloads, None, keep)?;
    let kernel = &kernels[k];
    let mut buffer = output_buffer();
    let mut cursor = 0;
    measured_loop(kernel, 2 * kernel.len() as u64, &mut cursor, &mut buffer);
    cursor = 0;
    counted_loop(kernel, counted_operations(cycles, kernel), &mut cursor, &mut buffer);
    black_box(&buffer);
    Ok(())
}
