//! The corpus both trees can read, when the change under test upgrades the schema.
//!
//! Both trees' workers read the current tree's corpus. A corpus line whose `@type` (at any
//! depth) the baseline's schema does not declare fails to load in the baseline's workers, and a
//! worker that cannot load its corpus measures none of its lanes; a line of a constructor the two
//! schemas declare differently loads, but fails validation in one of them (re-encoding must give
//! the line's exact bytes, and one of the two writes other fields). So before anything is
//! measured the runner reads both trees' schemas (`models/schema/td_api.tl`, declaration lines)
//! and looks at every corpus line's `@type`s; when some line uses a constructor the baseline
//! lacks or declares differently (another constructor id), both trees measure a copy of the
//! corpus without those lines (`OUTPUT/common-corpus/`), and the run names each left-out line in
//! its summary. Working from the schema text, not from the baseline's binaries, it serves
//! baselines built before it existed too.
//!
//! A lane the copy leaves without a payload (the lane's own constructor changed) is not
//! compared, and the summary says so: the current tree's worker says how many payloads each lane
//! of the copy has (`worker --lane-sizes DIR`), so the lane rules stay the worker's.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the run's workers read the corpus, and one note per line left out of it.
pub(super) struct CommonCorpus {
    pub(super) dir: PathBuf,
    pub(super) left_out: Vec<String>,
}

/// The corpus at `corpus` (the current tree's) as both the tree at `current` and the baseline
/// tree at `baseline` can read it; unchanged (no copy) when both read every line alike, or when
/// either schema cannot be read as declaration lines.
pub(super) fn common(corpus: &Path, current: &Path, baseline: &Path, output: &Path) -> Result<CommonCorpus, String> {
    let unchanged = || Ok(CommonCorpus { dir: corpus.to_path_buf(), left_out: Vec::new() });
    let (Some(current), Some(baseline)) = (declarations(current), declarations(baseline)) else { return unchanged() };
    // What the current tree declares and the baseline does not declare alike (the same name with
    // the same constructor id). A type neither declares sits in a member both readers skip.
    let differing: HashSet<&str> =
        current.iter().filter(|(name, id)| baseline.get(*name) != Some(id)).map(|(name, _)| name.as_str()).collect();

    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .map_err(|e| format!("{}: {e}", corpus.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut kept_files = Vec::new();
    let mut left_out = Vec::new();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut kept = String::new();
        for (index, line) in text.lines().enumerate() {
            let unknown = differing_types(line, &differing);
            if unknown.is_empty() {
                kept.push_str(line);
                kept.push('\n');
            } else {
                let types: Vec<String> = unknown.into_iter().collect();
                left_out.push(format!("corpus/{name}:{} ({})", index + 1, types.join(", ")));
            }
        }
        kept_files.push((name, kept));
    }
    if left_out.is_empty() {
        return unchanged();
    }
    let dir = output.join("common-corpus");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, kept) in kept_files {
        // A file left empty would be a load error of its own: it goes, its lines are listed.
        if !kept.is_empty() {
            crate::files::write_atomically(&dir.join(&name), &kept)?;
        }
    }
    let note = format!(
        "{} corpus line(s) use constructors the baseline's schema lacks or declares differently; both trees measured the corpus without them ({}): {}",
        left_out.len(),
        dir.display(),
        left_out.join("; ")
    );
    Ok(CommonCorpus { dir, left_out: vec![note] })
}

/// The corpus both trees measure, the lanes of `lanes` still to compare in it, and one note per
/// thing left out (for the summary). `worker` is the current tree's.
pub(super) fn for_both(
    root: &Path,
    worker: &Path,
    baseline: &Path,
    output: &Path,
    mut lanes: Vec<String>,
) -> Result<(PathBuf, Vec<String>, Vec<String>), String> {
    let common = common(&root.join("corpus"), root, baseline, output)?;
    let mut notes = Vec::new();
    if !common.left_out.is_empty() {
        let emptied = empty_lanes(worker, &common.dir, &lanes)?;
        if !emptied.is_empty() {
            lanes.retain(|lane| !emptied.contains(lane));
            let names: Vec<String> = emptied.iter().map(|lane| format!("`{lane}`")).collect();
            notes.push(format!("lanes all of whose payloads were left out, not compared: {}", names.join(", ")));
        }
        if lanes.is_empty() {
            return Err("no lane is left to compare: every payload of the lanes asked for was left out".into());
        }
    }
    notes.extend(common.left_out);
    Ok((common.dir, lanes, notes))
}

