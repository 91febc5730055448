//! A built worker reads nothing from where it was built: copied to another folder and started
//! there, it looks for libtdjson in that folder's `.cache/` and measures the corpus it is given.
//! (A path compiled in once made a clone use another clone's libtdjson, and made two builds of
//! one commit different binaries.)

use std::path::PathBuf;
use std::process::Command;

use tdbench_contract::{Catalog, WorkerResult};

#[test]
fn a_worker_copied_elsewhere_resolves_its_defaults_there() {
    let elsewhere = std::env::temp_dir().join(format!("tdbench-worker-anywhere-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&elsewhere);
    std::fs::create_dir_all(&elsewhere).unwrap();
    let worker = elsewhere.join("worker");
    std::fs::copy(env!("CARGO_BIN_EXE_worker"), &worker).unwrap();

    let list = Command::new(&worker).arg("--list").current_dir(&elsewhere).env_remove("TDJSON").output().unwrap();
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
    let run = Command::new(&worker)
        .args(["--implementation", "tl", "--lane", "status", "--duration-ms", "5", "--warmup-ms", "1", "--allocation-iterations", "5"])
        .arg("--corpus")
        .arg(&corpus)
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let result: WorkerResult = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!((result.implementation.as_str(), result.lane.as_str(), result.operations.len()), ("tl", "status", 2));

    // Without --corpus it looks for `corpus/` where it runs, and says so.
    let lost = Command::new(&worker).args(["--implementation", "tl", "--lane", "status"]).current_dir(&elsewhere).output().unwrap();
    assert_eq!(lost.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&lost.stderr).contains("corpus"), "{}", String::from_utf8_lossy(&lost.stderr));
    std::fs::remove_dir_all(&elsewhere).unwrap();
}
