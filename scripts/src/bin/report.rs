//! Draws the report from a merged run folder, without re-running anything.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tdbench_scripts::results::Results;

/// Writes README.md, throughput.png, size.png and the published results.json into --out from
/// RUN_DIR/results.json (a run's whole results, or a published copy).
#[derive(Parser)]
#[command(
    name = "report",
    after_help = "Exit status: 0 written, 2 unreadable results, a run that did not finish, or an unwritable folder."
)]
struct Cli {
    /// The run's output folder
    #[arg(default_value = "build")]
    run_dir: PathBuf,
    /// Where to draw the report [default: RUN_DIR/report]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let path = cli.run_dir.join("results.json");
    let out = cli.out.unwrap_or_else(|| cli.run_dir.join("report"));
    if let Err(e) = tdbench_scripts::files::refuse_unfinished(&cli.run_dir) {
        eprintln!("report: {e}");
        return ExitCode::from(2);
    }
    // A published copy leaves fields out of each sample; reading it puts them back.
    let results: Results = match tdbench_scripts::files::read_results(&path) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("report: cannot read {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    match tdbench_scripts::report::write(&results, &out) {
        Ok(()) => {
            println!(
                "report: wrote {}/README.md, throughput.png, size.png, results.json (and in-app.md from in-app.json, when there)",
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::from(2)
        }
    }
}
