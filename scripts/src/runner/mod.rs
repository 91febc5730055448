//! `./run.sh`: builds both trees, runs the workers in balanced order, confirms what the first
//! pass finds slower, merges, and leaves an `INCOMPLETE` marker until results are written, so an
//! interrupted run never looks complete.
//!
//! The runner knows the worker by its command line ([`tdbench_contract::Job`]), its catalog
//! (`worker --list`) and the JSON it prints; nothing of the codecs. So it builds and says what
//! is wrong even when a tree's codecs do not compile.

mod build;
mod calibrate;
mod children;
mod common_corpus;
mod count;
mod failure;
mod in_app;
mod launch;
mod lock;
mod output;
mod progress;
mod relink;
mod select;
mod skew;
mod tdlib;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Parser;
use tdbench_contract::{ImplementationInfo, Role, Stage};
use xshell::{Shell, cmd};

use crate::cli::{self, Options};
use crate::gate::{Prospect, Screened, look_first};
use crate::plan::{self, Build, Plan, PlanSettings, Schedule};
use crate::results::Results;
use build::Trees;
use failure::environment;
use launch::Launch;
use select::{Selection, countable_entries, counted_roles, entries, pairing, selection};

pub use failure::Failure;
pub use launch::excerpt;

/// Exit status of a `--ci` run that passed but could not decide every comparison whose counts
/// changed.
pub const UNDECIDED: u8 = 3;

/// The lock every run of a checkout takes, in its git-ignored target folder.
pub const CHECKOUT_LOCK: &str = "target/tdbench-run.lock";

