//! Starting one worker for one slot, waiting for it with a time limit, and keeping its result.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tdbench_contract::{Job, Role};

use super::build::{Trees, layout_seed};
use super::progress::Progress;
use super::{Failure, environment};
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

/// The worker binary as it is started: a hard link (or copy) at `workers/SEED-b` or `SEED-c`
/// in the output folder.
///
/// Why: every byte a process gets from its command line is allocated on its heap, and the
/// allocation history decides where later buffers land — seen here: the `memcpy` floor ran 12%
/// slower in the current tree's processes of an A/A run, from how the source and destination
/// buffers fell against each other. So both trees' workers start from paths of equal length,
/// in their tree (`--tree .`), with identical arguments but for `--role` (same allocation
/// size), and print their result to standard output instead of taking an output path.
fn launch_path(launch: &Launch, role: Role, seed: u32) -> Result<PathBuf, Failure> {
    let dir = launch.output.join("workers");
    std::fs::create_dir_all(&dir).map_err(|e| environment(e.to_string()))?;
    let path = dir.join(format!("{seed:03}-{}", &role.as_str()[..1]));
    if !path.exists() {
        let source = launch.trees.worker(role, seed);
        std::fs::hard_link(&source, &path)
            .or_else(|_| std::fs::copy(&source, &path).map(|_| ()))
            .map_err(|e| environment(format!("cannot place {}: {e}", source.display())))?;
    }
    Ok(path)
}

pub fn run_slot(slot: &Slot, launch: &Launch, progress: &mut Progress) -> Result<(), Failure> {
    let worker = launch_path(launch, slot.role, layout_seed(slot.sample))?;
    let tree = PathBuf::from(&launch.trees.get(slot.role).info.path);
    let file = slot.file(&launch.output);
    std::fs::create_dir_all(file.parent().expect("slot files are in folders")).map_err(|e| environment(e.to_string()))?;
    let job = Job {
        implementation: slot.implementation.clone(),
        lane: slot.lane.clone(),
        role: slot.role,
        nonce: launch.plan.nonce.clone(),
        sample: slot.sample,
        corpus_dir: launch.corpus.clone(),
        tree: ".".into(),
        operation: None,
        settings: launch.plan.settings.worker.clone(),
    };
    let args = job.to_args();
    let needs_tdlib = launch.plan.implementation(&slot.implementation).is_some_and(|i| i.timed_only());
    let tdjson = launch.tdjson.as_ref().filter(|_| needs_tdlib);
    let reproduce = format!(
        "cd {} && {}{}",
        tree.display(),
        tdjson.map(|t| format!("TDJSON={t} ")).unwrap_or_default(),
        std::iter::once(worker.display().to_string()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ")
    );
    let name = format!("{}/{} ({} tree, sample {})", slot.implementation, slot.lane, slot.role, slot.sample);
    let s = &launch.plan.settings.worker;
    // Under callgrind a worker runs some 100 times slower.
    let counting = if s.measure.counts() { Duration::from_secs(900) } else { Duration::ZERO };
    let timeout = Duration::from_secs(60) + Duration::from_millis(20 * (s.duration_ms + s.warmup_ms)) + counting;
    let started = Instant::now();
    let mut command = Command::new(&worker);
    if let Some(tdjson) = tdjson {
        command.env("TDJSON", tdjson);
    }
    let mut child = command
        .args(&args)
        .current_dir(&tree)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| environment(format!("cannot start {}: {e}", worker.display())))?;
    let stdout = read_all(Box::new(child.stdout.take().expect("piped")));
    let stderr = read_all(Box::new(child.stderr.take().expect("piped")));
    let status = wait_or_kill(&mut child, timeout).map_err(|e| environment(format!("waiting for {name}: {e}")))?;
    let stderr = stderr.join().unwrap_or_default();
    let result = stdout.join().unwrap_or_default();
    let failed = match status {
        None => Some(format!("did not finish within {}s and was stopped", timeout.as_secs())),
        Some(status) if !status.success() => Some(format!("failed ({status})")),
        Some(_) if result.trim().is_empty() => Some("exited without printing its result".into()),
        // Written beside and renamed: an interrupted run never leaves half a sample.
        Some(_) => crate::files::write_atomically(&file, &result).err(),
    };
    if let Some(what) = failed {
        progress.finish();
        return Err(Failure {
            code: 1,
            message: format!(
                "worker {name} {what}\n--- its stderr ---\n{}\n--- reproduce with ---\n{reproduce}\n(the samples so far and the INCOMPLETE marker are left in {})",
                excerpt(&stderr),
                launch.output.display()
            ),
        });
    }
    progress.step(&slot.lane, started.elapsed());
    Ok(())
}

/// Waits for `child`; past `timeout` kills and reaps it and returns `None`.
fn wait_or_kill(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let started = Instant::now();
    loop {
        match child.try_wait()? {
            Some(status) => return Ok(Some(status)),
            None if started.elapsed() > timeout => {
                let _ = child.kill();
                child.wait()?;
                return Ok(None);
            }
            None => std::thread::sleep(Duration::from_millis(2)),
        }
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
    fn a_worker_past_its_time_is_killed_and_reaped() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let started = Instant::now();
        assert_eq!(wait_or_kill(&mut child, Duration::from_millis(100)).unwrap(), None);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(child.try_wait().unwrap().is_some(), "reaped");
        let mut quick = Command::new("true").spawn().unwrap();
        assert!(wait_or_kill(&mut quick, Duration::from_secs(30)).unwrap().is_some_and(|s| s.success()));
    }

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
