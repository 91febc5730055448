//! `./run.sh`: builds both trees, runs the workers in balanced order, confirms what the first
//! pass finds slower, merges, and leaves an `INCOMPLETE` marker until results are written, so an
//! interrupted run never looks complete.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use xshell::{cmd, Shell};

use crate::merge;
use crate::options::{self, Options};
use crate::plan::{self, Plan, PlanSettings, Slot, TreeInfo};

/// A failure that ends the run: exit 1 for a failed worker, 2 for usage and environment.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

fn environment(message: impl Into<String>) -> Failure {
    Failure { code: 2, message: message.into() }
}

pub fn main(args: Vec<String>) -> ExitCode {
    let options = match options::parse(args.clone()) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{}", options::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("run: {e}\n\n{}", options::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(&options, args) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("run: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

struct Trees {
    current: TreeInfo,
    /// The target folder each tree builds into.
    current_target: PathBuf,
    baseline: Option<(TreeInfo, PathBuf)>,
}

impl Trees {
    fn tree_and_target(&self, role: &str) -> (PathBuf, &Path) {
        if role == "baseline" {
            let (info, target) = self.baseline.as_ref().expect("baseline slots only with a baseline");
            (PathBuf::from(&info.path), target)
        } else {
            (PathBuf::from(&self.current.path), &self.current_target)
        }
    }

    /// The worker of `role`'s tree linked with code layout `seed` (see [`link_layout`]).
    fn worker(&self, role: &str, seed: u32) -> PathBuf {
        self.tree_and_target(role).1.join(format!("layouts/worker-{seed}"))
    }

    /// Links every layout the given samples need, in both trees.
    fn link_layouts(&self, samples: std::ops::Range<u32>) -> Result<(), Failure> {
        let roles: Vec<&str> = if self.baseline.is_some() { vec!["baseline", "current"] } else { vec!["current"] };
        eprintln!("linking {} code layout(s) per tree…", samples.len());
        for role in roles {
            let (tree, target) = self.tree_and_target(role);
            for sample in samples.clone() {
                link_layout(&tree, target, role, layout_seed(sample))?;
            }
        }
        Ok(())
    }
}

/// Sample `k` of both trees runs with layout seed `k + 1` (0 would ask LLD for a random one).
fn layout_seed(sample: u32) -> u32 {
    sample + 1
}

fn run(options: &Options, args: Vec<String>) -> Result<ExitCode, Failure> {
    let sh = Shell::new().map_err(|e| environment(e.to_string()))?;
    let root = cmd!(sh, "git rev-parse --show-toplevel")
        .quiet()
        .read()
        .map(PathBuf::from)
        .map_err(|_| environment("run from inside tdbench's git repository (./run.sh does)"))?;
    sh.change_dir(&root);

    if options.validate_only {
        let status = Command::new("cargo")
            .args(["run", "--release", "--quiet", "--bin", "validate", "--"])
            .current_dir(&root)
            .status()
            .map_err(|e| environment(format!("cannot run cargo: {e}")))?;
        return Ok(ExitCode::from(status.code().unwrap_or(2).clamp(0, 255) as u8));
    }

    if options.measure != "time" {
        tdbench::worker::instructions::check_valgrind().map_err(environment)?;
    }
    let trees = prepare_trees(&sh, &root, options)?;
    let current_worker = trees.current_target.join("release/worker");
    let (lanes, implementations) = selection(&current_worker, options)?;
    let entries = entries(&trees, &lanes, &implementations)?;

    let output = if options.output.is_absolute() { options.output.clone() } else { root.join(&options.output) };
    clear_previous_run(&output)?;
    std::fs::write(output.join("INCOMPLETE"), "a run started here and has not finished; its results are not valid\n")
        .map_err(|e| environment(format!("cannot write to {}: {e}", output.display())))?;

    let mut plan = Plan {
        nonce: nonce(),
        command: std::iter::once("./run.sh".to_string()).chain(args).collect(),
        lanes: lanes.clone(),
        implementations: implementations.clone(),
        baseline: trees.baseline.as_ref().map(|(info, _)| info.clone()),
        current: trees.current.clone(),
        settings: PlanSettings {
            measure: options.measure.clone(),
            instruction_cycles: options.instruction_cycles,
            duration_ms: options.duration_ms,
            warmup_ms: options.warmup_ms,
            rounds: options.rounds,
            confirm_rounds: options.confirm_rounds,
            allocation_iterations: options.allocation_iterations,
            threshold_percent: options.threshold,
            allow_format_change: options.allow_format_change,
        },
        slots: lanes.iter().flat_map(|lane| plan::lane_slots(lane, &entries[lane], options.rounds, 0, "screen")).collect(),
    };
    write_plan(&output, &plan)?;
    let corpus = root.join("corpus");
    trees.link_layouts(0..2 * options.rounds)?;
    let mut progress = Progress::new(plan.slots.len(), options.ci);
    for slot in plan.slots.clone() {
        run_slot(&slot, &plan, &trees, &corpus, &output, &mut progress)?;
    }
    progress.finish();

    // Instruction counts do not vary between processes: nothing to confirm.
    if trees.baseline.is_some() && options.confirm_rounds > 0 && options.measure != "instructions" {
        let (samples, _) = merge::load_samples(&output, &plan);
        let flagged = merge::screen_flags(&plan, &samples);
        let mut groups: Vec<(String, String)> = flagged.iter().map(|k| (k.lane.clone(), k.implementation.clone())).collect();
        groups.dedup();
        if !groups.is_empty() {
            eprintln!("confirming {} comparison(s) the first pass found slower: {}", flagged.len(), flagged.iter().map(|k| format!("{}/{}/{}", k.lane, k.implementation, k.operation)).collect::<Vec<_>>().join(", "));
            let first = 2 * options.rounds;
            let mut added = Vec::new();
            for (lane, implementation) in &groups {
                let entry: Vec<plan::Entry> = entries[lane].iter().filter(|e| &e.implementation == implementation).cloned().collect();
                added.extend(plan::lane_slots(lane, &entry, options.confirm_rounds, first, "confirm"));
            }
            plan.slots.extend(added.iter().cloned());
            write_plan(&output, &plan)?;
            // Fresh layouts: the confirmation must not inherit the screen's layout draws.
            trees.link_layouts(first..first + 2 * options.confirm_rounds)?;
            let mut progress = Progress::new(added.len(), options.ci);
            for slot in &added {
                run_slot(slot, &plan, &trees, &corpus, &output, &mut progress)?;
            }
            progress.finish();
        }
    }

    let results = merge::merge(&output).map_err(environment)?;
    merge::write(&output, &results).map_err(environment)?;
    let _ = std::fs::remove_file(output.join("INCOMPLETE"));
    print!("{}", crate::summary::text(&results));
    println!("results: {}", output.join("results.json").display());
    if results.verdict != "pass" {
        return Ok(ExitCode::from(1));
    }
    // Only a run that passed the gate is published.
    let report = if options.report.is_absolute() { options.report.clone() } else { root.join(&options.report) };
    crate::report::write(&results, &report).map_err(environment)?;
    println!("report: {}", report.join("README.md").display());
    Ok(ExitCode::SUCCESS)
}

fn prepare_trees(sh: &Shell, root: &Path, options: &Options) -> Result<Trees, Failure> {
    let current = crate::git::current_tree(sh, root).map_err(environment)?;
    let baseline = if options.no_baseline {
        None
    } else {
        let commit = crate::git::commit_of(sh, &options.baseline).map_err(environment)?;
        let info = crate::git::prepare_baseline(sh, root, &options.baseline_worktree, &options.baseline, &commit).map_err(environment)?;
        Some(info)
    };
    eprintln!(
        "current tree: {} {}{}",
        root.display(),
        &current.commit[..10],
        if current.dirty { " (uncommitted changes)" } else { "" }
    );
    let current_target = root.join("target/tdbench-worker");
    build_worker(root, &current_target, "current", options.ci)?;
    let baseline = match baseline {
        None => None,
        Some(info) => {
            eprintln!("baseline tree: {} {} ({})", info.path, &info.commit[..10], info.reference);
            let path = PathBuf::from(&info.path);
            let target = path.join("target");
            build_worker(&path, &target, "baseline", options.ci)?;
            Some((info, target))
        }
    };
    Ok(Trees { current, current_target, baseline })
}

/// Each tree builds its own worker into its own target folder.
///
/// Both builds remap their source and target folders to the same names: otherwise the paths
/// embedded in the binary (panic locations, generated files) differ in length, the linker shifts
/// every function, and two builds of the same commit measure differently — a false alarm in
/// every A/A run (seen: a 13% gap on `clone`, from a 64-byte shift).
fn build_worker(tree: &Path, target: &Path, role: &str, ci: bool) -> Result<(), Failure> {
    eprintln!("building the {role} tree's worker (release)…");
    let status = cargo(tree, target, &["build", "--release", "--bin", "worker"], ci)?;
    if !status.success() {
        return Err(environment(format!(
            "the {role} tree ({}) does not build a worker; a baseline older than the runner has none — pick a later --baseline",
            tree.display()
        )));
    }
    Ok(())
}

/// cargo in `tree`, building into `target`, with both trees' paths remapped to the same names.
fn cargo(tree: &Path, target: &Path, args: &[&str], ci: bool) -> Result<std::process::ExitStatus, Failure> {
    let mut flags: Vec<String> = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .ok()
        .filter(|f| !f.is_empty())
        .map(|f| f.split('\x1f').map(String::from).collect())
        .unwrap_or_default();
    flags.push(format!("--remap-path-prefix={}=/tdbench/target", target.display()));
    flags.push(format!("--remap-path-prefix={}=/tdbench/tree", tree.display()));
    let mut command = Command::new("cargo");
    // `--quiet` belongs to cargo's subcommand, before any `--` that starts rustc's arguments.
    command.arg(args[0]);
    if ci {
        command.arg("--quiet");
    }
    command
        .args(&args[1..])
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env_remove("RUSTFLAGS");
    command.status().map_err(|e| environment(format!("cannot run cargo: {e}")))
}

/// Links the tree's worker with its functions in an order shuffled by `seed` (LLD's
/// `--shuffle-sections`), into `layouts/worker-SEED`.
///
/// Why: any change moves the code after it, and where a hot loop lands (alignment, cache sets,
/// branch-predictor aliasing) can move unchanged code by several percent — seen here: adding
/// work to msgpack's decode made bincode's and tl's decode 2–3% slower in every process. With
/// one layout per sample, the same for both trees, an A/A pair is still two identical binaries,
/// while a real change meets a different layout draw in every pair: layout luck becomes noise
/// the intervals account for instead of a bias that fails unrelated code.
fn link_layout(tree: &Path, target: &Path, role: &str, seed: u32) -> Result<(), Failure> {
    let shuffle = format!("link-arg=-Wl,--shuffle-sections=.text*={seed}");
    let status = cargo(tree, target, &["rustc", "--release", "--bin", "worker", "--", "-C", &shuffle], true)?;
    if !status.success() {
        return Err(environment(format!("linking the {role} worker with layout {seed} failed")));
    }
    let layouts = target.join("layouts");
    std::fs::create_dir_all(&layouts).map_err(|e| environment(e.to_string()))?;
    std::fs::copy(target.join("release/worker"), layouts.join(format!("worker-{seed}")))
        .map_err(|e| environment(format!("cannot keep layout {seed}: {e}")))?;
    Ok(())
}

/// What a worker binary lists (`worker --list`): its lanes and its implementations.
fn listed(worker: &Path) -> Result<(Vec<String>, Vec<String>), Failure> {
    let output = Command::new(worker).arg("--list").output().map_err(|e| environment(format!("cannot run {}: {e}", worker.display())))?;
    let list: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|e| environment(format!("worker --list: {e}")))?;
    let names = |key: &str| -> Vec<String> {
        list[key].as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default()
    };
    Ok((names("lanes"), names("implementations")))
}

