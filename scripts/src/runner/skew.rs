//! `./run.sh --schema-skew`: the current tree's `schema-skew` binary (crate `tdbench-skew`), one
//! fresh process per format, merged into `schema-skew.json` and the report section
//! `schema-skew.md`. Formats against two schema releases in one tree: no baseline, no gate.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tdbench_contract::skew::SkewResult;

use super::children;
use super::failure::{Failure, environment};
use super::progress::Progress;
use crate::cli::{self, Options};
use crate::report::skew::SkewRun;

/// The formats of the skew table, protobuf under both numberings.
pub const FORMATS: &[&str] = &["json", "json-td", "msgpack", "bincode", "tl", "protobuf-by-position", "protobuf-stable"];

/// A process longer than this is stuck (each takes seconds per lane).
const TIME_LIMIT: Duration = Duration::from_secs(900);

/// Measures; with `--publish`, also writes the section into `published` (the README shows it).
pub fn run(root: &Path, output: &Path, options: &Options, command: Vec<String>, published: Option<PathBuf>) -> Result<(), Failure> {
    let lanes: Vec<String> =
        cli::requested(&options.lanes).unwrap_or_else(|| tdbench_contract::names::LANES.iter().map(|l| l.to_string()).collect());
    if let Some(bad) = lanes.iter().find(|l| !tdbench_contract::names::LANES.contains(&l.as_str())) {
        return Err(environment(format!(
            "--schema-skew reads corpus lanes; `{bad}` is not one of: {}",
            tdbench_contract::names::LANES.join(", ")
        )));
    }
    let target = root.join("target/tdbench-worker");
    eprintln!("building the current tree's schema-skew binary (measurement build)…");
    let status = super::build::cargo(
        root,
        &target,
        crate::plan::Build::Measurement,
        &["build", "--release", "-p", "tdbench-skew", "--bin", "schema-skew"],
        options.ci,
    )?;
    if !status.success() {
        return Err(environment("the schema-skew binary does not build (cargo's errors above)"));
    }
    let binary = target.join("release/schema-skew");
    let folder = output.join("schema-skew");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(folder.join("samples")).map_err(|e| environment(format!("cannot create {}: {e}", folder.display())))?;

    let mut progress = Progress::new(FORMATS.len(), options.ci);
    let mut results = Vec::new();
    for format in FORMATS {
        let file = folder.join("samples").join(format!("{format}.json"));
        let started = Instant::now();
        let text = children::run_for_result(
            Command::new(&binary).args(["--format", format, "--data", &lanes.join(","), "--output"]).arg(&file).current_dir(root),
            TIME_LIMIT,
            &format!("schema-skew {format}"),
            &file,
        )?;
        let result: SkewResult = serde_json::from_str(&text)
            .map_err(|e| Failure { code: 1, message: format!("{}: not a schema-skew result: {e}", file.display()) })?;
        results.push(result);
        progress.step("schema-skew", started.elapsed());
    }
    progress.finish();

    let sh = xshell::Shell::new().map_err(|e| environment(e.to_string()))?;
    let tree = crate::git::current_tree(&sh, root).map_err(environment)?;
    let run = SkewRun { command, commit: tree.commit, dirty: tree.dirty, machine: crate::report::skew::machine(), results };
    let json = serde_json::to_string_pretty(&run).expect("a skew run serializes");
    let markdown = crate::report::skew::render(&run);
    for (name, text) in [("schema-skew.json", &json), ("schema-skew.md", &markdown)] {
        crate::files::write_atomically(&folder.join(name), text).map_err(environment)?;
    }
    print!("{markdown}");
    println!("schema-skew: {}", folder.join("schema-skew.md").display());
    if let Some(report) = published {
        let results = crate::files::read_results(&report.join("results.json")).map_err(environment)?;
        crate::report::publish(&report, |staging| {
            for name in ["schema-skew.json", "schema-skew.md"] {
                std::fs::copy(folder.join(name), staging.join(name)).map_err(|e| format!("cannot copy {name}: {e}"))?;
            }
            crate::report::write(&results, staging)
        })
        .map_err(environment)?;
        println!("published: {} (and its section in README.md)", report.join("schema-skew.md").display());
    }
    Ok(())
}
