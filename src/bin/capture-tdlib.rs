//! Writes two real captures, so every reader is tested on bytes TDLib itself wrote:
//!
//! - `corpus/tdlib-entities.jsonl`: `formattedText` objects exactly as TDLib 1.8.66 writes them,
//!   from its synchronous text parsers (`parseTextEntities` with HTML, `parseMarkdown`) run over
//!   varied texts;
//! - `corpus/tdlib-startup.jsonl`: what a fresh client emits on start-up, offline — options,
//!   authorization and connection states — the real counterpart of the generated start-up
//!   stream (`src/corpus/startup.rs`). The client gets placeholder API credentials and a
//!   temporary database, and is closed as soon as it waits for a phone number: no account,
//!   nothing sent to Telegram. Updates of types the schema does not model are left out, counted.
//!
//! Usage: `bash scripts/install-tdjson.sh && cargo run --release --bin capture-tdlib`

use std::process::ExitCode;

use std::path::Path;
use std::time::{Duration, Instant};

use tdbench::Codec;
use tdbench::codecs::json::Json;
use tdbench::corpus::Corpus;
use tdbench::tdlib::{HOW_TO_ENABLE, Tdjson};
use tdbench::validate::strip_client_envelope;

/// Texts for TDLib's HTML parser: every entity kind it knows, several scripts, emoji inside
/// and outside the BMP, quotes, backslashes and a slash.
const HTML: &[&str] = &[
    "<b>bold</b> <i>italic</i> <u>underline</u> <s>strike</s> <tg-spoiler>spoiler</tg-spoiler> plain",
    "<a href=\"https://core.telegram.org/tdlib/docs/\">TDLib docs</a> and https://t.me/tdlibchat/12345 and @tdlib_bot",
    "<code>let x = \"quoted\\\\path\";</code> then <pre><code class=\"language-rust\">fn main() {\n    println!(\"hi\");\n}</code></pre>",
    "Привет, <b>мир</b>! 你好，<i>世界</i>。 مرحبا <u>بالعالم</u> שלום",
    "Emoji 😀 <b>🎉 party</b> 👍🏽 flags 🇺🇦🇯🇵 and <tg-emoji emoji-id=\"5368324170671202286\">👍</tg-emoji>",
    "<blockquote>A quote\nover two lines</blockquote> after it #hashtag $USD /start@bot support@telegram.org +1 555 0100",
    "<blockquote expandable>Long expandable quote with <b>bold</b> inside</blockquote>",
    "café naïve über señor Ångström — «quotes» … tab\tand a slash / and a backslash \\",
    "<a href=\"tg://user?id=123456789\">a user</a> <b><i>bold italic</i></b> <code>code</code>",
    "Nothing to mark up here at all, just a plain sentence.",
];

/// Texts for `parseMarkdown` (TDLib's own markdown on a formattedText).
const MARKDOWN: &[&str] = &[
    "**bold** __italic__ ~~strike~~ ||spoiler|| `code`",
    "```\nfn main() {}\n``` after a code block",
    "[link](https://telegram.org) and **bold with `code`**",
    "**Жирный** __курсив__ 😀 and __emoji 🎉__",
];

