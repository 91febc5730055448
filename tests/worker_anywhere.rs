//! A built worker reads nothing from where it was built: copied to another folder and started
//! there, it looks for libtdjson in that folder's `.cache/` and measures the corpus it is given.
//! (A path compiled in once made a clone use another clone's libtdjson, and made two builds of
//! one commit different binaries.)

use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use tdbench_contract::{Catalog, WorkerResult};

/// Starts the copied worker, retrying while Linux refuses it as "Text file busy": the test
/// threads beside this one spawn processes, and a child forked while `fs::copy` held the copy
/// open for writing keeps that descriptor until its own exec, a moment later. (CI failed once
/// on exactly that race; a retry on that one error hides nothing else.)
fn output_of(command: &mut Command) -> Output {
    for _ in 0..200 {
        match command.output() {
            Err(e) if e.kind() == ErrorKind::ExecutableFileBusy => std::thread::sleep(Duration::from_millis(10)),
            done => return done.unwrap(),
        }
    }
    panic!("the copied worker stayed busy for 2 s: {command:?}");
}

#[test]
fn a_worker_copied_elsewhere_resolves_its_defaults_there() {
    let elsewhere = std::env::temp_dir().join(format!("tdbench-worker-anywhere-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&elsewhere);
    std::fs::create_dir_all(&elsewhere).unwrap();
    let worker = elsewhere.join("worker");
    std::fs::copy(env!("CARGO_BIN_EXE_worker"), &worker).unwrap();

    let list = output_of(Command::new(&worker).arg("--list").current_dir(&elsewhere).env_remove("TDJSON"));
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    let catalog = Catalog::parse(&list.stdout).unwrap();
    let tdlib = catalog.tdlib.expect("the worker says where libtdjson would be");
    let canonical = elsewhere.canonicalize().unwrap();
    assert!(
        PathBuf::from(&tdlib.library).starts_with(&elsewhere) || PathBuf::from(&tdlib.library).starts_with(&canonical),
        "libtdjson looked for at {}, not in the folder the worker runs in",
        tdlib.library
    );
    assert!(!tdlib.available);

    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    // How many payloads each lane of a corpus has: what a run on a copy of the corpus asks.
    let sizes = output_of(Command::new(&worker).arg("--lane-sizes").arg(&corpus).current_dir(&elsewhere));
    assert!(sizes.status.success(), "{}", String::from_utf8_lossy(&sizes.stderr));
    let sizes: std::collections::BTreeMap<String, usize> = serde_json::from_slice(&sizes.stdout).unwrap();
    assert!(sizes["status"] > 0 && sizes["mix"] > 0 && !sizes.contains_key("startup"), "{sizes:?}");
    let run = output_of(
        Command::new(&worker)
            .args(["--implementation", "tl", "--lane", "status", "--duration-ms", "5", "--warmup-ms", "1", "--allocation-iterations", "5"])
            .arg("--corpus")
            .arg(&corpus)
            .current_dir(&elsewhere),
    );
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let result: WorkerResult = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((result.implementation.as_str(), result.lane.as_str(), result.operations.len()), ("tl", "status", 2));

    // Without --corpus it looks for `corpus/` where it runs, and says so.
    let lost = output_of(Command::new(&worker).args(["--implementation", "tl", "--lane", "status"]).current_dir(&elsewhere));
    assert_eq!(lost.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&lost.stderr).contains("corpus"), "{}", String::from_utf8_lossy(&lost.stderr));
    std::fs::remove_dir_all(&elsewhere).unwrap();
}

/// A worker records its tree's state as the runner hands it over and never re-reads the
/// checkout: started in a folder that is no git tree at all (where reading it would say
/// "unknown" and dirty), it reports the commit and state the variable gives. (It re-read
/// `git status` once per sample, so an editor's swap file or a commit made while a run went on
/// failed every later sample as "metadata differs".)
#[test]
fn a_worker_records_the_tree_state_it_is_given_not_the_checkout() {
    let elsewhere = std::env::temp_dir().join(format!("tdbench-worker-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&elsewhere);
    std::fs::create_dir_all(&elsewhere).unwrap();
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let run = |state: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_worker"));
        command
            .args(["--implementation", "tl", "--lane", "status", "--duration-ms", "5", "--warmup-ms", "1", "--allocation-iterations", "5"])
            .args(["--role", "baseline", "--tree"])
            .arg(&elsewhere)
            .arg("--corpus")
            .arg(&corpus)
            .current_dir(&elsewhere)
            .env_remove("TDBENCH_BASELINE_TREE")
            .env_remove("TDBENCH_CURRENT_TREE");
        if let Some(state) = state {
            command.env("TDBENCH_BASELINE_TREE", state).env("TDBENCH_CURRENT_TREE", "0000 dirty");
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let result: WorkerResult = serde_json::from_slice(&output.stdout).unwrap();
        (result.tree.commit, result.tree.dirty)
    };
    assert_eq!(run(Some("c0ffee1234 clean")), ("c0ffee1234".to_string(), false));
    // Without the variable (a worker started by hand), it reads the folder it was given.
    assert_eq!(run(None), ("unknown".to_string(), true));
    std::fs::remove_dir_all(&elsewhere).unwrap();
}

/// The names the runner checks before anything is built (`tdbench_contract::names`) are the
/// worker's catalog: a lane or implementation added to one and not the other fails here.
#[test]
fn the_names_the_runner_checks_first_are_the_worker_s_catalog() {
    use tdbench_contract::names;
    let catalog = tdbench::worker::catalog();
    assert_eq!(catalog.lanes, names::LANES);
    assert_eq!(catalog.opt_in_lanes, names::OPT_IN_LANES);
    assert_eq!(catalog.names(), names::IMPLEMENTATIONS);
    let codecs: Vec<&str> = tdbench::registry::CODECS.iter().map(|c| c.name()).collect();
    assert_eq!(codecs, names::CODECS);
}
