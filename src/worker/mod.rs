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
pub mod machine;
pub mod paired;
pub mod placement;

use std::cell::RefCell;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tdbench_contract::{
    BatchStats, Catalog, Compressed, CorpusSummary, ImplementationInfo, Job, Operation, OperationResult, Proof, SCHEMA_VERSION, Settings,
    TdlibStatus, Tree, WorkerResult,
};
use tdbench_models::Object;
use tdbench_models::validated::ValidatedClone;

use crate::Codec;
use crate::app::store::Store;
use crate::codecs::json::Json;
use crate::corpus::{Corpus, Payload, lanes};
use crate::registry::{self, Floor, Implementation};
use crate::tdlib::{Client, HOW_TO_ENABLE, Tdjson, echo_method};
use crate::validate::validate_payload;
use placement::{Placed, output_buffer};

/// One timed operation over the lane's payloads, cycled in order. The criterion bench runs
/// these same kernels, so `cargo bench` and `./run.sh` cannot measure different code.
pub enum Kernel<'a> {
    Encode {
        codec: &'static dyn Codec,
        values: Vec<&'a Object>,
    },
    Decode {
        codec: &'static dyn Codec,
        inputs: Vec<Placed>,
    },
    Clone {
        values: Vec<&'a Object>,
    },
    /// The start-up stream's decode: each update decoded and applied to the app store, which
    /// keeps it (replacing and dropping what it held), as a client does.
    DecodeInto {
        codec: &'static dyn Codec,
        inputs: Vec<Placed>,
        store: RefCell<Store>,
    },
    /// The stream's floors: each update cloned (UTF-8 checked when `validated`) into the store.
    CloneInto {
        values: Vec<&'a Object>,
        validated: bool,
        store: RefCell<Store>,
    },
    ValidatedClone {
        values: Vec<&'a Object>,
    },
    Memcpy {
        inputs: Vec<Placed>,
    },
    /// A TDLib echo call per payload, or the empty call (`testCallEmpty`) when `calls` is empty.
    RoundTrip {
        codec: &'static dyn Codec,
        client: &'a RefCell<Client<'static>>,
        calls: Vec<EchoCall<'a>>,
    },
}

impl Kernel<'_> {
    pub fn operation(&self) -> Operation {
        match self {
            Kernel::Encode { .. } | Kernel::Memcpy { .. } => Operation::Encode,
            Kernel::Decode { .. }
            | Kernel::Clone { .. }
            | Kernel::ValidatedClone { .. }
            | Kernel::DecodeInto { .. }
            | Kernel::CloneInto { .. } => Operation::Decode,
            Kernel::RoundTrip { calls, .. } if calls.is_empty() => Operation::EmptyCall,
            Kernel::RoundTrip { .. } => Operation::RoundTrip,
        }
    }

    /// Payloads in one cycle (never zero: a lane without payloads makes no kernel).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        match self {
            Kernel::Encode { values, .. } | Kernel::Clone { values } | Kernel::ValidatedClone { values } => values.len(),
            Kernel::Decode { inputs, .. } | Kernel::DecodeInto { inputs, .. } => inputs.len(),
            Kernel::CloneInto { values, .. } => values.len(),
            Kernel::Memcpy { inputs } => inputs.len(),
            Kernel::RoundTrip { calls, .. } => calls.len().max(1),
        }
    }

    /// Whether it keeps what it produces in an app store (the start-up stream's decodes).
    pub fn keeps(&self) -> bool {
        matches!(self, Kernel::DecodeInto { .. } | Kernel::CloneInto { .. })
    }

    /// Operations a timed batch is a whole number of: a cycle of the lane's payloads, so every
    /// payload weighs the same in every batch — but a stream of 10,000 updates would make a batch
    /// last a second, so there a chunk of [`STREAM_CHUNK`] updates (both sides of a pair run the
    /// same updates in the same batch: their cursors move alike).
    pub fn batch_unit(&self) -> u64 {
        if self.keeps() { STREAM_CHUNK.min(self.len() as u64) } else { self.len() as u64 }
    }

    /// Empties the app store, so an allocation pass counts from the same state in every process.
    pub fn empty_store(&self) {
        if let Kernel::DecodeInto { store, .. } | Kernel::CloneInto { store, .. } = self {
            *store.borrow_mut() = Store::new();
        }
    }

    /// Operations an allocation pass of `requested` counts: a whole stream for a store kernel
    /// (from an empty store), so its figure is the stream's, not its first updates'.
    pub fn allocation_ops(&self, requested: u64) -> u64 {
        if self.keeps() { requested.max(self.len() as u64) } else { requested.max(1) }
    }
}

