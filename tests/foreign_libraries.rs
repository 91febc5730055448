//! Libraries from elsewhere are refused with a clear line, never a crash or a silent
//! measurement. A kernel library that breaks the C ABI's promises is refused, never a crash of
//! the harness. Each case is a small C library compiled here: one that reported the
//! right ABI version and returned NULL from open without an error passed `--check-library` and
//! killed `paired` with a segmentation fault (exit 139).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tdbench_contract::library;

fn symbol(name: &[u8]) -> &str {
    std::str::from_utf8(name.strip_suffix(b"\0").unwrap()).unwrap()
}

/// Compiles `body` (C) into a shared library named `name`, with the ABI's version function
/// answering `version`.
fn library(name: &str, version: u32, body: &str) -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(format!("tdbench-bad-library-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join(format!("{name}.c"));
    let built = dir.join(format!("{name}.so"));
    let text = format!("#include <stddef.h>\nunsigned int {}(void) {{ return {version}; }}\n{body}\n", symbol(library::SYMBOL_VERSION));
    std::fs::write(&source, text).unwrap();
    let compiled = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&built).arg(&source).status().ok()?;
    assert!(compiled.success(), "cc failed on {}", source.display());
    Some(built)
}

/// Every symbol a run calls; `open` as given.
fn all_but_open(open: &str) -> String {
    format!(
        "{open}\n\
         char *{}(void *s) {{ return NULL; }}\n\
         void {}(void *s, unsigned int k, unsigned long long n) {{}}\n\
         void {}(void *s, unsigned int k, unsigned long long n, unsigned long long *c) {{}}\n\
         void {}(char *t) {{}}\n",
        symbol(library::SYMBOL_DESCRIBE),
        symbol(library::SYMBOL_RUN),
        symbol(library::SYMBOL_COUNT_ALLOCATIONS),
        symbol(library::SYMBOL_FREE),
    )
}

fn check(path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paired")).arg("--check-library").arg(path).output().unwrap()
}

fn paired_with(baseline: &Path) -> Output {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    Command::new(env!("CARGO_BIN_EXE_paired"))
        .args(["--implementation", "tl", "--lane", "status", "--duration-ms", "5", "--warmup-ms", "1", "--allocation-iterations", "5"])
        .arg("--corpus")
        .arg(root.join("corpus"))
        .arg("--tree")
        .arg(&root)
        .arg("--baseline-tree")
        .arg(&root)
        .arg("--baseline-library")
        .arg(baseline)
        .arg("--current-library")
        .arg(baseline)
        .output()
        .unwrap()
}

#[test]
fn libraries_that_break_the_abi_are_refused_not_crashed_on() {
    let open = symbol(library::SYMBOL_OPEN);
    let silent_null = format!("void *{open}(const char *o, char **e) {{ return NULL; }}");
    let Some(silent) = library("silent-null", library::VERSION, &all_but_open(&silent_null)) else {
        eprintln!("no C compiler: skipped");
        return;
    };
    let checked = check(&silent);
    assert_eq!(checked.status.code(), Some(1), "{checked:?}");
    assert!(String::from_utf8_lossy(&checked.stderr).contains("without saying why"), "{checked:?}");
    // Started anyway, the harness names the library and exits 1: no signal.
    let ran = paired_with(&silent);
    assert_eq!(ran.status.code(), Some(1), "{ran:?}");
    assert!(String::from_utf8_lossy(&ran.stderr).contains("gave no reason"), "{ran:?}");

    // Another ABI version, and a missing symbol.
    let other = library("other-abi", library::VERSION + 1, &all_but_open(&silent_null)).unwrap();
    assert!(String::from_utf8_lossy(&check(&other).stderr).contains(&format!("speaks ABI {}", library::VERSION + 1)));
    let describe = symbol(library::SYMBOL_DESCRIBE);
    let without_describe = all_but_open(&silent_null).lines().filter(|l| !l.contains(describe)).collect::<Vec<_>>().join("\n");
    let missing = library("missing-describe", library::VERSION, &without_describe).unwrap();
    let checked = check(&missing);
    assert_eq!(checked.status.code(), Some(1), "{checked:?}");
    assert!(String::from_utf8_lossy(&checked.stderr).contains(describe), "{checked:?}");

    // One that opens whatever it is asked: no check of what it opens.
    let eager = format!("static int s; void *{open}(const char *o, char **e) {{ return &s; }}");
    let eager = library("eager", library::VERSION, &all_but_open(&eager)).unwrap();
    assert!(String::from_utf8_lossy(&check(&eager).stderr).contains("for no lane at all"));
    // It describes nothing: the harness says so instead of reading NULL.
    let ran = paired_with(&eager);
    assert_eq!(ran.status.code(), Some(1), "{ran:?}");
    assert!(String::from_utf8_lossy(&ran.stderr).contains("did not describe it"), "{ran:?}");
}

/// A libtdjson of another TDLib version is refused for round trips, unless asked for on purpose:
/// it only produced a note, and round trips measured another TDLib against this schema.
#[test]
fn a_libtdjson_of_another_version_is_refused_unless_asked_for() {
    let Some(fake) = library(
        "libtdjson-1.8.60",
        0,
        "int td_create_client_id(void) { return 1; }\n\
         void td_send(int c, const char *r) {}\n\
         const char *td_receive(double t) { return NULL; }\n\
         const char *td_execute(const char *r) { return \"{\\\"@type\\\":\\\"optionValueString\\\",\\\"value\\\":\\\"1.8.60\\\"}\"; }",
    ) else {
        eprintln!("no C compiler: skipped");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let worker = |any: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_worker"));
        command
            .args(["--implementation", "tdlib-json", "--lane", "string-1k", "--duration-ms", "5", "--warmup-ms", "1"])
            .arg("--corpus")
            .arg(root.join("corpus"))
            .env("TDJSON", &fake)
            .env_remove(tdbench::tdlib::ANY_TDLIB_VERSION);
        if any {
            command.env(tdbench::tdlib::ANY_TDLIB_VERSION, "1");
        }
        // This fake never answers a request: past the version check the worker would wait for
        // TDLib's answers, so it is stopped after a few seconds and its stderr read.
        let mut child = command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() && started.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        child.wait_with_output().unwrap()
    };
    let refused = worker(false);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("libtdjson is TDLib 1.8.60") && said.contains(tdbench::tdlib::ANY_TDLIB_VERSION), "{said}");
    // Asked for: a note, and past the version check.
    let asked = worker(true);
    let said = String::from_utf8_lossy(&asked.stderr);
    assert!(said.contains("(TDBENCH_ANY_TDLIB_VERSION is set)") && !said.contains("would measure another TDLib"), "{said}");
}
