//! The corpus is what the generator writes, every payload validates, lanes have the sizes TDLib
//! emits, and the validator catches what it is there to catch.

use tdbench::corpus::lanes::LANES;
use tdbench::corpus::{Corpus, FileRole, Payload, synth};
use tdbench::registry::tdlib_json_codecs;
use tdbench::validate::{validate_corpus, validate_payload};

fn corpus() -> Corpus {
    Corpus::load(&Corpus::default_dir())
        .unwrap_or_else(|errors| panic!("corpus does not load:\n{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")))
}

#[test]
fn committed_synthetic_files_are_what_the_generator_writes() {
    for file in synth::generate() {
        let path = Corpus::default_dir().join(file.name);
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            committed == file.text(),
            "{} differs from the generator's output: run `cargo run --release --bin gen-corpus`",
            path.display()
        );
    }
}

#[test]
fn every_payload_validates() {
    let corpus = corpus();
    assert!(corpus.payloads.len() > 100);
    let failures = validate_corpus(&corpus);
    assert!(failures.is_empty(), "{}", failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n"));
}

#[test]
fn every_lane_cycles_several_variants() {
    let corpus = corpus();
    // The start-up stream is generated when a worker opens its lane, not read from files.
    for lane in LANES.iter().filter(|l| !l.stream) {
        let payloads = corpus.lane(lane.name);
        assert!(payloads.len() >= 4, "lane {} has {} payloads", lane.name, payloads.len());
        let distinct: std::collections::HashSet<&[u8]> = payloads.iter().map(|p| p.json.as_slice()).collect();
        assert!(distinct.len() >= 4, "lane {} has {} distinct payloads", lane.name, distinct.len());
    }
}

#[test]
fn synthetic_lanes_are_within_25_percent_of_what_tdlib_emits() {
    let corpus = corpus();
    for lane in LANES {
        let Some(typical) = lane.typical_json_bytes else { continue };
        let payloads: Vec<&Payload> = corpus.lane(lane.name).into_iter().filter(|p| p.role.synthetic).collect();
        let mean = payloads.iter().map(|p| p.json.len()).sum::<usize>() as f64 / payloads.len() as f64;
        let ratio = mean / typical as f64;
        assert!((0.75..=1.25).contains(&ratio), "lane {}: mean {mean:.0} B against TDLib's ~{typical} B", lane.name);
    }
    let sizes = |lane: &str| corpus.lane(lane).iter().map(|p| p.json.len()).collect::<Vec<_>>();
    assert!(sizes("string-64k").iter().all(|&n| n > 65_536));
    assert!(sizes("bytes-1k").iter().all(|&n| (1024..8192).contains(&n)));
}

/// corpus/README.md states the mix's own figures: each row must be what the file holds.
#[test]
fn the_mix_is_what_the_corpus_readme_says() {
    let readme = std::fs::read_to_string(Corpus::default_dir().join("README.md")).unwrap();
    let table = readme.split("| `@type` in the mix | payloads | median bytes |").nth(1).expect("the mix table");
    let rows: Vec<Vec<&str>> =
        table.lines().skip(2).take_while(|l| l.starts_with('|')).map(|l| l.trim_matches('|').split('|').map(str::trim).collect()).collect();
    let corpus = corpus();
    let mix: Vec<&Payload> = corpus.payloads.iter().filter(|p| p.file == "synthetic-mix.jsonl").collect();
    let mut sizes: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for p in &mix {
        sizes.entry(p.value.tl_name()).or_default().push(p.json.len());
    }
    assert_eq!(rows.len(), sizes.len(), "the table has {} types, the file {}: {sizes:?}", rows.len(), sizes.len());
    for row in rows {
        let (name, count, median): (&str, usize, f64) = (row[0], row[1].parse().unwrap(), row[2].parse().unwrap());
        let mut found = sizes.get(name).unwrap_or_else(|| panic!("{name} is not in the mix")).clone();
        found.sort();
        let n = found.len();
        let actual = if n % 2 == 1 { found[n / 2] as f64 } else { (found[n / 2 - 1] + found[n / 2]) as f64 / 2.0 };
        assert_eq!((n, actual.round()), (count, median), "{name}: the file has {n} payloads, median {actual} B");
    }
}

#[test]
fn unknown_fields_of_every_shape_are_skipped_and_dropped_on_re_encode() {
    let expectations = synth::unknown_fields_expectations();
    assert!(expectations.len() >= 8);
    for (line, canonical) in &expectations {
        assert_ne!(line, canonical);
        for codec in tdlib_json_codecs() {
            let value = codec.decode(line.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{line}"));
            assert_eq!(value, codec.decode(canonical.as_bytes()).unwrap(), "{}: {line}", codec.name());
            let mut out = Vec::new();
            codec.encode(&value, &mut out).unwrap();
            assert_eq!(canonical_form(codec, &out), *canonical, "{}", codec.name());
        }
    }
    let shapes = ["\"new_object\":{", "\"new_array\":[", "\"new_string\":", "\"@extra\":"];
    let all: String = expectations.iter().map(|(line, _)| line.as_str()).collect();
    for shape in shapes {
        assert!(all.contains(shape), "the unknown-field file never exercises {shape}");
    }
}

#[test]
fn reader_only_forms_re_encode_to_tdlib_form() {
    for (line, canonical) in synth::ESCAPES_READER {
        for codec in tdlib_json_codecs() {
            let value = codec.decode(line.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{line}"));
            let mut out = Vec::new();
            codec.encode(&value, &mut out).unwrap();
            assert_eq!(canonical_form(codec, &out), *canonical, "{}: {line}", codec.name());
        }
    }
}

/// What a codec wrote, in TDLib's form: as is when it writes TDLib's bytes, else re-written by
/// the reference codec (json-value writes members in name order, which TDLib also reads).
fn canonical_form(codec: &dyn tdbench::Codec, out: &[u8]) -> String {
    if codec.writes_tdlib_bytes() {
        return String::from_utf8(out.to_vec()).unwrap();
    }
    let reference = tdbench::codecs::json::Json;
    let mut again = Vec::new();
    tdbench::Codec::encode(&reference, &tdbench::Codec::decode(&reference, out).unwrap(), &mut again).unwrap();
    String::from_utf8(again).unwrap()
}

fn payload(file: &str, json: &str, value_json: &str) -> Payload {
    let value = tdbench::codecs::json::Json;
    let value = tdbench::Codec::decode(&value, value_json.as_bytes()).unwrap();
    Payload { file: file.into(), line: 3, json: json.as_bytes().to_vec(), value, role: FileRole::of(file), lane: None }
}

#[test]
fn validation_catches_bytes_tdlib_would_not_write() {
    let tdlib = r#"{"@type":"updateOption","name":"x","value":{"@type":"optionValueInteger","value":"5"}}"#;
    assert!(validate_payload(&payload("capture.jsonl", tdlib, tdlib)).is_empty());
    // The same object, but int64 as a bare number: not TDLib's bytes.
    let bare = r#"{"@type":"updateOption","name":"x","value":{"@type":"optionValueInteger","value":5}}"#;
    let failures = validate_payload(&payload("capture.jsonl", bare, bare));
    assert!(!failures.is_empty());
    let message = failures[0].to_string();
    assert!(message.starts_with("corpus/capture.jsonl:3: json: re-encoding differs") && message.contains("at byte 81"), "{message}");
    // In a file that says it is not in TDLib's form, it is fine.
    assert!(validate_payload(&payload("capture-reader.jsonl", bare, bare)).is_empty());
}

#[test]
fn validation_catches_a_reader_that_returns_another_object() {
    let line = r#"{"@type":"testString","value":"a"}"#;
    let failures = validate_payload(&payload("capture.jsonl", line, r#"{"@type":"testString","value":"b"}"#));
    assert!(failures.iter().any(|f| f.message.contains("different value")), "{failures:?}");
}

#[test]
fn validate_binary_names_every_failing_payload() {
    let dir = std::env::temp_dir().join(format!("tdbench-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("capture.jsonl"), "{\"@type\":\"ok\"}\n{\"@type\":\"notAType\"}\n{\"@type\":\"testString\",\"value\":\"x\"\n")
        .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_validate")).arg("--corpus").arg(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("corpus/capture.jsonl:2: json:") && stderr.contains("unknown @type `notAType`"), "{stderr}");
    assert!(stderr.contains("corpus/capture.jsonl:3: json:"), "{stderr}");

    std::fs::write(dir.join("capture.jsonl"), "{\"@type\":\"ok\"}\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_validate")).arg("--corpus").arg(&dir).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let usage = std::process::Command::new(env!("CARGO_BIN_EXE_validate")).arg("--data").arg("nope").output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_value_reads_and_writes_what_json_does_on_the_whole_corpus() {
    use tdbench::Codec;
    use tdbench::codecs::{json::Json, json_value::JsonValue};
    let corpus = corpus();
    for payload in &corpus.payloads {
        let by_json = Json.decode(&payload.json).unwrap();
        let by_value = JsonValue.decode(&payload.json).unwrap_or_else(|e| panic!("{}: {e}", payload.location()));
        assert_eq!(by_value, by_json, "{}: json-value reads another object than json", payload.location());
        let mut written = Vec::new();
        JsonValue.encode(&by_value, &mut written).unwrap();
        assert_eq!(Json.decode(&written).unwrap(), by_json, "{}: json reads json-value's encoding as another object", payload.location());
    }
}
