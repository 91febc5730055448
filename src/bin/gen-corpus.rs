//! Writes the synthetic corpus files (`corpus/synthetic*.jsonl`) from a fixed seed.
//!
//! Usage: `cargo run --release --bin gen-corpus [-- DIR]` (default: this checkout's `corpus/`).
//! Output is deterministic; a test checks the committed files match it.

use std::path::PathBuf;
use std::process::ExitCode;

use tdbench::corpus::{Corpus, synth};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") || args.len() > 1 {
        eprintln!("usage: gen-corpus [DIR]\n\nWrites corpus/synthetic*.jsonl (deterministic, seed {:#x}).", synth::SEED);
        return if args.len() > 1 { ExitCode::from(2) } else { ExitCode::SUCCESS };
    }
    let dir = args.first().map(PathBuf::from).unwrap_or_else(Corpus::default_dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("gen-corpus: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    for file in synth::generate() {
        let path = dir.join(file.name);
        // Write beside, then rename: an interrupted run never leaves a half-written corpus file.
        let partial = path.with_extension("jsonl.partial");
        let text = file.text();
        if let Err(e) = std::fs::write(&partial, &text).and_then(|_| std::fs::rename(&partial, &path)) {
            eprintln!("gen-corpus: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        println!("{:<34} {:>4} payloads {:>9} bytes", path.display(), file.lines.len(), text.len());
    }
    ExitCode::SUCCESS
}
