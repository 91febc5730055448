//! Instruction counts: the worker runs itself again under `valgrind --tool=callgrind`, with
//! collection switched on only inside `counted_loop`, and reads the total from callgrind's
//! output file. Counts are exact and repeatable for the same binary, input and environment,
//! whatever else the machine is doing — the signal a 1% gate can hold on a noisy runner.

use std::path::PathBuf;
use std::process::Command;

use tdbench_contract::{Job, Operation};

/// Whether valgrind can be run here; the error says how to get it.
pub fn check_valgrind() -> Result<(), String> {
    match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("instruction counts need valgrind on PATH (Debian: apt-get install valgrind)".into()),
    }
}

/// Total instructions executed in `counted_loop` for one operation of the job.
pub fn count(job: &Job, operation: Operation) -> Result<u64, String> {
    let out_file = std::env::temp_dir().join(format!("tdbench-callgrind-{}-{operation}.out", std::process::id()));
    let text = counted_run(job, operation, &out_file);
    let _ = std::fs::remove_file(&out_file);
    parse_total(&text?).ok_or_else(|| "callgrind's output has no totals line".into())
}

/// Runs one operation of the job's counted loop under callgrind and keeps its output file, per
/// function, at `out_file` (`worker --profile`): where the instructions go.
pub fn profile(job: &Job, operation: Operation, out_file: &std::path::Path) -> Result<(), String> {
    counted_run(job, operation, out_file).map(|_| ())
}

/// The counted loop under callgrind, its output file written to `out_file` and read back.
fn counted_run(job: &Job, operation: Operation, out_file: &std::path::Path) -> Result<String, String> {
    check_valgrind()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the worker's own binary: {e}"))?;
    let s = &job.settings;
    // The child runs from `/`, so a relative corpus folder must be made absolute first.
    let corpus = std::path::absolute(&job.corpus_dir).map_err(|e| format!("corpus folder {}: {e}", job.corpus_dir.display()))?;
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg("--toggle-collect=*counted_loop*")
        .arg(&exe)
        .args(["--implementation", &job.implementation, "--lane", &job.lane, "--operation", operation.as_str()])
        .arg("--corpus")
        .arg(&corpus)
        .args(["--instruction-cycles", &s.instruction_cycles.to_string(), "--count-instructions-inner"])
        // The same environment and working folder for every count. Under valgrind they move
        // where the heap lands, and valgrind's own memcpy takes more or fewer instructions by
        // alignment — seen here: the same binary counted 1048.75 instructions per protobuf
        // status decode run from one tree and 1060.75 from the other, up to 1.1% apart on
        // other lanes, enough for a false alarm in an A/A run.
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir("/")
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let text = std::fs::read_to_string(out_file);
    if !output.status.success() {
        return Err(format!(
            "the counted run under valgrind failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .rev()
                .take(10)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    text.map_err(|e| format!("callgrind wrote no output file {}: {e}", PathBuf::from(out_file).display()))
}

/// The `totals:` (or `summary:`) line of a callgrind output file: instructions, the first event.
pub fn parse_total(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn totals_line() {
        assert_eq!(super::parse_total("events: Ir\nfn=x\n1 5\ntotals: 12345\n"), Some(12345));
        assert_eq!(super::parse_total("summary: 77\n"), Some(77));
        assert_eq!(super::parse_total("events: Ir\n"), None);
    }
}
