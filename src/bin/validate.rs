//! Checks every corpus payload with every implementation before anything is timed, and prints
//! each lane's encoded size per format.
//!
//! Exit status: 0 all valid, 1 a payload failed (each named by file:line), 2 usage error.

use std::path::PathBuf;
use std::process::ExitCode;

use tdbench::corpus::{Corpus, lanes};
use tdbench::registry::CODECS;
use tdbench::validate::validate_corpus;

const USAGE: &str = "\
usage: validate [--corpus DIR] [--data LANES] [--quiet]

Decodes every payload of corpus/*.jsonl with every implementation, checks that they agree
field for field, that re-encoding TDLib JSON gives TDLib's exact bytes, and that every binary
format round-trips; then prints each lane's mean encoded size per format.

  --corpus DIR   corpus folder (default: corpus/ of this checkout)
  --data LANES   comma-separated lanes for the size table, or `all` (default)
  --quiet        print failures only
";

fn main() -> ExitCode {
    let mut corpus_dir = Corpus::default_dir();
    let mut lane_list = "all".to_string();
    let mut quiet = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--corpus" => match args.next() {
                Some(dir) => corpus_dir = PathBuf::from(dir),
                None => return usage_error("--corpus needs a folder"),
            },
            "--data" => match args.next() {
                Some(list) => lane_list = list,
                None => return usage_error("--data needs a lane list"),
            },
            "--quiet" => quiet = true,
            // Accepted so `./run.sh --validate-only` reads naturally.
            "--validate-only" => {}
            other => return usage_error(&format!("unknown argument `{other}`")),
        }
    }
    let selected = match lanes::parse_lane_list(&lane_list) {
        Ok(selected) => selected,
        Err(e) => return usage_error(&e),
    };

    let corpus = match Corpus::load(&corpus_dir) {
        Ok(corpus) => corpus,
        Err(errors) => {
            for e in &errors {
                eprintln!("{e}");
            }
            eprintln!("validate: {} corpus line(s) failed to load; nothing was validated", errors.len());
            return ExitCode::from(1);
        }
    };
    let failures = validate_corpus(&corpus);
    for f in &failures {
        eprintln!("{f}");
    }
    if !failures.is_empty() {
        eprintln!("validate: {} failure(s) in {} payloads", failures.len(), corpus.payloads.len());
        return ExitCode::from(1);
    }
    if !quiet {
        let mut text =
            format!("validate: {} payloads from {} valid with {} codecs\n", corpus.payloads.len(), corpus_dir.display(), CODECS.len());
        text += &size_table(&corpus, &selected);
        // A closed stdout (`| head`) is not worth a panic.
        let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
    }
    ExitCode::SUCCESS
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("validate: {message}\n\n{USAGE}");
    ExitCode::from(2)
}

/// Mean encoded bytes per payload, per lane and format.
fn size_table(corpus: &Corpus, selected: &[&lanes::Lane]) -> String {
    use std::fmt::Write;
    let mut out = format!("\n{:<14} {:>8}", "lane", "payloads");
    for codec in CODECS {
        write!(out, " {:>10}", codec.name()).unwrap();
    }
    out.push('\n');
    let mut buffer = Vec::new();
    for lane in selected {
        let payloads = corpus.lane(lane.name);
        if payloads.is_empty() {
            writeln!(out, "{:<14} {:>8}  (no payloads)", lane.name, 0).unwrap();
            continue;
        }
        write!(out, "{:<14} {:>8}", lane.name, payloads.len()).unwrap();
        for codec in CODECS {
            let total: usize = payloads
                .iter()
                .map(|p| {
                    buffer.clear();
                    codec.encode(&p.value, &mut buffer).expect("validated above");
                    buffer.len()
                })
                .sum();
            write!(out, " {:>10.0}", total as f64 / payloads.len() as f64).unwrap();
        }
        out.push('\n');
    }
    out
}