/// The lanes and implementations asked for, checked against what the current worker knows.
/// TDLib round trips need libtdjson and are timed only: without the library, or when only
/// instructions are counted, they are left out with a line saying so (asked for by name, the
/// run stops instead).
fn selection(worker: &Path, options: &Options) -> Result<(Vec<String>, Vec<String>), Failure> {
    let (known_lanes, known_implementations) = listed(worker)?;
    let lanes = options::select(&options.lanes, &known_lanes, "lane", "--data").map_err(environment)?;
    let mut implementations =
        options::select(&options.implementations, &known_implementations, "implementation", "--serializer").map_err(environment)?;
    let needs_tdlib = |name: &String| tdbench::registry::implementation(name).is_ok_and(|i| i.needs_tdlib());
    let why_not = if !tdbench::tdlib::Tdjson::path().exists() {
        Some(tdbench::tdlib::HOW_TO_ENABLE.to_string())
    } else if options.measure == "instructions" {
        Some("TDLib round trips are timed only (its threads make instruction counts vary): left out of --measure instructions".into())
    } else {
        None
    };
    if let Some(why) = why_not {
        if options.implementations.as_ref().is_some_and(|asked| asked.iter().any(needs_tdlib)) {
            return Err(environment(why));
        }
        if implementations.iter().any(needs_tdlib) {
            eprintln!("{why}");
            implementations.retain(|name| !needs_tdlib(name));
        }
    }
    Ok((lanes, implementations))
}

