//! The processes a run starts, and how they end: each measured child (worker, `paired`,
//! counter, in-app host) in a process group of its own, so that stopping it stops what it
//! started too — a counter's valgrind outlived a kill by PID and skewed the timings after it.
//! Ctrl-C, SIGTERM and SIGHUP are caught: the child running is stopped with its group and
//! reaped, and the run ends with 128 + the signal, its samples and `INCOMPLETE` marker left. A
//! second signal ends the runner at once.

use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The signal that asked the run to stop, 0 while none has.
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    if STOP.swap(signal, Ordering::SeqCst) != 0 {
        // SAFETY: `_exit` is async-signal-safe; nothing else runs in the handler.
        unsafe { libc::_exit(128 + signal) };
    }
}

/// Catches Ctrl-C, SIGTERM and SIGHUP for the rest of the run.
pub fn catch_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only swaps an atomic and may call `_exit`, both async-signal-safe;
        // `signal` installs it for the whole process, which is what is meant.
        unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
    }
}

/// The signal that asked the run to stop, if one has.
pub fn stop_requested() -> Option<i32> {
    match STOP.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// A run stopped by `signal` exits as a shell reports it: 128 + the signal.
pub fn exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(1)
}

/// The name a user knows a signal by.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "Ctrl-C (SIGINT)".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

/// Starts `command` in a process group of its own (the group's id is the child's pid).
pub fn spawn_in_group(command: &mut Command) -> std::io::Result<Child> {
    std::os::unix::process::CommandExt::process_group(command, 0).spawn()
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(ExitStatus),
    /// Past its time: stopped with its group, and reaped.
    TimedOut,
    /// The run was asked to stop (the signal): stopped with its group, and reaped.
    Stopped(i32),
}

/// Waits for `child` (started by [`spawn_in_group`]); past `timeout`, or when the run is asked
/// to stop, kills its whole group and reaps it.
pub fn wait(child: &mut Child, timeout: Duration) -> std::io::Result<Ended> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ended::Exited(status));
        }
        let ended = match stop_requested() {
            Some(signal) => Ended::Stopped(signal),
            None if started.elapsed() > timeout => Ended::TimedOut,
            None => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
        };
        kill_group(child);
        child.wait()?;
        return Ok(ended);
    }
}

/// SIGKILL to the child's process group, and to the child itself should it have left it.
fn kill_group(child: &mut Child) {
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill has no memory effects; a negative pid names the group the child leads.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    let _ = child.kill();
}

/// Runs one child that writes its result to a file, in a process group of its own, and reads
/// that file back: a child past `limit`, stopped with the run, failed or silent is a failure
/// naming `what` (the in-app hosts and the schema-skew processes).
pub fn run_for_result(command: &mut Command, limit: Duration, what: &str, result: &Path) -> Result<String, super::failure::Failure> {
    use super::failure::{Failure, environment};
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = spawn_in_group(command).map_err(|e| environment(format!("cannot start {program}: {e}")))?;
    // Killed with its group and reaped when past its time or when the run is stopped.
    let status = match wait(&mut child, limit).map_err(|e| environment(e.to_string()))? {
        Ended::Exited(status) => status,
        Ended::TimedOut => return Err(Failure { code: 1, message: format!("{what}: no result in {} s", limit.as_secs()) }),
        Ended::Stopped(signal) => {
            return Err(Failure { code: exit_code(signal), message: format!("stopped by {}: {what} was killed", signal_name(signal)) });
        }
    };
    if !status.success() {
        return Err(Failure { code: 1, message: format!("{what} failed ({status}); its reason is above") });
    }
    std::fs::read_to_string(result).map_err(|e| Failure { code: 1, message: format!("{}: {e}", result.display()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_past_its_time_is_killed_with_what_it_started_and_reaped() {
        // The child starts a grandchild that would outlive a kill by PID alone.
        let marker = std::env::temp_dir().join(format!("tdbench-grandchild-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let script = format!("(sleep 1; touch {}) & sleep 30", marker.display());
        let mut child = spawn_in_group(Command::new("sh").args(["-c", &script])).unwrap();
        let started = Instant::now();
        assert_eq!(wait(&mut child, Duration::from_millis(200)).unwrap(), Ended::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(child.try_wait().unwrap().is_some(), "reaped");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "the grandchild outlived its group's kill");
        let mut quick = spawn_in_group(&mut Command::new("true")).unwrap();
        assert!(matches!(wait(&mut quick, Duration::from_secs(30)).unwrap(), Ended::Exited(s) if s.success()));
    }
}
