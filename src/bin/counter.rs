//! Counts one lane in one tree: for every implementation given, each operation's instructions
//! (under valgrind's callgrind) and allocations, and prints one JSON result per implementation
//! (a JSON array). `./run.sh` starts two per lane and tree before it times anything: a
//! comparison whose counts are equal in both trees ran the same machine code.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tdbench::alloc::CountingAllocator;
use tdbench::corpus::lanes;
use tdbench::worker::count;
use tdbench_contract::CountJob;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Counts instructions (callgrind) and allocations of every implementation on one lane.
#[derive(Parser)]
#[command(
    name = "counter",
    after_help = "Needs valgrind. Exit status: 0 counted, 1 nothing counted (the reason on stderr), 2 usage.\n\
                  Example: counter --lane messages --implementations json-td,tl --keep-callgrind /tmp/profiles"
)]
struct Cli {
    #[command(flatten)]
    job: CountJob,
}

fn main() -> ExitCode {
    // The process valgrind runs: `counter --inner JOB-FILE`, nothing else on its command line.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, file] = &args[..]
        && flag == "--inner"
    {
        return match count::inner(&PathBuf::from(file)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("counter: {message}");
                ExitCode::from(1)
            }
        };
    }
    let job = Cli::parse().job;
    if let Err(message) = lanes::parse_lane_list(&job.lane) {
        eprintln!("counter: {message}");
        return ExitCode::from(2);
    }
    match count::run(&job) {
        Ok(results) => {
            println!("{}", serde_json::to_string_pretty(&results).expect("results serialize"));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("counter: {}: {message}", job.lane);
            ExitCode::from(1)
        }
    }
}
