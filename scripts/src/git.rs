//! The baseline worktree: created when absent; when present, it must be a worktree of this
//! repository (not the current tree) with no tracked changes, and it is switched to the
//! baseline commit without force — never reset or cleaned, so untracked files survive.

use std::path::{Path, PathBuf};

use xshell::{cmd, Shell};

use crate::plan::TreeInfo;

pub fn commit_of(sh: &Shell, reference: &str) -> Result<String, String> {
    let spec = format!("{reference}^{{commit}}");
    cmd!(sh, "git rev-parse --verify --quiet {spec}")
        .quiet()
        .ignore_stderr()
        .read()
        .map_err(|_| format!("`{reference}` is not a commit of this repository"))
}

pub fn is_dirty(sh: &Shell, tree: &Path) -> Result<bool, String> {
    cmd!(sh, "git -C {tree} status --porcelain").quiet().read().map(|s| !s.trim().is_empty()).map_err(|e| e.to_string())
}

pub fn current_tree(sh: &Shell, root: &Path) -> Result<TreeInfo, String> {
    Ok(TreeInfo {
        reference: "working tree".into(),
        commit: commit_of(sh, "HEAD")?,
        dirty: is_dirty(sh, root)?,
        path: root.display().to_string(),
    })
}

fn canonical(path: &str, base: &Path) -> PathBuf {
    let path = Path::new(path.trim());
    let absolute = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    absolute.canonicalize().unwrap_or(absolute)
}

/// Makes `dir` a worktree of this repository at `commit`.
pub fn prepare_baseline(sh: &Shell, root: &Path, dir: &Path, reference: &str, commit: &str) -> Result<TreeInfo, String> {
    let dir = if dir.is_absolute() { dir.to_path_buf() } else { root.join(dir) };
    let exists = dir.read_dir().is_ok_and(|mut entries| entries.next().is_some());
    if !exists {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        cmd!(sh, "git worktree add --detach --quiet {dir} {commit}")
            .quiet()
            .run()
            .map_err(|e| format!("cannot create the baseline worktree at {}: {e}", dir.display()))?;
    } else {
        let ours = cmd!(sh, "git rev-parse --git-common-dir").quiet().read().map_err(|e| e.to_string())?;
        let theirs = cmd!(sh, "git -C {dir} rev-parse --git-common-dir").quiet().ignore_stderr().read().unwrap_or_default();
        let top = cmd!(sh, "git -C {dir} rev-parse --show-toplevel").quiet().ignore_stderr().read().unwrap_or_default();
        if theirs.is_empty() || canonical(&theirs, &dir) != canonical(&ours, root) || canonical(&top, &dir) != canonical(".", &dir) {
            return Err(format!(
                "{} exists but is not a worktree of this repository; move it away or pass --baseline-worktree",
                dir.display()
            ));
        }
        if canonical(&top, &dir) == canonical(".", root) {
            return Err(format!("{} is the current tree, not a separate worktree", dir.display()));
        }
        let changes = cmd!(sh, "git -C {dir} status --porcelain --untracked-files=no").quiet().read().map_err(|e| e.to_string())?;
        if !changes.trim().is_empty() {
            return Err(format!(
                "the baseline worktree {} has tracked changes; it was left untouched. Commit, stash or discard them there:\n{changes}",
                dir.display()
            ));
        }
        cmd!(sh, "git -C {dir} checkout --detach --quiet {commit}")
            .quiet()
            .run()
            .map_err(|e| format!("cannot switch the baseline worktree {} to {commit} without force: {e}", dir.display()))?;
    }
    Ok(TreeInfo { reference: reference.into(), commit: commit.into(), dirty: false, path: dir.display().to_string() })
}
