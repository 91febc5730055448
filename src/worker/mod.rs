//! The worker: one implementation on one lane, in a process of its own, written to one JSON
//! file. It knows nothing of the runner beyond its command line and the JSON it writes.
//!
//! 1. load the corpus and validate the lane's payloads with every implementation — refusing to
//!    measure on any failure;
//! 2. warm up, then time encode and decode in alternating batches for `--duration-ms`, keeping
//!    every batch's ns/op;
//! 3. count allocations over a fixed number of operations;
//! 4. write the result with provenance (`result::WorkerResult`).

pub mod count;
pub mod in_app;
pub mod kernel;
pub mod machine;
pub mod paired;
pub mod placement;

use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tdbench_contract::{
    BatchStats, Catalog, CorpusSummary, ImplementationInfo, Job, Operation, OperationResult, SCHEMA_VERSION, Settings, TdlibStatus, Tree,
    WorkerResult,
};

use crate::corpus::{Corpus, lanes};
use crate::registry::{self, Implementation};
use crate::tdlib::{HOW_TO_ENABLE, Tdjson};
use crate::validate::validate_payload;
use kernel::hex;
use placement::output_buffer;

pub use kernel::{EchoCall, Kernel, Produced, STREAM_CHUNK, check_round_trips, kernels, measured_loop, proof};

/// Writes a process's JSON result to `path`, or to standard output without one. A file is
/// written beside and renamed, so a process killed half-way leaves no half file to be read.
pub fn write_result(path: Option<&Path>, json: &str) -> std::io::Result<()> {
    match path {
        None => {
            println!("{json}");
            Ok(())
        }
        Some(path) => {
            let partial = path.with_extension("partial");
            std::fs::write(&partial, json).and_then(|_| std::fs::rename(&partial, path))
        }
    }
}

/// SHA-256 over every payload of the corpus files: file, line and bytes (the start-up stream is
/// the code's, named by the tree's commit; hashing it would set its workers' corpus apart).
pub fn corpus_sha256(corpus: &Corpus) -> String {
    let mut hash = Sha256::new();
    for p in corpus.payloads.iter().filter(|p| p.file != lanes::STREAM_FILE) {
        hash.update(p.file.as_bytes());
        hash.update((p.line as u64).to_le_bytes());
        hash.update((p.json.len() as u64).to_le_bytes());
        hash.update(&p.json);
    }
    hex(&hash.finalize())
}

/// What this worker can measure, for `worker --list`: the runner plans from it. The library
/// path is made absolute here, in the tree the runner asks, so both trees' workers can be given
/// the same one.
pub fn catalog() -> Catalog {
    let lane_names: Vec<&str> = lanes::LANES.iter().map(|l| l.name).collect();
    let library = Tdjson::path();
    Catalog {
        lanes: lanes::LANES.iter().filter(|l| !l.stream).map(|l| l.name.to_string()).collect(),
        opt_in_lanes: lanes::LANES.iter().filter(|l| l.stream).map(|l| l.name.to_string()).collect(),
        implementations: registry::implementations()
            .iter()
            .map(|i| ImplementationInfo {
                name: i.name().into(),
                kind: i.kind(),
                lanes: lane_names.iter().filter(|l| i.measures(l)).map(|l| l.to_string()).collect(),
                operations: i.operations().to_vec(),
            })
            .collect(),
        tdlib: Some(TdlibStatus {
            library: std::path::absolute(&library).unwrap_or(library.clone()).display().to_string(),
            available: library.exists(),
            how_to_enable: HOW_TO_ENABLE.into(),
        }),
    }
}

/// How many payloads each lane (of `all`) has in the corpus at `dir`, loaded as a worker loads it.
pub fn lane_sizes(dir: &Path) -> Result<std::collections::BTreeMap<String, usize>, String> {
    let corpus = Corpus::load(dir).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        format!("the corpus in {} does not load:\n{}", dir.display(), lines.join("\n"))
    })?;
    Ok(lanes::LANES.iter().filter(|l| !l.stream).map(|l| (l.name.to_string(), corpus.lane(l.name).len())).collect())
}

