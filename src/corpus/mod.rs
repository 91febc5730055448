//! The corpus: TDLib JSON payloads, one per line, in `corpus/*.jsonl`, decoded once at load with
//! the reference reader (`json`) and grouped into [`lanes`].
//!
//! Loading never drops a line silently: a malformed line, an unknown `@type` or a blank line is
//! an error naming `file:line` and the reason, and every such error in the corpus is reported.

pub mod lanes;
pub mod startup;
pub mod synth;

use std::fmt;
use std::path::{Path, PathBuf};

use tdbench_models::Object;

use crate::Codec;
use crate::codecs::json::Json;
pub use lanes::{FileRole, LANES, Lane};

/// The longest line a corpus file or `tdconvert`'s input may hold: far above any TDLib update
/// (the corpus's largest is 64 KiB of bytes, base64-encoded), far below what would exhaust
/// memory. A longer line is refused with its file, line and size; it was read whole, and a
/// 2 GB line aborted the process instead.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The largest corpus file loaded: every worker holds the whole corpus in memory.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Reads one line (with its `\n`) into `line`, keeping at most `cap` bytes of it; the rest of
/// a longer line is read and dropped, never held. Returns the line's whole length, 0 at the end.
pub fn read_line_capped(input: &mut impl std::io::BufRead, line: &mut Vec<u8>, cap: usize) -> std::io::Result<usize> {
    let mut length = 0;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(length);
        }
        let (taken, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        let room = cap.saturating_sub(line.len()).min(taken);
        line.extend_from_slice(&available[..room]);
        input.consume(taken);
        length += taken;
        if ends {
            return Ok(length);
        }
    }
}

/// One payload of the corpus.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The file name within the corpus folder.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// The line's bytes, without the newline.
    pub json: Vec<u8>,
    /// The line decoded by the reference reader.
    pub value: Object,
    pub role: FileRole,
    pub lane: Option<&'static str>,
}

impl Payload {
    /// `corpus/synthetic.jsonl:12`, the form every error uses.
    pub fn location(&self) -> String {
        format!("corpus/{}:{}", self.file, self.line)
    }

    /// How reports name it: synthetic payloads carry a `~`.
    pub fn display_name(&self) -> String {
        let prefix = if self.role.synthetic { "~" } else { "" };
        format!("{prefix}{}", self.value.tl_name())
    }
}

/// A line that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub location: String,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Every payload of a corpus folder, in file-name then line order.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub payloads: Vec<Payload>,
}

impl Corpus {
    /// The `corpus/` folder of the tree this process runs in: the nearest folder, from the
    /// working folder up, that has one beside a `Cargo.toml`. Found at run time, never fixed at
    /// build time: a path compiled in made two builds of one commit in two folders different
    /// binaries (and let a binary built in one checkout read another's corpus).
    pub fn default_dir() -> PathBuf {
        let here = std::env::current_dir().unwrap_or_default();
        here.ancestors()
            .find(|dir| dir.join("corpus").is_dir() && dir.join("Cargo.toml").is_file())
            .map_or_else(|| PathBuf::from("corpus"), |dir| dir.join("corpus"))
    }

