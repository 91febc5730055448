//! Starting one worker for one slot, waiting for it with a time limit, and keeping its result.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tdbench_contract::{Job, PairedJob, PairedResult, Role, TreeState};

use super::build::Trees;
use super::children::{self, Ended};
use super::failure::{Failure, environment};
use super::progress::Progress;
use crate::plan::{Plan, Slot};

/// What every worker of a run shares beyond the plan.
pub struct Launch<'a> {
    pub plan: &'a Plan,
    pub trees: &'a Trees,
    pub corpus: PathBuf,
    pub output: PathBuf,
    /// libtdjson for the TDLib implementations: one library for both trees (the baseline
    /// worktree has no `.cache/`), named the same way in both trees' processes.
    pub tdjson: Option<String>,
}

/// The worker binary as sample `sample` starts it: a hard link (or copy) at
/// `workers/NNN-b` or `NNN-c` in the output folder, NNN the sample's number from 1.
///
/// Why: every byte a process gets from its command line is allocated on its heap, and the
/// allocation history decides where later buffers land — seen here: the `memcpy` floor ran 12%
/// slower in the current tree's processes of an A/A run, from how the source and destination
/// buffers fell against each other. So both trees' workers start from paths of equal length,
/// in their tree (`--tree .`), with identical arguments but for `--role` (same allocation
/// size), and print their result to standard output instead of taking an output path.
fn launch_path(launch: &Launch, role: Role, sample: u32) -> Result<PathBuf, Failure> {
    place(launch, format!("{:03}-{}", sample + 1, &role.as_str()[..1]), &launch.trees.worker(role, sample), true)
}

/// `source` at `workers/NAME` in the output folder, once per run: hard-linked when `link` and
/// the file system allows, else copied.
pub(super) fn place(launch: &Launch, name: String, source: &Path, link: bool) -> Result<PathBuf, Failure> {
    let dir = launch.output.join("workers");
    std::fs::create_dir_all(&dir).map_err(|e| environment(e.to_string()))?;
    let path = dir.join(name);
    if !path.exists() {
        let linked = link && std::fs::hard_link(source, &path).is_ok();
        if !linked {
            std::fs::copy(source, &path)
                .map_err(|e| environment(format!("cannot copy {} to {}: {e}", source.display(), path.display())))?;
        }
    }
    Ok(path)
}

/// Runs `slots` in order; two adjacent slots that are the baseline and current sample of one
/// in-process implementation run as one `paired` process, opened by the tree that comes first.
pub fn run_slots(slots: &[Slot], launch: &Launch, ci: bool) -> Result<(), Failure> {
    let mut progress = Progress::new(slots.len(), ci);
    let mut at = 0;
    while at < slots.len() {
        let slot = &slots[at];
        let partner = slots.get(at + 1).filter(|next| {
            launch.plan.in_process(&slot.implementation)
                && (next.lane.as_str(), next.implementation.as_str(), next.sample)
                    == (slot.lane.as_str(), slot.implementation.as_str(), slot.sample)
                && next.role != slot.role
        });
        match partner {
            Some(partner) => {
                run_pair(slot, partner, launch, &mut progress)?;
                at += 2;
            }
            None => {
                run_slot(slot, launch, &mut progress)?;
                at += 1;
            }
        }
    }
    progress.finish();
    Ok(())
}

