//! `tdconvert` as a user runs it: lines in, lines out, one error per bad line, exit status 1.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use base64::Engine;
use tdbench::corpus::Corpus;
use tdbench::registry::codec;

fn run(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tdconvert"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tdconvert starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("tdconvert runs");
    feeder.join().expect("feeder").expect("input written");
    output
}

fn corpus() -> Corpus {
    Corpus::load(&Corpus::default_dir()).expect("corpus loads")
}

#[test]
fn canonical_json_out_for_every_corpus_payload() {
    let corpus = corpus();
    let input: Vec<u8> = corpus.payloads.iter().flat_map(|p| [p.json.as_slice(), b"\n"].concat()).collect();
    let output = run(&[], &input);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<&[u8]> = output.stdout.split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), corpus.payloads.len() + 1, "one line per payload and a final newline");
    for (payload, line) in corpus.payloads.iter().zip(&lines) {
        let mut canonical = Vec::new();
        codec("json").unwrap().encode(&payload.value, &mut canonical).unwrap();
        assert_eq!(String::from_utf8_lossy(line), String::from_utf8_lossy(&canonical), "{}", payload.location());
    }
}

#[test]
fn binary_formats_come_out_as_base64_lines() {
    let corpus = corpus();
    let payload = &corpus.payloads[0];
    for name in ["protobuf", "msgpack", "tl", "bincode"] {
        let output = run(&["--via", "json", "--to", name], &[payload.json.as_slice(), b"\n"].concat());
        assert!(output.status.success(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8(output.stdout).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim_end()).expect("base64");
        assert_eq!(codec(name).unwrap().decode(&bytes).unwrap(), payload.value, "{name}");
    }
}

#[test]
fn a_bad_line_gets_one_error_and_an_empty_line_and_the_rest_still_convert() {
    let good = br#"{"@type":"ok"}"#;
    let deep = format!("{{\"@type\":\"ok\",\"x\":{}{}}}", "[".repeat(200_000), "]".repeat(200_000));
    let mut input = Vec::new();
    for line in [&good[..], br#"{"@type":"ok","#, b"\xff\xfe not utf-8", deep.as_bytes(), b"", good] {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    input.extend_from_slice(good); // a last line without a newline still counts
    let output = run(&[], &input);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout, "{\"@type\":\"ok\"}\n\n\n\n\n{\"@type\":\"ok\"}\n{\"@type\":\"ok\"}\n");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let errors: Vec<&str> = stderr.lines().collect();
    assert_eq!(errors.len(), 4, "{stderr}");
    for (error, line) in errors.iter().zip([2, 3, 4, 5]) {
        assert!(error.starts_with(&format!("tdconvert: line {line}: json-td: at byte ")), "{error}");
    }
    assert!(errors[2].contains("nesting deeper than 128"), "{}", errors[2]);
}

/// Malformed lines of every kind: each reader names line, byte offset and a reason, and a
/// payload that is not an object is called that, whichever reader reads it.
#[test]
fn both_readers_place_every_error_and_name_a_payload_that_is_not_an_object() {
    let lines: [(&[u8], Option<&str>); 10] = [
        (br#"{"@type":"updateUserStatus","user_id":1,"status":{"@type":"userStatusOnline","expires":5}"#, None),
        (b"garbage", Some("expected an object, found `g`")),
        (b"[1,2,3]", Some("expected an object, found an array")),
        (br#""just a string""#, Some("expected an object, found a string")),
        (b"42", Some("expected an object, found a number")),
        (br#"{"@type":"notAType"}"#, None),
        // Inside an @type-tagged object serde_json itself gives no position.
        (br#"{"@type":"updateUserStatus","user_id":"x"}"#, None),
        (b"", None),
        (br#"{"@type":"ok"}}"#, None),
        (br#"{"user_id":1}"#, None),
    ];
    let input: Vec<u8> = lines.iter().flat_map(|(line, _)| line.iter().copied().chain([b'\n'])).collect();
    for via in ["json-td", "json"] {
        let output = run(&["--via", via], &input);
        assert_eq!(output.status.code(), Some(1), "{via}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        let errors: Vec<&str> = stderr.lines().collect();
        assert_eq!(errors.len(), lines.len(), "{via}: {stderr}");
        for (n, (error, (_, reason))) in errors.iter().zip(&lines).enumerate() {
            let prefix = format!("tdconvert: line {}: {via}: at byte ", n + 1);
            assert!(error.starts_with(&prefix), "{via}: {error}");
            if let Some(reason) = reason {
                assert!(error.ends_with(reason), "{via}: {error}");
            }
        }
        assert!(errors[6].starts_with(&format!("tdconvert: line 7: {via}: at byte 38: ")), "{via}: {}", errors[6]);
    }
}

#[test]
fn usage_errors_name_the_valid_codecs() {
    let output = run(&["--via", "protobuf"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("valid: json, json-td"));
    let output = run(&["--to", "yaml"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("protobuf"));
    let output = run(&["--help"], b"");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("usage: tdconvert"));
}

/// A line above the limit is refused with its number and size, and the lines after it still
/// convert (it was read whole: a 2 GB line aborted the process).
#[test]
fn a_line_above_the_limit_is_refused_and_the_rest_convert() {
    let good = corpus().payloads[0].json.clone();
    let mut input = [good.as_slice(), b"\n"].concat();
    input.extend(std::iter::repeat_n(b'[', tdbench::corpus::MAX_LINE_BYTES + 10));
    input.push(b'\n');
    input.extend_from_slice(&good);
    input.push(b'\n');
    let output = run(&[], &input);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("line 2: {} bytes, above the 64 MiB", tdbench::corpus::MAX_LINE_BYTES + 11)), "{stderr}");
    let lines: Vec<&[u8]> = output.stdout.split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 4, "three lines out, the refused one empty");
    assert!(lines[1].is_empty() && lines[0] == lines[2] && !lines[0].is_empty());
}
