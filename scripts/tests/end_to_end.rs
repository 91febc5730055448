//! `./run.sh` end to end on a throwaway copy of this repository, with tiny durations: an A/A run
//! passes with every artifact; each merger rejection rule fires on crafted side files; a commit
//! adding one allocation to one codec's decode fails naming it; a crashed worker is named; a
//! baseline worktree with a tracked change is refused and left untouched.
//!
//! One test, run in sequence: the scenarios share the throwaway repository and its two builds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git").args(args).current_dir(repo).status().unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Copies the working tree (tracked and untracked, not ignored files) into a fresh repository.
fn throwaway_repository() -> PathBuf {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let repo = std::env::temp_dir().join(format!("tdbench-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo);
    let files = Command::new("git").args(["ls-files", "-co", "--exclude-standard", "-z"]).current_dir(&source).output().unwrap();
    for file in files.stdout.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let relative = Path::new(std::str::from_utf8(file).unwrap());
        let (from, to) = (source.join(relative), repo.join(relative));
        if from.is_file() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&from, &to).unwrap();
        }
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"]);
    repo
}

const TINY: &[&str] = &["--duration", "20", "--warmup", "5", "--rounds", "1", "--confirm-rounds", "1", "--allocation-iterations", "40", "--ci"];

/// Commits `code` inserted at the start of tl's decode, before its reader is made.
fn commit_before_tl_read(repo: &Path, code: &str, message: &str) {
    let tl = repo.join("src/codecs/tl.rs");
    let original = std::fs::read_to_string(&tl).unwrap();
    let anchor = "        let mut reader = TlReader::new(bytes);";
    let changed = original.replace(anchor, &format!("{code}{anchor}"));
    assert_ne!(changed, original);
    std::fs::write(&tl, changed).unwrap();
    git(repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", message]);
}

fn run(repo: &Path, extra: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_run")).args(TINY).args(extra).current_dir(repo).output().unwrap();
    eprintln!("--- run {extra:?}: {}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    output
}

fn merge(dir: &Path) -> (i32, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_merge")).arg(dir).output().unwrap();
    let results = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    (output.status.code().unwrap(), results)
}

fn violation_kinds(results: &serde_json::Value) -> Vec<String> {
    results["violations"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap().to_string()).collect()
}

fn counts_change(results: &serde_json::Value, operation: &str) -> f64 {
    results["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "instructions" && c["operation"] == operation)
        .and_then(|c| c["change"].as_f64())
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_string(&value).unwrap()).unwrap();
}

/// Each merger rule on a copy of a good run folder, changed in one way.
fn merger_rules(good: &Path, scratch: &Path) {
    let sample = |dir: &Path, role: &str, n: u32| dir.join(format!("samples/status/tl/{role}-{n}.json"));
    let cases: Vec<(&str, Box<dyn Fn(&Path)>)> = vec![
        ("missing sample", Box::new(move |d: &Path| std::fs::remove_file(sample(d, "current", 0)).unwrap())),
        ("duplicate sample", Box::new(move |d: &Path| {
            std::fs::copy(sample(d, "current", 0), d.join("samples/status/tl/current-0-copy.json")).unwrap();
        })),
        ("reordered sample", Box::new(move |d: &Path| {
            let (a, b) = (sample(d, "current", 0), sample(d, "current", 1));
            let (ta, tb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
            std::fs::write(&a, tb).unwrap();
            std::fs::write(&b, ta).unwrap();
        })),
        ("reused sample", Box::new(move |d: &Path| edit_json(&sample(d, "baseline", 1), |v| v["nonce"] = "0123456789abcdef".into()))),
        ("metadata differs", Box::new(move |d: &Path| edit_json(&sample(d, "baseline", 0), |v| v["machine"]["cpu"] = "another CPU".into()))),
        ("format change", Box::new(move |d: &Path| {
            for n in 0..2 {
                edit_json(&sample(d, "current", n), |v| v["operations"][0]["encoded_bytes"] = 1.0.into());
            }
        })),
        ("nondeterministic allocations", Box::new(move |d: &Path| {
            edit_json(&sample(d, "baseline", 1), |v| v["operations"][1]["allocations_per_op"] = 99.0.into())
        })),
    ];
    for (kind, tamper) in cases {
        copy_dir(good, scratch);
        std::fs::remove_file(scratch.join("results.json")).unwrap();
        tamper(scratch);
        let (code, results) = merge(scratch);
        assert_eq!(code, 1, "{kind}: merge should fail");
        assert!(violation_kinds(&results).iter().any(|k| k == kind), "{kind}: got {:?}", violation_kinds(&results));
        assert_eq!(results["verdict"], "fail");
    }
}

#[test]
fn run_sh_end_to_end() {
    let repo = throwaway_repository();

    // A/A: HEAD against HEAD passes, with every artifact written and no INCOMPLETE marker.
    // No confirmation round here: with two pairs the screen sometimes flags a comparison by
    // chance, which would add samples to the count checked below.
    let output = run(&repo, &["--data", "status", "--serializer", "tl,json,clone", "--confirm-rounds", "0"]);
    assert_eq!(output.status.code(), Some(0), "A/A run failed");
    let build = repo.join("build");
    for artifact in ["plan.json", "results.json", "summary.md"] {
        assert!(build.join(artifact).exists(), "{artifact} missing");
    }
    assert!(!build.join("INCOMPLETE").exists());
    let (code, results) = merge(&build);
    assert_eq!(code, 0, "re-merging the saved run gives the same verdict");
    assert_eq!(results["samples"].as_array().unwrap().len(), 3 * 2 * 2);
    assert_eq!(results["provenance"]["baseline"]["commit"], results["provenance"]["current"]["commit"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("status  tl") && stdout.contains("verdict: pass"), "{stdout}");

    merger_rules(&build, &repo.join("scratch"));

    // Without valgrind, instruction counts are refused with how to get it, exit 2.
    let tools = repo.join("no-valgrind-path");
    std::fs::create_dir_all(&tools).unwrap();
    for tool in ["git", "cargo", "rustc", "cc"] {
        if let Some(found) = std::env::split_paths(&std::env::var_os("PATH").unwrap()).map(|d| d.join(tool)).find(|p| p.exists()) {
            std::os::unix::fs::symlink(found, tools.join(tool)).unwrap();
        }
    }
    let output = Command::new(env!("CARGO_BIN_EXE_run"))
        .args(["--measure", "instructions", "--data", "status"])
        .current_dir(&repo)
        .env("PATH", &tools)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("need valgrind"), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::remove_dir_all(&tools).unwrap();

    // Unknown names are refused with the valid ones.
    let output = run(&repo, &["--data", "stauts"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("valid: all, status"));

    // Instruction counts: an A/A run gives identical counts in every process and no change;
    // ~2% more work in tl's decode fails the gate on instructions, with no other violation.
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--measure", "instructions"]);
    assert_eq!(output.status.code(), Some(0), "A/A under --measure instructions failed");
    let (_, results) = merge(&build);
    let counts: Vec<&serde_json::Value> =
        results["comparisons"].as_array().unwrap().iter().filter(|c| c["metric"] == "instructions").collect();
    assert_eq!(counts.len(), 2, "encode and decode counted");
    assert!(counts.iter().all(|c| c["change"] == 0.0 && c["baseline"].as_f64().unwrap() > 0.0), "{counts:?}");
    commit_before_tl_read(
        &repo,
        "        for i in 0..bytes.len() as u32 / 6 {\n            std::hint::black_box(i);\n        }\n",
        "more work in tl decode",
    );
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--measure", "instructions", "--baseline", "HEAD~1"]);
    assert_eq!(output.status.code(), Some(1));
    let (_, results) = merge(&build);
    assert_eq!(violation_kinds(&results), ["instruction regression"]);
    let violation = &results["violations"][0];
    assert_eq!((&violation["lane"], &violation["implementation"], &violation["operation"]), (&"status".into(), &"tl".into(), &"decode".into()));
    let decode = counts_change(&results, "decode");
    eprintln!("tl decode instructions: {:+.2}%", decode * 100.0);
    assert!(decode > 0.01 && decode < 0.05, "the added work is {:.2}%", decode * 100.0);
    git(&repo, &["reset", "-q", "--hard", "HEAD~1"]);

    // One more allocation in tl's decode fails the gate, naming lane, implementation, operation.
    commit_before_tl_read(&repo, "        std::hint::black_box(Box::new(0u64));\n", "allocate once more in tl decode");
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--baseline", "HEAD~1"]);
    assert_eq!(output.status.code(), Some(1));
    let (_, results) = merge(&build);
    let violation = results["violations"].as_array().unwrap().iter().find(|v| v["kind"] == "allocation regression").expect("allocation regression");
    assert_eq!((&violation["lane"], &violation["implementation"], &violation["operation"]), (&"status".into(), &"tl".into(), &"decode".into()));
    assert!(String::from_utf8_lossy(&output.stdout).contains("violation: allocation regression: status/tl/decode"));

    // A worker that crashes stops the run with its name and how to reproduce it.
    let bincode = repo.join("src/codecs/bincode.rs");
    let original = std::fs::read_to_string(&bincode).unwrap();
    std::fs::write(&bincode, original.replace("        let base = config::standard();", "        let base = config::standard();\n        if bytes.len() < 64 { std::process::abort(); }")).unwrap();
    let output = run(&repo, &["--data", "status", "--serializer", "bincode"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("worker bincode/status") && stderr.contains("reproduce with"), "{stderr}");
    assert!(build.join("INCOMPLETE").exists() && !build.join("results.json").exists());
    std::fs::write(&bincode, original).unwrap();

    // A baseline worktree with a tracked change is refused and left as it was.
    let readme = repo.join("baseline/tree/README.md");
    let mut text = std::fs::read_to_string(&readme).unwrap();
    text.push_str("\nlocal edit\n");
    std::fs::write(&readme, &text).unwrap();
    let output = run(&repo, &["--data", "status", "--serializer", "tl"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("tracked changes"));
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), text);

    let _ = std::fs::remove_dir_all(&repo);
}
