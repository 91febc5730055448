//! TDLib itself as the judge of our JSON: every corpus payload of a test type is echoed through
//! TDLib's own parser and serializer, and TDLib's answer (minus `@extra` and `@client_id`)
//! must be our canonical writer's bytes — for every TDLib JSON implementation.
//!
//! Without libtdjson these tests report as ignored, saying how to install it; with `CI` set
//! they fail instead (`.ci/run` installs the library, so its absence there is a broken step).

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use tdbench::corpus::Corpus;
use tdbench::registry::tdlib_json_codecs;
use tdbench::tdlib::{HOW_TO_ENABLE, Tdjson, echo_request};
use tdbench::validate::strip_client_envelope;

fn tdlib_echoes_our_bytes(td: &Tdjson) -> Result<(), Failed> {
    let corpus = Corpus::load(&Corpus::default_dir()).map_err(|e| format!("{} corpus errors", e.len()))?;
    let mut client = td.client();
    let mut checked = 0;
    for payload in &corpus.payloads {
        let Some(request) = echo_request(&payload.value) else { continue };
        let answer = client.call(&request)?;
        let answer = strip_client_envelope(answer.as_bytes()).into_owned();
        for codec in tdlib_json_codecs() {
            let mut ours = Vec::new();
            codec.encode(&payload.value, &mut ours)?;
            // A codec writing members in another order must at least be read back by TDLib's
            // own reader form: the reference codec reads it as the same value.
            if !codec.writes_tdlib_bytes() {
                if tdbench::Codec::decode(&tdbench::codecs::json::Json, &ours)? != payload.value {
                    return Err(format!("{}: {} writes another value", payload.location(), codec.name()).into());
                }
            } else if answer != ours {
                return Err(format!(
                    "{}: {}: TDLib wrote\n{}\nwe wrote\n{}",
                    payload.location(),
                    codec.name(),
                    String::from_utf8_lossy(&answer),
                    String::from_utf8_lossy(&ours)
                )
                .into());
            }
            if codec.decode(&answer)? != payload.value {
                return Err(format!("{}: {} reads TDLib's answer as another value", payload.location(), codec.name()).into());
            }
        }
        checked += 1;
    }
    client.close();
    // The string, bytes and vector lanes plus the escape files.
    if checked < 40 {
        return Err(format!("only {checked} payloads had an echo method").into());
    }
    eprintln!("TDLib {}: {checked} payloads echoed byte for byte", td.version().unwrap_or_default());
    Ok(())
}

fn tdlib_reports_the_schema_version(td: &Tdjson) -> Result<(), Failed> {
    match td.version() {
        Some(v) if v == tdbench::tdlib::SCHEMA_TDLIB_VERSION => Ok(()),
        other => Err(format!("TDLib reports version {other:?}, the schema is {}", tdbench::tdlib::SCHEMA_TDLIB_VERSION).into()),
    }
}

/// Runs `test` with the library, or says why it cannot.
fn with_tdlib(test: fn(&Tdjson) -> Result<(), Failed>) -> impl FnOnce() -> Result<Completion, Failed> {
    move || match Tdjson::load()? {
        Some(td) => {
            if let Some(note) = td.version_note() {
                eprintln!("note: {note}");
            }
            test(&td).map(|()| Completion::Completed)
        }
        None if std::env::var_os("CI").is_some() => Err(format!("{HOW_TO_ENABLE} (CI is set: .ci/run installs it)").into()),
        None => Ok(Completion::ignored_with(HOW_TO_ENABLE)),
    }
}

fn main() {
    let mut args = Arguments::from_args();
    // One TDLib client at a time.
    args.test_threads = Some(1);
    let trials = vec![
        Trial::ignorable_test("tdlib_echoes_our_bytes", with_tdlib(tdlib_echoes_our_bytes)),
        Trial::ignorable_test("tdlib_reports_the_schema_version", with_tdlib(tdlib_reports_the_schema_version)),
    ];
    libtest_mimic::run(&args, trials).exit();
}
