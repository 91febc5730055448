//! Draws the report from a merged run folder, without re-running anything:
//! `report [RUN_DIR] [--out DIR]` (defaults: `build`, `report`).

use std::path::PathBuf;
use std::process::ExitCode;

use tdbench_scripts::merge::Results;

fn main() -> ExitCode {
    let mut run_dir = PathBuf::from("build");
    let mut out = PathBuf::from("report");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                println!("usage: report [RUN_DIR] [--out DIR]\n\nWrites README.md, throughput.png and results.json into DIR (default: report) from RUN_DIR/results.json (default: build).");
                return ExitCode::SUCCESS;
            }
            "--out" => match args.next() {
                Some(dir) => out = PathBuf::from(dir),
                None => {
                    eprintln!("report: --out needs a folder");
                    return ExitCode::from(2);
                }
            },
            other if !other.starts_with('-') => run_dir = PathBuf::from(other),
            other => {
                eprintln!("report: unknown argument `{other}`");
                return ExitCode::from(2);
            }
        }
    }
    let path = run_dir.join("results.json");
    let results: Results = match std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string())) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("report: cannot read {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    match tdbench_scripts::report::write(&results, &out) {
        Ok(()) => {
            println!("report: wrote {}/README.md, throughput.png, results.json", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::from(2)
        }
    }
}