/// A stream kernel's batch unit, in updates.
pub const STREAM_CHUNK: u64 = 50;

/// The loop every measurement runs: `n` operations from payload `*cursor` on, cycling.
/// Not inlined, so `valgrind --toggle-collect='*measured_loop*'` counts exactly this.
///
/// `buffer` is the kernel's output buffer ([`placement::output_buffer`]): what it holds on
/// entry is kept, each operation appends after it, and the loop leaves it as it came.
#[inline(never)]
pub fn measured_loop(kernel: &Kernel, n: u64, cursor: &mut usize, buffer: &mut Vec<u8>) {
    let start = buffer.len();
    let len = kernel.len();
    let mut at = *cursor;
    let mut next = || {
        let this = at;
        at += 1;
        if at == len {
            at = 0;
        }
        this
    };
    match kernel {
        Kernel::Encode { codec, values } => {
            for _ in 0..n {
                buffer.truncate(start);
                codec.encode(values[next()], buffer).expect("validated payloads encode");
                black_box(&*buffer);
            }
        }
        Kernel::Decode { codec, inputs } => {
            for _ in 0..n {
                let value = codec.decode(&inputs[next()]).expect("validated payloads decode");
                // Dropping the value is part of decoding's cost, as it is in a client.
                drop(black_box(value));
            }
        }
        Kernel::Clone { values } => {
            for _ in 0..n {
                drop(black_box(values[next()].clone()));
            }
        }
        Kernel::DecodeInto { codec, inputs, store } => {
            let mut store = store.borrow_mut();
            for _ in 0..n {
                store.apply(codec.decode(&inputs[next()]).expect("validated payloads decode"));
            }
        }
        Kernel::CloneInto { values, validated, store } => {
            let mut store = store.borrow_mut();
            for _ in 0..n {
                let value = values[next()];
                store.apply(if *validated { value.validated_clone() } else { value.clone() });
            }
        }
        Kernel::ValidatedClone { values } => {
            for _ in 0..n {
                drop(black_box(values[next()].validated_clone()));
            }
        }
        Kernel::Memcpy { inputs } => {
            for _ in 0..n {
                buffer.truncate(start);
                buffer.extend_from_slice(&inputs[next()]);
                black_box(&*buffer);
            }
        }
        Kernel::RoundTrip { codec, client, calls } => {
            let mut client = client.borrow_mut();
            for _ in 0..n {
                let call = calls.get(next());
                let value = round_trip(*codec, &mut client, call, buffer).expect("validated round trips succeed");
                drop(black_box(value));
            }
        }
    }
    *cursor = at;
    buffer.truncate(start);
}

fn encode_with(codec: &dyn Codec, value: &Object) -> Vec<u8> {
    let mut out = Vec::new();
    codec.encode(value, &mut out).expect("validated payloads encode");
    out
}

/// One echo call: the payload, the request's method, and how long the payload object's JSON
/// prefix is (`{"@type":"testString","value":`), which the request's prefix replaces.
pub struct EchoCall<'a> {
    value: &'a Object,
    request_prefix: Vec<u8>,
    object_prefix_len: usize,
}

