//! The baseline worktree: created when absent; when present, it must be a worktree of this
//! repository (not the current tree) with no tracked changes, and it is switched to the
//! baseline commit without force — never reset or cleaned, so untracked files survive.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::plan::TreeInfo;

pub fn commit_of(sh: &Shell, reference: &str) -> Result<String, String> {
    let spec = format!("{reference}^{{commit}}");
    cmd!(sh, "git rev-parse --verify --quiet {spec}")
        .quiet()
        .ignore_stderr()
        .read()
        .map_err(|_| format!("`{reference}` is not a commit of this repository"))
}

/// Whether tracked files have uncommitted changes. Untracked files are left out: they reach a
/// build only through a tracked file that names them, and an editor's swap file or a scratch
/// note must not make a run's tree "dirty".
pub fn is_dirty(sh: &Shell, tree: &Path) -> Result<bool, String> {
    cmd!(sh, "git -C {tree} status --porcelain --untracked-files=no")
        .quiet()
        .read()
        .map(|s| !s.trim().is_empty())
        .map_err(|e| e.to_string())
}

pub fn current_tree(sh: &Shell, root: &Path) -> Result<TreeInfo, String> {
    Ok(TreeInfo {
        reference: "working tree".into(),
        commit: commit_of(sh, "HEAD")?,
        dirty: is_dirty(sh, root)?,
        path: root.display().to_string(),
        build: None,
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
    Ok(TreeInfo { reference: reference.into(), commit: commit.into(), dirty: false, path: dir.display().to_string(), build: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with one commit in a fresh temporary folder.
    fn repository(name: &str) -> (Shell, PathBuf, String) {
        let root = std::env::temp_dir().join(format!("tdbench-git-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let sh = Shell::new().unwrap();
        sh.change_dir(&root);
        std::fs::write(root.join("README.md"), "hello\n").unwrap();
        cmd!(sh, "git init -q -b main").quiet().run().unwrap();
        cmd!(sh, "git add README.md").quiet().run().unwrap();
        cmd!(sh, "git -c user.name=t -c user.email=t@t commit -q -m one").quiet().run().unwrap();
        let commit = commit_of(&sh, "HEAD").unwrap();
        (sh, root, commit)
    }

    #[test]
    fn an_absent_worktree_is_created_and_a_clean_one_switched_keeping_untracked_files() {
        let (sh, root, commit) = repository("create");
        let info = prepare_baseline(&sh, &root, Path::new("baseline/tree"), "HEAD", &commit).unwrap();
        assert_eq!(info.commit, commit);
        let tree = root.join("baseline/tree");
        assert!(tree.join("README.md").exists());
        std::fs::write(tree.join("untracked.txt"), "mine").unwrap();
        prepare_baseline(&sh, &root, Path::new("baseline/tree"), "HEAD", &commit).unwrap();
        assert_eq!(std::fs::read_to_string(tree.join("untracked.txt")).unwrap(), "mine");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_worktree_with_tracked_changes_is_refused_and_left_untouched() {
        let (sh, root, commit) = repository("dirty");
        prepare_baseline(&sh, &root, Path::new("baseline/tree"), "HEAD", &commit).unwrap();
        let readme = root.join("baseline/tree/README.md");
        std::fs::write(&readme, "edited\n").unwrap();
        let err = prepare_baseline(&sh, &root, Path::new("baseline/tree"), "HEAD", &commit).unwrap_err();
        assert!(err.contains("tracked changes"), "{err}");
        assert_eq!(std::fs::read_to_string(&readme).unwrap(), "edited\n");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_folder_that_is_not_a_worktree_of_this_repository_is_refused() {
        let (sh, root, commit) = repository("foreign");
        std::fs::create_dir_all(root.join("baseline/tree")).unwrap();
        std::fs::write(root.join("baseline/tree/notes.txt"), "keep").unwrap();
        let err = prepare_baseline(&sh, &root, Path::new("baseline/tree"), "HEAD", &commit).unwrap_err();
        assert!(err.contains("not a worktree of this repository"), "{err}");
        assert_eq!(std::fs::read_to_string(root.join("baseline/tree/notes.txt")).unwrap(), "keep");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_current_tree_is_refused_as_its_own_baseline() {
        let (sh, root, commit) = repository("self");
        let err = prepare_baseline(&sh, &root, &root, "HEAD", &commit).unwrap_err();
        assert!(err.contains("is the current tree") || err.contains("not a worktree"), "{err}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_unknown_reference_is_named() {
        let (sh, root, _) = repository("unknown");
        assert_eq!(commit_of(&sh, "no-such-branch").unwrap_err(), "`no-such-branch` is not a commit of this repository");
        let _ = std::fs::remove_dir_all(&root);
    }
}
