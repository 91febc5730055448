//! What a run measures, decided before anything is measured: the lanes and implementations
//! asked for (checked against the current tree's catalog, with what is left out and why), the
//! trees each implementation runs in per lane, the trees that count, and how latency is paired.

use std::collections::BTreeMap;
use std::process::Command;

use tdbench_contract::{Catalog, ImplementationInfo, Measure, Role};

use super::build::Trees;
use super::failure::{Failure, environment};
use crate::cli::{self, Options};
use crate::plan::{self, Pairing};

/// The trees the run counts: both when it counts and both have a counter; the current tree
/// alone when the baseline predates counting (every comparison is then timed in full, and the
/// run says why); none under `--measure time`.
pub(super) fn counted_roles(trees: &Trees, options: &Options, left_out: &mut Vec<String>) -> Vec<Role> {
    if !options.measure.counts() {
        return Vec::new();
    }
    let mut roles = Vec::new();
    for role in trees.roles() {
        match &trees.get(role).counter {
            Ok(()) => roles.push(role),
            Err(why) => {
                let note = format!("counts left out: {why}; every comparison is timed in full");
                eprintln!("{note}");
                left_out.push(note);
            }
        }
    }
    roles
}

/// A lane's entries as its counters count them: not TDLib round trips (timed only), and in the
/// trees that count.
pub(super) fn countable_entries(entries: &[plan::Entry], roles: &[Role], trees: &Trees) -> Vec<plan::Entry> {
    entries
        .iter()
        .filter(|e| trees.current.catalog.implementation(&e.implementation).is_some_and(|i| !i.timed_only()))
        .map(|e| plan::Entry {
            implementation: e.implementation.clone(),
            roles: e.roles.iter().copied().filter(|r| roles.contains(r)).collect(),
        })
        .filter(|e| !e.roles.is_empty())
        .collect()
}

/// The lanes and implementations asked for, checked against what the current worker knows,
/// and what was left out and why. TDLib round trips need libtdjson and are timed only: without
/// the library, under `--no-tdlib`, or when only instructions are counted, they are left out
/// with a line saying so; asked for by name, the run is refused instead, saying what would make
/// it possible.
pub(super) fn selection(catalog: &Catalog, options: &Options) -> Result<Selection, Failure> {
    // `all` is the catalog's lanes; an opt-in lane (the start-up stream) runs when named.
    let lanes = match cli::requested(&options.lanes) {
        None => catalog.lanes.clone(),
        asked => {
            let valid: Vec<String> = catalog.lanes.iter().chain(&catalog.opt_in_lanes).cloned().collect();
            cli::select(asked, &valid, "lane", "--data").map_err(environment)?
        }
    };
    let asked = cli::requested(&options.implementations);
    let mut implementations = cli::select(asked.clone(), &catalog.names(), "implementation", "--serializer").map_err(environment)?;
    let timed_only = |name: &String| catalog.implementation(name).is_some_and(ImplementationInfo::timed_only);
    let why_not = match &catalog.tdlib {
        _ if options.no_tdlib => Some("TDLib round trips left out: --no-tdlib".to_string()),
        Some(tdlib) if !tdlib.available => Some(format!("TDLib round trips cannot run: {}", tdlib.how_to_enable)),
        None => Some("TDLib round trips cannot run: this worker does not say where libtdjson is".into()),
        Some(_) if options.measure == Measure::Instructions => {
            Some("TDLib round trips are timed only (their threads make instruction counts vary): left out of --measure instructions".into())
        }
        Some(_) => None,
    };
    let mut left_out = Vec::new();
    if let Some(why) = why_not {
        if asked.as_ref().is_some_and(|asked| asked.iter().any(timed_only)) {
            return Err(environment(why));
        }
        // Said only when a selected lane has round trips to leave out.
        let measured_here = |name: &String| catalog.implementation(name).is_some_and(|i| i.lanes.iter().any(|l| lanes.contains(l)));
        if implementations.iter().any(|name| timed_only(name) && measured_here(name)) {
            eprintln!("{why}");
            left_out.push(why);
        }
        implementations.retain(|name| !timed_only(name));
    }
    Ok(Selection { lanes, implementations, left_out })
}

