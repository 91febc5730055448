//! Times one implementation on one lane in both trees at once: loads the baseline's and the
//! current tree's kernel libraries into this fresh process, alternates their batches, and prints
//! one JSON result per tree. `./run.sh` starts one per (implementation, sample) when both trees
//! build the library; run it by hand to reproduce one.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tdbench::worker::paired;
use tdbench_contract::PairedJob;

/// Times one implementation on one lane in both trees' kernel libraries, side by side in this
/// process, and prints {"baseline": result, "current": result}.
#[derive(Parser)]
#[command(name = "paired", after_help = "Exit status: 0 measured, 1 nothing measured (the reason on stderr), 2 usage.")]
struct Cli {
    #[command(flatten)]
    paired: PairedJob,
    /// Only check that FILE is a kernel library this harness can load (exit 0, printing what it
    /// can open beyond codecs and floors) or say why not (1)
    #[arg(long, value_name = "FILE", exclusive = true)]
    check_library: Option<PathBuf>,
}

fn main() -> ExitCode {
    // `--check-library` stands alone, so the job's required arguments do not apply to it.
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--check-library" {
        return match paired::check_library(std::path::Path::new(&args[2])) {
            Ok(capabilities) => {
                if capabilities.tdlib {
                    println!("{}", tdbench_contract::library::CAN_OPEN_TDLIB);
                }
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("paired: {message}");
                ExitCode::from(1)
            }
        };
    }
    let cli = Cli::parse();
    let job = &cli.paired.job;
    match paired::run(&cli.paired) {
        Ok(result) => {
            println!("{}", serde_json::to_string(&result).expect("results serialize"));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("paired: {}/{}: {message}", job.implementation, job.lane);
            ExitCode::from(1)
        }
    }
}
