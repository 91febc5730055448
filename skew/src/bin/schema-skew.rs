//! One format's schema-skew survey over corpus lanes, in a process of its own: payloads written
//! with one TDLib release's models and read with another's (1.8.65 and 1.8.60 against the
//! models' own 1.8.66), both directions, each outcome
//! judged against the by-name reference, and the skewed read timed against the same-release
//! read. `./run.sh --schema-skew` runs one per format and draws the table.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tdbench::corpus::Corpus;
use tdbench_skew::release::{Current, Release};
use tdbench_skew::{Case, Direction, Format, Older, SkewResult, survey};

// Exact allocation counts of the skewed and the same-release reads.
#[global_allocator]
static ALLOCATOR: tdbench::alloc::CountingAllocator = tdbench::alloc::CountingAllocator;

#[derive(Parser)]
#[command(
    name = "schema-skew",
    about = "One format's schema-skew survey: TDLib 1.8.65's and 1.8.60's models against 1.8.66's, both directions"
)]
struct Options {
    /// The format: json, json-td, msgpack, bincode, tl, protobuf-by-position, protobuf-stable
    #[arg(long, value_parser = |name: &str| Format::parse(name).ok_or_else(|| format!("unknown format `{name}`")))]
    format: Format,
    /// Lanes, comma-separated (the streamed `startup` lane is not one)
    #[arg(long = "data", value_name = "LANES", value_delimiter = ',', default_value = "message,messages,mix")]
    lanes: Vec<String>,
    /// The corpus folder [default: the tree's corpus/]
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// Timed batch pairs per lane and direction (0: outcomes only)
    #[arg(long, value_name = "N", default_value_t = 20)]
    blocks: usize,
    /// Where the result goes (JSON) [default: stdout]
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn main() -> ExitCode {
    let options = Options::parse();
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("schema-skew: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<(), String> {
    let dir = options.corpus.clone().unwrap_or_else(Corpus::default_dir);
    let corpus = Corpus::load(&dir).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        format!("the corpus in {} does not load:\n{}", dir.display(), lines.join("\n"))
    })?;
    let mut surveys = Vec::new();
    for lane in &options.lanes {
        let payloads: Vec<tdbench_skew::release::CurrentObject> = corpus.lane(lane).iter().map(|p| p.value.clone()).collect();
        if payloads.is_empty() {
            return Err(format!("lane `{lane}` has no payloads in {}", dir.display()));
        }
        for older in Older::ALL {
            for direction in Direction::BOTH {
                eprintln!("schema-skew: {} {lane} against {}: {}", options.format.name(), older.name(), direction.name());
                let case = Case { lane, format: options.format, older, direction };
                surveys.push(survey(&case, &payloads, options.blocks));
            }
        }
    }
    let result = SkewResult { format: options.format.name().to_string(), newer: Current::NAME.to_string(), surveys };
    let json = serde_json::to_string_pretty(&result).expect("a skew result serializes");
    match &options.output {
        Some(path) => std::fs::write(path, json).map_err(|e| format!("writing {}: {e}", path.display())),
        None => {
            println!("{json}");
            Ok(())
        }
    }
}