impl<'a> EchoCall<'a> {
    fn new(value: &'a Object) -> Result<Self, String> {
        let method = echo_method(value).ok_or_else(|| format!("TDLib has no echo method for `{}`", value.tl_name()))?;
        Ok(EchoCall {
            value,
            request_prefix: format!("{{\"@type\":\"{method}\",\"x\":").into_bytes(),
            object_prefix_len: format!("{{\"@type\":\"{}\",\"value\":", value.tl_name()).len(),
        })
    }
}

/// The measured TDLib round trip: `codec` encodes the request into `buffer` after what it holds
/// (the payload's object, its prefix turned into the echo method's, `@extra` appended), TDLib
/// parses and answers it, and `codec` decodes the answer where TDLib left it. `None` is the
/// empty call. The buffer is left as it came.
fn round_trip(codec: &dyn Codec, client: &mut Client<'_>, call: Option<&EchoCall>, buffer: &mut Vec<u8>) -> Result<Object, String> {
    use std::io::Write;
    let extra = client.next_extra();
    let start = buffer.len();
    match call {
        None => buffer.extend_from_slice(br#"{"@type":"testCallEmpty"}"#),
        Some(call) => {
            codec.encode(call.value, buffer).map_err(|e| e.to_string())?;
            let object = start..start + call.object_prefix_len;
            if call.request_prefix.len() == call.object_prefix_len {
                // `testCallString`/`x` is exactly as long as `testString`/`value`: overwrite.
                buffer[object].copy_from_slice(&call.request_prefix);
            } else {
                buffer.splice(object, call.request_prefix.iter().copied());
            }
        }
    }
    buffer.pop(); // the closing brace
    write!(buffer, ",\"@extra\":{extra}}}\0").expect("writing to a Vec cannot fail");
    let answer = client.round_trip(&buffer[start..], extra, |answer| codec.decode(answer));
    buffer.truncate(start);
    answer?.map_err(|e| e.to_string())
}

/// The kernels of an implementation on a lane's payloads, in [`Implementation::operations`]
/// order. A TDLib implementation needs its client.
///
/// On a stream lane (`keep`), decodes and clones go into an app store instead of being dropped.
pub fn kernels<'a>(
    implementation: Implementation,
    payloads: &[&'a Payload],
    client: Option<&'a RefCell<Client<'static>>>,
    keep: bool,
) -> Result<Vec<Kernel<'a>>, String> {
    let values: Vec<&Object> = payloads.iter().map(|p| &p.value).collect();
    let store = || RefCell::new(Store::new());
    Ok(match implementation {
        Implementation::Codec(codec) => {
            let inputs = values.iter().map(|v| Placed::new(&encode_with(codec, v))).collect();
            let decode = if keep { Kernel::DecodeInto { codec, inputs, store: store() } } else { Kernel::Decode { codec, inputs } };
            vec![Kernel::Encode { codec, values: values.clone() }, decode]
        }
        Implementation::Floor(Floor::Clone) if keep => vec![Kernel::CloneInto { values, validated: false, store: store() }],
        Implementation::Floor(Floor::ValidatedClone) if keep => vec![Kernel::CloneInto { values, validated: true, store: store() }],
        Implementation::Floor(Floor::Clone) => vec![Kernel::Clone { values }],
        Implementation::Floor(Floor::ValidatedClone) => vec![Kernel::ValidatedClone { values }],
        Implementation::Floor(Floor::Memcpy(of)) => {
            let codec = registry::codec(of.codec).expect("a memcpy floor names a registered codec");
            vec![Kernel::Memcpy { inputs: values.iter().map(|v| Placed::new(&encode_with(codec, v))).collect() }]
        }
        Implementation::Tdlib { codec, .. } => {
            let client = client.expect("a TDLib client for a TDLib implementation");
            let calls = values.iter().map(|v| EchoCall::new(v)).collect::<Result<Vec<_>, _>>()?;
            vec![Kernel::RoundTrip { codec, client, calls }, Kernel::RoundTrip { codec, client, calls: Vec::new() }]
        }
    })
}