/// The corpus with one lane's payloads checked: loaded, not empty, and (unless the caller
/// says another process already did) every payload validated with every implementation.
pub fn load_lane(lane: &str, corpus_dir: &Path, validate: bool) -> Result<(Corpus, &'static str), String> {
    let lane = lanes::lane(lane).ok_or_else(|| lanes::parse_lane_list(lane).unwrap_err())?;
    let mut corpus = Corpus::load(corpus_dir).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        format!("the corpus does not load; nothing measured:\n{}", lines.join("\n"))
    })?;
    if lane.stream {
        corpus.add_startup_stream();
    }
    let payloads = corpus.lane(lane.name);
    if payloads.is_empty() {
        return Err(format!("lane `{}` has no payloads in {}", lane.name, corpus_dir.display()));
    }
    let failures: Vec<String> =
        if validate { payloads.iter().flat_map(|p| validate_payload(p)).map(|f| f.to_string()).collect() } else { Vec::new() };
    if !failures.is_empty() {
        return Err(format!("validation failed; nothing measured:\n{}", failures.join("\n")));
    }
    Ok((corpus, lane.name))
}

/// What a result says of the corpus it measured.
pub fn corpus_summary(corpus: &Corpus, lane: &str) -> CorpusSummary {
    let payloads = corpus.lane(lane);
    CorpusSummary {
        sha256: corpus_sha256(corpus),
        lane_payloads: payloads.len(),
        lane_json_bytes: payloads.iter().map(|p| p.json.len()).sum(),
        lane_synthetic_payloads: payloads.iter().filter(|p| p.role.synthetic).count(),
    }
}

/// Refuses a lane the implementation has no measurement for.
pub fn check_measures(implementation: Implementation, lane: &str) -> Result<(), String> {
    if implementation.measures(lane) {
        return Ok(());
    }
    Err(format!("`{}` has no measurement for lane `{lane}`; its lanes: {}", implementation.name(), registry::TDLIB_LANES.join(", ")))
}

/// Keeps only `operation`'s kernel, when one is asked for.
pub fn select_operation(kernels: &mut Vec<Kernel>, operation: Option<Operation>, implementation: &str) -> Result<(), String> {
    if let Some(operation) = operation {
        kernels.retain(|k| k.operation() == operation);
        if kernels.is_empty() {
            return Err(format!("`{implementation}` has no `{operation}` operation"));
        }
    }
    Ok(())
}

/// An operation's result with what every process measures of it alike: its proof of work and
/// its allocations over a fixed pass (a store kernel: the whole stream, from an empty store), so
/// the counts are the same in every process. Times and instruction counts are the caller's to
/// add.
pub fn counted_result(kernel: &Kernel, allocation_iterations: u64, buffer: &mut Vec<u8>, produced: Produced) -> OperationResult {
    let n = kernel.allocation_ops(allocation_iterations);
    kernel.empty_store();
    let mut cursor = 0;
    let ((), counts) = crate::alloc::measure(|| measured_loop(kernel, n, &mut cursor, buffer));
    let Produced { proof, encoded_bytes, compressed } = produced;
    OperationResult {
        operation: kernel.operation(),
        encoded_bytes,
        proof,
        compressed,
        stats: None,
        stream_updates: kernel.keeps().then_some(kernel.len() as u64),
        batches_ns_per_op: Vec::new(),
        ops_per_batch: 0,
        iterations: 0,
        allocations_per_op: counts.allocations as f64 / n as f64,
        bytes_per_op: counts.bytes as f64 / n as f64,
        instructions_per_op: None,
        instruction_profile: None,
    }
}

