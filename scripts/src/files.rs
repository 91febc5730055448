//! A merged run on disk: `results.json` (whole, atomically) and `summary.md` in the output
//! folder; the published copy a report carries ([`published_json`]); and reading either back
//! ([`read_results`]).

use std::path::Path;

use serde_json::{Value, json};
use tdbench_contract::SCHEMA_VERSION;

use crate::results::Results;

/// Writes `results.json` (beside, then renamed: never half a file) and `summary.md`.
pub fn write_run(output: &Path, results: &Results) -> Result<(), String> {
    write_atomically(&output.join("results.json"), &serde_json::to_string_pretty(results).expect("results serialize"))?;
    std::fs::write(output.join("summary.md"), crate::summary::markdown(results)).map_err(|e| format!("cannot write summary.md: {e}"))
}

/// Fields every sample shares with the run's provenance (the gate checked that they agree):
/// the published copy leaves them out of each sample and [`read_results`] puts them back.
const SHARED: [&str; 5] = ["schema_version", "nonce", "machine", "settings", "tree"];

/// What a report keeps of a run, compact: every comparison, violation and note, all provenance,
/// and each sample's figures and batch summary — not its list of batches, nor the fields it
/// shares with the provenance. The batches stay in the run's own `results.json` and sample
/// files, which a re-merge reads. A full default run's copy is 3.1 MB (at 7bca109); the whole one is
/// tens of MB.
pub fn published_json(results: &Results) -> String {
    let mut value = serde_json::to_value(results).expect("results serialize");
    for sample in value["samples"].as_array_mut().into_iter().flatten() {
        let Some(sample) = sample.as_object_mut() else { continue };
        for key in SHARED {
            sample.remove(key);
        }
        if let Some(corpus) = sample.get_mut("corpus").and_then(Value::as_object_mut) {
            corpus.remove("sha256");
        }
        for op in sample.get_mut("operations").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(op) = op.as_object_mut() {
                op.remove("batches_ns_per_op");
            }
        }
    }
    serde_json::to_string(&value).expect("results serialize")
}

/// Reads a run's `results.json`, whole or published: the fields a published copy left out of
/// each sample come back from the provenance.
pub fn read_results(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut value: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let provenance = value["provenance"].clone();
    for sample in value["samples"].as_array_mut().into_iter().flatten() {
        let Some(sample) = sample.as_object_mut() else { continue };
        if sample.contains_key("machine") {
            continue;
        }
        let tree =
            if sample.get("role").and_then(Value::as_str) == Some("baseline") { &provenance["baseline"] } else { &provenance["current"] };
        sample.insert("schema_version".into(), json!(SCHEMA_VERSION));
        sample.insert("nonce".into(), provenance["nonce"].clone());
        sample.insert("machine".into(), provenance["machine"].clone());
        sample.insert("settings".into(), provenance["settings"].clone());
        sample.insert("tree".into(), json!({ "commit": tree["commit"], "dirty": tree["dirty"] }));
        if let Some(corpus) = sample.get_mut("corpus").and_then(Value::as_object_mut) {
            corpus.insert("sha256".into(), provenance["corpus_sha256"].clone());
        }
    }
    serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `path` whole or not at all: beside it, synced to disk, then renamed over it. Without
/// the sync a crash soon after the rename can leave the new name on an empty file.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let partial = path.with_extension("partial");
    let written = (|| {
        let mut file = std::fs::File::create(&partial)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&partial, path)
    })();
    written.map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The marker a run leaves in its output folder until its results are written.
pub const UNFINISHED: &str = "INCOMPLETE";

/// Refuses a folder whose run has not finished: its samples are a part of a run, and merging or
/// drawing them would publish figures no finished run gave.
pub fn refuse_unfinished(dir: &Path) -> Result<(), String> {
    if dir.join(UNFINISHED).exists() {
        return Err(format!(
            "{} holds a run that did not finish (its {UNFINISHED} marker is there): its samples are not a run's results; \
             run it again (or delete the marker to look at what it has, on purpose)",
            dir.display()
        ));
    }
    Ok(())
}
