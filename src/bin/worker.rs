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
    /// Print how many payloads each lane of the corpus in DIR has, as JSON, and exit; alone on
    /// the command line
    #[arg(long, value_name = "DIR")]
    lane_sizes: Option<PathBuf>,
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
    // `--lane-sizes DIR` stands alone too: how many payloads each lane of that corpus has, for
    // a run that measures a copy of the corpus without some lines (scripts/src/runner/common_corpus.rs).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir] = args.as_slice()
        && flag == "--lane-sizes"
    {
        return match worker::lane_sizes(std::path::Path::new(dir)) {
            Ok(sizes) => {
                println!("{}", serde_json::to_string(&sizes).expect("lane sizes serialize"));
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("worker: {message}");
                ExitCode::from(1)
            }
        };
    }
    let cli = Cli::parse();
    if cli.list || cli.lane_sizes.is_some() {
        eprintln!("worker: --list and --lane-sizes take no other argument");
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