/// What a run measures, and what it left out that it would otherwise (one line each, why).
pub(super) struct Selection {
    pub(super) lanes: Vec<String>,
    pub(super) implementations: Vec<String>,
    pub(super) left_out: Vec<String>,
}

/// Which implementations time both trees in one process: every one, when the run is timed
/// against a baseline and both trees build a kernel library this harness can load — TDLib
/// round trips too when both libraries can open them. Otherwise the note says why the run (or
/// the round trips) falls back to process pairs.
pub(super) fn pairing(trees: &Trees, options: &Options, implementations: &[String]) -> Pairing {
    let Some(baseline) = trees.baseline.as_ref() else { return Pairing::default() };
    if !options.measure.times() {
        return Pairing::default();
    }
    let processes = |why: String| Pairing { in_process: Vec::new(), note: format!("latency pairs: processes of their own ({why})") };
    if options.process_pairs {
        return processes("--process-pairs".into());
    }
    for built in [&trees.current, baseline] {
        if let Err(why) = &built.kernels {
            return processes(why.clone());
        }
    }
    let mut tdlib_in_both = true;
    for built in [baseline, &trees.current] {
        let library = built.target.join("release").join(tdbench_contract::library::FILE_NAME);
        match Command::new(trees.harness()).arg("--check-library").arg(&library).output() {
            Ok(o) if o.status.success() => {
                tdlib_in_both &= String::from_utf8_lossy(&o.stdout).lines().any(|l| l == tdbench_contract::library::CAN_OPEN_TDLIB)
            }
            Ok(o) => return processes(String::from_utf8_lossy(&o.stderr).trim().to_string()),
            Err(e) => return processes(format!("cannot start the harness: {e}")),
        }
    }
    let in_process: Vec<String> = implementations
        .iter()
        .filter(|name| trees.current.catalog.implementation(name).is_some_and(|i| tdlib_in_both || !i.timed_only()))
        .filter(|name| baseline.catalog.implementation(name).is_some())
        .cloned()
        .collect();
    let alone = implementations.len() - in_process.len();
    let why_alone = if tdlib_in_both {
        "new in this tree"
    } else {
        "TDLib round trips, which the baseline's kernel library cannot open, or new in this tree"
    };
    let note = format!(
        "latency pairs: both trees' kernels in one process per sample, batches alternating, for {} implementation(s){}",
        in_process.len(),
        if alone > 0 { format!("; {alone} ({why_alone}) in processes of their own") } else { String::new() }
    );
    Pairing { in_process, note }
}

/// Per lane, the implementations that measure it and the trees each runs in: both, or the
/// current tree only for an implementation the baseline's worker does not list (or lists
/// without the lane: a lane newer than the baseline).
pub(super) fn entries(trees: &Trees, lanes: &[String], implementations: &[String]) -> BTreeMap<String, Vec<plan::Entry>> {
    let in_baseline = |name: &String| trees.baseline.as_ref().is_some_and(|b| b.catalog.implementation(name).is_some());
    let lane_in_baseline = |name: &String, lane: &String| {
        trees.baseline.as_ref().is_some_and(|b| b.catalog.implementation(name).is_some_and(|i| i.lanes.contains(lane)))
    };
    if let Some(baseline) = &trees.baseline {
        let new: Vec<&str> = lanes
            .iter()
            .filter(|l| !baseline.catalog.lanes.contains(l) && !baseline.catalog.opt_in_lanes.contains(l))
            .map(String::as_str)
            .collect();
        if !new.is_empty() {
            eprintln!("lanes not in the baseline tree, measured in the current tree only (shown, not compared): {}", new.join(", "));
        }
    }
    let new: Vec<&str> = implementations.iter().filter(|i| trees.baseline.is_some() && !in_baseline(i)).map(String::as_str).collect();
    if !new.is_empty() {
        eprintln!("not in the baseline tree, measured in the current tree only (shown, not compared): {}", new.join(", "));
    }
    lanes
        .iter()
        .map(|lane| {
            let measured = implementations
                .iter()
                .filter(|name| trees.current.catalog.implementation(name).is_some_and(|i| i.lanes.contains(lane)))
                .map(|name| plan::Entry {
                    implementation: name.clone(),
                    roles: if lane_in_baseline(name, lane) { vec![Role::Baseline, Role::Current] } else { vec![Role::Current] },
                })
                .collect();
            (lane.clone(), measured)
        })
        .collect()
}
