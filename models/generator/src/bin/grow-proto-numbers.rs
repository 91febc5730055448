//! Grows the committed protobuf number map over a schema: every field and constructor it does not
//! number yet gets its owner's next number; nothing already numbered changes.
//!
//! `cargo run -p tl-gen --bin grow-proto-numbers [SCHEMA [MAP]]`, by default over
//! `models/schema/td_api.tl` and `models/proto/numbers.txt`. Run it after changing the schema.

use std::{env, fs, process::ExitCode};

use tl_gen::{Model, NumberMap};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") || args.len() > 2 {
        eprintln!("usage: grow-proto-numbers [SCHEMA [MAP]]  (defaults: models/schema/td_api.tl models/proto/numbers.txt)");
        return if args.len() > 2 { ExitCode::from(2) } else { ExitCode::SUCCESS };
    }
    let schema_path = args.first().map_or("models/schema/td_api.tl", String::as_str);
    let map_path = args.get(1).map_or("models/proto/numbers.txt", String::as_str);
    match grow(schema_path, map_path) {
        Ok(added) => {
            println!("{map_path}: {added} new number(s) from {schema_path}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("grow-proto-numbers: {e}");
            ExitCode::FAILURE
        }
    }
}

fn grow(schema_path: &str, map_path: &str) -> Result<usize, String> {
    let schema = fs::read_to_string(schema_path).map_err(|e| format!("reading {schema_path}: {e}"))?;
    let definitions = tl_parser::parse_schema(&schema).map_err(|e| format!("{schema_path}: {e}"))?;
    let model = Model::resolve(&definitions).map_err(|e| format!("{schema_path}: {e}"))?;
    let map = match fs::read_to_string(map_path) {
        Ok(text) => NumberMap::parse(&text).map_err(|e| format!("{map_path}: {e}"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => NumberMap::default(),
        Err(e) => return Err(format!("reading {map_path}: {e}")),
    };
    let grown = map.grown(&model);
    let added = grown.len() - map.len();
    fs::write(map_path, grown.to_text()).map_err(|e| format!("writing {map_path}: {e}"))?;
    Ok(added)
}