    /// Loads every `*.jsonl` in `dir`; on failure, every failing line is listed.
    pub fn load(dir: &Path) -> Result<Corpus, Vec<LoadError>> {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => {
                entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect()
            }
            Err(e) => return Err(vec![LoadError { location: dir.display().to_string(), message: e.to_string() }]),
        };
        files.sort();
        if files.is_empty() {
            return Err(vec![LoadError { location: dir.display().to_string(), message: "no *.jsonl files".into() }]);
        }
        let mut corpus = Corpus::default();
        let mut errors = Vec::new();
        for path in files {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            if size > MAX_FILE_BYTES {
                let message = format!("{size} bytes, above the {} MiB a corpus file may hold", MAX_FILE_BYTES >> 20);
                errors.push(LoadError { location: format!("corpus/{name}"), message });
                continue;
            }
            match std::fs::read(&path) {
                Ok(bytes) => corpus.add_file(&name, &bytes, &mut errors),
                Err(e) => errors.push(LoadError { location: format!("corpus/{name}"), message: e.to_string() }),
            }
        }
        if errors.is_empty() { Ok(corpus) } else { Err(errors) }
    }

    /// Parses one file's text; errors are collected, good lines kept.
    pub fn add_file(&mut self, name: &str, bytes: &[u8], errors: &mut Vec<LoadError>) {
        let role = FileRole::of(name);
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        if body.is_empty() {
            errors.push(LoadError { location: format!("corpus/{name}"), message: "empty file".into() });
            return;
        }
        for (index, line) in body.split(|&b| b == b'\n').enumerate() {
            let location = format!("corpus/{name}:{}", index + 1);
            if line.len() > MAX_LINE_BYTES {
                let message = format!("a line of {} bytes, above the {} MiB a line may hold", line.len(), MAX_LINE_BYTES >> 20);
                errors.push(LoadError { location, message });
                continue;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                errors.push(LoadError { location, message: "blank line".into() });
                continue;
            }
            match Json.decode(line) {
                Ok(value) => self.payloads.push(Payload {
                    file: name.to_string(),
                    line: index + 1,
                    json: line.to_vec(),
                    lane: lanes::lane_of(role, &value, line.len()),
                    value,
                    role,
                }),
                Err(e) => errors.push(LoadError { location, message: e.to_string() }),
            }
        }
    }

    /// Appends the start-up stream as the `startup` lane's payloads: each update with its TDLib
    /// JSON, canonical (re-encoding must give these bytes back), from no file.
    pub fn add_startup_stream(&mut self) {
        let role = FileRole { canonical: true, measured: true, mix: false, synthetic: true };
        for (index, value) in startup::generate().updates.into_iter().enumerate() {
            let mut json = Vec::new();
            Json.encode(&value, &mut json).expect("models always encode to JSON");
            self.payloads.push(Payload { file: lanes::STREAM_FILE.into(), line: index + 1, json, value, role, lane: Some("startup") });
        }
    }

    /// The payloads of one lane, in corpus order.
    pub fn lane(&self, name: &str) -> Vec<&Payload> {
        self.payloads.iter().filter(|p| p.lane == Some(name)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_named_and_good_lines_kept() {
        let mut corpus = Corpus::default();
        let mut errors = Vec::new();
        let text = b"{\"@type\":\"ok\"}\n\n{\"@type\":\"noSuchThing\"}\n{\"@type\":\"ok\"\n{\"@type\":\"updateOption\",\"name\":\"x\",\"value\":{\"@type\":\"linkPreview\"}}\n";
        corpus.add_file("capture.jsonl", text, &mut errors);
        assert_eq!(corpus.payloads.len(), 1);
        let messages: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(messages.len(), 4, "{messages:#?}");
        assert!(messages[0].starts_with("corpus/capture.jsonl:2: blank line"));
        assert!(
            messages[1].starts_with("corpus/capture.jsonl:3:") && messages[1].contains("unknown @type `noSuchThing`"),
            "{}",
            messages[1]
        );
        assert!(messages[2].starts_with("corpus/capture.jsonl:4:") && messages[2].contains("EOF"), "{}", messages[2]);
        assert!(messages[3].contains("linkPreview"), "{}", messages[3]);
    }

    #[test]
    fn a_line_above_the_limit_is_refused_with_its_place_and_size() {
        let mut text = b"{\"@type\":\"ok\"}\n".to_vec();
        text.extend(std::iter::repeat_n(b' ', MAX_LINE_BYTES + 1));
        let mut corpus = Corpus::default();
        let mut errors = Vec::new();
        corpus.add_file("big.jsonl", &text, &mut errors);
        let big = errors.iter().find(|e| e.location == "corpus/big.jsonl:2").expect("line 2 refused");
        assert!(big.message.contains(&format!("{} bytes", MAX_LINE_BYTES + 1)) && big.message.contains("64 MiB"), "{}", big.message);
    }

    #[test]
    fn a_capped_line_keeps_its_length_and_drops_the_rest() {
        // A reader that hands out 3 bytes at a time: lines span refills.
        let mut input = std::io::BufReader::with_capacity(3, &b"abcdefgh\nxy\n\nz"[..]);
        let mut line = Vec::new();
        let mut read = |line: &mut Vec<u8>| {
            line.clear();
            read_line_capped(&mut input, line, 5).unwrap()
        };
        assert_eq!((read(&mut line), line.as_slice()), (9, &b"abcde"[..]));
        assert_eq!((read(&mut line), line.as_slice()), (3, &b"xy\n"[..]));
        assert_eq!((read(&mut line), line.as_slice()), (1, &b"\n"[..]));
        assert_eq!((read(&mut line), line.as_slice()), (1, &b"z"[..]));
        assert_eq!(read(&mut line), 0);
    }
}
