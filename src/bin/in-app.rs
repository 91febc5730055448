//! The in-app measurement of one codec, in this fresh process: the start-up stream decoded
//! corpus-style and into an app store beside a 60 Hz ticker; prints one JSON result.
//! `./run.sh --in-app` starts one per codec, in balanced order; run it by hand to reproduce one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use tdbench::alloc::HeapTracking;
use tdbench::worker::in_app::{self, InAppJob};

// The host allocator is chosen at build time (`--features alloc-mimalloc` or `alloc-jemalloc`;
// `./run.sh --in-app --allocator ...` builds one binary per allocator), so each is measured in a
// binary of its own, as an app would ship it.
#[cfg(all(feature = "alloc-mimalloc", feature = "alloc-jemalloc"))]
compile_error!("one allocator per in-app build: alloc-mimalloc or alloc-jemalloc, not both");

#[cfg(feature = "alloc-mimalloc")]
#[global_allocator]
static ALLOCATOR: HeapTracking<mimalloc::MiMalloc> = HeapTracking(mimalloc::MiMalloc);
#[cfg(feature = "alloc-mimalloc")]
const ALLOCATOR_NAME: &str = "mimalloc";

#[cfg(feature = "alloc-jemalloc")]
#[global_allocator]
static ALLOCATOR: HeapTracking<tikv_jemallocator::Jemalloc> = HeapTracking(tikv_jemallocator::Jemalloc);
#[cfg(feature = "alloc-jemalloc")]
const ALLOCATOR_NAME: &str = "jemalloc";

#[cfg(not(any(feature = "alloc-mimalloc", feature = "alloc-jemalloc")))]
#[global_allocator]
static ALLOCATOR: HeapTracking<std::alloc::System> = HeapTracking(std::alloc::System);
#[cfg(not(any(feature = "alloc-mimalloc", feature = "alloc-jemalloc")))]
const ALLOCATOR_NAME: &str = "system";

/// Decodes the start-up stream with one codec, corpus-style and in situ, and prints the JSON.
#[derive(Parser)]
#[command(name = "in-app", after_help = "Exit status: 0 measured, 1 nothing measured (the reason on stderr), 2 usage.")]
struct Cli {
    /// The codec (json, json-td, json-value, json-sonic, json-simd, protobuf, msgpack, tl, bincode)
    #[arg(long, required_unless_present = "print_allocator")]
    implementation: Option<String>,
    /// Echoed into the result, so the runner can tell its files from stale ones
    #[arg(long, default_value = "")]
    nonce: String,
    #[arg(long, default_value_t = 0)]
    sample: u32,
    /// The tree whose commit the result names
    #[arg(long, default_value = ".")]
    tree: PathBuf,
    /// Passes of each kind, at least
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    passes: u32,
    /// Seconds the in-situ passes go on at least, so that every codec's ticker gets about as
    /// many ticks (60 a second)
    // 2 s (120 ticks) and 60 idle ticks: the full default run measures 42 of these processes,
    // and at 3 s and 120 they took 4m34s of its budget; the figures it publishes (µs per update,
    // allocations, heap) come from whole passes, which 2 s still gives every codec five of.
    #[arg(long, default_value_t = 2.0)]
    busy_seconds: f64,
    /// Ticks with nothing else running, before the passes
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    idle_ticks: u32,
    /// Print the allocator this binary was built with and exit
    #[arg(long)]
    print_allocator: bool,
    /// Where to write the JSON (default: standard output)
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.print_allocator {
        println!("{ALLOCATOR_NAME}");
        return ExitCode::SUCCESS;
    }
    if !(cli.busy_seconds.is_finite() && (0.0..=3600.0).contains(&cli.busy_seconds)) {
        eprintln!("in-app: --busy-seconds must be from 0 to 3600");
        return ExitCode::from(2);
    }
    let job = InAppJob {
        implementation: cli.implementation.unwrap_or_default(),
        nonce: cli.nonce,
        sample: cli.sample,
        tree: cli.tree,
        passes: cli.passes,
        busy: Duration::from_secs_f64(cli.busy_seconds),
        idle_ticks: cli.idle_ticks,
        allocator: ALLOCATOR_NAME,
    };
    match in_app::run(&job) {
        Ok(result) => {
            let json = serde_json::to_string_pretty(&result).expect("results serialize");
            if let Err(e) = tdbench::worker::write_result(cli.output.as_deref(), &json) {
                eprintln!(
                    "in-app: cannot write {}: {e}",
                    cli.output.as_deref().unwrap_or(std::path::Path::new("standard output")).display()
                );
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("in-app: {}: {message}", job.implementation);
            ExitCode::from(1)
        }
    }
}
