//! A merged run on disk: `results.json` (whole, atomically) and `summary.md` in the output
//! folder; the published copy a report carries ([`published_json`], [`crate::published`]); and
//! reading either back ([`read_results`]).

use std::path::Path;

use serde_json::{Value, json};
use tdbench_contract::SCHEMA_VERSION;

use crate::results::Results;

/// Writes `results.json` (beside, then renamed: never half a file) and `summary.md`.
pub fn write_run(output: &Path, results: &Results) -> Result<(), String> {
    write_atomically(&output.join("results.json"), &serde_json::to_string_pretty(results).expect("results serialize"))?;
    std::fs::write(output.join("summary.md"), crate::summary::markdown(results)).map_err(|e| format!("cannot write summary.md: {e}"))
}

/// What a report keeps of a run, compact and typed ([`crate::published`]): every comparison,
/// violation, note and profile, all provenance, and each sample's figures — not its batches,
/// which stay in the run's own `results.json` and sample files, which a re-merge reads.
pub fn published_json(results: &Results) -> String {
    serde_json::to_string(&crate::published::to_published(results)).expect("results serialize")
}

/// Fields each sample of a published copy older than [`crate::published`] left out, because
/// they equal the run's provenance.
const SHARED: [&str; 5] = ["schema_version", "nonce", "machine", "settings", "tree"];

/// Reads a run's `results.json`, whole or published (as published now, or by older versions,
/// which kept one object per sample and left out the fields it shares with the provenance).
pub fn read_results(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut value: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if value.get("sample_runs").is_some() {
        let published = serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))?;
        return crate::published::from_published(published).map_err(|e| format!("{}: {e}", path.display()));
    }
    let provenance = value["provenance"].clone();
    for sample in value["samples"].as_array_mut().into_iter().flatten() {
        let Some(sample) = sample.as_object_mut() else { continue };
        if SHARED.iter().all(|key| sample.contains_key(*key)) {
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
