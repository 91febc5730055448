//! Writes `corpus/tdlib-entities.jsonl`: `formattedText` objects exactly as TDLib 1.8.66 writes
//! them, from its synchronous text parsers (`parseTextEntities` with HTML, `parseMarkdown`) run
//! over varied texts — a real capture, so every reader is tested on bytes TDLib itself wrote.
//!
//! Usage: `bash scripts/install-tdjson.sh && cargo run --release --bin capture-tdlib`

use std::process::ExitCode;

use tdbench::corpus::Corpus;
use tdbench::tdlib::{HOW_TO_ENABLE, Tdjson};

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
    let path = Corpus::default_dir().join("tdlib-entities.jsonl");
    let partial = path.with_extension("jsonl.partial");
    let text = lines.join("\n") + "\n";
    if let Err(e) = std::fs::write(&partial, text).and_then(|_| std::fs::rename(&partial, &path)) {
        eprintln!("capture-tdlib: cannot write {}: {e}", path.display());
        return ExitCode::from(2);
    }
    println!("capture-tdlib: {} payloads from TDLib {} → {}", lines.len(), td.version().unwrap_or_default(), path.display());
    ExitCode::SUCCESS
}
