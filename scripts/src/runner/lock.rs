//! One run per output folder at a time: a second run on the same folder would delete the first
//! one's samples under it and fail blaming an unrelated worker.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Held while a run uses its output folder; removed when dropped.
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes `output/LOCK`, or says which live process holds it. A lock whose process is gone
    /// (a run that was killed) is taken over.
    pub fn take(output: &Path) -> Result<Lock, String> {
        std::fs::create_dir_all(output).map_err(|e| format!("cannot create {}: {e}", output.display()))?;
        let path = output.join("LOCK");
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    file.write_all(format!("{}\n", std::process::id()).as_bytes())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path).ok().and_then(|t| t.trim().parse::<u32>().ok());
                    match holder {
                        Some(pid) if Path::new(&format!("/proc/{pid}")).exists() => {
                            return Err(format!(
                                "another run (process {pid}) is using {}; wait for it, or give this one another --output",
                                output.display()
                            ));
                        }
                        _ => {
                            eprintln!("taking over {} from a run that is gone", path.display());
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
        Err(format!("cannot take {}", path.display()))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_holder_refuses_and_a_dead_one_is_taken_over() {
        let dir = std::env::temp_dir().join(format!("tdbench-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let lock = Lock::take(&dir).unwrap();
        let err = Lock::take(&dir).err().unwrap();
        assert!(err.contains("another run") && err.contains(&std::process::id().to_string()), "{err}");
        drop(lock);
        assert!(!dir.join("LOCK").exists());
        // No process has this pid (above the kernel's maximum).
        std::fs::write(dir.join("LOCK"), "4194305\n").unwrap();
        let lock = Lock::take(&dir).unwrap();
        drop(lock);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
