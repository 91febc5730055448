//! The count stage: one `counter` process per lane, tree and count, before anything is timed.
//!
//! Counts are exact whatever else the machine does, so two counters run at once (one per core):
//! the stage takes half the time and measures nothing less. Both trees' counters are started
//! from paths of one length (`workers/count-b`, `workers/count-c`) and given the same list of
//! implementations, because what a counted process is given moves where its buffers land, and
//! with them its counts (see `src/worker/count.rs`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tdbench_contract::{CountJob, Role, Stage, WorkerResult};

use super::failure::{Failure, environment};
use super::launch::{self, Launch};
use crate::plan::Slot;

/// A counter process stuck this long is stopped (the largest lane takes seconds; the start-up
/// stream a few minutes).
const TIME_LIMIT: Duration = Duration::from_secs(1800);

/// Counters running at once.
const AT_ONCE: usize = 2;

/// One counter process, ready to start: the slots of one lane, tree and count.
struct CountRun {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    tree: PathBuf,
    env: Vec<(&'static str, String)>,
    slots: Vec<Slot>,
}

/// The lanes whose current-tree counts keep their callgrind files, for the report's "Where the
/// time goes".
fn keeps_profiles(lane: &str) -> bool {
    crate::profile::PROFILED.iter().any(|(_, l)| *l == lane)
}

/// Runs every count slot of `slots`, two counters at a time.
pub fn run(slots: &[Slot], launch: &Launch) -> Result<(), Failure> {
    let mut grouped: Vec<(String, Role, u32, Vec<Slot>)> = Vec::new();
    for slot in slots.iter().filter(|s| s.stage == Stage::Count) {
        match grouped
            .iter_mut()
            .find(|(lane, role, sample, _)| (lane.as_str(), *role, *sample) == (slot.lane.as_str(), slot.role, slot.sample))
        {
            Some(group) => group.3.push(slot.clone()),
            None => grouped.push((slot.lane.clone(), slot.role, slot.sample, vec![slot.clone()])),
        }
    }
    if grouped.is_empty() {
        return Ok(());
    }
    let runs = grouped
        .into_iter()
        .map(|(lane, role, sample, slots)| prepare(launch, &lane, role, sample, slots))
        .collect::<Result<Vec<_>, _>>()?;
    eprintln!("counting instructions and allocations: {} counter process(es), {AT_ONCE} at a time…", runs.len());
    let started = Instant::now();
    let total = runs.len();
    let output = launch.output.as_path();
    let queue = Mutex::new(runs.into_iter().collect::<VecDeque<_>>());
    let done = Mutex::new(0usize);
    let failure: Mutex<Option<Failure>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| {
                loop {
                    if failure.lock().expect("no counting thread panics").is_some() {
                        return;
                    }
                    let Some(run) = queue.lock().expect("no counting thread panics").pop_front() else { return };
                    let took = Instant::now();
                    match count(&run, output) {
                        Ok(()) => {
                            let mut done = done.lock().expect("no counting thread panics");
                            *done += 1;
                            eprintln!("[count] {}: {:.1} s ({}/{total})", run.name, took.elapsed().as_secs_f64(), *done);
                        }
                        Err(e) => {
                            failure.lock().expect("no counting thread panics").get_or_insert(e);
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(failure) = failure.into_inner().expect("no counting thread panics") {
        return Err(failure);
    }
    eprintln!("counted in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The implementations a lane's counters are given: the plan's that measure it and can be
/// counted, in plan order, the same for both trees (a tree skips those it lacks).
fn countable(launch: &Launch, lane: &str) -> Vec<String> {
    launch
        .plan
        .implementations
        .iter()
        .filter(|name| launch.plan.implementation(name).is_some_and(|i| !i.timed_only() && i.lanes.iter().any(|l| l == lane)))
        .cloned()
        .collect()
}

/// A counter's command line. The counter of `role`'s tree is started from a hard link (or copy)
/// at a path of the same length for both trees.
fn prepare(launch: &Launch, lane: &str, role: Role, sample: u32, slots: Vec<Slot>) -> Result<CountRun, Failure> {
    let program = launch::place(launch, format!("count-{}", &role.as_str()[..1]), &launch.trees.get(role).counter_binary(), true)?;
    let keep = (role == Role::Current && sample == 0 && keeps_profiles(lane)).then(|| crate::profile::folder(&launch.output, lane));
    let job = CountJob {
        lane: lane.to_string(),
        implementations: countable(launch, lane),
        role,
        nonce: launch.plan.nonce.clone(),
        sample,
        corpus_dir: launch.corpus.clone(),
        tree: ".".into(),
        keep_callgrind: keep,
        settings: launch.plan.settings.worker.clone(),
    };
    Ok(CountRun {
        name: format!("{lane} ({role} tree, count {})", sample + 1),
        program,
        args: job.to_args(),
        tree: PathBuf::from(&launch.trees.get(role).info.path),
        env: launch::environment_of(launch, None),
        slots,
    })
}

/// One counter process: its results written to their slots' files.
fn count(run: &CountRun, output: &Path) -> Result<(), Failure> {
    let name = format!("counter {}", run.name);
    let printed = launch::execute(&run.program, &run.args, &run.tree, &run.env, &name, TIME_LIMIT, output, None)?;
    let unreadable = |why: String| {
        let reproduce = launch::command_line(&run.program, &run.args, &run.tree, &run.env);
        launch::failed(&name, &why, "", &reproduce, output, None)
    };
    let results: Vec<WorkerResult> = serde_json::from_str(&printed).map_err(|e| unreadable(format!("printed no readable results: {e}")))?;
    for slot in &run.slots {
        let Some(result) = results.iter().find(|r| r.implementation == slot.implementation) else {
            return Err(unreadable(format!("counted no {}", slot.implementation)));
        };
        write(slot, result, output)?;
    }
    Ok(())
}

fn write(slot: &Slot, result: &WorkerResult, output: &Path) -> Result<(), Failure> {
    let file = slot.file(output);
    std::fs::create_dir_all(file.parent().expect("slot files are in folders")).map_err(|e| environment(e.to_string()))?;
    crate::files::write_atomically(&file, &serde_json::to_string_pretty(result).expect("results serialize")).map_err(environment)
}