/// The environment every process of the run starts with: both trees' state as the plan
/// recorded it ([`TreeState`]), the same in every process, and libtdjson for those that
/// need it.
pub(super) fn environment_of(launch: &Launch, tdjson: Option<&str>) -> Vec<(&'static str, String)> {
    let mut variables: Vec<(&'static str, String)> = [Role::Baseline, Role::Current]
        .into_iter()
        .filter_map(|role| {
            let tree = launch.plan.tree(role)?;
            Some((TreeState::variable(role), TreeState { commit: tree.commit.clone(), dirty: tree.dirty }.to_value()))
        })
        .collect();
    if let Some(tdjson) = tdjson {
        variables.push(("TDJSON", tdjson.to_string()));
    }
    variables
}

fn job(slot: &Slot, launch: &Launch, tree: PathBuf) -> Job {
    Job {
        implementation: slot.implementation.clone(),
        lane: slot.lane.clone(),
        role: slot.role,
        nonce: launch.plan.nonce.clone(),
        sample: slot.sample,
        corpus_dir: launch.corpus.clone(),
        tree,
        operation: None,
        settings: launch.plan.settings.worker.clone(),
    }
}

/// A kernel library as sample `sample` loads it: a copy at `workers/NNN-b.so` or `NNN-c.so`.
/// A copy, not a link: the dynamic loader treats one file reached by two names as one library.
fn library_path(launch: &Launch, role: Role, sample: u32) -> Result<PathBuf, Failure> {
    place(launch, format!("{:03}-{}.so", sample + 1, &role.as_str()[..1]), &launch.trees.library(role, sample), false)
}

/// One `paired` process for the two slots of a sample; `first` opens every block.
fn run_pair(first: &Slot, second: &Slot, launch: &Launch, progress: &mut Progress) -> Result<(), Failure> {
    let sample = first.sample;
    let current_tree = PathBuf::from(&launch.trees.current.info.path);
    let paired = PairedJob {
        job: job(first, launch, current_tree.clone()),
        baseline_library: library_path(launch, Role::Baseline, sample)?,
        current_library: library_path(launch, Role::Current, sample)?,
        baseline_tree: PathBuf::from(&launch.trees.get(Role::Baseline).info.path),
    };
    let name = format!("{}/{} (both trees, sample {})", first.implementation, first.lane, first.sample);
    let s = &launch.plan.settings.worker;
    // Each tree gets the duration a process of its own would.
    let timeout = Duration::from_secs(60) + Duration::from_millis(40 * (s.duration_ms + s.warmup_ms));
    let started = Instant::now();
    let (harness, args) = (launch.trees.harness(), paired.to_args());
    let needs_tdlib = launch.plan.implementation(&first.implementation).is_some_and(|i| i.timed_only());
    let env = environment_of(launch, launch.tdjson.as_deref().filter(|_| needs_tdlib));
    let printed = execute(&harness, &args, &current_tree, &env, &name, timeout, &launch.output, Some(progress))?;
    let stored =
        serde_json::from_str::<PairedResult>(&printed).map_err(|e| format!("printed no readable pair of results: {e}")).and_then(|pair| {
            for result in [&pair.baseline, &pair.current] {
                let slot = if result.role == first.role { first } else { second };
                let file = slot.file(&launch.output);
                std::fs::create_dir_all(file.parent().expect("slot files are in folders")).map_err(|e| e.to_string())?;
                crate::files::write_atomically(&file, &serde_json::to_string_pretty(result).expect("results serialize"))?;
            }
            Ok(())
        });
    if let Err(what) = stored {
        return Err(failed(&name, &what, "", &command_line(&harness, &args, &current_tree, &env), &launch.output, Some(progress)));
    }
    progress.step(&first.lane, started.elapsed() / 2);
    progress.step(&first.lane, started.elapsed() / 2);
    Ok(())
}

pub fn run_slot(slot: &Slot, launch: &Launch, progress: &mut Progress) -> Result<(), Failure> {
    let worker = launch_path(launch, slot.role, slot.sample)?;
    let tree = PathBuf::from(&launch.trees.get(slot.role).info.path);
    let file = slot.file(&launch.output);
    std::fs::create_dir_all(file.parent().expect("slot files are in folders")).map_err(|e| environment(e.to_string()))?;
    let args = job(slot, launch, ".".into()).to_args();
    let needs_tdlib = launch.plan.implementation(&slot.implementation).is_some_and(|i| i.timed_only());
    let env = environment_of(launch, launch.tdjson.as_deref().filter(|_| needs_tdlib));
    let name = format!("{}/{} ({} tree, sample {})", slot.implementation, slot.lane, slot.role, slot.sample);
    let s = &launch.plan.settings.worker;
    let timeout = Duration::from_secs(60) + Duration::from_millis(20 * (s.duration_ms + s.warmup_ms));
    let started = Instant::now();
    let printed = execute(&worker, &args, &tree, &env, &name, timeout, &launch.output, Some(progress))?;
    // Written beside and renamed: an interrupted run never leaves half a sample.
    if let Err(what) = crate::files::write_atomically(&file, &printed) {
        return Err(failed(&name, &what, "", &command_line(&worker, &args, &tree, &env), &launch.output, Some(progress)));
    }
    progress.step(&slot.lane, started.elapsed());
    Ok(())
}

/// Starts `program` in `tree`, waits up to `timeout`, and returns what it printed; a failure
/// says what happened, shows its stderr and how to reproduce it.
#[allow(clippy::too_many_arguments)]
pub(super) fn execute(
    program: &Path,
    args: &[String],
    tree: &Path,
    env: &[(&str, String)],
    name: &str,
    timeout: Duration,
    output: &Path,
    progress: Option<&mut Progress>,
) -> Result<String, Failure> {
    let reproduce = command_line(program, args, tree, env);
    let mut child = children::spawn_in_group(
        Command::new(program)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .args(args)
            .current_dir(tree)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .map_err(|e| environment(format!("cannot start {}: {e}", program.display())))?;
    let stdout = read_all(Box::new(child.stdout.take().expect("piped")));
    let stderr = read_all(Box::new(child.stderr.take().expect("piped")));
    let ended = children::wait(&mut child, timeout).map_err(|e| environment(format!("waiting for {name}: {e}")))?;
    let stderr = stderr.join().unwrap_or_default();
    let printed = stdout.join().unwrap_or_default();
    let what = match ended {
        Ended::Stopped(signal) => return Err(stopped(signal, name, output, progress)),
        Ended::TimedOut => format!("did not finish within {}s and was stopped", timeout.as_secs()),
        Ended::Exited(status) if !status.success() => format!("failed ({status})"),
        Ended::Exited(_) if printed.trim().is_empty() => "exited without printing its result".into(),
        Ended::Exited(_) => return Ok(printed),
    };
    Err(failed(name, &what, &stderr, &reproduce, output, progress))
}

/// The shell line that starts `program` as the runner did.
pub(super) fn command_line(program: &Path, args: &[String], tree: &Path, env: &[(&str, String)]) -> String {
    format!(
        "cd {} && {}{}",
        tree.display(),
        env.iter().map(|(k, v)| format!("{k}='{v}' ")).collect::<String>(),
        std::iter::once(program.display().to_string()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ")
    )
}

/// A failed process as the run reports it: what happened, its stderr, how to reproduce it.
pub(super) fn failed(name: &str, what: &str, stderr: &str, reproduce: &str, output: &Path, progress: Option<&mut Progress>) -> Failure {
    if let Some(progress) = progress {
        progress.finish();
    }
    Failure {
        code: 1,
        message: format!(
            "worker {name} {what}\n--- its stderr ---\n{}\n--- reproduce with ---\n{reproduce}\n(the samples so far and the INCOMPLETE marker are left in {})",
            excerpt(stderr),
            output.display()
        ),
    }
}

/// The run was asked to stop while `name` ran: it was killed with its group; the run ends
/// with 128 + the signal, as a shell reports it.
fn stopped(signal: i32, name: &str, output: &Path, progress: Option<&mut Progress>) -> Failure {
    if let Some(progress) = progress {
        progress.finish();
    }
    Failure {
        code: children::exit_code(signal),
        message: format!(
            "stopped by {}: {name} and every process it started were killed; the samples so far and the INCOMPLETE marker are left in {}",
            children::signal_name(signal),
            output.display()
        ),
    }
}

fn read_all(mut pipe: Box<dyn Read + Send>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// What to show of a failed worker's stderr: a panic's message first (under `RUST_BACKTRACE`
/// the frames after it would push it out of any tail), then the last lines.
pub fn excerpt(stderr: &str) -> String {
    const TAIL: usize = 15;
    let lines: Vec<&str> = stderr.lines().collect();
    let tail_start = lines.len().saturating_sub(TAIL);
    let Some(panic) = lines.iter().position(|l| l.contains("panicked at")) else { return lines[tail_start..].join("\n") };
    // The message runs from the `panicked at` line to the first note or backtrace line.
    let end = lines[panic + 1..]
        .iter()
        .position(|l| l.starts_with("note:") || l.starts_with("stack backtrace:"))
        .map_or(lines.len(), |n| panic + 1 + n)
        .min(panic + 1 + 20);
    let mut shown: Vec<&str> = lines[panic..end].to_vec();
    if end < tail_start {
        shown.push("…");
        shown.extend(&lines[tail_start..]);
    } else {
        shown.extend(&lines[end..]);
    }
    shown.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_message_comes_first_however_long_the_backtrace() {
        let mut stderr =
            String::from("worker: starting\nthread 'main' panicked at src/codecs/tl.rs:10:5:\nthe real reason\nstack backtrace:\n");
        for i in 0..40 {
            stderr += &format!("  {i}: frame{i}\n");
        }
        let shown = excerpt(&stderr);
        assert!(shown.starts_with("thread 'main' panicked at src/codecs/tl.rs:10:5:\nthe real reason\n…"), "{shown}");
        assert!(shown.ends_with("39: frame39"));
        assert_eq!(excerpt("a\nb"), "a\nb");
        let short = "thread 'main' panicked at x:\nwhy\nnote: run with `RUST_BACKTRACE=1`";
        assert_eq!(excerpt(short), short);
    }
}
