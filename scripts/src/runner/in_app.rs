//! `./run.sh --in-app`: the current tree's `in-app` binary, one fresh process per codec in
//! balanced order (every codec forward, then reversed, per round), merged into `in-app.json` and
//! the report section `in-app.md`. Formats against formats in one tree: no baseline, no gate.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tdbench_contract::{InAppResult, Role, TreeState};

use super::children;
use super::failure::{Failure, environment};
use super::progress::Progress;
use crate::cli::{self, Options};
use crate::gate::in_app;

/// The codecs the in-app binary takes, in report order (`json` first: every speed-up is against it).
pub const CODECS: &[&str] = tdbench_contract::names::CODECS;

/// A process longer than this is stuck (each takes seconds).
const TIME_LIMIT: Duration = Duration::from_secs(600);

/// What one in-app measurement runs: which codecs, under which host allocators, how many rounds.
pub struct Request {
    pub codecs: Vec<String>,
    pub allocators: Vec<String>,
    pub rounds: u32,
    pub ci: bool,
    /// Allocators other than the system's that do not build (jemalloc needs a C toolchain and
    /// make) are left out with a warning instead of failing the run.
    pub optional_hosts: bool,
}

impl Request {
    /// What `./run.sh --in-app` asks for.
    fn of(options: &Options) -> Result<Request, Failure> {
        let codecs: Vec<String> = match cli::requested(&options.implementations) {
            None => CODECS.iter().map(|c| c.to_string()).collect(),
            Some(asked) => {
                if let Some(bad) = asked.iter().find(|a| !CODECS.contains(&a.as_str())) {
                    return Err(environment(format!("--in-app measures codecs; `{bad}` is not one of: {}", CODECS.join(", "))));
                }
                asked
            }
        };
        let mut allocators: Vec<String> = Vec::new();
        for allocator in &options.allocator {
            if !allocators.contains(allocator) {
                allocators.push(allocator.clone());
            }
        }
        Ok(Request { codecs, allocators, rounds: options.rounds.unwrap_or(1), ci: options.ci, optional_hosts: false })
    }

    /// What the full default run measures for the published report's "In the app": every codec
    /// under each of the three host allocators, one round (42 processes, about five minutes
    /// here). The issue that asked for the section asks for the allocator comparison in it too.
    pub fn full_default_run(ci: bool) -> Request {
        Request {
            codecs: CODECS.iter().map(|c| c.to_string()).collect(),
            allocators: ["system", "mimalloc", "jemalloc"].map(String::from).to_vec(),
            rounds: 1,
            ci,
            optional_hosts: true,
        }
    }
}

/// `./run.sh --in-app`: measures, and with `--publish` also writes the section into `published`.
pub fn run(root: &Path, output: &Path, options: &Options, command: Vec<String>, published: Option<PathBuf>) -> Result<(), Failure> {
    let request = Request::of(options)?;
    let folder = measure(root, output, &request, command)?;
    if let Some(report) = published {
        // The published README shows it: drawn again from the published results, unchanged.
        let results = crate::files::read_results(&report.join("results.json")).map_err(environment)?;
        crate::report::publish(&report, |staging| {
            copy_into(&folder, staging).map_err(|failure| failure.message)?;
            crate::report::write(&results, staging)
        })
        .map_err(environment)?;
        println!("published: {} (and its section in README.md)", report.join("in-app.md").display());
    }
    Ok(())
}

/// Copies a measurement's `in-app.json` and `in-app.md` from `folder` into a report folder,
/// where [`crate::report::write`] shows them as the section "In the app".
pub fn copy_into(folder: &Path, report: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(report).map_err(|e| environment(format!("cannot create {}: {e}", report.display())))?;
    for name in ["in-app.json", "in-app.md"] {
        let text = std::fs::read_to_string(folder.join(name)).map_err(|e| environment(format!("{}: {e}", folder.join(name).display())))?;
        crate::files::write_atomically(&report.join(name), &text).map_err(environment)?;
    }
    Ok(())
}

