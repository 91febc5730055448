//! Profiles the decodes the report's "Where the time goes" shows ([`crate::profile::PROFILED`])
//! under callgrind, in the current tree (`worker --profile`), after the measured samples: raw
//! callgrind files under `profiles/`, which the merge reads. A profile that cannot be taken is
//! said and left out; it never fails a run.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Session;
use crate::plan::Plan;

pub fn run(session: &Session, plan: &Plan, output: &Path) {
    let wanted: Vec<&(&str, &str)> = crate::profile::PROFILED
        .iter()
        .filter(|(implementation, lane)| plan.lanes.iter().any(|l| l == lane) && plan.implementations.iter().any(|i| i == implementation))
        .collect();
    if wanted.is_empty() || plan.calibration.is_some() {
        return;
    }
    if !Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("profiles for the report left out: valgrind is not installed");
        return;
    }
    eprintln!("profiling {} decode(s) under callgrind for the report…", wanted.len());
    let worker = session.trees.current.target.join("release/worker");
    let tree = PathBuf::from(&session.trees.current.info.path);
    for (implementation, lane) in wanted {
        let out = crate::profile::file(output, lane, implementation);
        let made = out.parent().map(std::fs::create_dir_all);
        let status = Command::new(&worker)
            .args(["--implementation", implementation, "--lane", lane, "--operation", "decode"])
            .args(["--instruction-cycles", &plan.settings.worker.instruction_cycles.to_string()])
            .arg("--corpus")
            .arg(&session.corpus)
            .arg("--profile")
            .arg(&out)
            .current_dir(&tree)
            .status();
        if !matches!((made, status), (Some(Ok(())), Ok(s)) if s.success()) {
            eprintln!("profile of {implementation} decode on {lane} left out: `worker --profile` failed");
            let _ = std::fs::remove_file(&out);
        }
    }
}
