//! One run at a time per checkout, and per output folder. Runs in one checkout share more than
//! an output folder: the baseline worktree, both trees' target folders and the code layouts
//! linked in them. Two runs with their own `--output` once ran at once here; the second rebuilt
//! the baseline under the first, which died in the linker with a bus error and blamed "the
//! linker". A second run is refused (exit 2) with the holder's process and command.
//!
//! A lock is an `flock` on an open file: the kernel releases it when its holder exits, however
//! it exits, so a killed run leaves no stale lock and a reused process id holds none.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;

/// Held while a run uses what it locked; released when dropped or when the process ends.
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Takes the lock at `path` (created when absent) for a run using `what`, or says which run
    /// holds it.
    pub fn take(path: &Path, what: &str) -> Result<Lock, String> {
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {
                // Who holds it, for the run that is refused.
                let holder = format!("process {}: {}\n", std::process::id(), std::env::args().collect::<Vec<_>>().join(" "));
                let _ = file.set_len(0).and_then(|_| file.write_all(holder.as_bytes()));
                Ok(Lock { _file: file })
            }
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(path).unwrap_or_default();
                let holder = holder.trim();
                Err(format!(
                    "another run ({}) is using {what}; wait for it to finish, or run from a clone of your own",
                    if holder.is_empty() { "its process is starting" } else { holder }
                ))
            }
            Err(TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_with_its_holder_and_a_released_one_is_taken() {
        let dir = std::env::temp_dir().join(format!("tdbench-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("LOCK");
        let lock = Lock::take(&path, "the folder").unwrap();
        // flock locks belong to the open file: a second open in this process is refused too.
        let err = Lock::take(&path, "the folder").err().unwrap();
        assert!(err.contains("another run") && err.contains(&format!("process {}", std::process::id())), "{err}");
        assert!(err.contains("using the folder"), "{err}");
        drop(lock);
        // Released with its holder: whatever the file says, it is free.
        std::fs::write(&path, "process 1: a run that was killed\n").unwrap();
        let lock = Lock::take(&path, "the folder").unwrap();
        drop(lock);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
