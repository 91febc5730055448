//! TDLib itself as the judge of our JSON: every corpus payload of a test type is echoed through
//! TDLib's own parser and serializer, and TDLib's answer (minus `@extra` and `@client_id`)
//! must be our canonical writer's bytes — for every TDLib JSON implementation. Skipped, with a
//! line saying how to enable it, when libtdjson is not installed.

use tdbench::corpus::Corpus;
use tdbench::registry::tdlib_json_codecs;
use tdbench::tdlib::{echo_request, Tdjson, HOW_TO_ENABLE};
use tdbench::validate::strip_client_envelope;

#[test]
fn tdlib_echoes_our_bytes() {
    let Some(td) = Tdjson::load().expect("libtdjson loads") else {
        println!("SKIPPED: {HOW_TO_ENABLE}");
        return;
    };
    if let Some(note) = td.version_note() {
        println!("note: {note}");
    }
    let corpus = Corpus::load(&Corpus::default_dir()).unwrap();
    let mut client = td.client();
    let mut checked = 0;
    for payload in &corpus.payloads {
        let Some(request) = echo_request(&payload.value) else { continue };
        let answer = client.call(&request).unwrap();
        let answer = strip_client_envelope(answer.as_bytes()).into_owned();
        for codec in tdlib_json_codecs() {
            let mut ours = Vec::new();
            codec.encode(&payload.value, &mut ours).unwrap();
            assert!(
                answer == ours,
                "{}: {}: TDLib wrote\n{}\nwe wrote\n{}",
                payload.location(),
                codec.name(),
                String::from_utf8_lossy(&answer),
                String::from_utf8_lossy(&ours)
            );
            assert_eq!(codec.decode(&answer).unwrap(), payload.value, "{}: {} reads TDLib's answer", payload.location(), codec.name());
        }
        checked += 1;
    }
    client.close();
    // The string, bytes and vector lanes plus the escape files.
    assert!(checked >= 40, "only {checked} payloads had an echo method");
    println!("TDLib {}: {checked} payloads echoed byte for byte", td.version().unwrap_or_default());
}

#[test]
fn tdlib_reports_the_schema_version() {
    let Some(td) = Tdjson::load().expect("libtdjson loads") else {
        println!("SKIPPED: {HOW_TO_ENABLE}");
        return;
    };
    assert_eq!(td.version().as_deref(), Some(tdbench::tdlib::SCHEMA_TDLIB_VERSION));
}
