//! Times one implementation on one lane in this fresh process and prints one JSON result.
//! `./run.sh` starts one per (implementation, tree, sample) where a sample has a process of its
//! own; run it by hand to reproduce one. Instruction counts are the `counter`'s.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tdbench::alloc::CountingAllocator;
use tdbench::corpus::lanes;
use tdbench::registry;
use tdbench::worker;
use tdbench_contract::Job;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Times one implementation on one lane in this process and prints one JSON result.
#[derive(Parser)]
#[command(name = "worker", after_help = "Exit status: 0 measured, 1 nothing measured (the reason on stderr), 2 usage.")]
struct Cli {
    /// Print what this worker can measure (lanes, implementations, TDLib) as JSON and exit;
    /// alone on the command line
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    job: Job,
    /// Where to write the JSON (default: standard output)
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn main() -> ExitCode {
    // `--list` stands alone, so the job's required arguments do not apply to it.
    if std::env::args().skip(1).eq(["--list"]) {
        println!("{}", serde_json::to_string(&worker::catalog()).expect("the catalog serializes"));
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    if cli.list {
        eprintln!("worker: --list takes no other argument");
        return ExitCode::from(2);
    }
    let job = cli.job;
    if let Err(message) =
        registry::implementation(&job.implementation).map(|_| ()).and_then(|_| lanes::parse_lane_list(&job.lane).map(|_| ()))
    {
        eprintln!("worker: {message}");
        return ExitCode::from(2);
    }
    match worker::run(&job) {
        Ok(result) => {
            let json = serde_json::to_string_pretty(&result).expect("results serialize");
            if let Err(e) = worker::write_result(cli.output.as_deref(), &json) {
                eprintln!(
                    "worker: cannot write {}: {e}",
                    cli.output.as_deref().unwrap_or(std::path::Path::new("standard output")).display()
                );
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("worker: {}/{}: {message}", job.implementation, job.lane);
            ExitCode::from(1)
        }
    }
}