/// Runs the processes `request` asks for in balanced order and merges them into
/// `OUTPUT/in-app/in-app.json` and `in-app.md`; returns that folder.
pub fn measure(root: &Path, output: &Path, request: &Request, command: Vec<String>) -> Result<PathBuf, Failure> {
    let Request { codecs, allocators, rounds, ci, optional_hosts } = request;
    let (rounds, ci) = (*rounds, *ci);
    let target = root.join("target/tdbench-worker");
    // The tree's state, read once here and handed to every process (as a run's workers get it).
    let sh = xshell::Shell::new().map_err(|e| environment(e.to_string()))?;
    let tree = crate::git::current_tree(&sh, root).map_err(environment)?;
    let state = (TreeState::variable(Role::Current), TreeState { commit: tree.commit, dirty: tree.dirty }.to_value());
    let mut binaries = std::collections::BTreeMap::new();
    for allocator in allocators {
        match build(root, &target, allocator, ci) {
            Ok(binary) => drop(binaries.insert(allocator.clone(), binary)),
            Err(failure) if *optional_hosts && allocator != "system" => {
                eprintln!("warning: in-app leaves the {allocator} host out: {}", failure.message)
            }
            Err(failure) => return Err(failure),
        }
    }
    let allocators: Vec<&String> = allocators.iter().filter(|a| binaries.contains_key(*a)).collect();
    let folder = output.join("in-app");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(folder.join("samples")).map_err(|e| environment(format!("cannot create {}: {e}", folder.display())))?;

    let nonce = super::nonce();
    // Every (allocator, codec) forward, then reversed, per round.
    let hosts: Vec<(&String, &String)> = allocators.iter().flat_map(|&a| codecs.iter().map(move |c| (a, c))).collect();
    let mut slots = Vec::new();
    for round in 0..rounds {
        let forward = hosts.iter();
        let backward = hosts.iter().rev();
        for (direction, (allocator, name)) in forward.map(|h| (0, h)).chain(backward.map(|h| (1, h))) {
            slots.push(in_app::Slot { allocator: allocator.to_string(), implementation: name.to_string(), sample: round * 2 + direction });
        }
    }
    let mut progress = Progress::new(slots.len(), ci);
    let mut samples = Vec::new();
    for slot in &slots {
        let (name, sample) = (&slot.implementation, slot.sample);
        let file = folder.join("samples").join(format!("{}-{name}-{sample}.json", slot.allocator));
        let started = Instant::now();
        let text = children::run_for_result(
            Command::new(&binaries[&slot.allocator])
                .env(state.0, &state.1)
                .args(["--implementation", name, "--nonce", &nonce, "--sample", &sample.to_string(), "--tree"])
                .arg(root)
                .arg("--output")
                .arg(&file)
                .current_dir(root),
            TIME_LIMIT,
            &format!("in-app {slot}"),
            &file,
        )?;
        let result: InAppResult = serde_json::from_str(&text)
            .map_err(|e| Failure { code: 1, message: format!("{}: not an in-app result: {e}", file.display()) })?;
        samples.push(result);
        progress.step("in-app", started.elapsed());
    }
    progress.finish();

    let merged = in_app::merge(command, &nonce, &slots, samples).map_err(|m| Failure { code: 1, message: format!("in-app: {m}") })?;
    let json = serde_json::to_string_pretty(&merged).expect("in-app results serialize");
    let markdown = crate::report::in_app::render(&merged);
    for (name, text) in [("in-app.json", &json), ("in-app.md", &markdown)] {
        crate::files::write_atomically(&folder.join(name), text).map_err(environment)?;
    }
    print!("{markdown}");
    println!("in-app: {}", folder.join("in-app.md").display());
    Ok(folder)
}

/// Builds the in-app binary with `allocator` and keeps it as `in-app-ALLOCATOR`: the features
/// differ, so each build replaces `release/in-app`. Asks the copy which allocator it has.
fn build(root: &Path, target: &Path, allocator: &str, ci: bool) -> Result<PathBuf, Failure> {
    eprintln!("building the current tree's in-app binary with the {allocator} allocator (measurement build)…");
    let feature = format!("alloc-{allocator}");
    let mut args = vec!["build", "--release", "--bin", "in-app"];
    if allocator != "system" {
        args.extend(["--features", &feature]);
    }
    let status = super::build::cargo(root, target, crate::plan::Build::Measurement, &args, ci)?;
    if !status.success() {
        return Err(environment(format!("the in-app binary does not build with {allocator} (cargo's errors above)")));
    }
    let kept = target.join(format!("in-app-{allocator}"));
    std::fs::copy(target.join("release/in-app"), &kept).map_err(|e| environment(format!("cannot copy the in-app binary: {e}")))?;
    let said =
        Command::new(&kept).arg("--print-allocator").output().map_err(|e| environment(format!("cannot run {}: {e}", kept.display())))?;
    let said = String::from_utf8_lossy(&said.stdout).trim().to_string();
    if said != allocator {
        return Err(environment(format!("{} says it has the {said:?} allocator, not {allocator}", kept.display())));
    }
    Ok(kept)
}