/// The lanes of `lanes` that have no payload in the corpus at `dir`, as the current tree's worker
/// counts them.
fn empty_lanes(worker: &Path, dir: &Path, lanes: &[String]) -> Result<Vec<String>, String> {
    let output = std::process::Command::new(worker)
        .arg("--lane-sizes")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", worker.display()))?;
    if !output.status.success() {
        return Err(format!("{} --lane-sizes: {}", worker.display(), String::from_utf8_lossy(&output.stderr).trim()));
    }
    let sizes: std::collections::BTreeMap<String, usize> =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("{} --lane-sizes: {e}", worker.display()))?;
    Ok(lanes.iter().filter(|lane| sizes.get(*lane).is_some_and(|n| *n == 0)).cloned().collect())
}

/// Each constructor of a tree's schema with its id.
fn declarations(tree: &Path) -> Option<HashMap<String, u32>> {
    let schema = std::fs::read_to_string(tree.join("models/schema/td_api.tl")).ok()?;
    let definitions = tl_parser::parse_schema(&schema).ok()?;
    Some(definitions.iter().map(|d| (d.name.clone(), d.id())).collect())
}

/// The `@type`s of one corpus line, at any depth, that are in `differing`. A line that is not
/// JSON has none here: loading reports it, as it always did.
fn differing_types(line: &str, differing: &HashSet<&str>) -> BTreeSet<String> {
    fn walk(value: &Value, differing: &HashSet<&str>, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(members) => {
                for (key, member) in members {
                    match (key.as_str(), member) {
                        ("@type", Value::String(name)) if differing.contains(name.as_str()) => drop(out.insert(name.clone())),
                        _ => walk(member, differing, out),
                    }
                }
            }
            Value::Array(elements) => elements.iter().for_each(|element| walk(element, differing, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    if let Ok(value) = serde_json::from_str::<Value>(line) {
        walk(&value, differing, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(schema: &str) -> tempdir::Dir {
        tempdir::Dir::with(&[("models/schema/td_api.tl", schema)])
    }

    const CURRENT: &str =
        "ok = Ok;\nupdateFile file:file = Update;\nfile id:int32 = File;\nnewFile = File;\nupdateNew x:vector<Ok> = Update;\n";

    #[test]
    fn lines_with_a_type_the_baseline_lacks_are_left_out_and_named() {
        let current = tree(CURRENT);
        let baseline = tree("ok = Ok;\nupdateFile file:file = Update;\nfile id:int32 = File;\n");
        let corpus = tempdir::Dir::with(&[
            ("a.jsonl", "{\"@type\":\"ok\"}\n{\"@type\":\"updateFile\",\"file\":{\"@type\":\"newFile\"}}\n{\"@type\":\"ok\"}\n"),
            ("b-mix.jsonl", "{\"@type\":\"updateNew\",\"x\":[{\"@type\":\"ok\"}]}\n"),
            ("c.jsonl", "not json\n"),
        ]);
        let output = tempdir::Dir::with(&[]);
        let read = common(corpus.path(), current.path(), baseline.path(), output.path()).unwrap();
        assert_eq!(read.dir, output.path().join("common-corpus"));
        assert_eq!(std::fs::read_to_string(read.dir.join("a.jsonl")).unwrap(), "{\"@type\":\"ok\"}\n{\"@type\":\"ok\"}\n");
        assert!(!read.dir.join("b-mix.jsonl").exists(), "a file left empty goes");
        assert_eq!(std::fs::read_to_string(read.dir.join("c.jsonl")).unwrap(), "not json\n", "loading reports it, as before");
        let note = &read.left_out[0];
        assert!(note.starts_with("2 corpus line(s)"), "{note}");
        assert!(note.contains("corpus/a.jsonl:2 (newFile)") && note.contains("corpus/b-mix.jsonl:1 (updateNew)"), "{note}");
    }

    #[test]
    fn a_constructor_declared_differently_is_left_out_too() {
        let current = tree(CURRENT);
        let baseline = tree("ok = Ok;\nupdateFile file:file = Update;\nfile id:int53 = File;\n");
        let corpus =
            tempdir::Dir::with(&[("a.jsonl", "{\"@type\":\"ok\"}\n{\"@type\":\"updateFile\",\"file\":{\"@type\":\"file\",\"id\":1}}\n")]);
        let output = tempdir::Dir::with(&[]);
        let read = common(corpus.path(), current.path(), baseline.path(), output.path()).unwrap();
        assert!(read.left_out[0].contains("corpus/a.jsonl:2 (file)"), "{}", read.left_out[0]);
    }

    #[test]
    fn a_baseline_that_reads_every_line_measures_the_corpus_itself() {
        let current = tree(CURRENT);
        let baseline = tree("ok = Ok;\n");
        // A type neither schema declares sits in a member both readers skip.
        let corpus = tempdir::Dir::with(&[("a.jsonl", "{\"@type\":\"ok\",\"extra\":{\"@type\":\"newThing\"}}\n")]);
        let output = tempdir::Dir::with(&[]);
        let read = common(corpus.path(), current.path(), baseline.path(), output.path()).unwrap();
        assert_eq!((read.dir.as_path(), read.left_out.len()), (corpus.path(), 0));
        let same = common(corpus.path(), current.path(), current.path(), output.path()).unwrap();
        assert_eq!((same.dir.as_path(), same.left_out.len()), (corpus.path(), 0), "an A/A run measures the corpus itself");
        let without_schema = tempdir::Dir::with(&[]);
        assert_eq!(common(corpus.path(), current.path(), without_schema.path(), output.path()).unwrap().dir, corpus.path());
    }

    #[test]
    fn a_lane_left_without_payloads_is_not_compared_and_said_so() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempdir::Dir::with(&[
            ("models/schema/td_api.tl", CURRENT),
            ("corpus/a.jsonl", "{\"@type\":\"ok\"}\n{\"@type\":\"newFile\"}\n"),
            // Stands in for the current tree's worker: the copy's mix lane is empty.
            ("worker", "#!/bin/sh\necho '{\"mix\":0,\"status\":2}'\n"),
        ]);
        let worker = root.path().join("worker");
        std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
        let baseline = tree("ok = Ok;\n");
        let output = tempdir::Dir::with(&[]);
        let lanes = vec!["status".to_string(), "mix".to_string()];
        let (dir, lanes, notes) = for_both(root.path(), &worker, baseline.path(), output.path(), lanes).unwrap();
        assert_eq!((dir, lanes), (output.path().join("common-corpus"), vec!["status".to_string()]));
        assert_eq!(notes[0], "lanes all of whose payloads were left out, not compared: `mix`");
        assert!(notes[1].contains("corpus/a.jsonl:2 (newFile)"), "{notes:?}");
        let only_mix = for_both(root.path(), &worker, baseline.path(), output.path(), vec!["mix".to_string()]);
        assert!(only_mix.unwrap_err().contains("no lane is left"));
    }

    /// Scratch folders removed when dropped.
    mod tempdir {
        use std::path::{Path, PathBuf};

        pub struct Dir(PathBuf);

        impl Dir {
            pub fn with(files: &[(&str, &str)]) -> Dir {
                static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let dir = std::env::temp_dir().join(format!("tdbench-common-corpus-{}-{n}", std::process::id()));
                let _ = std::fs::remove_dir_all(&dir);
                for (name, text) in files {
                    let path = dir.join(name);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, text).unwrap();
                }
                std::fs::create_dir_all(&dir).unwrap();
                Dir(dir)
            }

            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}