/// Per lane, the implementations that measure it and the trees each runs in: both, or the
/// current tree only for an implementation the baseline's worker does not list.
fn entries(trees: &Trees, lanes: &[String], implementations: &[String]) -> Result<BTreeMap<String, Vec<plan::Entry>>, Failure> {
    let in_baseline = match &trees.baseline {
        Some((_, target)) => listed(&target.join("release/worker"))?.1,
        None => Vec::new(),
    };
    let new: Vec<&String> = implementations.iter().filter(|i| trees.baseline.is_some() && !in_baseline.contains(i)).collect();
    if !new.is_empty() {
        eprintln!(
            "not in the baseline tree, measured in the current tree only (shown, not compared): {}",
            new.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(lanes
        .iter()
        .map(|lane| {
            let measured = implementations
                .iter()
                .filter(|name| tdbench::registry::implementation(name).is_ok_and(|i| i.measures(lane)))
                .map(|name| plan::Entry {
                    implementation: name.clone(),
                    roles: if in_baseline.contains(name) { vec!["baseline", "current"] } else { vec!["current"] },
                })
                .collect();
            (lane.clone(), measured)
        })
        .collect())
}

/// Removes what an earlier run left in the output folder (only the files a run writes).
fn clear_previous_run(output: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(output).map_err(|e| environment(format!("cannot create {}: {e}", output.display())))?;
    let _ = std::fs::remove_dir_all(output.join("samples"));
    // Links to the workers of an earlier run must never be started by this one.
    let _ = std::fs::remove_dir_all(output.join("workers"));
    for name in ["plan.json", "results.json", "results.json.partial", "summary.md", "INCOMPLETE"] {
        let _ = std::fs::remove_file(output.join(name));
    }
    Ok(())
}

fn write_plan(output: &Path, plan: &Plan) -> Result<(), Failure> {
    let partial = output.join("plan.json.partial");
    std::fs::write(&partial, serde_json::to_string_pretty(plan).expect("plan serializes"))
        .and_then(|_| std::fs::rename(&partial, output.join("plan.json")))
        .map_err(|e| environment(format!("cannot write the plan: {e}")))
}

fn nonce() -> String {
    let mut bytes = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes = (t.as_nanos() as u64 ^ std::process::id() as u64).to_le_bytes();
    }
    tdbench::worker::hex(&bytes)
}

/// The worker binary as it is started: a hard link (or copy) at `workers/SEED-b` or `SEED-c`
/// in the output folder.
///
/// Why: every byte a process gets from its command line is allocated on its heap, and the
/// allocation history decides where later buffers land — seen here: the `memcpy` floor ran 12%
/// slower in the current tree's processes of an A/A run, from how the source and destination
/// buffers fell against each other. So both trees' workers start from paths of equal length,
/// in their tree (`--tree .`), with identical arguments but for `--role` (same allocation
/// size), and print their result to standard output instead of taking an output path.
fn launch_path(trees: &Trees, output: &Path, role: &str, seed: u32) -> Result<PathBuf, Failure> {
    let dir = output.join("workers");
    std::fs::create_dir_all(&dir).map_err(|e| environment(e.to_string()))?;
    let path = dir.join(format!("{seed:03}-{}", &role[..1]));
    if !path.exists() {
        let source = trees.worker(role, seed);
        std::fs::hard_link(&source, &path)
            .or_else(|_| std::fs::copy(&source, &path).map(|_| ()))
            .map_err(|e| environment(format!("cannot place {}: {e}", source.display())))?;
    }
    Ok(path)
}

fn run_slot(slot: &Slot, plan: &Plan, trees: &Trees, corpus: &Path, output: &Path, progress: &mut Progress) -> Result<(), Failure> {
    let worker = launch_path(trees, output, &slot.role, layout_seed(slot.sample))?;
    let (tree, _) = trees.tree_and_target(&slot.role);
    let worker = &worker;
    let file = slot.file(output);
    std::fs::create_dir_all(file.parent().expect("slot files are in folders")).map_err(|e| environment(e.to_string()))?;
    let s = &plan.settings;
    let args: Vec<String> = vec![
        "--implementation".into(),
        slot.implementation.clone(),
        "--lane".into(),
        slot.lane.clone(),
        "--role".into(),
        slot.role.clone(),
        "--nonce".into(),
        plan.nonce.clone(),
        "--sample".into(),
        slot.sample.to_string(),
        "--corpus".into(),
        corpus.display().to_string(),
        "--tree".into(),
        ".".into(),
        "--duration-ms".into(),
        s.duration_ms.to_string(),
        "--warmup-ms".into(),
        s.warmup_ms.to_string(),
        "--allocation-iterations".into(),
        s.allocation_iterations.to_string(),
        "--measure".into(),
        s.measure.clone(),
        "--instruction-cycles".into(),
        s.instruction_cycles.to_string(),
    ];
    let reproduce = format!(
        "cd {} && {}",
        tree.display(),
        std::iter::once(worker.display().to_string()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ")
    );
    let name = format!("{}/{} ({} tree, sample {})", slot.implementation, slot.lane, slot.role, slot.sample);
    // Under callgrind a worker runs some 100 times slower.
    let counting = if s.measure == "time" { Duration::ZERO } else { Duration::from_secs(900) };
    let timeout = Duration::from_secs(60) + Duration::from_millis(20 * (s.duration_ms + s.warmup_ms)) + counting;
    let started = Instant::now();
    let mut command = Command::new(worker);
    if tdbench::registry::implementation(&slot.implementation).is_ok_and(|i| i.needs_tdlib()) {
        // One library for both trees (the baseline worktree has no `.cache/`), named the same
        // way in both trees' processes.
        command.env("TDJSON", tdbench::tdlib::Tdjson::path());
    }
    let mut child = command
        .args(&args)
        .current_dir(&tree)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| environment(format!("cannot start {}: {e}", worker.display())))?;
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout_reader = read_all(Box::new(child.stdout.take().expect("piped")));
    let reader = read_all(Box::new(child.stderr.take().expect("piped")));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(environment(format!("waiting for {name}: {e}"))),
        }
    };
    let stderr = reader.join().unwrap_or_default();
    let result = stdout_reader.join().unwrap_or_default();
    let failed = match status {
        None => Some(format!("did not finish within {}s and was stopped", timeout.as_secs())),
        Some(status) if !status.success() => Some(format!("failed ({status})")),
        Some(_) if result.trim().is_empty() => Some("exited without printing its result".into()),
        Some(_) => {
            // Written beside and renamed: an interrupted run never leaves half a sample.
            let partial = file.with_extension("partial");
            std::fs::write(&partial, &result)
                .and_then(|_| std::fs::rename(&partial, &file))
                .err()
                .map(|e| format!("result could not be saved to {}: {e}", file.display()))
        }
    };
    if let Some(what) = failed {
        progress.finish();
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(Failure {
            code: 1,
            message: format!(
                "worker {name} {what}\n--- last lines of its stderr ---\n{}\n--- reproduce with ---\n{reproduce}\n(the samples so far and the INCOMPLETE marker are left in {})",
                tail.join("\n"),
                output.display()
            ),
        });
    }
    progress.step(&slot.lane, started.elapsed());
    Ok(())
}

/// A progress line with an ETA on a terminal; a plain line every few workers under `--ci`.
struct Progress {
    total: usize,
    done: usize,
    spent: Duration,
    interactive: bool,
}

impl Progress {
    fn new(total: usize, ci: bool) -> Progress {
        Progress { total, done: 0, spent: Duration::ZERO, interactive: !ci && std::io::stderr().is_terminal() }
    }

    fn step(&mut self, lane: &str, took: Duration) {
        self.done += 1;
        self.spent += took;
        let eta = self.spent.as_secs_f64() / self.done as f64 * (self.total - self.done) as f64;
        let line = format!("[{lane}] {}/{} workers, ETA {}:{:02}", self.done, self.total, eta as u64 / 60, eta as u64 % 60);
        if self.interactive {
            eprint!("\r\x1b[K{line}");
            let _ = std::io::stderr().flush();
        } else if self.done % 20 == 0 || self.done == self.total {
            eprintln!("{line}");
        }
    }

    fn finish(&mut self) {
        if self.interactive && self.done > 0 {
            eprintln!();
            self.done = 0;
        }
    }
}
