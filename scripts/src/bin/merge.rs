//! Re-merges a saved run folder (reads only its files): `merge [DIR]`, default `build`.
//! Exit status: 0 pass, 1 regression or violation, 2 unreadable folder.

use std::path::PathBuf;
use std::process::ExitCode;

use tdbench_scripts::{merge, summary};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = match args.as_slice() {
        [] => PathBuf::from("build"),
        [flag] if flag == "-h" || flag == "--help" => {
            println!("usage: merge [DIR]\n\nMerges and gates the run in DIR (default: build), writing results.json and summary.md.");
            return ExitCode::SUCCESS;
        }
        [dir] => PathBuf::from(dir),
        _ => {
            eprintln!("usage: merge [DIR]");
            return ExitCode::from(2);
        }
    };
    let results = match merge::merge(&dir) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("merge: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = merge::write(&dir, &results) {
        eprintln!("merge: {e}");
        return ExitCode::from(2);
    }
    print!("{}", summary::text(&results));
    ExitCode::from(if results.verdict == "pass" { 0 } else { 1 })
}
