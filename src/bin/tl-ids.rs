//! Prints `name<TAB>id` for every constructor and function of a `.tl` file, the id as a signed
//! 32-bit decimal as TDLib's bindings show it (`ok<TAB>-722616727`).
//!
//! Usage: `cargo run --release --bin tl-ids -- PATH`

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = match args.as_slice() {
        [flag] if flag == "-h" || flag == "--help" => {
            println!("usage: tl-ids PATH\n\nPrints name<TAB>id for every constructor and function of a .tl file.");
            return ExitCode::SUCCESS;
        }
        [path] => path,
        _ => {
            eprintln!("usage: tl-ids PATH");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("tl-ids: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let definitions = match tl_parser::parse_schema(&text) {
        Ok(definitions) => definitions,
        Err(e) => {
            eprintln!("tl-ids: {path}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for d in &definitions {
        if writeln!(out, "{}\t{}", d.name, d.id() as i32).is_err() {
            // A closed pipe (`| head`) is not an error worth a panic.
            return ExitCode::SUCCESS;
        }
    }
    let _ = out.flush();
    ExitCode::SUCCESS
}
