//! The kernels: each implementation's timed operation over a lane's payloads, the loop that runs
//! it (the one the worker times, the counter counts and the paired harness alternates), the
//! TDLib round trip, and the proof of what a kernel produced. The worker (`mod.rs`) decides
//! when to run them and writes what they measured.

use std::cell::RefCell;
use std::hint::black_box;

use sha2::{Digest, Sha256};
use tdbench_contract::{Compressed, Operation, Proof};
use tdbench_models::Object;
use tdbench_models::validated::ValidatedClone;

use super::placement::Placed;
use crate::Codec;
use crate::app::store::Store;
use crate::codecs::json::Json;
use crate::corpus::Payload;
use crate::registry::{self, Floor, Implementation};
use crate::tdlib::{Client, echo_method};

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

/// Lowercase hex of a digest: proofs, the corpus hash and instruction profiles.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