pub fn main(args: Vec<String>) -> ExitCode {
    let options = match Options::try_parse_from(std::iter::once("./run.sh".to_string()).chain(args.iter().cloned())) {
        Ok(options) => options,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let ended = run(&options, args);
    // A run asked to stop ends as stopped, whatever it was doing when the signal came (a build
    // that Ctrl-C broke is not a tree that does not compile).
    let ended = match (ended, children::stop_requested()) {
        (Err(failure), Some(signal)) if failure.code < 128 => Err(Failure {
            code: children::exit_code(signal),
            message: format!("stopped by {} ({})", children::signal_name(signal), failure.message),
        }),
        (Ok(_), Some(signal)) => Err(Failure {
            code: children::exit_code(signal),
            message: format!("stopped by {} as the run ended: its results may be incomplete", children::signal_name(signal)),
        }),
        (ended, _) => ended,
    };
    match ended {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("run: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn absolute(root: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() { path.to_path_buf() } else { root.join(path) }
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

    // Names first, before anything is built: a typo is refused in a second, not after a build.
    let owned = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let lanes = owned(&[tdbench_contract::names::LANES, tdbench_contract::names::OPT_IN_LANES].concat());
    cli::select(cli::requested(&options.lanes), &lanes, "lane", "--data").map_err(environment)?;
    let implementations = owned(tdbench_contract::names::IMPLEMENTATIONS);
    cli::select(cli::requested(&options.implementations), &implementations, "implementation", "--serializer").map_err(environment)?;

    children::catch_signals();
    // Both folders are checked before anything is built or deleted.
    let output = absolute(&root, &options.output);
    let tracked = |top: &Path| cmd!(sh, "git ls-files -- {top}").quiet().read().map_or(true, |files| !files.trim().is_empty());
    output::claim(&root, &output, &tracked).map_err(environment)?;
    if let Some(report) = &options.report {
        output::check_report(&root, &absolute(&root, report), &tracked).map_err(environment)?;
    }
    // What runs in one checkout share (baseline worktree, target folders, linked layouts), then
    // the output folder (two checkouts could name one).
    let _checkout =
        lock::Lock::take(&root.join(CHECKOUT_LOCK), &format!("this checkout's baseline worktree and build folders ({})", root.display()))
            .map_err(environment)?;
    let _output = lock::Lock::take(&output.join("LOCK"), &output.display().to_string()).map_err(environment)?;
    if options.schema_skew {
        let command = std::iter::once("./run.sh".to_string()).chain(args).collect();
        skew::run(&root, &output, options, command, options.publish.then(|| root.join("report")))?;
        return Ok(ExitCode::SUCCESS);
    }
    if options.in_app {
        let command = std::iter::once("./run.sh".to_string()).chain(args).collect();
        in_app::run(&root, &output, options, command, options.publish.then(|| root.join("report")))?;
        return Ok(ExitCode::SUCCESS);
    }
    if options.measure.counts() {
        check_valgrind()?;
    }

    // The current tree first: its catalog checks the names asked for before the baseline
    // worktree is touched or built.
    let current_info = crate::git::current_tree(&sh, &root).map_err(environment)?;
    eprintln!(
        "current tree: {} {}{}",
        root.display(),
        &current_info.commit[..10],
        if current_info.dirty { " (uncommitted changes)" } else { "" }
    );
    let counts = options.measure.counts();
    let mut current = build::build(
        current_info,
        root.join("target/tdbench-worker"),
        Role::Current,
        Build::Measurement,
        options.ci,
        options.wants_in_process_pairs(),
        counts,
    )?;
    tdlib::ensure(&root, &mut current, options)?;
    let Selection { lanes, implementations, left_out } = selection(&current.catalog, options)?;
    let baseline = if options.no_baseline {
        None
    } else {
        let commit = crate::git::commit_of(&sh, &options.baseline).map_err(environment)?;
        let info = crate::git::prepare_baseline(&sh, &root, &options.baseline_worktree, &options.baseline, &commit).map_err(environment)?;
        eprintln!("baseline tree: {} {} ({})", info.path, &info.commit[..10], info.reference);
        let target = PathBuf::from(&info.path).join("target");
        Some(build::build(info, target, Role::Baseline, options.baseline_build, options.ci, options.wants_in_process_pairs(), counts)?)
    };
    let trees = Trees { current, baseline, linked: Default::default() };
    // A change that upgrades the schema: both trees measure the lines both schemas declare
    // alike, and a lane left without a payload is not compared.
    let mut left_out = left_out;
    let (corpus, lanes) = match &trees.baseline {
        Some(baseline) => {
            let worker = trees.current.target.join("release/worker");
            let (common, lanes, notes) =
                common_corpus::for_both(&root, &worker, Path::new(&baseline.info.path), &output, lanes).map_err(environment)?;
            for note in &notes {
                eprintln!("{note}");
            }
            left_out.extend(notes);
            (common, lanes)
        }
        None => (root.join("corpus"), lanes),
    };
    let entries = entries(&trees, &lanes, &implementations);
    let pairing = pairing(&trees, options, &implementations);
    if !pairing.note.is_empty() {
        eprintln!("{}", pairing.note);
    }
    let counted_roles = counted_roles(&trees, options, &mut left_out);

    let rounds = options.rounds();
    let catalog: Vec<ImplementationInfo> =
        implementations.iter().filter_map(|name| trees.current.catalog.implementation(name).cloned()).collect();
    let plan = Plan {
        nonce: String::new(),
        command: std::iter::once("./run.sh".to_string()).chain(args).collect(),
        lanes: lanes.clone(),
        implementations: implementations.clone(),
        catalog,
        baseline: trees.baseline.as_ref().map(|b| b.info.clone()),
        current: trees.current.info.clone(),
        settings: PlanSettings {
            measure: options.measure,
            worker: options.settings.clone(),
            rounds,
            backstop_rounds: options.backstop_rounds,
            backstop_threshold_percent: options.backstop_threshold,
            look_rounds: options.look_rounds,
            looks: options.looks,
            look_seconds: options.look_seconds,
            confirm_rounds: options.confirm_rounds,
            threshold_percent: options.threshold,
            run_spread_percent: options.run_spread,
            allow_format_change: options.allow_format_change,
            strict: options.strict,
        },
        pairing: pairing.clone(),
        left_out,
        slots: lanes
            .iter()
            .flat_map(|lane| plan::count_slots(lane, &countable_entries(&entries[lane], &counted_roles, &trees), COUNTS))
            .collect(),
    };
    let session = Session { trees: &trees, entries: &entries, corpus, ci: options.ci };
    if let Some(rounds) = options.calibrate {
        let how = calibrate::Calibrating {
            root: &root,
            rounds,
            codec: &options.calibrate_on,
            publish: options.publish.then(|| root.join("report")),
            ci: options.ci,
        };
        return calibrate::run(&session, plan, &output, how);
    }
    let results = session.measure(plan, &output)?;
    print!("{}", crate::summary::text(&results));
    println!("results: {}", output.join("results.json").display());
    if !results.passed() {
        match &options.accept_regressions {
            Some(reason) if results.violations.iter().all(|v| v.kind.is_regression()) => {
                println!("regressions accepted ({} of them): {reason}", results.violations.len());
                // Accepted, not passed: the report is drawn for the run, nothing is published.
                let report = options.report.as_ref().map_or_else(|| output.join("report"), |r| absolute(&root, r));
                crate::report::write(&results, &report).map_err(environment)?;
                return Ok(ExitCode::SUCCESS);
            }
            Some(_) => eprintln!("run: not every violation is a regression: --accept-regressions accepts only those"),
            None => {}
        }
        return Ok(ExitCode::from(1));
    }
    let report = options.report.as_ref().map_or_else(|| output.join("report"), |r| absolute(&root, r));
    // In CI a comparison the run could not decide is a failure of its own: passing it would be
    // a silent pass. Its report is still drawn; nothing is published.
    let undecided = results.undecided().count();
    if options.ci && undecided > 0 {
        crate::report::write(&results, &report).map_err(environment)?;
        eprintln!("run: {undecided} comparison(s) whose counts changed could not be gated at the threshold (listed first above): exit 3");
        return Ok(ExitCode::from(UNDECIDED));
    }
    // The full default run is the published one, so it also measures the section "In the app"
    // (the current tree's formats in an app, no gate), once the gate has passed.
    let in_app = if options.is_full_default_run() {
        Some(in_app::measure(&root, &output, &in_app::Request::full_default_run(options.ci), results.provenance.command.clone())?)
    } else {
        None
    };
    let write_report = |dir: &Path| -> Result<(), Failure> {
        if let Some(folder) = &in_app {
            in_app::copy_into(folder, dir)?;
        }
        crate::report::write(&results, dir).map_err(environment)
    };
    write_report(&report)?;
    println!("report: {}", report.join("README.md").display());
    // Only a passing full default run of a committed tree, or one asked to, rewrites the
    // published report.
    let dirty = results.provenance.current.dirty;
    if options.publishes(dirty) {
        let published = root.join("report");
        if published != report {
            crate::report::publish(&published, |dir| write_report(dir).map_err(|failure| failure.message)).map_err(environment)?;
        }
        println!("published: {}", published.join("README.md").display());
    } else if options.is_full_default_run() && dirty {
        println!("not published: the current tree has uncommitted changes; commit and run again to publish, or pass --publish");
    }
    Ok(ExitCode::SUCCESS)
}

/// What every measured run of one invocation shares: the built trees, what each lane measures,
/// the corpus.
pub struct Session<'a> {
    pub trees: &'a Trees,
    pub entries: &'a BTreeMap<String, Vec<plan::Entry>>,
    pub corpus: PathBuf,
    pub ci: bool,
}

impl Session<'_> {
    /// One measured run into `output`: the plan's slots, a confirmation of what the first pass
    /// finds slower, the merge; `results.json` written, the `INCOMPLETE` marker removed.
    pub fn measure(&self, mut plan: Plan, output: &Path) -> Result<Results, Failure> {
        let trees = self.trees;
        plan.nonce = nonce();
        output::clear(output).map_err(environment)?;
        std::fs::write(output.join(crate::files::UNFINISHED), "a run started here and has not finished; its results are not valid\n")
            .map_err(|e| environment(format!("cannot write to {}: {e}", output.display())))?;
        write_plan(output, &plan)?;
        // Counts first: they say what the timing budget goes to.
        count::run(&plan.slots, &self.launch(&plan, output))?;
        if plan.settings.measure.times() {
            let timed = self.timed_slots(&plan, output);
            plan.slots.extend(timed.iter().cloned());
            write_plan(output, &plan)?;
            self.run_slots(&plan, output, &timed)?;
            // Further looks and confirmation compare trees.
            if trees.baseline.is_some() {
                let screened = self.look_again(&mut plan, output)?;
                self.confirm(&mut plan, output, &screened)?;
            }
        }

        let results = crate::gate::merge(output).map_err(environment)?;
        crate::files::write_run(output, &results).map_err(environment)?;
        // The copies of workers and kernel libraries each sample started from are needed only
        // to reproduce a failure: a full run's are some 5 GB, and with a calibration's they
        // filled this machine's disk. A failed run keeps them for its "reproduce with" lines.
        let _ = std::fs::remove_dir_all(output.join("workers"));
        let _ = std::fs::remove_file(output.join(crate::files::UNFINISHED));
        Ok(results)
    }
}

impl Session<'_> {
    /// The screen's further looks: while comparisons are undecided (neither slower nor gated,
    /// with a look left that could gate them), each (lane, implementation) holding one gets
    /// `look_rounds` more rounds — where a look gains most first ([`look_first`]) — until none
    /// is left or the run's time for looks is spent. Gives where the screen stands at the end.
    fn look_again(&self, plan: &mut Plan, output: &Path) -> Result<Screened, Failure> {
        let looks = plan.looks(Schedule::Full);
        let budget = Duration::from_secs(plan.settings.look_seconds.into());
        let started = Instant::now();
        loop {
            let (samples, _) = crate::gate::load_samples(output, plan);
            let screened = crate::gate::screen(plan, &samples);
            let flagged: BTreeSet<Group> = screened.flagged.iter().map(group_of).collect();
            // Each group once, with what a look would buy each of its undecided comparisons.
            let mut waiting: BTreeMap<Group, Vec<Prospect>> = BTreeMap::new();
            for (key, prospect) in &screened.undecided {
                let group = group_of(key);
                if !flagged.contains(&group) {
                    waiting.entry(group).or_default().push(*prospect);
                }
            }
            if waiting.is_empty() || looks.step == 0 {
                return Ok(screened);
            }
            let mut waiting: Vec<(Group, Vec<Prospect>)> = waiting.into_iter().collect();
            waiting.sort_by(|a, b| look_first(&a.1, &b.1));
            let mut added = Vec::new();
            for ((lane, implementation), _) in &waiting {
                if started.elapsed() >= budget {
                    break;
                }
                let first = plan
                    .slots
                    .iter()
                    .filter(|s| s.stage == Stage::Screen && s.lane == *lane && s.implementation == *implementation)
                    .map(|s| s.sample + 1)
                    .max()
                    .unwrap_or(0);
                let entry: Vec<plan::Entry> = self.entries[lane].iter().filter(|e| &e.implementation == implementation).cloned().collect();
                let slots = plan::lane_slots(lane, &entry, plan.settings.look_rounds, first, Stage::Screen);
                let look = looks.reached(first as usize + 2 * plan.settings.look_rounds as usize);
                eprintln!("look {look} of {} for {lane}/{implementation}: still undecided", looks.count);
                plan.slots.extend(slots.iter().cloned());
                write_plan(output, plan)?;
                self.run_slots(plan, output, &slots)?;
                added.extend(slots);
            }
            if added.is_empty() {
                let left = screened.undecided.len();
                eprintln!("time for further looks ({} s) spent: {left} comparison(s) left undecided", budget.as_secs());
                return Ok(screened);
            }
        }
    }

    /// Runs the confirmation of what the screen flagged: fresh samples, as many as its screen
    /// had and at least the confirmation rounds', judged on their own.
    fn confirm(&self, plan: &mut Plan, output: &Path, screened: &Screened) -> Result<(), Failure> {
        let confirm_rounds = plan.settings.confirm_rounds;
        if screened.flagged.is_empty() || confirm_rounds == 0 {
            return Ok(());
        }
        eprintln!(
            "confirming {} comparison(s) the first pass found slower: {}",
            screened.flagged.len(),
            screened.flagged.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
        );
        let first = plan.screen_samples();
        let mut groups: Vec<Group> = screened.flagged.iter().map(group_of).collect();
        groups.dedup();
        let mut added = Vec::new();
        for (lane, implementation) in &groups {
            let screen_rounds = plan
                .slots
                .iter()
                .filter(|s| s.stage == Stage::Screen && s.lane == *lane && s.implementation == *implementation)
                .map(|s| s.sample / 2 + 1)
                .max()
                .unwrap_or(0);
            let entry: Vec<plan::Entry> = self.entries[lane].iter().filter(|e| &e.implementation == implementation).cloned().collect();
            added.extend(plan::lane_slots(lane, &entry, confirm_rounds.max(screen_rounds), first, Stage::Confirm));
        }
        plan.slots.extend(added.iter().cloned());
        write_plan(output, plan)?;
        self.run_slots(plan, output, &added)
    }

    /// The first timed slots: every (lane, implementation) on the schedule its counts give it
    /// ([`crate::gate::counts::schedules`]): `--rounds` rounds where a comparison changed (or
    /// cannot be counted), `--backstop-rounds` where every one is unchanged.
    fn timed_slots(&self, plan: &Plan, output: &Path) -> Vec<plan::Slot> {
        let (counted, _) = crate::gate::load_samples(output, plan);
        let schedules = crate::gate::counts::schedules_of(plan, &counted);
        let compared = self.trees.baseline.is_some();
        let mut slots = Vec::new();
        let (mut full, mut backstop) = (0, 0);
        for lane in &plan.lanes {
            let scheduled: Vec<(&plan::Entry, u32)> = self.entries[lane]
                .iter()
                .map(|entry| {
                    let schedule = schedules.get(&(lane.clone(), entry.implementation.clone())).copied().unwrap_or(Schedule::Full);
                    match schedule {
                        Schedule::Backstop if compared => {
                            backstop += 1;
                            (entry, plan.settings.backstop_rounds)
                        }
                        _ => {
                            full += 1;
                            (entry, plan.settings.rounds)
                        }
                    }
                })
                .collect();
            slots.extend(plan::scheduled_slots(lane, &scheduled, 0, Stage::Screen));
        }
        if compared && plan.counts_both_trees() {
            eprintln!(
                "timing: {full} (lane, implementation) group(s) whose counts changed or that counts cannot judge, {} round(s) \
                 first; {backstop} unchanged by their counts, a backstop of {} round(s)",
                plan.settings.rounds, plan.settings.backstop_rounds
            );
        }
        slots
    }

    /// What every process of a run shares.
    fn launch<'a>(&'a self, plan: &'a Plan, output: &Path) -> Launch<'a> {
        let tdjson = self.trees.current.catalog.tdlib.as_ref().filter(|t| t.available).map(|t| t.library.clone());
        Launch { plan, trees: self.trees, corpus: self.corpus.clone(), output: output.to_path_buf(), tdjson }
    }

    /// Starts `slots` (already in the plan written to `output`), each with a layout of its own:
    /// a look or a confirmation must not inherit an earlier one's layout draws.
    fn run_slots(&self, plan: &Plan, output: &Path, slots: &[plan::Slot]) -> Result<(), Failure> {
        self.trees.link_layouts(slots, &plan.nonce, |i| plan.in_process(i))?;
        launch::run_slots(slots, &self.launch(plan, output), self.ci)
    }
}

/// Counts each tree takes of every lane: two, so the gate sees that they repeat.
const COUNTS: u32 = 2;

use crate::gate::counts::{Group, group_of};

fn check_valgrind() -> Result<(), Failure> {
    match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(environment(
            "counting instructions first (the default) needs valgrind on PATH (Debian: apt-get install valgrind); \
             --measure time times every comparison without it",
        )),
    }
}

fn write_plan(output: &Path, plan: &Plan) -> Result<(), Failure> {
    crate::files::write_atomically(&output.join("plan.json"), &serde_json::to_string_pretty(plan).expect("plan serializes"))
        .map_err(|e| environment(format!("cannot write the plan: {e}")))
}

pub(super) fn nonce() -> String {
    let mut bytes = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes = (t.as_nanos() as u64 ^ std::process::id() as u64).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