/// What `testCallEmpty` answers: `ok`.
fn empty_call_answer() -> Object {
    Object::Ok(tdbench_models::Ok::default())
}

/// TDLib must answer every call with the payload itself (and the empty call with `ok`), read
/// back by the codec on our side, before its round trips are timed.
pub fn check_round_trips(kernels: &[Kernel], buffer: &mut Vec<u8>) -> Result<(), String> {
    for kernel in kernels {
        let Kernel::RoundTrip { codec, client, calls } = kernel else { continue };
        let mut client = client.borrow_mut();
        if calls.is_empty() {
            let answer = round_trip(*codec, &mut client, None, buffer)?;
            if answer != empty_call_answer() {
                return Err(format!("TDLib answered testCallEmpty with `{}`, not `ok`", answer.tl_name()));
            }
        }
        for call in calls {
            let answer = round_trip(*codec, &mut client, Some(call), buffer)?;
            if answer != *call.value {
                return Err(format!(
                    "TDLib's echo of a `{}` read back by {} differs from what was sent",
                    call.value.tl_name(),
                    codec.name()
                ));
            }
        }
    }
    Ok(())
}

/// What a kernel produces, checkable: the hash of every payload's output, so baseline and
/// current can be shown to have done the same work, its mean size, and for an encode (or a
/// `memcpy` floor's copy) its compressed sizes.
#[derive(Debug, Clone)]
pub struct Produced {
    pub proof: Proof,
    pub encoded_bytes: f64,
    pub compressed: Option<Compressed>,
}

pub fn proof(kernel: &Kernel) -> Produced {
    let outputs: Vec<Vec<u8>> = match kernel {
        Kernel::Encode { codec, values } => values.iter().map(|v| encode_with(*codec, v)).collect(),
        Kernel::Decode { codec, inputs } | Kernel::DecodeInto { codec, inputs, .. } => {
            inputs.iter().map(|i| encode_with(&Json, &codec.decode(i).expect("decodes"))).collect()
        }
        Kernel::CloneInto { values, validated: false, .. } => values.iter().map(|v| encode_with(&Json, &(*v).clone())).collect(),
        Kernel::CloneInto { values, validated: true, .. } => values.iter().map(|v| encode_with(&Json, &v.validated_clone())).collect(),
        Kernel::Clone { values } => values.iter().map(|v| encode_with(&Json, &(*v).clone())).collect(),
        Kernel::ValidatedClone { values } => values.iter().map(|v| encode_with(&Json, &v.validated_clone())).collect(),
        Kernel::Memcpy { inputs } => inputs.iter().map(|i| i.to_vec()).collect(),
        // What TDLib answered, as read back (checked equal to the payloads before timing).
        Kernel::RoundTrip { calls, .. } if calls.is_empty() => vec![encode_with(&Json, &empty_call_answer())],
        Kernel::RoundTrip { calls, .. } => calls.iter().map(|c| encode_with(&Json, c.value)).collect(),
    };
    let mut hash = Sha256::new();
    for output in &outputs {
        hash.update((output.len() as u64).to_le_bytes());
        hash.update(output);
    }
    // A decode's size is its input's; every other kernel's is what it produced (for `clone`,
    // the JSON of the cloned values: the same bytes as the payloads').
    let encoded_bytes = match kernel {
        Kernel::Decode { inputs, .. } | Kernel::DecodeInto { inputs, .. } => inputs.iter().map(|i| i.len()).sum::<usize>(),
        _ => outputs.iter().map(Vec::len).sum(),
    } as f64
        / kernel.len() as f64;
    let compressed = match kernel {
        Kernel::Encode { .. } | Kernel::Memcpy { .. } => crate::sizes::compressed(&outputs),
        _ => None,
    };
    Produced { proof: Proof { sha256: hex(&hash.finalize()) }, encoded_bytes, compressed }
}

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

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
