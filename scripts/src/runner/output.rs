//! The output folder is the run's alone. A run deletes what an earlier run left in its output
//! folder and rewrites its report folder, so either, typed wrong, could take a user's files:
//! `--output .` once deleted report/calibration.md and rewrote the published report in the
//! checkout. Both are refused, before anything is built, when they are the checkout (or hold
//! it), lie in a folder git tracks, or hold files no run wrote; and a run deletes only the
//! names [`RUN_WRITES`] lists, which the folder's marker file lists too.

use std::path::{Component, Path, PathBuf};

use crate::files::UNFINISHED;

/// The marker a run leaves in its output folder: the folder is tdbench's, and this is what a
/// later run deletes in it.
pub const MARKER: &str = ".tdbench-output";

/// What a run writes in its output folder, and so all that a later run deletes there (folders
/// end in `/`).
pub const RUN_WRITES: [&str; 9] =
    ["samples/", "workers/", "report/", "profiles/", "plan.json", "results.json", "results.partial", "summary.md", UNFINISHED];

/// Files an earlier version's run left without the marker: a folder holding one is a run's.
const EARLIER_RUNS: [&str; 3] = ["plan.json", "results.json", "LOCK"];

/// Checks `output` can be a run's output folder, then creates it and leaves the marker.
/// `tracked` says whether git tracks anything under a path of the checkout `root`.
pub fn claim(root: &Path, output: &Path, tracked: &dyn Fn(&Path) -> bool) -> Result<(), String> {
    let output = resolved(output);
    outside_the_checkout_s_own_files(root, &output, "--output", tracked)?;
    if output.exists() {
        if !output.is_dir() {
            return Err(format!("--output {}: not a folder", output.display()));
        }
        let ours = output.join(MARKER).exists() || EARLIER_RUNS.iter().any(|name| output.join(name).exists());
        if !ours && is_non_empty(&output) {
            return Err(format!(
                "--output {} holds files no tdbench run wrote, and a run deletes and rewrites files in its output folder: \
                 give an empty or new folder (for example build/NAME)",
                output.display()
            ));
        }
    }
    std::fs::create_dir_all(&output).map_err(|e| format!("cannot create {}: {e}", output.display()))?;
    let listing = format!(
        "This folder is a tdbench run's output. A run deletes here only what it writes:\n{}\n",
        RUN_WRITES.iter().map(|name| format!("  {name}")).collect::<Vec<_>>().join("\n")
    );
    std::fs::write(output.join(MARKER), listing).map_err(|e| format!("cannot write to {}: {e}", output.display()))
}

/// Checks `report` can be drawn into: a report's folder is rewritten whole.
pub fn check_report(root: &Path, report: &Path, tracked: &dyn Fn(&Path) -> bool) -> Result<(), String> {
    let report = resolved(report);
    outside_the_checkout_s_own_files(root, &report, "--report", tracked)?;
    if report.exists() && is_non_empty(&report) && !report.join("README.md").exists() {
        return Err(format!(
            "--report {} holds files no report wrote, and a report rewrites its folder: give an empty or new folder",
            report.display()
        ));
    }
    Ok(())
}

/// Deletes what an earlier run left in `output`: only the names [`RUN_WRITES`] lists.
pub fn clear(output: &Path) -> Result<(), String> {
    std::fs::create_dir_all(output).map_err(|e| format!("cannot create {}: {e}", output.display()))?;
    for name in RUN_WRITES {
        // Links to the workers of an earlier run must never be started by this one.
        let _ = match name.strip_suffix('/') {
            Some(folder) => std::fs::remove_dir_all(output.join(folder)),
            None => std::fs::remove_file(output.join(name)),
        };
    }
    Ok(())
}

fn outside_the_checkout_s_own_files(root: &Path, folder: &Path, option: &str, tracked: &dyn Fn(&Path) -> bool) -> Result<(), String> {
    let root = resolved(root);
    if root.starts_with(folder) {
        return Err(format!(
            "{option} {} is the checkout or holds it: a run deletes and rewrites files there; give a folder of its own (for example build/NAME)",
            folder.display()
        ));
    }
    if let Ok(inside) = folder.strip_prefix(&root)
        && let Some(Component::Normal(top)) = inside.components().next()
        && tracked(Path::new(top))
    {
        return Err(format!(
            "{option} {} lies inside {}/, which git tracks: a run deletes and rewrites files there; give a folder of its own (for example build/NAME)",
            folder.display(),
            top.to_string_lossy()
        ));
    }
    Ok(())
}

fn is_non_empty(folder: &Path) -> bool {
    std::fs::read_dir(folder).map_or(true, |mut entries| entries.next().is_some())
}

/// `path` with `.` and `..` resolved and its deepest existing folder canonical (so a symbolic
/// link or `build/../.` cannot hide the checkout).
fn resolved(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        existing.pop();
    }
    let mut resolved = existing.canonicalize().unwrap_or(existing);
    resolved.extend(rest.iter().rev());
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("tdbench-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for folder in ["report", "src", "build"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::write(root.join("report/README.md"), "published").unwrap();
        root
    }

    /// As git would answer for the checkout above: `report/` and `src/` are tracked.
    fn tracked(top: &Path) -> bool {
        top == Path::new("report") || top == Path::new("src")
    }

    #[test]
    fn the_checkout_tracked_folders_and_others_files_are_refused() {
        let root = checkout("refused");
        for wrong in [root.clone(), root.join("build/.."), root.join("report"), root.join("src/x"), root.join("report/new")] {
            let err = claim(&root, &wrong, &tracked).err().unwrap_or_else(|| panic!("{} was accepted", wrong.display()));
            assert!(err.contains("--output"), "{err}");
        }
        assert!(claim(&root, root.parent().unwrap(), &tracked).is_err(), "a folder holding the checkout");
        // A folder of someone's files.
        let notes = root.join("build/notes");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join("todo.txt"), "mine").unwrap();
        assert!(claim(&root, &notes, &tracked).unwrap_err().contains("no tdbench run wrote"));
        assert!(notes.join("todo.txt").exists());
        // The published report's README stays.
        assert_eq!(std::fs::read_to_string(root.join("report/README.md")).unwrap(), "published");
        assert!(check_report(&root, &root.join("report"), &tracked).is_err());
        assert!(check_report(&root, &notes, &tracked).unwrap_err().contains("no report wrote"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_new_folder_or_an_earlier_run_s_is_claimed_and_cleared_of_run_files_only() {
        let root = checkout("claimed");
        let fresh = root.join("build/fresh");
        claim(&root, &fresh, &tracked).unwrap();
        assert!(fresh.join(MARKER).exists());
        // Claimed again: it is a run's now. Clearing keeps what a run did not write.
        std::fs::create_dir_all(fresh.join("samples/status")).unwrap();
        std::fs::write(fresh.join("results.json"), "{}").unwrap();
        std::fs::write(fresh.join("keep.txt"), "mine").unwrap();
        claim(&root, &fresh, &tracked).unwrap();
        clear(&fresh).unwrap();
        assert!(!fresh.join("samples").exists() && !fresh.join("results.json").exists());
        assert!(fresh.join("keep.txt").exists() && fresh.join(MARKER).exists());
        // An earlier version's run folder (no marker, a plan) is a run's too.
        let earlier = root.join("build/earlier");
        std::fs::create_dir_all(&earlier).unwrap();
        std::fs::write(earlier.join("plan.json"), "{}").unwrap();
        claim(&root, &earlier, &tracked).unwrap();
        assert!(check_report(&root, &fresh.join("report"), &tracked).is_ok());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
