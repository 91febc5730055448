//! `./run.sh` end to end on a throwaway copy of this repository, with tiny durations. Each
//! scenario is its own test and says what broke; they run in order on one repository, whose two
//! builds they share. Scenarios that need valgrind or libtdjson report as ignored, with the
//! reason, where the machine lacks them — and fail instead when `CI` is set, where `.ci/run`
//! installs both.
//!
//! One file past 600 lines on purpose: the scenarios share one repository and its two builds,
//! and run in order on them; one file is one such run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use tdbench_contract::Operation;

type Outcome = Result<(), Failed>;

macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return Err(format!($($why)+).into());
        }
    };
}

fn git(repo: &Path, args: &[&str]) -> Outcome {
    let status = Command::new("git").args(["-c", "user.name=t", "-c", "user.email=t@t"]).args(args).current_dir(repo).status()?;
    ensure!(status.success(), "git {args:?} failed");
    Ok(())
}

fn source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Copies the working tree (tracked and untracked, not ignored files) into a fresh repository
/// with one commit, `base`.
fn throwaway_repository() -> Result<PathBuf, Failed> {
    let source = source();
    let repo = std::env::temp_dir().join(format!("tdbench-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo);
    let files = Command::new("git").args(["ls-files", "-co", "--exclude-standard", "-z"]).current_dir(&source).output()?;
    for file in files.stdout.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let relative = Path::new(std::str::from_utf8(file)?);
        let (from, to) = (source.join(relative), repo.join(relative));
        if from.is_file() {
            std::fs::create_dir_all(to.parent().unwrap())?;
            std::fs::copy(&from, &to)?;
        }
    }
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-q", "-m", "base"])?;
    git(&repo, &["tag", "base"])?;
    Ok(repo)
}

/// The shared repository; every scenario starts from the `base` commit, clean.
/// A folder beside the repository, for what must not show in its `git status`.
fn beside(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tdbench-e2e-{}-{name}", std::process::id()))
}

fn repo() -> Result<PathBuf, Failed> {
    static REPO: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let repo = REPO.get_or_init(|| throwaway_repository().map_err(|e| format!("{e:?}"))).clone()?;
    git(&repo, &["checkout", "-q", "-f", "main"])?;
    git(&repo, &["reset", "-q", "--hard", "base"])?;
    Ok(repo)
}

/// One round everywhere and one look: two pairs never gate, so further looks would add samples
/// to every scenario (`undecided_comparisons_get_further_looks` turns them on). Counts take one
/// pass over the lane.
const TINY: &[&str] = &[
    "--duration",
    "20",
    "--warmup",
    "5",
    "--rounds",
    "1",
    "--backstop-rounds",
    "1",
    "--looks",
    "1",
    "--confirm-rounds",
    "1",
    "--allocation-iterations",
    "40",
    "--instruction-cycles",
    "1",
    "--ci",
];

fn run_in(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Output, Failed> {
    let output = Command::new(env!("CARGO_BIN_EXE_run")).args(args).envs(env.iter().copied()).current_dir(repo).output()?;
    eprintln!("--- run {args:?}: {}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    Ok(output)
}

fn run(repo: &Path, extra: &[&str]) -> Result<Output, Failed> {
    run_in(repo, &[TINY, extra].concat(), &[])
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn merge(dir: &Path) -> Result<(i32, serde_json::Value), Failed> {
    let output = Command::new(env!("CARGO_BIN_EXE_merge")).arg(dir).output()?;
    let results = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json"))?)?;
    Ok((output.status.code().unwrap_or(-1), results))
}

fn violation_kinds(results: &serde_json::Value) -> Vec<String> {
    results["violations"].as_array().map_or(Vec::new(), |v| v.iter().map(|v| v["kind"].as_str().unwrap_or("?").to_string()).collect())
}

/// Timed samples only (counts are samples too).
fn timed(results: &serde_json::Value) -> Vec<&serde_json::Value> {
    results["samples"].as_array().map_or(Vec::new(), |s| s.iter().filter(|s| s["counted"] != true).collect())
}

/// Slots of the run's plan.
fn planned(dir: &Path) -> Result<usize, Failed> {
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json"))?)?;
    Ok(plan["slots"].as_array().map_or(0, Vec::len))
}

/// Commits `code` inserted at the start of tl's decode, before it reads.
fn commit_before_tl_read(repo: &Path, code: &str, message: &str) -> Outcome {
    let tl = repo.join("src/codecs/tl.rs");
    let original = std::fs::read_to_string(&tl)?;
    let anchor = "        Object::from_tl(bytes)";
    let changed = original.replace(anchor, &format!("{code}{anchor}"));
    ensure!(changed != original, "the anchor in src/codecs/tl.rs moved");
    std::fs::write(&tl, changed)?;
    git(repo, &["commit", "-qam", message])
}

/// The A/A run every merger scenario tampers with a copy of: `build/` after it, kept aside.
fn good_run() -> Result<PathBuf, Failed> {
    static GOOD: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut good = GOOD.lock().unwrap();
    if let Some(dir) = good.as_ref() {
        return Ok(dir.clone());
    }
    let repo = repo()?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl,json,clone"])?;
    ensure!(output.status.code() == Some(0), "the A/A run failed:\n{}", stderr(&output));
    // A partial run publishes nothing and leaves the checkout as it was.
    let status = Command::new("git").args(["status", "--porcelain"]).current_dir(&repo).output()?;
    ensure!(status.stdout.is_empty(), "the run changed the checkout:\n{}", String::from_utf8_lossy(&status.stdout));
    let kept = beside("good-run");
    copy_dir(&repo.join("build"), &kept)?;
    *good = Some(kept.clone());
    Ok(kept)
}

fn copy_dir(from: &Path, to: &Path) -> Outcome {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)?.flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn sha256(path: &Path) -> Result<String, Failed> {
    let output = Command::new("sha256sum").arg(path).output()?;
    Ok(String::from_utf8_lossy(&output.stdout).split_whitespace().next().unwrap_or_default().to_string())
}

fn a_a_run_passes_with_every_artifact() -> Outcome {
    let good = good_run()?;
    for artifact in ["plan.json", "results.json", "summary.md", "report/README.md", "report/throughput.png"] {
        ensure!(good.join(artifact).exists(), "{artifact} missing");
    }
    // LOCK stays: an flock's file is never removed (another run could lock the removed file).
    ensure!(!good.join("INCOMPLETE").exists(), "INCOMPLETE left behind");
    let (code, results) = merge(&good)?;
    ensure!(code == 0, "re-merging the saved run gives another verdict");
    let samples = results["samples"].as_array().map_or(0, Vec::len);
    // Two counts and (at least) one round per implementation and tree; every sample planned.
    ensure!(samples >= 3 * 2 * 2 + 3 * 2 * 2 && samples == planned(&good)?, "{samples} samples");
    ensure!(results["provenance"]["baseline"]["commit"] == results["provenance"]["current"]["commit"], "not an A/A run");
    let summary = std::fs::read_to_string(good.join("summary.md"))?;
    ensure!(summary.contains("| status | tl |") && summary.contains("verdict: pass"), "{summary}");
    // Identical code: every comparison unchanged by its counts, decided without time.
    ensure!(summary.contains("latency at 1%: all 4 comparisons decided: 4 unchanged by their instruction counts"), "{summary}");
    // Every pair of samples shares one harness process, opened by the tree the order put first.
    ensure!(summary.contains("latency pairs: both trees' kernels in one process"), "{summary}");
    for n in 0..2 {
        let read =
            |role| -> Result<serde_json::Value, Failed> { Ok(serde_json::from_str(&std::fs::read_to_string(sample(&good, role, n))?)?) };
        let (b, c) = (read("baseline")?, read("current")?);
        ensure!(
            b["in_process"].is_object() && b["in_process"] == c["in_process"],
            "sample {n}: {} vs {}",
            b["in_process"],
            c["in_process"]
        );
        ensure!(
            b["in_process"]["first"] == if n == 0 { "baseline" } else { "current" },
            "sample {n} opened by {}",
            b["in_process"]["first"]
        );
    }
    Ok(())
}

/// A baseline older than the kernel library: latency from process pairs, and the run says so.
fn a_baseline_without_the_kernel_library_falls_back_to_process_pairs() -> Outcome {
    let repo = repo()?;
    git(&repo, &["rm", "-rq", "kernels"])?;
    let manifest = repo.join("Cargo.toml");
    let original = std::fs::read_to_string(&manifest)?;
    std::fs::write(&manifest, original.replace(r#""kernels", "#, ""))?;
    // The lock file as that commit would have had it, or its build would change the worktree.
    let locked = Command::new("cargo").args(["metadata", "--format-version", "1"]).current_dir(&repo).output()?;
    ensure!(locked.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&locked.stderr));
    git(&repo, &["commit", "-qam", "before the kernel library"])?;
    git(&repo, &["checkout", "-q", "base", "--", "."])?;
    git(&repo, &["commit", "-qam", "the kernel library"])?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--baseline", "HEAD~1"])?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    ensure!(stderr(&output).contains("predates in-process pairing"), "{}", stderr(&output));
    let (_, results) = merge(&repo.join("build"))?;
    let samples = timed(&results);
    ensure!(samples.len() >= 4 && samples.iter().all(|s| s["in_process"].is_null()), "{samples:?}");
    ensure!(String::from_utf8_lossy(&output.stdout).contains("latency pairs: processes of their own"), "summary");
    Ok(())
}

/// Two pairs can never gate a comparison, nor four; six can at a 50% threshold: so the screen
/// takes all three looks the plan allows, one round each, and the gate takes the samples they
/// add as its own.
fn undecided_comparisons_get_further_looks() -> Outcome {
    let repo = repo()?;
    // No run-level spread: with it, pairs this few can never be gated, and a comparison that
    // no look could gate stops after the first (the futility rule) — this test is about looks,
    // so it times every comparison in full (an A/A run counted first would time none).
    // Without --ci: whether three looks of one round decide at 50% depends on how loaded the
    // machine is (CI's failed once, exit 3); the looks themselves do not.
    let settings: Vec<&str> = TINY.iter().copied().filter(|a| *a != "--ci").collect();
    let output = run_in(
        &repo,
        &[
            &settings[..],
            &[
                "--data",
                "status",
                "--serializer",
                "tl",
                "--looks",
                "3",
                "--look-rounds",
                "1",
                "--threshold",
                "50",
                "--run-spread",
                "0",
                "--measure",
                "time",
            ],
        ]
        .concat(),
        &[],
    )?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    ensure!(stderr(&output).contains("look 3 of 3 for status/tl"), "no third look");
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo.join("build/plan.json"))?)?;
    let screened = plan["slots"]
        .as_array()
        .ok_or("no slots")?
        .iter()
        .filter(|s| s["implementation"] == "tl" && s["role"] == "current" && s["stage"] == "screen")
        .count();
    ensure!(screened == 6, "{screened} screen samples of tl");
    let (code, results) = merge(&repo.join("build"))?;
    ensure!(code == 0 && violation_kinds(&results).is_empty(), "{:?}", violation_kinds(&results));
    let latency: Vec<&serde_json::Value> =
        results["comparisons"].as_array().ok_or("no comparisons")?.iter().filter(|c| c["metric"] == "latency").collect();
    ensure!(!latency.is_empty() && latency.iter().all(|c| c["pairs"].as_u64() >= Some(6)), "{latency:?}");
    Ok(())
}

/// One commit built in two folders gives byte-identical binaries: the worker and the kernel
/// library as cargo links them (one layout, the same seed in both trees). The layouts a sample
/// runs with are each tree's own draw: the A/A run's first in-process pair loaded two.
fn both_trees_build_byte_identical_workers() -> Outcome {
    good_run()?;
    let repo = repo()?;
    let (current, baseline) = (repo.join("target/tdbench-worker"), repo.join("baseline/tree/target"));
    for built in ["release/worker", "release/counter", "release/libtdbench_kernels.so"] {
        let (a, b) = (sha256(&current.join(built))?, sha256(&baseline.join(built))?);
        ensure!(!a.is_empty() && a == b, "one commit built in two folders gave two {built}: {a} and {b}");
    }
    let loaded = "layouts/libtdbench_kernels.so-1";
    let (a, b) = (sha256(&current.join(loaded))?, sha256(&baseline.join(loaded))?);
    ensure!(!a.is_empty() && !b.is_empty() && a != b, "both trees ran sample 0 with one layout: {a}");
    Ok(())
}

/// Each gate rule on a copy of the good run, changed in one way.
fn merger_rule(kinds: &'static [&'static str], tamper: fn(&Path) -> Outcome) -> impl FnOnce() -> Outcome {
    move || {
        let good = good_run()?;
        let scratch = beside("scratch");
        copy_dir(&good, &scratch)?;
        std::fs::remove_file(scratch.join("results.json"))?;
        tamper(&scratch)?;
        let (code, results) = merge(&scratch)?;
        ensure!(code == 1, "{kinds:?}: merge exited {code}");
        for kind in kinds {
            ensure!(violation_kinds(&results).iter().any(|k| k == kind), "{kind}: got {:?}", violation_kinds(&results));
        }
        ensure!(results["verdict"] == "fail", "{kinds:?}: verdict {}", results["verdict"]);
        Ok(())
    }
}

fn sample(dir: &Path, role: &str, n: u32) -> PathBuf {
    dir.join(format!("samples/status/tl/{role}-{n}.json"))
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> Outcome {
    let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    edit(&mut value);
    std::fs::write(path, serde_json::to_string(&value)?)?;
    Ok(())
}

/// A gate rule: the violation kinds it must report, the scenario's name, how to tamper.
type Rule = (&'static [&'static str], &'static str, fn(&Path) -> Outcome);

fn merger_trials(valgrind: bool) -> Vec<Trial> {
    let cases: Vec<Rule> = vec![
        (&["missing sample"], "a_deleted_sample", |d| Ok(std::fs::remove_file(sample(d, "current", 0))?)),
        (&["unreadable sample"], "a_sample_cut_in_half", |d| {
            let path = sample(d, "current", 0);
            let text = std::fs::read(&path)?;
            Ok(std::fs::write(&path, &text[..text.len() / 2])?)
        }),
        (&["duplicate sample"], "an_extra_sample_file", |d| {
            Ok(std::fs::copy(sample(d, "current", 0), d.join("samples/status/tl/current-0-copy.json")).map(|_| ())?)
        }),
        (&["reordered sample"], "two_swapped_samples", |d| {
            let (a, b) = (sample(d, "current", 0), sample(d, "current", 1));
            let (ta, tb) = (std::fs::read(&a)?, std::fs::read(&b)?);
            std::fs::write(&a, tb)?;
            Ok(std::fs::write(&b, ta)?)
        }),
        (&["reused sample"], "a_sample_of_another_run", |d| {
            edit_json(&sample(d, "baseline", 1), |v| v["nonce"] = "0123456789abcdef".into())
        }),
        (&["metadata differs"], "another_machine", |d| {
            edit_json(&sample(d, "baseline", 0), |v| v["machine"]["cpu"] = "another CPU".into())
        }),
        (&["metadata differs"], "a_dirty_tree_against_a_clean_plan", |d| {
            edit_json(&sample(d, "current", 0), |v| v["tree"]["dirty"] = true.into())
        }),
        (&["format change"], "another_encoding", |d| {
            // Every process of the tree, counts included: it wrote other bytes, consistently.
            for file in ["current-0", "current-1", "current-count-0", "current-count-1"] {
                edit_json(&d.join(format!("samples/status/tl/{file}.json")), |v| v["operations"][0]["encoded_bytes"] = 1.0.into())?;
            }
            Ok(())
        }),
        (&["nondeterministic instructions"], "counts_that_differ_within_a_tree", |d| {
            edit_json(&d.join("samples/status/tl/baseline-count-1.json"), |v| v["operations"][1]["instructions_per_op"] = 12345.0.into())
        }),
        (&["nondeterministic allocations"], "allocations_that_differ_within_a_tree", |d| {
            edit_json(&sample(d, "baseline", 1), |v| v["operations"][1]["allocations_per_op"] = 99.0.into())
        }),
        (&["missing operation", "missing comparison"], "a_vanished_operation", |d| {
            for n in 0..2 {
                edit_json(&sample(d, "current", n), |v| {
                    v["operations"].as_array_mut().unwrap().pop();
                })?;
            }
            Ok(())
        }),
        (&["invalid value"], "nulled_stats", |d| {
            edit_json(&sample(d, "current", 0), |v| v["operations"][1]["stats"] = serde_json::Value::Null)
        }),
        (&["invalid value"], "a_halved_fastest_batch", |d| {
            edit_json(&sample(d, "current", 0), |v| {
                let fastest = v["operations"][1]["stats"]["fastest"].as_f64().unwrap();
                v["operations"][1]["stats"]["fastest"] = (fastest / 2.0).into();
            })
        }),
        (&["pairing differs"], "a_sample_from_another_process", |d| {
            edit_json(&sample(d, "current", 1), |v| v["in_process"]["pid"] = 1.into())
        }),
        (&["invalid value"], "a_zero_batch", |d| {
            edit_json(&sample(d, "current", 0), |v| v["operations"][1]["batches_ns_per_op"][0] = 0.0.into())
        }),
    ];
    // Each tampers with the A/A run, which counts first.
    cases
        .into_iter()
        .map(|(kind, name, tamper)| {
            let rule = merger_rule(kind, tamper);
            let test = move || match (valgrind, std::env::var_os("CI").is_some()) {
                (true, _) => rule().map(|()| Completion::Completed),
                (false, true) => Err("valgrind is not installed, and CI is set: .ci/run installs it".into()),
                (false, false) => Ok(Completion::ignored_with("valgrind is not installed")),
            };
            Trial::ignorable_test(format!("gate_rejects_{name}"), test)
        })
        .collect()
}

fn bad_values_are_refused_before_anything_is_built() -> Outcome {
    let repo = repo()?;
    for bad in [
        &["--rounds", "0"][..],
        &["--rounds", "99999999999"],
        &["--threshold", "-5"],
        &["--threshold", "nan"],
        &["--data", "--serializer", "x"],
        &["--measure", "wall"],
    ] {
        let started = std::time::Instant::now();
        let output = run_in(&repo, bad, &[])?;
        ensure!(output.status.code() == Some(2), "{bad:?}: exit {:?}", output.status.code());
        ensure!(started.elapsed().as_secs() < 10, "{bad:?}: took {:?}", started.elapsed());
        ensure!(stderr(&output).contains("error"), "{bad:?}: {}", stderr(&output));
    }
    ensure!(!repo.join("build/LOCK").exists(), "a refused run left a lock");
    Ok(())
}

fn unknown_names_are_refused_with_the_valid_ones() -> Outcome {
    let repo = repo()?;
    let output = run(&repo, &["--data", "stauts"])?;
    ensure!(output.status.code() == Some(2), "exit {:?}", output.status.code());
    ensure!(stderr(&output).contains("valid: all, status"), "{}", stderr(&output));
    let output = run(&repo, &["--data", "status", "--serializer", "jsn"])?;
    ensure!(output.status.code() == Some(2) && stderr(&output).contains("unknown implementation `jsn`"), "{}", stderr(&output));
    // Refused before anything is built (a typo waited 110 s for a fresh clone's first build).
    ensure!(!stderr(&output).contains("building"), "refused only after building: {}", stderr(&output));
    Ok(())
}

/// A second run is refused, with the holder's process and command, while another holds the
/// checkout (whatever its --output) or the output folder; a lock file whose holder is gone holds
/// nothing. (Two runs with their own --output once ran at once: the second rebuilt the shared
/// baseline under the first, which died in the linker.)
fn a_busy_checkout_or_output_folder_is_refused() -> Outcome {
    let repo = repo()?;
    for (lock, says) in [("target/tdbench-run.lock", "this checkout"), ("build/LOCK", "build")] {
        let path = repo.join(lock);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        let held = std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(&path)?;
        held.try_lock().map_err(|e| format!("{e:?}"))?;
        std::fs::write(&path, "process 4242: ./run.sh --data everything\n")?;
        let output = run(&repo, &["--data", "status", "--serializer", "tl", "--output", "build"]);
        drop(held);
        let output = output?;
        ensure!(output.status.code() == Some(2), "{lock}: exit {:?}", output.status.code());
        let text = stderr(&output);
        ensure!(text.contains("another run (process 4242: ./run.sh --data everything)") && text.contains(says), "{lock}: {text}");
        ensure!(!text.contains("building"), "{lock}: refused only after building: {text}");
    }
    Ok(())
}

/// An output folder typed wrong is refused before anything is built, and nothing in it is
/// touched. (`--output .` once exited 0 after deleting report/calibration.md and rewriting the
/// published report in the checkout.)
fn output_folders_that_are_not_the_run_s_are_refused() -> Outcome {
    let repo = repo()?;
    let published: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(repo.join("report"))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file())
        .map(|path| std::fs::read(&path).map(|bytes| (path, bytes)))
        .collect::<Result<_, _>>()?;
    ensure!(!published.is_empty(), "no published report to protect");
    std::fs::create_dir_all(repo.join("build-mine"))?;
    std::fs::write(repo.join("build-mine/notes.txt"), "mine")?;
    for (folder, says) in
        [(".", "is the checkout"), ("report", "which git tracks"), ("src/out", "which git tracks"), ("build-mine", "no tdbench run wrote")]
    {
        let output = run(&repo, &["--no-baseline", "--data", "status", "--serializer", "clone", "--output", folder])?;
        ensure!(output.status.code() == Some(2), "--output {folder}: exit {:?}", output.status.code());
        ensure!(stderr(&output).contains(says) && !stderr(&output).contains("building"), "--output {folder}:\n{}", stderr(&output));
    }
    let output = run(&repo, &["--no-baseline", "--data", "status", "--serializer", "clone", "--report", "report"])?;
    ensure!(output.status.code() == Some(2) && stderr(&output).contains("--report"), "--report report: {}", stderr(&output));
    for (path, bytes) in &published {
        ensure!(std::fs::read(path).ok().as_ref() == Some(bytes), "{} changed", path.display());
    }
    ensure!(std::fs::read_to_string(repo.join("build-mine/notes.txt"))? == "mine", "notes.txt changed");
    ensure!(!repo.join("src/out").exists(), "src/out was created");
    std::fs::remove_dir_all(repo.join("build-mine"))?;
    Ok(())
}

/// The processes whose command line names `needle`, from /proc.
fn processes_naming(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok().map(|c| (e.file_name(), c)))
        .map(|(pid, cmdline)| format!("{} {}", pid.to_string_lossy(), String::from_utf8_lossy(&cmdline).replace('\0', " ")))
        .filter(|line| line.contains(needle))
        .collect()
}

/// Starts a run into `folder` (a name in the repository) that counts the `messages` lane, waits
/// until a process naming `waits_for` under that folder is alive, and hands both to `act`.
fn interrupt_a_run(
    folder: &str,
    measure: &str,
    waits_for: &str,
    act: impl FnOnce(&std::process::Child, &str) -> Outcome,
) -> Result<(Output, PathBuf), Failed> {
    let repo = repo()?;
    let folder = repo.join(folder);
    let name = folder.file_name().ok_or("no folder name")?.to_string_lossy().into_owned();
    let args = [TINY, &["--data", "messages", "--measure", measure, "--output", &name]].concat();
    let mut run = Command::new(env!("CARGO_BIN_EXE_run"))
        .args(&args)
        .current_dir(&repo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let needle = folder.display().to_string();
    let started = std::time::Instant::now();
    let found = loop {
        if let Some(found) = processes_naming(&needle).into_iter().find(|p| p.contains(waits_for)) {
            break found;
        }
        if started.elapsed() > std::time::Duration::from_secs(900) || run.try_wait()?.is_some() {
            let _ = run.kill();
            return Err(format!("the run never started a process naming {waits_for}").into());
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    act(&run, &found)?;
    Ok((run.wait_with_output()?, folder))
}

/// SIGTERM or Ctrl-C while counting: the run ends with 128 + the signal and says so, leaves
/// its INCOMPLETE marker, and no process it started survives it (on a timeout, a counter was
/// killed by its PID alone and its valgrind lived on; a cancelled CI job orphaned every worker).
fn a_stopped_run_leaves_no_process_behind() -> Outcome {
    for (signal, code, says) in [("TERM", 143, "stopped by SIGTERM"), ("INT", 130, "stopped by Ctrl-C (SIGINT)")] {
        let (output, folder) = interrupt_a_run("build-stopped", "instructions", "valgrind", |run, _| {
            ensure!(Command::new("kill").args([format!("-{signal}"), run.id().to_string()]).status()?.success(), "kill failed");
            Ok(())
        })?;
        let text = String::from_utf8_lossy(&output.stderr);
        ensure!(output.status.code() == Some(code), "SIG{signal}: exit {:?}:\n{text}", output.status.code());
        ensure!(text.contains(says), "{text}");
        let left = processes_naming(&folder.display().to_string());
        ensure!(left.is_empty(), "processes of the stopped run survive: {left:?}");
        ensure!(folder.join("INCOMPLETE").exists() && !folder.join("results.json").exists(), "a stopped run looks complete");
        std::fs::remove_dir_all(&folder)?;
    }
    Ok(())
}

/// A worker killed with SIGKILL mid-run: the run fails (exit 1) naming that worker and how it
/// ended, keeps the samples so far and its INCOMPLETE marker, and writes no results.
fn a_worker_killed_mid_run_is_named_and_nothing_looks_complete() -> Outcome {
    let (output, folder) = interrupt_a_run("build-killed", "time", "/workers/", |_, found| {
        let pid = found.split_whitespace().next().ok_or("no pid")?;
        ensure!(Command::new("kill").args(["-KILL", pid]).status()?.success(), "kill failed");
        Ok(())
    })?;
    let text = String::from_utf8_lossy(&output.stderr);
    ensure!(output.status.code() == Some(1), "exit {:?}:\n{text}", output.status.code());
    ensure!(text.contains("SIGKILL") && text.contains("reproduce with"), "{text}");
    ensure!(folder.join("INCOMPLETE").exists() && !folder.join("results.json").exists(), "a failed run looks complete");
    // Neither merge nor report takes the unfinished folder for a run.
    for tool in [env!("CARGO_BIN_EXE_merge"), env!("CARGO_BIN_EXE_report")] {
        let refused = Command::new(tool).arg(&folder).output()?;
        ensure!(
            refused.status.code() == Some(2) && String::from_utf8_lossy(&refused.stderr).contains("did not finish"),
            "{tool}: {refused:?}"
        );
    }
    std::fs::remove_dir_all(&folder)?;
    Ok(())
}

/// A results.json cut short (a full disk, a copy interrupted) is refused by the report with
/// exit 2 and the file named; nothing is drawn from it.
fn a_truncated_results_file_is_refused() -> Outcome {
    let good = good_run()?;
    let copy = beside("truncated-run");
    copy_dir(&good, &copy)?;
    let results = std::fs::read(copy.join("results.json"))?;
    std::fs::write(copy.join("results.json"), &results[..results.len() / 2])?;
    let out = beside("truncated-report");
    let _ = std::fs::remove_dir_all(&out);
    let refused = Command::new(env!("CARGO_BIN_EXE_report")).arg(&copy).arg("--out").arg(&out).output()?;
    ensure!(refused.status.code() == Some(2), "exit {:?}", refused.status.code());
    ensure!(String::from_utf8_lossy(&refused.stderr).contains("results.json"), "{refused:?}");
    ensure!(!out.join("README.md").exists(), "a report was drawn from half a results file");
    Ok(())
}

/// A full disk under the output folder (a 256 KiB tmpfs): the run fails with the system's
/// reason, writes no results, and leaves the published report as it was. Needs root to mount,
/// so it reports as ignored where mounting is not allowed.
fn a_full_disk_fails_the_run_and_loses_nothing() -> Result<Completion, Failed> {
    let repo = repo()?;
    let disk = beside("full-disk");
    std::fs::create_dir_all(&disk)?;
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"]).arg(&disk).output()?;
    if !mounted.status.success() {
        return Ok(Completion::ignored_with("cannot mount a tmpfs here (it needs root)"));
    }
    let published = std::fs::read(repo.join("report/README.md"))?;
    let output = run(
        &repo,
        &["--no-baseline", "--data", "status", "--serializer", "clone", "--measure", "time", "--output", &disk.display().to_string()],
    );
    let unmounted = Command::new("umount").arg(&disk).status();
    let output = output?;
    ensure!(unmounted?.success(), "cannot unmount {}", disk.display());
    let text = stderr(&output);
    ensure!(matches!(output.status.code(), Some(1 | 2)), "exit {:?}:\n{text}", output.status.code());
    ensure!(text.contains("No space left on device"), "{text}");
    ensure!(std::fs::read(repo.join("report/README.md"))? == published, "the published report changed");
    Ok(Completion::Completed)
}

fn without_valgrind_counting_is_refused() -> Outcome {
    let repo = repo()?;
    let tools = beside("no-valgrind-path");
    std::fs::create_dir_all(&tools)?;
    for tool in ["git", "cargo", "rustc", "cc"] {
        if let Some(found) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).map(|d| d.join(tool)).find(|p| p.exists())
        {
            let _ = std::os::unix::fs::symlink(found, tools.join(tool));
        }
    }
    let path = tools.display().to_string();
    // Counting only, and the default (counts first, then time): both need it.
    for extra in [&["--measure", "instructions"][..], &[]] {
        let output = run_in(&repo, &[&["--data", "status"], extra].concat(), &[("PATH", &path)])?;
        ensure!(output.status.code() == Some(2), "{extra:?}: exit {:?}", output.status.code());
        ensure!(stderr(&output).contains("needs valgrind") && stderr(&output).contains("--measure time"), "{}", stderr(&output));
    }
    std::fs::remove_dir_all(&tools)?;
    Ok(())
}

fn instruction_counts_agree_in_an_a_a_run_and_catch_two_percent() -> Outcome {
    let repo = repo()?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--measure", "instructions"])?;
    ensure!(output.status.code() == Some(0), "A/A under --measure instructions failed");
    let (_, results) = merge(&repo.join("build"))?;
    let counts: Vec<&serde_json::Value> =
        results["comparisons"].as_array().unwrap().iter().filter(|c| c["metric"] == "instructions").collect();
    ensure!(counts.len() == 2, "encode and decode counted: {counts:?}");
    ensure!(counts.iter().all(|c| c["change"] == 0.0 && c["baseline"].as_f64().unwrap_or(0.0) > 0.0), "{counts:?}");

    // Work the decode does not need, about 3% of it: two words kept alive, 10 instructions
    // against the 327 a `status` decode counted at 3f7f8b4. (A loop over the payload's length
    // sized it before; when the decode got cheaper it came to 8.8%, outside the window below.)
    commit_before_tl_read(&repo, "        std::hint::black_box([bytes.len(); 2]);\n", "more work in tl decode")?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--measure", "instructions", "--baseline", "HEAD~1"])?;
    ensure!(output.status.code() == Some(1), "exit {:?}", output.status.code());
    let (_, results) = merge(&repo.join("build"))?;
    ensure!(violation_kinds(&results) == ["instruction regression"], "{:?}", violation_kinds(&results));
    let v = &results["violations"][0];
    ensure!(
        (v["lane"].as_str(), v["implementation"].as_str(), v["operation"].as_str()) == (Some("status"), Some("tl"), Some("decode")),
        "{v}"
    );
    let change = results["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "instructions" && c["operation"] == "decode")
        .and_then(|c| c["change"].as_f64())
        .unwrap_or(0.0);
    ensure!(change > 0.01 && change < 0.05, "the added work is {:.2}%", change * 100.0);
    Ok(())
}

/// A committed change to one codec: with one codegen unit, every other codec's counts stay
/// exactly as they were (with cargo's default 16, an edit to tl.rs moved msgpack encode's
/// count by 18%), so only the changed decode is timed in full.
fn a_change_to_one_codec_leaves_every_other_codec_s_counts_alone() -> Outcome {
    let repo = repo()?;
    tdbench_scripts::plant::apply(&repo, "tl", Operation::Decode, 2.0)?;
    git(&repo, &["commit", "-qam", "plant: tl decode 2% slower"])?;
    let output = run(&repo, &["--data", "status,message", "--measure", "instructions", "--threshold", "100", "--baseline", "HEAD~1"])?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    let (_, results) = merge(&repo.join("build"))?;
    let counts: Vec<&serde_json::Value> =
        results["comparisons"].as_array().unwrap().iter().filter(|c| c["metric"] == "instructions").collect();
    ensure!(counts.len() >= 2 * 20, "{} counted comparisons", counts.len());
    // Unchanged: every function of the program counted the same; the C library's memcpy and
    // memcmp, which count by where their operands lie, may move the total by a hair.
    // json-sonic encode is the one documented exception (docs/calibration.md): sonic-rs copies a
    // short string's tail to the stack when a page boundary is near it, and the constants it
    // writes move with any change to the binary. Its code is the same; its count may move, and
    // then the gate times it. Whether it moves here depends on the binary's layout (on `message`
    // it did in CI at 99c00b5, not before), so either verdict is right for it. By how much: a
    // few copies, about 27 instructions each (one was 1.9% of `status`'s 1,419 at 7b38404,
    // where `message` moves by 0.1-0.2%): within half a percent, or 64 instructions per op.
    for c in &counts {
        let (lane, implementation, operation) = (&c["lane"], &c["implementation"], &c["operation"]);
        let planted = implementation == "tl" && operation == "decode";
        let change = c["change"].as_f64().unwrap_or(1.0).abs();
        if implementation == "json-sonic" && operation == "encode" {
            let moved = (c["current"].as_f64().unwrap_or(f64::MAX) - c["baseline"].as_f64().unwrap_or(0.0)).abs();
            // Bound first: `ensure!` negates its condition, which clippy refuses on floats.
            let within = change <= 0.005 || moved <= 64.0;
            ensure!(
                within,
                "{lane}/{implementation}/{operation} counted {change} ({moved} per op): more than sonic-rs's page-boundary copies"
            );
            continue;
        }
        ensure!((c["verdict"] == "unchanged") != planted, "{lane}/{implementation}/{operation}: {}", c["verdict"]);
        ensure!(planted || change <= 0.001, "{lane}/{implementation}/{operation} counted {change}");
    }
    Ok(())
}

/// The same change under the default, counts first: the changed decode is the one comparison
/// timed at the threshold; a round is not enough to gate it, which `--ci` fails with exit 3,
/// listing it first.
fn a_changed_comparison_the_run_cannot_gate_fails_ci_with_exit_3() -> Outcome {
    let repo = repo()?;
    tdbench_scripts::plant::apply(&repo, "tl", Operation::Decode, 2.0)?;
    git(&repo, &["commit", "-qam", "plant: tl decode 2% slower"])?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl,json", "--baseline", "HEAD~1"])?;
    ensure!(output.status.code() == Some(3), "exit {:?}:\n{}", output.status.code(), stderr(&output));
    let summary = String::from_utf8_lossy(&output.stdout).to_string();
    ensure!(summary.contains("1 of 4 comparisons NOT decided (listed first)"), "{summary}");
    let first_row = summary.lines().find(|l| l.starts_with("status ")).unwrap_or_default();
    ensure!(first_row.contains("tl") && first_row.contains("decode latency") && first_row.contains("not-gated"), "{summary}");
    let (_, results) = merge(&repo.join("build"))?;
    for c in results["comparisons"].as_array().unwrap().iter().filter(|c| c["metric"] == "latency") {
        let planted = c["implementation"] == "tl" && c["operation"] == "decode";
        ensure!((c["class"] == "changed") == planted, "{c}");
    }
    ensure!(!repo.join("build/INCOMPLETE").exists() && repo.join("build/report/README.md").exists(), "no report drawn");
    Ok(())
}

fn one_more_allocation_fails_the_gate() -> Outcome {
    let repo = repo()?;
    commit_before_tl_read(&repo, "        std::hint::black_box(Box::new(0u64));\n", "allocate once more in tl decode")?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl", "--baseline", "HEAD~1"])?;
    ensure!(output.status.code() == Some(1), "exit {:?}", output.status.code());
    let (_, results) = merge(&repo.join("build"))?;
    let found = results["violations"].as_array().unwrap().iter().find(|v| v["kind"] == "allocation regression").cloned();
    let v = found.ok_or("no allocation regression")?;
    ensure!(
        (v["lane"].as_str(), v["implementation"].as_str(), v["operation"].as_str()) == (Some("status"), Some("tl"), Some("decode")),
        "{v}"
    );
    ensure!(String::from_utf8_lossy(&output.stdout).contains("violation: allocation regression: status/tl/decode"), "summary");
    // A commit that means it (`.ci/run` passes its Perf-Regression-Accepted trailer): accepted.
    let accepted = run(&repo, &["--data", "status", "--serializer", "tl", "--baseline", "HEAD~1", "--accept-regressions", "one box more"])?;
    ensure!(accepted.status.code() == Some(0), "exit {:?}", accepted.status.code());
    let said = String::from_utf8_lossy(&accepted.stdout).to_string();
    ensure!(said.contains("regressions accepted (") && said.contains("of them): one box more"), "not said:\n{said}");
    Ok(())
}

fn a_crashed_worker_is_named_with_its_panic_message() -> Outcome {
    let repo = repo()?;
    let bincode = repo.join("src/codecs/bincode.rs");
    let original = std::fs::read_to_string(&bincode)?;
    let changed = original.replace(
        "        let base = config::standard();",
        "        let base = config::standard();\n        if bytes.len() < 64 { panic!(\"planted: the real reason\"); }",
    );
    ensure!(changed != original, "the anchor in src/codecs/bincode.rs moved");
    std::fs::write(&bincode, changed)?;
    // Accepting regressions does not accept a crash.
    let output = run_in(
        &repo,
        &[TINY, &["--data", "status", "--serializer", "bincode", "--accept-regressions", "slower on purpose"]].concat(),
        &[("RUST_BACKTRACE", "1")],
    );
    std::fs::write(&bincode, original)?;
    let output = output?;
    ensure!(output.status.code() == Some(1), "exit {:?}", output.status.code());
    let text = stderr(&output);
    // The counter meets it first: it validates the lane with every implementation.
    ensure!(text.contains("counter status") && text.contains("reproduce with"), "{text}");
    let stderr_part = text.split("--- its stderr ---").nth(1).unwrap_or_default();
    ensure!(
        stderr_part.trim_start().lines().nth(1).is_some_and(|l| l.contains("planted: the real reason")),
        "the panic message is not first:\n{text}"
    );
    let build = repo.join("build");
    ensure!(build.join("INCOMPLETE").exists() && !build.join("results.json").exists(), "a crashed run looks complete");
    Ok(())
}

fn a_current_tree_that_does_not_compile_is_named() -> Outcome {
    let repo = repo()?;
    let tl = repo.join("src/codecs/tl.rs");
    let original = std::fs::read_to_string(&tl)?;
    std::fs::write(&tl, format!("{original}\nfn broken( {{\n"))?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl"]);
    std::fs::write(&tl, original)?;
    let output = output?;
    ensure!(output.status.code() == Some(2), "exit {:?}", output.status.code());
    ensure!(stderr(&output).contains("the current tree") && stderr(&output).contains("does not compile"), "{}", stderr(&output));
    Ok(())
}

fn a_dirty_baseline_worktree_is_refused_and_left_untouched() -> Outcome {
    good_run()?;
    let repo = repo()?;
    let readme = repo.join("baseline/tree/README.md");
    let mut text = std::fs::read_to_string(&readme)?;
    text.push_str("\nlocal edit\n");
    std::fs::write(&readme, &text)?;
    let output = run(&repo, &["--data", "status", "--serializer", "tl"]);
    let left = std::fs::read_to_string(&readme)?;
    git(&repo.join("baseline/tree"), &["checkout", "-q", "--", "README.md"])?;
    let output = output?;
    ensure!(output.status.code() == Some(2), "exit {:?}", output.status.code());
    ensure!(stderr(&output).contains("tracked changes"), "{}", stderr(&output));
    ensure!(left == text, "the baseline worktree was changed");
    Ok(())
}

fn publishing_is_explicit() -> Outcome {
    let repo = repo()?;
    let published = repo.join("report/README.md");
    let before = std::fs::read_to_string(&published)?;
    let output = run(&repo, &["--no-baseline", "--data", "status", "--serializer", "clone", "--publish", "--output", "build-publish"])?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    let after = std::fs::read_to_string(&published)?;
    ensure!(after != before && after.contains("--publish"), "--publish did not write report/");
    let results = std::fs::metadata(repo.join("report/results.json"))?.len();
    ensure!(results < 2_000_000, "published results.json is {results} bytes");
    Ok(())
}

/// `--in-app` writes its results and section under the output folder and leaves `report/`
/// alone; with `--publish` the section reaches the published README.
fn the_in_app_measurement_publishes_only_when_asked() -> Outcome {
    let repo = repo()?;
    // The published report may already carry a section from an earlier full run: the test
    // asks that a run without --publish leaves report/ byte for byte as it found it.
    let published = ["README.md", "in-app.json", "in-app.md"].map(|name| repo.join("report").join(name));
    let before = published.each_ref().map(|path| std::fs::read(path).ok());
    let output = run_in(&repo, &["--in-app", "--serializer", "json,tl", "--ci", "--output", "build-in-app"], &[])?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    let folder = repo.join("build-in-app/in-app");
    let merged: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(folder.join("in-app.json"))?)?;
    let rows = merged["hosts"][0]["rows"].as_array().map_or(0, Vec::len);
    ensure!(rows == 2, "in-app.json has {rows} rows, not json's and tl's");
    ensure!(std::fs::read_to_string(folder.join("in-app.md"))?.contains("## In the app"), "in-app.md has no section");
    for (path, before) in published.iter().zip(&before) {
        ensure!(std::fs::read(path).ok() == *before, "--in-app without --publish changed {}", path.display());
    }

    let output = run_in(&repo, &["--in-app", "--serializer", "json,tl", "--ci", "--publish", "--output", "build-in-app"], &[])?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    let written = std::fs::read(&published[1]).ok();
    let measured = std::fs::read(folder.join("in-app.json"))?;
    let section = std::fs::read_to_string(&published[0])?.contains("## In the app");
    for (path, before) in published.iter().zip(&before) {
        match before {
            Some(bytes) => std::fs::write(path, bytes)?,
            None => drop(std::fs::remove_file(path)),
        }
    }
    ensure!(written == Some(measured), "--in-app --publish did not copy this run's in-app.json into report/");
    ensure!(section, "the published README has no section In the app");
    Ok(())
}

/// Appends `member` to the number map's line for `owner` with that line's next number (what
/// `grow-proto-numbers` does), or adds the line.
fn grow_number_map(map: &str, owner: &str, member: &str) -> String {
    let mut found = false;
    let mut lines: Vec<String> = map
        .lines()
        .map(|line| {
            if line.split_whitespace().next() != Some(owner) {
                return line.to_string();
            }
            found = true;
            let next = line.split_whitespace().skip(1).filter_map(|w| w.split_once('=')?.1.parse::<u32>().ok()).max().unwrap_or(0) + 1;
            format!("{line} {member}={next}")
        })
        .collect();
    if !found {
        lines.push(format!("{owner} {member}=1"));
    }
    lines.join("\n") + "\n"
}

/// A change that upgrades the schema: a constructor the baseline does not declare (TDLib
/// 1.8.66's `updateOwnedGramCount`) and a corpus line of it in the `mix` lane. The baseline's
/// workers cannot load that line, and a worker that cannot load its corpus measured none of its
/// lanes; now both trees measure the lines both schemas declare alike, the summary names the
/// line left out, and on otherwise identical code the run passes.
fn a_newer_schema_than_the_baseline_s_compares_the_common_payloads() -> Outcome {
    let repo = repo()?;
    let schema = repo.join("models/schema/td_api.tl");
    std::fs::write(&schema, std::fs::read_to_string(&schema)? + "updateOwnedGramCount gram_amount:int53 = Update;\n")?;
    let numbers = repo.join("models/proto/numbers.txt");
    let mut map = std::fs::read_to_string(&numbers)?;
    for (owner, member) in [("Object", "updateOwnedGramCount"), ("Update", "updateOwnedGramCount"), ("updateOwnedGramCount", "gram_amount")]
    {
        map = grow_number_map(&map, owner, member);
    }
    std::fs::write(&numbers, map)?;
    std::fs::write(repo.join("corpus/schema-upgrade-mix.jsonl"), "{\"@type\":\"updateOwnedGramCount\",\"gram_amount\":5}\n")?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-qm", "upgrade the schema"])?;
    let output = run(&repo, &["--data", "mix", "--serializer", "tl", "--measure", "instructions", "--baseline", "HEAD~1"])?;
    ensure!(output.status.code() == Some(0), "exit {:?}", output.status.code());
    let summary = std::fs::read_to_string(repo.join("build/summary.md"))?;
    ensure!(summary.contains("corpus/schema-upgrade-mix.jsonl:1 (updateOwnedGramCount)"), "the summary does not name the line:\n{summary}");
    ensure!(
        summary.contains("1 corpus line(s)"),
        "only that line is left out (types neither schema declares are skipped alike):\n{summary}"
    );
    let (_, results) = merge(&repo.join("build"))?;
    let counts = results["comparisons"].as_array().map_or(0, |c| c.iter().filter(|c| c["metric"] == "instructions").count());
    ensure!(counts == 2, "tl's encode and decode of mix compared by counts: {counts}");
    Ok(())
}

fn tdjson() -> Option<PathBuf> {
    let path = std::env::var_os("TDJSON").map(PathBuf::from).unwrap_or_else(|| source().join(".cache/tdjson/libtdjson.so"));
    path.exists().then_some(path)
}

fn measure_both_times_tdlib_and_counts_the_rest() -> Outcome {
    let library = tdjson().ok_or("no libtdjson")?;
    let repo = repo()?;
    let library = library.display().to_string();
    let args = [TINY, &["--data", "string-1k", "--serializer", "tl,tdlib-json", "--measure", "both", "--instruction-cycles", "1"]].concat();
    let output = run_in(&repo, &args, &[("TDJSON", &library)])?;
    ensure!(output.status.code() == Some(0), "exit {:?}:\n{}", output.status.code(), stderr(&output));
    let (_, results) = merge(&repo.join("build"))?;
    let metrics = |implementation: &str, metric: &str| {
        results["comparisons"].as_array().unwrap().iter().filter(|c| c["implementation"] == implementation && c["metric"] == metric).count()
    };
    ensure!(metrics("tdlib-json", "latency") == 2 && metrics("tdlib-json", "instructions") == 0, "TDLib: {results}");
    ensure!(metrics("tl", "latency") == 2 && metrics("tl", "instructions") == 2, "tl");
    Ok(())
}

/// pip pointed at a registry that cannot be reached, with no local wheels or cache to fall back on.
const UNREACHABLE_REGISTRY: &[(&str, &str)] = &[
    ("PIP_INDEX_URL", "http://127.0.0.1:9/simple"),
    ("PIP_FIND_LINKS", ""),
    ("PIP_NO_CACHE_DIR", "1"),
    ("PIP_RETRIES", "0"),
    ("PIP_TIMEOUT", "5"),
];

/// Without libtdjson and without a registry, a run of a TDLib lane goes on without the round
/// trips and says so in its summary and results; `--no-tdlib` does the same without trying;
/// asking for a round trip by name is refused with the reason.
fn tdlib_left_out_says_why() -> Outcome {
    let repo = repo()?;
    let cache = repo.join(".cache");
    let _ = std::fs::remove_dir_all(&cache);
    let lane = ["--data", "bytes-64k", "--serializer", "all"];
    for (extra, env, why) in [(&[][..], UNREACHABLE_REGISTRY, "could not fetch"), (&["--no-tdlib"][..], &[][..], "--no-tdlib")] {
        let output = run_in(&repo, &[TINY, &lane, extra].concat(), env)?;
        ensure!(output.status.code() == Some(0), "{extra:?}: exit {:?}:\n{}", output.status.code(), stderr(&output));
        let summary = String::from_utf8_lossy(&output.stdout).to_string();
        ensure!(summary.contains("TDLib round trips") && summary.contains(why), "{extra:?}: the summary does not say why:\n{summary}");
        let (_, results) = merge(&repo.join("build"))?;
        let left_out = results["provenance"]["left_out"].to_string();
        ensure!(left_out.contains(why), "{extra:?}: results say {left_out}");
        let tdlib =
            results["samples"].as_array().unwrap().iter().filter(|s| s["implementation"].as_str().unwrap().starts_with("tdlib")).count();
        ensure!(tdlib == 0, "{extra:?}: {tdlib} TDLib samples");
        ensure!(!cache.join("tdjson/libtdjson.so").exists(), "{extra:?}: a library appeared");
    }
    let output = run_in(&repo, &[TINY, &["--data", "bytes-64k", "--serializer", "tdlib-json", "--no-tdlib"]].concat(), &[])?;
    ensure!(output.status.code() == Some(2) && stderr(&output).contains("--no-tdlib"), "{}", stderr(&output));
    Ok(())
}

/// On a clean clone with the registry reachable, a TDLib lane runs the round trips with no
/// other command: the run fetches libtdjson itself and says what it fetched.
fn tdlib_is_fetched_when_absent() -> Outcome {
    let repo = repo()?;
    let _ = std::fs::remove_dir_all(repo.join(".cache"));
    let output = run(&repo, &["--data", "bytes-64k", "--serializer", "tl,tdlib-json"])?;
    ensure!(output.status.code() == Some(0), "exit {:?}:\n{}", output.status.code(), stderr(&output));
    ensure!(stderr(&output).contains("libtdjson: fetched") && stderr(&output).contains("python-telegram==2.0.0"), "{}", stderr(&output));
    let (_, results) = merge(&repo.join("build"))?;
    let tdlib: Vec<&serde_json::Value> =
        results["samples"].as_array().unwrap().iter().filter(|s| s["implementation"] == "tdlib-json").collect();
    ensure!(tdlib.len() >= 4, "{} tdlib-json samples (2 per tree, and any confirmation)", tdlib.len());
    // Both trees' libraries open TDLib round trips: each pair's two clients share one process.
    ensure!(tdlib.iter().all(|s| s["in_process"]["pid"].is_u64()), "TDLib round trips in processes of their own");
    Ok(())
}

/// Whether a tool a scenario needs is here; without it the scenario is ignored with `reason`,
/// unless `CI` is set, where its absence is a failure.
fn needs(present: bool, reason: &'static str, test: fn() -> Outcome) -> impl FnOnce() -> Result<Completion, Failed> {
    move || {
        if present {
            test().map(|()| Completion::Completed)
        } else if std::env::var_os("CI").is_some() {
            Err(format!("{reason}, and CI is set: .ci/run installs it").into())
        } else {
            Ok(Completion::ignored_with(reason))
        }
    }
}

fn main() {
    let mut args = Arguments::from_args();
    // One repository, one build of each tree: the scenarios run one after another.
    args.test_threads = Some(1);
    let valgrind = Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    let tdlib = tdjson().is_some();
    // A run counts first by default: without valgrind it is refused, so these are ignored.
    let counting = |name: &str, test: fn() -> Outcome| Trial::ignorable_test(name, needs(valgrind, "valgrind is not installed", test));
    let mut trials = vec![
        Trial::test("bad_values_are_refused_before_anything_is_built", bad_values_are_refused_before_anything_is_built),
        counting("a_a_run_passes_with_every_artifact", a_a_run_passes_with_every_artifact),
        counting("both_trees_build_byte_identical_workers", both_trees_build_byte_identical_workers),
        counting(
            "a_baseline_without_the_kernel_library_falls_back_to_process_pairs",
            a_baseline_without_the_kernel_library_falls_back_to_process_pairs,
        ),
        Trial::test("undecided_comparisons_get_further_looks", undecided_comparisons_get_further_looks),
    ];
    trials.extend(merger_trials(valgrind));
    trials.extend([
        counting("unknown_names_are_refused_with_the_valid_ones", unknown_names_are_refused_with_the_valid_ones),
        Trial::test("a_busy_checkout_or_output_folder_is_refused", a_busy_checkout_or_output_folder_is_refused),
        Trial::test("output_folders_that_are_not_the_run_s_are_refused", output_folders_that_are_not_the_run_s_are_refused),
        counting("a_stopped_run_leaves_no_process_behind", a_stopped_run_leaves_no_process_behind),
        Trial::test(
            "a_worker_killed_mid_run_is_named_and_nothing_looks_complete",
            a_worker_killed_mid_run_is_named_and_nothing_looks_complete,
        ),
        counting("a_truncated_results_file_is_refused", a_truncated_results_file_is_refused),
        Trial::ignorable_test("a_full_disk_fails_the_run_and_loses_nothing", a_full_disk_fails_the_run_and_loses_nothing),
        Trial::test("without_valgrind_counting_is_refused", without_valgrind_counting_is_refused),
        counting(
            "instruction_counts_agree_in_an_a_a_run_and_catch_two_percent",
            instruction_counts_agree_in_an_a_a_run_and_catch_two_percent,
        ),
        counting(
            "a_change_to_one_codec_leaves_every_other_codec_s_counts_alone",
            a_change_to_one_codec_leaves_every_other_codec_s_counts_alone,
        ),
        counting(
            "a_changed_comparison_the_run_cannot_gate_fails_ci_with_exit_3",
            a_changed_comparison_the_run_cannot_gate_fails_ci_with_exit_3,
        ),
        counting("one_more_allocation_fails_the_gate", one_more_allocation_fails_the_gate),
        counting("a_crashed_worker_is_named_with_its_panic_message", a_crashed_worker_is_named_with_its_panic_message),
        counting("a_current_tree_that_does_not_compile_is_named", a_current_tree_that_does_not_compile_is_named),
        counting("a_dirty_baseline_worktree_is_refused_and_left_untouched", a_dirty_baseline_worktree_is_refused_and_left_untouched),
        counting("publishing_is_explicit", publishing_is_explicit),
        Trial::test("the_in_app_measurement_publishes_only_when_asked", the_in_app_measurement_publishes_only_when_asked),
        counting("tdlib_left_out_says_why", tdlib_left_out_says_why),
        counting("tdlib_is_fetched_when_absent", tdlib_is_fetched_when_absent),
        // Last but one: its schema change rebuilds the current tree's models, and the scenario
        // after it rebuilds them back.
        counting(
            "a_newer_schema_than_the_baseline_s_compares_the_common_payloads",
            a_newer_schema_than_the_baseline_s_compares_the_common_payloads,
        ),
        Trial::ignorable_test(
            "measure_both_times_tdlib_and_counts_the_rest",
            needs(
                tdlib && valgrind,
                "libtdjson or valgrind is not installed (bash scripts/install-tdjson.sh)",
                measure_both_times_tdlib_and_counts_the_rest,
            ),
        ),
    ]);
    let conclusion = libtest_mimic::run(&args, trials);
    for dir in [
        std::env::temp_dir().join(format!("tdbench-e2e-{}", std::process::id())),
        beside("good-run"),
        beside("scratch"),
        beside("no-valgrind-path"),
    ] {
        let _ = std::fs::remove_dir_all(dir);
    }
    conclusion.exit();
}
