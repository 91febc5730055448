//! libtdjson for the TDLib round trips: found, fetched now, or left out with the reason — the
//! run says which rung it reached.
//!
//! A run that measures a lane with TDLib round trips and finds no library fetches it with
//! `scripts/install-tdjson.sh` (PyPI python-telegram 2.0.0, version-checked, cached in the
//! ignored `.cache/tdjson/`), unless `--no-tdlib` or `TDJSON` says otherwise. A registry that
//! cannot be reached leaves the round trips out, and the plan records why, so the summary and
//! the report say so.

use std::path::Path;
use std::process::Command;

use tdbench_contract::{Catalog, ImplementationKind, Measure};

use super::build::{Built, listed};
use super::failure::{Failure, environment};
use crate::cli::{self, Options};

/// Whether the run would measure a TDLib round trip: one is selected (by name or as all) on a
/// lane it measures, timed.
fn wanted(catalog: &Catalog, options: &Options) -> bool {
    let lanes = cli::requested(&options.lanes);
    let names = cli::requested(&options.implementations);
    options.measure != Measure::Instructions
        && catalog.implementations.iter().filter(|i| i.kind == ImplementationKind::Tdlib).any(|i| {
            names.as_ref().is_none_or(|n| n.contains(&i.name)) && lanes.as_ref().is_none_or(|l| i.lanes.iter().any(|lane| l.contains(lane)))
        })
}

/// Fetches libtdjson into the current tree when the run needs it and it is absent; the current
/// tree's catalog is asked again afterwards. `Err` only when the fetch cannot even start.
pub fn ensure(root: &Path, current: &mut Built, options: &Options) -> Result<(), Failure> {
    let absent = current.catalog.tdlib.as_ref().is_some_and(|t| !t.available);
    if !absent || options.no_tdlib || std::env::var_os("TDJSON").is_some() || !wanted(&current.catalog, options) {
        return Ok(());
    }
    eprintln!("libtdjson: absent; fetching it for the TDLib round trips (--no-tdlib skips them)…");
    let output = Command::new("bash")
        .arg(root.join("scripts/install-tdjson.sh"))
        .current_dir(root)
        .output()
        .map_err(|e| environment(format!("cannot run scripts/install-tdjson.sh: {e}")))?;
    let said = |bytes: &[u8]| String::from_utf8_lossy(bytes).lines().last().unwrap_or_default().to_string();
    if output.status.success() {
        eprintln!("{}", said(&output.stdout));
        current.catalog = listed(&current.target.join("release/worker"), Path::new(&current.info.path))?;
    } else if let Some(tdlib) = current.catalog.tdlib.as_mut() {
        // The reason the selection reports and the plan keeps.
        tdlib.how_to_enable = format!("{} (`bash scripts/install-tdjson.sh` tries again)", said(&output.stderr));
    }
    Ok(())
}