/// Runs a job: times its kernels and counts their allocations; the error says why nothing was
/// measured. (Instructions are the counter's: [`count`].)
pub fn run(job: &Job) -> Result<WorkerResult, String> {
    let implementation = registry::implementation(&job.implementation)?;
    let (corpus, lane) = load_lane(&job.lane, &job.corpus_dir, true)?;
    let payloads = corpus.lane(lane);
    check_measures(implementation, lane)?;
    // The library stays loaded until the process exits (its threads must never outlive it);
    // the client is closed when dropped, as TDLib requires before the process exits.
    let tdjson: Option<&'static Tdjson> = match implementation.needs_tdlib() {
        true => Some(Box::leak(Box::new(Tdjson::load()?.ok_or(HOW_TO_ENABLE)?))),
        false => None,
    };
    if let Some(note) = tdjson.map(Tdjson::check_version_for_round_trips).transpose()?.flatten() {
        eprintln!("worker: {note}");
    }
    let client = tdjson.map(|td| RefCell::new(td.client()));
    let keep = lanes::lane(lane).is_some_and(|l| l.stream);
    let mut kernels = kernels(implementation, &payloads, client.as_ref(), keep)?;
    check_round_trips(&kernels, &mut Vec::new())?;
    select_operation(&mut kernels, job.operation, &job.implementation)?;
    let proofs: Vec<Produced> = kernels.iter().map(proof).collect();
    let mut buffers: Vec<Vec<u8>> = kernels.iter().map(|_| output_buffer()).collect();
    let mut cursors = vec![0usize; kernels.len()];
    let settings = &job.settings;
    let (batches, ops_per_batch, iterations) = time_batches(&kernels, settings, &mut cursors, &mut buffers);

    let mut operations = Vec::new();
    for (i, kernel) in kernels.iter().enumerate() {
        let mut result = counted_result(kernel, settings.allocation_iterations, &mut buffers[i], proofs[i].clone());
        result.stats = if kernel.keeps() {
            BatchStats::of_stream(&batches[i], ops_per_batch[i], kernel.len() as u64)
        } else {
            BatchStats::of(&batches[i])
        };
        result.batches_ns_per_op = batches[i].clone();
        result.ops_per_batch = ops_per_batch[i];
        result.iterations = iterations[i];
        operations.push(result);
    }

    let (commit, dirty) = machine::tree_state(&job.tree, job.role);
    Ok(WorkerResult {
        schema_version: SCHEMA_VERSION,
        implementation: job.implementation.clone(),
        lane: lane.into(),
        role: job.role,
        nonce: job.nonce.clone(),
        sample: job.sample,
        tree: Tree { commit, dirty },
        machine: machine::current(),
        settings: settings.clone(),
        corpus: corpus_summary(&corpus, lane),
        operations,
        in_process: None,
        counted: false,
    })
}

/// Operations in one timed batch: about `batch_us` at `ns_per_op`, in whole cycles of the
/// lane's payloads, so every payload weighs the same in every batch.
pub fn batch_size(settings: &Settings, ns_per_op: f64, cycle: u64) -> u64 {
    let wanted = (settings.batch_us as f64 * 1000.0 / ns_per_op).max(1.0) as u64;
    wanted.div_ceil(cycle) * cycle
}

/// Warm-up sizes the batches (about `batch_us` each, whole cycles of the lane's payloads), then
/// the kernels take turns, one batch each, until the duration is spent.
fn time_batches(
    kernels: &[Kernel],
    settings: &Settings,
    cursors: &mut [usize],
    buffers: &mut [Vec<u8>],
) -> (Vec<Vec<f64>>, Vec<u64>, Vec<u64>) {
    let warmup = Duration::from_millis(settings.warmup_ms.max(1)) / kernels.len() as u32;
    let mut ops_per_batch = Vec::new();
    for (i, kernel) in kernels.iter().enumerate() {
        let started = Instant::now();
        let mut ops = 0u64;
        while started.elapsed() < warmup || ops < kernel.len() as u64 {
            measured_loop(kernel, kernel.len() as u64, &mut cursors[i], &mut buffers[i]);
            ops += kernel.len() as u64;
        }
        let ns_per_op = started.elapsed().as_nanos() as f64 / ops as f64;
        ops_per_batch.push(batch_size(settings, ns_per_op, kernel.batch_unit()));
    }
    let mut batches = vec![Vec::new(); kernels.len()];
    let mut iterations = vec![0u64; kernels.len()];
    let duration = Duration::from_millis(settings.duration_ms);
    let started = Instant::now();
    // A stream kernel runs at least one whole pass, so its statistics are of the stream.
    let short_of_a_pass = |iterations: &[u64]| kernels.iter().zip(iterations).any(|(k, &done)| k.keeps() && done < k.len() as u64);
    while started.elapsed() < duration || batches.iter().any(|b| b.len() < 3) || short_of_a_pass(&iterations) {
        for (i, kernel) in kernels.iter().enumerate() {
            let n = ops_per_batch[i];
            let t = Instant::now();
            measured_loop(kernel, n, &mut cursors[i], &mut buffers[i]);
            batches[i].push(t.elapsed().as_nanos() as f64 / n as f64);
            iterations[i] += n;
        }
    }
    (batches, ops_per_batch, iterations)
}
