//! Runs one implementation on one lane in this fresh process and writes one JSON result.
//! `./run.sh` starts one per (implementation, tree, sample); run it by hand to reproduce one.

use std::path::PathBuf;
use std::process::ExitCode;

use tdbench::corpus::lanes;
use tdbench::registry;
use tdbench::worker::{self, alloc::CountingAllocator, result::Settings, Job};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const USAGE: &str = "\
usage: worker --implementation NAME --lane LANE [options]
       worker --list

Measures one implementation on one lane in this process and writes one JSON result.

  --implementation NAME         a codec or floor (see --list)
  --lane LANE                   one lane (see --list)
  --role ROLE                   baseline or current, echoed in the result (default: current)
  --nonce TEXT                  echoed, ties the file to a run (default: manual)
  --sample N                    echoed sample index (default: 0)
  --corpus DIR                  corpus folder (default: ./corpus)
  --tree DIR                    the source tree this worker was built from, for its commit and
                                dirty flag (default: .)
  --output FILE                 where to write the JSON (default: standard output)
  --operation encode|decode     measure only one operation (default: both)
  --measure time|instructions|both
                                time batches, count instructions of a fixed loop under
                                valgrind's callgrind, or both (default: time)
  --duration-ms N               timed phase (default: 300)
  --warmup-ms N                 warm-up before it (default: 60)
  --batch-us N                  target length of one batch (default: 5000)
  --allocation-iterations N     operations in the allocation pass (default: 200)
  --instruction-cycles N        passes over the lane's payloads in the loop callgrind counts
                                under --measure instructions or both (default: 3)
  --list                        print the lanes and implementations as JSON
";

fn main() -> ExitCode {
    match parse(std::env::args().skip(1).collect()) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some((job, output))) => match worker::run(&job) {
            Ok(result) => {
                let json = serde_json::to_string_pretty(&result).expect("results serialize");
                match output {
                    None => println!("{json}"),
                    Some(path) => {
                        // Written beside and renamed: a killed worker leaves no half file.
                        let partial = path.with_extension("partial");
                        if let Err(e) = std::fs::write(&partial, json).and_then(|_| std::fs::rename(&partial, &path)) {
                            eprintln!("worker: cannot write {}: {e}", path.display());
                            return ExitCode::from(2);
                        }
                    }
                }
                ExitCode::SUCCESS
            }
            Err(message) if job.count_instructions_inner && message == worker::INNER_DONE => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("worker: {}/{}: {message}", job.implementation, job.lane);
                ExitCode::from(1)
            }
        },
        Err(message) => {
            eprintln!("worker: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn parse(args: Vec<String>) -> Result<Option<(Job, Option<PathBuf>)>, String> {
    let mut job = Job {
        implementation: String::new(),
        lane: String::new(),
        role: "current".into(),
        nonce: "manual".into(),
        sample: 0,
        // Relative defaults, not paths baked in at compile time: two builds of the same source
        // in different folders must produce identical binaries (see scripts/src/runner.rs).
        corpus_dir: PathBuf::from("corpus"),
        tree: PathBuf::from("."),
        operation: None,
        count_instructions_inner: false,
        settings: Settings {
            measure: "time".into(),
            duration_ms: 300,
            warmup_ms: 60,
            batch_us: 5000,
            allocation_iterations: 200,
            instruction_cycles: 3,
        },
    };
    let mut output = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|_| format!("{arg} takes a whole number, not `{v}`"));
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            "--list" => {
                let lanes: Vec<_> = lanes::LANES.iter().map(|l| l.name).collect();
                let implementations: Vec<_> = registry::implementations().iter().map(|i| i.name()).collect();
                println!("{}", serde_json::json!({ "lanes": lanes, "implementations": implementations }));
                return Ok(None);
            }
            "--implementation" => job.implementation = value()?,
            "--lane" => job.lane = value()?,
            "--role" => job.role = value()?,
            "--nonce" => job.nonce = value()?,
            "--sample" => job.sample = number(value()?)? as u32,
            "--corpus" => job.corpus_dir = PathBuf::from(value()?),
            "--tree" => job.tree = PathBuf::from(value()?),
            "--output" => output = Some(PathBuf::from(value()?)),
            "--operation" => {
                let v = value()?;
                if v != "encode" && v != "decode" {
                    return Err(format!("--operation is encode or decode, not `{v}`"));
                }
                job.operation = Some(v);
            }
            "--measure" => {
                let v = value()?;
                if !["time", "instructions", "both"].contains(&v.as_str()) {
                    return Err(format!("--measure is time, instructions or both, not `{v}`"));
                }
                job.settings.measure = v;
            }
            "--duration-ms" => job.settings.duration_ms = number(value()?)?,
            "--warmup-ms" => job.settings.warmup_ms = number(value()?)?,
            "--batch-us" => job.settings.batch_us = number(value()?)?.max(1),
            "--allocation-iterations" => job.settings.allocation_iterations = number(value()?)?,
            "--instruction-cycles" => job.settings.instruction_cycles = number(value()?)?,
            // Internal: the child process `--measure instructions` starts under valgrind.
            "--count-instructions-inner" => job.count_instructions_inner = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if job.implementation.is_empty() || job.lane.is_empty() {
        return Err("--implementation and --lane are required".into());
    }
    registry::implementation(&job.implementation)?;
    lanes::parse_lane_list(&job.lane)?;
    Ok(Some((job, output)))
}
