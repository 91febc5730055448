//! Writing a merged run to disk: `results.json` (whole, atomically) and `summary.md` in the
//! output folder, and the slim `results.json` a report carries.

use std::path::Path;

use crate::results::Results;

/// Writes `results.json` (beside, then renamed: never half a file) and `summary.md`.
pub fn write_run(output: &Path, results: &Results) -> Result<(), String> {
    write_atomically(&output.join("results.json"), &serde_json::to_string_pretty(results).expect("results serialize"))?;
    std::fs::write(output.join("summary.md"), crate::summary::markdown(results)).map_err(|e| format!("cannot write summary.md: {e}"))
}

/// What a report keeps of a run: everything but each process's list of batches (their
/// summary, every comparison, allocation and instruction figure and all provenance stay). The
/// batches stay in the run's own `results.json` and sample files, which a re-merge reads.
pub fn slim(results: &Results) -> Results {
    let mut slim = results.clone();
    for sample in &mut slim.samples {
        for op in &mut sample.operations {
            op.batches_ns_per_op = Vec::new();
        }
    }
    slim
}

pub fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text)
        .and_then(|_| std::fs::rename(&partial, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
