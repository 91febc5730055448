//! The start-up stream and the app store it feeds: its count, size and proportions, every update
//! valid in every format, and a store that ends up holding exactly what the generator's books
//! say, whichever format decoded the stream.

use std::collections::BTreeMap;

use tdbench::app::store::Store;
use tdbench::corpus::Payload;
use tdbench::corpus::lanes::FileRole;
use tdbench::corpus::startup::{self, PROPORTIONS, UPDATES};
use tdbench::registry::CODECS;
use tdbench::validate::validate_payload;
use tdbench::{Codec, Object};

fn encoded(codec: &dyn Codec, updates: &[Object]) -> Vec<Vec<u8>> {
    updates
        .iter()
        .map(|update| {
            let mut out = Vec::new();
            codec.encode(update, &mut out).expect("every update encodes");
            out
        })
        .collect()
}

#[test]
fn stream_has_its_count_size_and_proportions() {
    let stream = startup::generate();
    assert_eq!(stream.updates.len(), UPDATES);
    assert!(stream.updates.len() >= 10_000, "a start-up of at least 10,000 updates");
    let json = encoded(&tdbench::codecs::json::Json, &stream.updates);
    let bytes: usize = json.iter().map(Vec::len).sum();
    let mean = bytes / UPDATES;
    println!("{UPDATES} updates, {bytes} bytes of TDLib JSON, mean {mean} B");
    assert!((18_000_000..=22_000_000).contains(&bytes), "about 20 MB of TDLib JSON, got {bytes}");
    assert!((1_500..=2_500).contains(&mean), "mean near 2 KB, got {mean}");

    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for update in &stream.updates {
        *counts.entry(update.tl_name()).or_default() += 1;
    }
    let declared: BTreeMap<&str, usize> = PROPORTIONS.iter().copied().collect();
    assert_eq!(declared.values().sum::<usize>(), UPDATES, "the proportions add up to the stream");
    assert_eq!(counts, declared, "every type in its declared count");
}

#[test]
fn stream_is_the_same_on_every_call() {
    let a = startup::generate();
    let b = startup::generate();
    assert!(a.updates == b.updates && a.expected == b.expected);
}

#[test]
fn every_update_validates_with_every_format() {
    let stream = startup::generate();
    let json = encoded(&tdbench::codecs::json::Json, &stream.updates);
    let role = FileRole { canonical: true, measured: true, mix: false, synthetic: true };
    let mut failures = Vec::new();
    for (index, (value, json)) in stream.updates.into_iter().zip(json).enumerate() {
        let payload = Payload { file: "startup".into(), line: index + 1, json, value, role, lane: None };
        failures.extend(validate_payload(&payload));
    }
    assert!(failures.is_empty(), "{} failures, first: {:?}", failures.len(), failures.first());
}

#[test]
fn store_holds_what_the_generator_says_whichever_format_decoded_it() {
    let stream = startup::generate();
    let mut reference = Store::new();
    for update in stream.updates.iter().cloned() {
        reference.apply(update);
    }
    assert_eq!(reference.unmatched, 0, "every update names something the store holds");
    assert_eq!(reference.ignored, 0, "every update is one a client applies");
    assert_eq!(reference.held(), stream.expected, "the store holds exactly the generator's books");
    // Replacements happened: fewer users held than updateUser sent, fewer files than updateFile.
    let sent = |name: &str| stream.updates.iter().filter(|u| u.tl_name() == name).count();
    assert!(reference.users.len() < sent("updateUser") && reference.files.len() < sent("updateFile"));
    assert!(stream.expected.messages.values().map(|m| m.len()).sum::<usize>() < sent("updateNewMessage"), "deletions applied");

    for codec in CODECS {
        let mut store = Store::new();
        for bytes in encoded(*codec, &stream.updates) {
            store.apply(codec.decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", codec.name())));
        }
        assert!(store == reference, "{}: the store differs from the one built from the generator's objects", codec.name());
    }
}

/// The real start-up TDLib wrote (`corpus/tdlib-startup.jsonl`, by `capture-tdlib`): loaded and
/// validated like every corpus file, it applies to the store cleanly, and every type it carries
/// is one the generated stream carries too.
#[test]
fn real_startup_capture_applies_to_the_store() {
    let corpus = tdbench::corpus::Corpus::load(&tdbench::corpus::Corpus::default_dir()).expect("the corpus loads");
    let captured: Vec<&Payload> = corpus.payloads.iter().filter(|p| p.file == "tdlib-startup.jsonl").collect();
    assert!(captured.len() > 100, "a start-up capture of {} updates", captured.len());
    assert!(captured.iter().all(|p| p.lane.is_none()), "validated, not timed");
    let mut store = Store::new();
    for payload in &captured {
        store.apply(payload.value.clone());
    }
    assert_eq!((store.unmatched, store.ignored), (0, 0));
    assert!(store.options.contains_key("version") && store.options.len() > 100);
    assert!(matches!(store.authorization_state, Some(tdbench::models::AuthorizationState::WaitPhoneNumber(_))));
    assert!(store.connection_state.is_some());
    for payload in &captured {
        let name = payload.value.tl_name();
        assert!(PROPORTIONS.iter().any(|(n, _)| *n == name), "{name} is in the capture but not in the generated stream");
    }
}

/// The `startup` lane as a worker opens it: the stream's payloads after the corpus files', every
/// codec's decode and the clone floors keeping what they produce in a store that, after one
/// whole stream and after a second one over the full store, holds exactly the generator's books.
#[test]
fn startup_lane_kernels_keep_what_they_decode() {
    use tdbench::worker::{self, Kernel, measured_loop};
    let (corpus, lane) = worker::load_lane("startup", &tdbench::corpus::Corpus::default_dir(), false).expect("the lane opens");
    let payloads = corpus.lane(lane);
    assert_eq!(payloads.len(), UPDATES);
    let expected = startup::generate().expected;
    for implementation in ["json-td", "tl", "clone", "validated-clone"] {
        let implementation = tdbench::registry::implementation(implementation).unwrap();
        let kernels = worker::kernels(implementation, &payloads, None, true).unwrap();
        let kernel = kernels.iter().find(|k| k.keeps()).expect("a store kernel");
        assert_eq!(kernel.batch_unit(), worker::STREAM_CHUNK);
        assert_eq!(kernel.allocation_ops(48), UPDATES as u64, "an allocation pass counts the whole stream");
        let (mut cursor, mut buffer) = (0, worker::placement::output_buffer());
        for cycle in 1..=2 {
            measured_loop(kernel, UPDATES as u64, &mut cursor, &mut buffer);
            let (Kernel::DecodeInto { store, .. } | Kernel::CloneInto { store, .. }) = kernel else { unreachable!() };
            let store = store.borrow();
            assert_eq!(store.held(), expected, "{} after {cycle} stream(s)", implementation.name());
            assert_eq!((store.unmatched, store.ignored), (0, 0));
        }
        kernel.empty_store();
    }
    // Other lanes keep nothing.
    let (corpus, lane) = worker::load_lane("status", &tdbench::corpus::Corpus::default_dir(), false).unwrap();
    let kernels = worker::kernels(tdbench::registry::implementation("tl").unwrap(), &corpus.lane(lane), None, false).unwrap();
    assert!(kernels.iter().all(|k| !k.keeps() && k.batch_unit() == k.len() as u64));
}
