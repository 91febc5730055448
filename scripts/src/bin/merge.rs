//! Re-merges a saved run folder (reads only its files) and writes its results.json and
//! summary.md again.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tdbench_scripts::{files, gate, summary};

/// Merges and gates the run in DIR, writing results.json and summary.md there.
#[derive(Parser)]
#[command(name = "merge", after_help = "Exit status: 0 pass, 1 regression or violation, 2 unreadable folder or a run that did not finish.")]
struct Cli {
    /// The run's output folder
    #[arg(default_value = "build")]
    dir: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = files::refuse_unfinished(&cli.dir) {
        eprintln!("merge: {e}");
        return ExitCode::from(2);
    }
    let results = match gate::merge(&cli.dir) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("merge: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = files::write_run(&cli.dir, &results) {
        eprintln!("merge: {e}");
        return ExitCode::from(2);
    }
    print!("{}", summary::text(&results));
    ExitCode::from(if results.passed() { 0 } else { 1 })
}