fn main() -> ExitCode {
    let td = match Tdjson::load() {
        Ok(Some(td)) => td,
        Ok(None) => {
            eprintln!("capture-tdlib: {HOW_TO_ENABLE}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("capture-tdlib: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(note) = td.version_note() {
        eprintln!("capture-tdlib: note: {note}");
    }
    let string = |s: &str| serde_json::to_string(s).expect("strings serialize");
    let mut requests: Vec<String> = HTML
        .iter()
        .map(|t| format!(r#"{{"@type":"parseTextEntities","text":{},"parse_mode":{{"@type":"textParseModeHTML"}}}}"#, string(t)))
        .collect();
    requests.extend(
        MARKDOWN
            .iter()
            .map(|t| format!(r#"{{"@type":"parseMarkdown","text":{{"@type":"formattedText","text":{},"entities":[]}}}}"#, string(t))),
    );
    let mut lines = Vec::new();
    for request in &requests {
        match td.execute(request) {
            Some(answer) if answer.starts_with(r#"{"@type":"formattedText""#) => lines.push(answer),
            other => {
                eprintln!("capture-tdlib: {request}\n  TDLib answered {other:?}");
                return ExitCode::from(1);
            }
        }
    }
    let version = td.version().unwrap_or_default();
    let path = Corpus::default_dir().join("tdlib-entities.jsonl");
    if let Err(code) = write(&path, &lines) {
        return code;
    }
    println!("capture-tdlib: {} payloads from TDLib {version} → {}", lines.len(), path.display());

    let (startup, left_out) = match capture_startup(&td) {
        Ok(captured) => captured,
        Err(e) => {
            eprintln!("capture-tdlib: start-up: {e}");
            return ExitCode::from(1);
        }
    };
    let path = Corpus::default_dir().join("tdlib-startup.jsonl");
    if let Err(code) = write(&path, &startup) {
        return code;
    }
    println!(
        "capture-tdlib: {} start-up updates from TDLib {version} → {} (left out, not modelled: {})",
        startup.len(),
        path.display(),
        if left_out.is_empty() { "none".to_string() } else { left_out.join(", ") }
    );
    ExitCode::SUCCESS
}

/// Written beside and renamed: an interrupted capture leaves the old file whole.
fn write(path: &Path, lines: &[String]) -> Result<(), ExitCode> {
    let partial = path.with_extension("jsonl.partial");
    let text = lines.join("\n") + "\n";
    std::fs::write(&partial, text).and_then(|_| std::fs::rename(&partial, path)).map_err(|e| {
        eprintln!("capture-tdlib: cannot write {}: {e}", path.display());
        ExitCode::from(2)
    })
}

/// A fresh client's start-up until it waits for a phone number and has said how it connects:
/// every update of a modelled type, without TDLib's `@client_id` envelope, and the `@type`s of
/// those left out.
fn capture_startup(td: &Tdjson) -> Result<(Vec<String>, Vec<String>), String> {
    let database = std::env::temp_dir().join(format!("tdbench-capture-{}", std::process::id()));
    let mut client = td.client();
    // A client starts on its first request.
    client.send(r#"{"@type":"getOption","name":"version"}"#)?;
    let (mut kept, mut left_out) = (Vec::new(), Vec::new());
    let (mut waiting_for_phone, mut connection) = (false, false);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(waiting_for_phone && connection) {
        let remaining = deadline.checked_duration_since(Instant::now()).ok_or("no phone-number state within 30 s")?;
        let Some(answer) = client.receive(remaining) else { continue };
        let line = String::from_utf8_lossy(&strip_client_envelope(answer.as_bytes())).into_owned();
        let name = line.strip_prefix(r#"{"@type":""#).and_then(|rest| rest.split('"').next()).unwrap_or("?").to_string();
        if name == "updateAuthorizationState" && line.contains("authorizationStateWaitTdlibParameters") {
            let parameters = format!(
                r#"{{"@type":"setTdlibParameters","use_test_dc":true,"database_directory":{},"use_message_database":false,"use_secret_chats":false,"api_id":1,"api_hash":"00000000000000000000000000000000","system_language_code":"en","device_model":"tdbench","application_version":"capture"}}"#,
                serde_json::to_string(&database.display().to_string()).expect("strings serialize")
            );
            client.send(&parameters)?;
        }
        waiting_for_phone |= line.contains("authorizationStateWaitPhoneNumber");
        connection |= name == "updateConnectionState";
        if !name.starts_with("update") {
            continue; // answers to our requests, not part of a start-up
        }
        match Json.decode(line.as_bytes()) {
            Ok(_) => kept.push(line),
            Err(_) => left_out.push(name),
        }
    }
    client.close();
    let _ = std::fs::remove_dir_all(&database);
    left_out.sort();
    left_out.dedup();
    Ok((kept, left_out))
}
