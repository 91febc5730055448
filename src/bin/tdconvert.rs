//! Converts TDLib JSON lines from standard input: each line is decoded with one codec and
//! written with another, one output line per input line.
//!
//! Exit status: 0 every line converted, 1 some line failed (each reported on stderr with its
//! line number, byte offset and reason; its output line is left empty), 2 usage error.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use base64::Engine;
use tdbench::Codec;
use tdbench::corpus::{MAX_LINE_BYTES, read_line_capped};
use tdbench::registry::{CODECS, codec, tdlib_json_codecs};

const USAGE: &str = "\
usage: tdconvert [--via CODEC] [--to CODEC] < payloads.jsonl > converted

Reads TDLib JSON, one payload per line, from standard input; decodes each line with the codec
named by --via and writes it with the codec named by --to, one line per input line.

  --via CODEC   the TDLib JSON reader: json-td (default) or json
  --to CODEC    the writer: json-td (default; canonical TDLib JSON, as TDLib writes it), json,
                or a binary format (protobuf, msgpack, tl, bincode) written as one base64
                line per payload

A line that cannot be converted gets one error on stderr (line number, byte offset, reason)
and an empty output line; the other lines are still converted, and the exit status is 1.
";

fn main() -> ExitCode {
    let mut via = "json-td".to_string();
    let mut to = "json-td".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--via" => match args.next() {
                Some(name) => via = name,
                None => return usage_error("--via needs a codec name"),
            },
            "--to" => match args.next() {
                Some(name) => to = name,
                None => return usage_error("--to needs a codec name"),
            },
            other => return usage_error(&format!("unknown argument `{other}`")),
        }
    }
    let readers: Vec<&str> = tdlib_json_codecs().map(|c| c.name()).collect();
    let reader = match codec(&via) {
        Some(c) if c.is_tdlib_json() => c,
        _ => return usage_error(&format!("--via `{via}`: not a TDLib JSON reader; valid: {}", readers.join(", "))),
    };
    let writer = match codec(&to) {
        Some(c) => c,
        None => {
            let names: Vec<&str> = CODECS.iter().map(|c| c.name()).collect();
            return usage_error(&format!("--to `{to}`: unknown codec; valid: {}", names.join(", ")));
        }
    };
    match convert(reader, writer, io::stdin().lock(), &mut BufWriter::new(io::stdout().lock()), &mut io::stderr()) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        // A closed stdout (`| head`) ends the conversion quietly.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tdconvert: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Converts every line of `input`; returns how many failed. Lines are read as bytes, so a line
/// that is not UTF-8 is an error of that line, not of the run.
fn convert(
    reader: &dyn Codec,
    writer: &dyn Codec,
    mut input: impl BufRead,
    out: &mut impl Write,
    errors: &mut impl Write,
) -> io::Result<usize> {
    let mut line = Vec::new();
    let mut encoded = Vec::new();
    let mut failed = 0;
    for number in 1.. {
        line.clear();
        let length = read_line_capped(&mut input, &mut line, MAX_LINE_BYTES)?;
        if length == 0 {
            break;
        }
        if length > MAX_LINE_BYTES {
            failed += 1;
            writeln!(errors, "tdconvert: line {number}: {length} bytes, above the {} MiB a line may hold", MAX_LINE_BYTES >> 20)?;
            out.write_all(b"\n")?;
            continue;
        }
        let payload = line.strip_suffix(b"\n").unwrap_or(&line);
        let payload = payload.strip_suffix(b"\r").unwrap_or(payload);
        encoded.clear();
        let result = reader.decode(payload).and_then(|value| writer.encode(&value, &mut encoded));
        match result {
            Ok(()) if writer.is_tdlib_json() => out.write_all(&encoded)?,
            Ok(()) => out.write_all(base64::engine::general_purpose::STANDARD.encode(&encoded).as_bytes())?,
            Err(e) => {
                failed += 1;
                writeln!(errors, "tdconvert: line {number}: {e}")?;
            }
        }
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(failed)
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("tdconvert: {message}\n\n{USAGE}");
    ExitCode::from(2)
}
