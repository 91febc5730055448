//! A run's report, drawn from a merged `results.json` alone (so a saved run can be drawn
//! again): `README.md`, `throughput.png`, `size.png` and the published `results.json`
//! ([`crate::files::published_json`]).
//!
//! Figures are the current tree's: per lane, implementation and operation, the median over
//! worker processes of each process's fastest batch. They are ratios from one run on one
//! machine; the report says so.

pub mod chart;
pub mod in_app;
mod markdown;
pub mod skew;

use std::collections::BTreeMap;
use std::path::Path;

use tdbench_contract::{Compressed, ImplementationKind, Machine, Metric, Operation, Role};

use crate::results::{Class, Key, Results};

pub use chart::{draw, draw_sizes};
pub use markdown::{gate, render};

/// One implementation's figures for one operation on one lane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    pub ns_per_op: f64,
    pub encoded_bytes: f64,
    pub allocations_per_op: f64,
    pub bytes_per_op: f64,
    /// Under `--measure instructions` or `both`.
    pub instructions_per_op: Option<f64>,
    /// An encode's compressed sizes (absent from results older than them).
    pub compressed: Option<Compressed>,
    pub samples: usize,
}

/// The current tree's figures, indexed by (lane, implementation, operation).
pub struct Figures<'a> {
    pub results: &'a Results,
    pub lanes: Vec<String>,
    /// Codecs and floors: what the per-lane tables and the chart show.
    pub implementations: Vec<String>,
    /// TDLib round trips: their own table, with the empty call as floor.
    pub tdlib_implementations: Vec<String>,
    cells: BTreeMap<Key, Cell>,
    /// Each process's fastest batch, by sample index.
    by_sample: BTreeMap<Key, BTreeMap<u32, f64>>,
}

/// A ratio to `json` with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// Bootstrap resamples behind every interval: enough that the 2.5% and 97.5% points move by
/// well under the figures' printed precision between seeds.
const RESAMPLES: usize = 2000;

impl<'a> Figures<'a> {
    pub fn of(results: &'a Results) -> Figures<'a> {
        let mut fastest: BTreeMap<Key, (Vec<f64>, Cell)> = BTreeMap::new();
        let mut by_sample: BTreeMap<Key, BTreeMap<u32, f64>> = BTreeMap::new();
        for s in results.samples.iter().filter(|s| s.role == Role::Current) {
            for op in &s.operations {
                let key = Key::new(&s.lane, &s.implementation, op.operation);
                let entry = fastest.entry(key.clone()).or_insert_with(|| {
                    (
                        Vec::new(),
                        Cell {
                            ns_per_op: 0.0,
                            encoded_bytes: op.encoded_bytes,
                            allocations_per_op: op.allocations_per_op,
                            bytes_per_op: op.bytes_per_op,
                            instructions_per_op: op.instructions_per_op,
                            compressed: op.compressed,
                            samples: 0,
                        },
                    )
                });
                // A count gives the cell its instructions; a timed process its time.
                if s.counted {
                    entry.1.instructions_per_op = entry.1.instructions_per_op.or(op.instructions_per_op);
                    continue;
                }
                let figure = op.stats.map_or(f64::NAN, |stats| stats.fastest);
                entry.0.push(figure);
                by_sample.entry(key).or_default().insert(s.sample, figure);
            }
        }
        let cells = fastest
            .into_iter()
            .map(|(key, (values, mut cell))| {
                cell.samples = values.len();
                // The median process's; counted only (`--measure instructions`): no ns/op.
                cell.ns_per_op = crate::median::upper_median(values).unwrap_or(f64::NAN);
                (key, cell)
            })
            .collect();
        let is_tdlib = |name: &String| results.provenance.catalog.iter().any(|i| &i.name == name && i.kind == ImplementationKind::Tdlib);
        let (tdlib_implementations, implementations) = results.provenance.implementations.iter().cloned().partition(is_tdlib);
        Figures { results, lanes: results.provenance.lanes.clone(), implementations, tdlib_implementations, cells, by_sample }
    }

    pub fn cell(&self, lane: &str, implementation: &str, operation: Operation) -> Option<Cell> {
        self.cells.get(&Key::new(lane, implementation, operation)).copied()
    }

    /// Whether the catalog says `implementation` measures `operation` (floors have one each:
    /// no `n/a` for the other). An implementation missing from the catalog is assumed to.
    pub fn has_operation(&self, implementation: &str, operation: Operation) -> bool {
        self.results.provenance.catalog.iter().find(|i| i.name == implementation).is_none_or(|i| i.operations.contains(&operation))
    }

    /// Whether `implementation` is a floor that copies bytes (one of the `memcpy` floors): an
    /// encode-only floor in the catalog.
    pub fn is_copy_floor(&self, implementation: &str) -> bool {
        self.results
            .provenance
            .catalog
            .iter()
            .any(|i| i.name == implementation && i.kind == ImplementationKind::Floor && i.operations == [Operation::Encode])
    }

    /// The copy an encode is held against: the `memcpy` floor that copies exactly as many bytes
    /// as this implementation writes on `lane` (`memcpy-tl` for `tl`, `memcpy` of TDLib JSON
    /// for the TDLib JSON codecs). None when no floor copies that many: a copy of other bytes
    /// is no floor for this encoder.
    pub fn encode_floor(&self, lane: &str, implementation: &str) -> Option<Cell> {
        self.encode_floor_name(lane, implementation).and_then(|floor| self.cell(lane, floor, Operation::Encode))
    }

    /// The name of [`Figures::encode_floor`]'s floor.
    pub fn encode_floor_name(&self, lane: &str, implementation: &str) -> Option<&str> {
        let written = self.cell(lane, implementation, Operation::Encode)?.encoded_bytes;
        self.implementations
            .iter()
            .filter(|floor| self.is_copy_floor(floor))
            .find(|floor| self.cell(lane, floor, Operation::Encode).is_some_and(|copy| copy.encoded_bytes == written))
            .map(String::as_str)
    }

    /// How many times a floor's time `implementation` takes (above 1: slower than the floor),
    /// paired as [`Figures::speedup_interval`] pairs: one ratio per sample index of the first
    /// look, their median and its 95% bootstrap interval.
    pub fn floor_interval(&self, lane: &str, implementation: &str, operation: Operation, floor: &str) -> Option<Ratio> {
        self.paired_ratio(lane, operation, implementation, floor)
    }

    /// How many times faster than `json` (above 1: faster).
    pub fn speedup(&self, lane: &str, implementation: &str, operation: Operation) -> Option<f64> {
        self.speedup_interval(lane, implementation, operation).map(|r| r.estimate)
    }

    /// How many times faster than `json`, measured close together in time: json's process and
    /// this implementation's of the same sample index in the first look ran seconds apart in
    /// one pass of the balanced order, so each index gives one ratio that the machine's drift between passes
    /// does not move. The estimate is the median of those ratios; the interval a 95% bootstrap
    /// over them (seeded: the same results draw the same interval).
    pub fn speedup_interval(&self, lane: &str, implementation: &str, operation: Operation) -> Option<Ratio> {
        self.paired_ratio(lane, operation, "json", implementation)
    }

    /// `numerator`'s time over `denominator`'s, one ratio per sample index that both ran in
    /// the first look's passes (see [`Figures::speedup_interval`]), bootstrapped.
    fn paired_ratio(&self, lane: &str, operation: Operation, numerator: &str, denominator: &str) -> Option<Ratio> {
        let key = |name: &str| Key::new(lane, name, operation);
        let (above, below) = (self.by_sample.get(&key(numerator))?, self.by_sample.get(&key(denominator))?);
        // Only the first look's passes ran both side by side; a later look or a confirmation
        // ran one implementation alone. A group timed by the backstop had fewer of them.
        let passes = 2 * self.first_look_rounds(lane, numerator).min(self.first_look_rounds(lane, denominator));
        let ratios: Vec<f64> =
            above.range(..passes).filter_map(|(k, a)| below.get(k).map(|b| a / b)).filter(|r| r.is_finite() && *r > 0.0).collect();
        bootstrap(ratios)
    }

    /// Rounds of the first look at `implementation` on `lane`: the backstop's when every
    /// comparison of it was unchanged by its counts (or a floor's), the run's rounds otherwise.
    fn first_look_rounds(&self, lane: &str, implementation: &str) -> u32 {
        let settings = &self.results.provenance.settings;
        let latency = || {
            self.results.comparisons.iter().filter(|c| c.metric == Metric::Latency && c.lane == lane && c.implementation == implementation)
        };
        // Only a run that counted both trees times anything by the backstop.
        let counted = self.results.comparisons.iter().any(|c| c.metric == Metric::Instructions);
        let backstop = counted
            && settings.backstop_rounds > 0
            && latency().next().is_some()
            && latency().all(|c| matches!(c.class, Some(Class::Unchanged | Class::Reference)));
        if backstop { settings.backstop_rounds } else { settings.rounds }
    }

    /// Whether any figure has an instruction count.
    pub fn has_instructions(&self) -> bool {
        self.cells.values().any(|c| c.instructions_per_op.is_some())
    }

    /// Whether the lane's payloads are synthetic (any of them: `~` in reports).
    pub fn synthetic(&self, lane: &str) -> bool {
        self.results.samples.iter().any(|s| s.lane == lane && s.corpus.lane_synthetic_payloads > 0)
    }

    /// `~message` for a synthetic lane.
    pub fn lane_label(&self, lane: &str) -> String {
        if self.synthetic(lane) { format!("~{lane}") } else { lane.to_string() }
    }
}

/// The median of `ratios` and its 95% percentile-bootstrap interval (seeded by their number);
/// `None` for no ratios.
fn bootstrap(ratios: Vec<f64>) -> Option<Ratio> {
    if ratios.is_empty() {
        return None;
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ ratios.len() as u64;
    let mut medians: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let drawn: Vec<f64> = (0..ratios.len())
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    ratios[(rng % ratios.len() as u64) as usize]
                })
                .collect();
            crate::median::median_or_nan(drawn)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let at = |q: f64| medians[((q * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    Some(Ratio { estimate: crate::median::median_or_nan(ratios), low: at(0.025), high: at(0.975) })
}

/// Writes the report files into `dir`.
pub fn write(results: &Results, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let figures = Figures::of(results);
    // The in-app measurement (the full default run's, or `--in-app --publish`) is its own run,
    // kept beside the report: drawn from its results, so a change to how it is drawn reaches the
    // published report without a re-run. The report leads with its figures too.
    let in_app = match std::fs::read_to_string(dir.join("in-app.json")) {
        Ok(text) => {
            let run: crate::gate::in_app::InAppRun =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", dir.join("in-app.json").display()))?;
            crate::files::write_atomically(&dir.join("in-app.md"), &in_app::render(&run))?;
            Some(run)
        }
        Err(_) => None,
    };
    let mut readme = render(&figures, in_app.as_ref());
    // So is the gate's calibration (`./run.sh --calibrate --publish`), shown with its own
    // provenance.
    if let Ok(calibration) = std::fs::read_to_string(dir.join("calibration.md")) {
        readme += "\n";
        readme += &calibration_section(&calibration, results.provenance.machine.as_ref());
    }
    if let Ok(in_app) = std::fs::read_to_string(dir.join("in-app.md")) {
        readme += "\n";
        readme += &in_app;
    }
    // And the schema-skew measurement (`./run.sh --schema-skew --publish`), redrawn from its
    // results like the in-app section.
    if let Ok(text) = std::fs::read_to_string(dir.join("schema-skew.json")) {
        let run: skew::SkewRun = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", dir.join("schema-skew.json").display()))?;
        let section = skew::render(&run);
        crate::files::write_atomically(&dir.join("schema-skew.md"), &section)?;
        readme += "\n";
        readme += &section;
    }
    std::fs::write(dir.join("README.md"), readme).map_err(|e| format!("cannot write README.md: {e}"))?;
    std::fs::write(dir.join("gate.md"), gate(&figures)).map_err(|e| format!("cannot write gate.md: {e}"))?;
    draw(&figures, &dir.join("throughput.png"))?;
    draw_sizes(&figures, &dir.join("size.png"))?;
    crate::files::write_atomically(&dir.join("results.json"), &crate::files::published_json(results))
}

/// The kept calibration section. A calibration takes hours and is kept across publishes, so the
/// run above it may be on another machine: its false alarms and power are the machine's it
/// names, not this run's, and the section says so under its heading when this run's CPU is not
/// the one it names.
fn calibration_section(calibration: &str, machine: Option<&Machine>) -> String {
    let Some(machine) = machine.filter(|m| !calibration.contains(&m.cpu)) else {
        return calibration.to_string();
    };
    let warning = format!(
        "> Measured on another machine than the run above ({}): its false alarms and power are that machine's. \
         Re-measure with `./run.sh --calibrate --publish` on this one.\n\n",
        machine.cpu
    );
    match calibration.split_once("\n\n") {
        // Calibrations written before this check headed themselves "on this machine".
        Some((heading, rest)) if heading.starts_with('#') => {
            format!("{}\n\n{warning}{rest}", heading.trim_end_matches(" on this machine"))
        }
        _ => warning + calibration,
    }
}

/// Files of a published report that other steps write (the calibration, the in-app
/// measurement): a publish carries them over into the new report.
const KEPT_ACROSS_PUBLISHES: [&str; 5] = ["calibration.md", "in-app.json", "in-app.md", "schema-skew.json", "schema-skew.md"];

/// Publishes into `dir` whole: the new report is drawn by `fill` into a sibling folder that
/// starts with the files [`KEPT_ACROSS_PUBLISHES`], then swapped in by two renames (the old
/// folder aside, the new one in its place). An interrupted publish leaves the old report or
/// the new one, never a mix of both; one stopped between the renames has its old report put
/// back by the next publish.
pub fn publish(dir: &Path, fill: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let parent = dir.parent().ok_or_else(|| format!("{}: no parent folder to publish beside", dir.display()))?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let aside = |what: &str| parent.join(format!(".{name}.{what}"));
    let (staging, old) = (aside("staging"), aside("old"));
    if !dir.exists() && old.exists() {
        std::fs::rename(&old, dir).map_err(|e| format!("cannot put back {}: {e}", old.display()))?;
    }
    let _ = std::fs::remove_dir_all(&staging);
    let _ = std::fs::remove_dir_all(&old);
    std::fs::create_dir_all(&staging).map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    for kept in KEPT_ACROSS_PUBLISHES {
        if dir.join(kept).exists() {
            std::fs::copy(dir.join(kept), staging.join(kept)).map_err(|e| format!("cannot copy {kept} into {}: {e}", staging.display()))?;
        }
    }
    if let Err(e) = fill(&staging) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| format!("cannot move {} aside: {e}", dir.display()))?;
    }
    std::fs::rename(&staging, dir).map_err(|e| format!("cannot move the new report into {}: {e}", dir.display()))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{fixture, judge};
    use crate::plan::{Entry, lane_slots};
    use tdbench_contract::{ImplementationInfo, Measure, Stage};

    /// The fixture's run with two copy floors: `memcpy` copying 150 bytes a payload (as TDLib
    /// JSON would) and `memcpy-tl` copying 60, as many as `tl` writes.
    fn with_copy_floors() -> Results {
        let mut plan = fixture::plan(Measure::Time);
        let entries: Vec<Entry> = ["tl", "clone", "memcpy", "memcpy-tl"]
            .iter()
            .map(|name| Entry { implementation: name.to_string(), roles: vec![Role::Baseline, Role::Current] })
            .collect();
        for name in ["memcpy", "memcpy-tl"] {
            plan.implementations.push(name.into());
            plan.catalog.push(ImplementationInfo {
                name: name.into(),
                kind: ImplementationKind::Floor,
                lanes: vec!["status".into()],
                operations: vec![Operation::Encode],
            });
        }
        plan.slots = lane_slots("status", &entries, plan.settings.rounds, 0, Stage::Screen);
        let mut samples = fixture::samples(&plan);
        for sample in samples.iter_mut().filter(|s| s.implementation == "memcpy") {
            sample.operations[0].encoded_bytes = 150.0;
        }
        judge(&plan, samples, Vec::new())
    }

    #[test]
    fn an_encode_is_held_against_a_copy_of_as_many_bytes_as_it_writes() {
        let results = with_copy_floors();
        let figures = Figures::of(&results);
        assert!(figures.is_copy_floor("memcpy") && figures.is_copy_floor("memcpy-tl"));
        assert!(!figures.is_copy_floor("clone") && !figures.is_copy_floor("tl"));
        let floor = figures.encode_floor("status", "tl").expect("memcpy-tl copies tl's 60 bytes");
        assert_eq!(floor.encoded_bytes, 60.0);
        // Change what tl writes and no floor copies as many: no figure rather than a wrong one.
        let mut results = with_copy_floors();
        for sample in results.samples.iter_mut().filter(|s| s.implementation == "tl") {
            sample.operations[0].encoded_bytes = 61.0;
        }
        assert!(Figures::of(&results).encode_floor("status", "tl").is_none());
        // Floors have one operation each, codecs both.
        assert!(figures.has_operation("tl", Operation::Decode) && figures.has_operation("memcpy-tl", Operation::Encode));
        assert!(!figures.has_operation("memcpy-tl", Operation::Decode) && !figures.has_operation("clone", Operation::Encode));
    }

    /// A floor ratio divides each sample's time by the floor's of the same index: a known
    /// effect, planted per index, comes back as their median, inside its interval.
    #[test]
    fn a_floor_ratio_pairs_each_process_with_the_floor_s_of_the_same_index() {
        let mut results = with_copy_floors();
        // tl takes 4× memcpy-tl's time at every index but one, which is 6× (a slow process):
        // the median stays 4. Index 0 ran in a pass the machine slowed threefold for both:
        // paired, it is one more 4. The fixture's wobble by index cancels in each ratio too.
        for sample in results.samples.iter_mut().filter(|s| ["tl", "memcpy-tl"].contains(&s.implementation.as_str())) {
            let drift = if sample.sample == 0 { 3.0 } else { 1.0 };
            let factor = drift
                * if sample.implementation == "memcpy-tl" {
                    1.0
                } else if sample.sample == 1 {
                    6.0
                } else {
                    4.0
                };
            for op in sample.operations.iter_mut().filter(|o| o.operation == Operation::Encode) {
                op.batches_ns_per_op.iter_mut().for_each(|b| *b *= factor);
                op.stats = tdbench_contract::BatchStats::of(&op.batches_ns_per_op);
            }
        }
        let figures = Figures::of(&results);
        assert_eq!(figures.encode_floor_name("status", "tl"), Some("memcpy-tl"));
        let ratio = figures.floor_interval("status", "tl", Operation::Encode, "memcpy-tl").expect("both were timed");
        assert_eq!(ratio.estimate, 4.0, "{ratio:?}");
        assert!(ratio.low == 4.0 && ratio.high <= 6.0, "{ratio:?}");
        // The row shows it with its interval; the floor's own row shows 1.00× alone.
        let text = render(&figures, None);
        let row = text.lines().find(|l| l.starts_with("| tl |")).expect("tl's row");
        assert!(row.contains("| 4.00× ("), "{row}");
        let own = text.lines().find(|l| l.starts_with("| memcpy-tl |")).expect("memcpy-tl's row");
        assert!(own.contains("| 1.00× · – |"), "{own}");
    }

    /// A counted run (`--measure instructions`) has no times to divide: its floor column says
    /// so with a dash, not `NaN×`.
    #[test]
    fn a_counted_run_divides_no_times() {
        let plan = fixture::plan(Measure::Instructions);
        let results = judge(&plan, fixture::samples(&plan), Vec::new());
        let text = render(&Figures::of(&results), None);
        let row = text.lines().find(|l| l.starts_with("| tl | 60 |")).expect("tl's row");
        assert!(!text.contains("NaN"), "{row}");
        assert!(row.contains("| – · – |"), "{row}");
    }

    #[test]
    fn a_ratio_interval_holds_its_estimate_and_widens_with_the_spread() {
        assert_eq!(bootstrap(Vec::new()), None);
        let same = bootstrap(vec![3.0; 6]).unwrap();
        assert_eq!((same.estimate, same.low, same.high), (3.0, 3.0, 3.0));
        let narrow = bootstrap(vec![2.9, 3.0, 3.1, 3.0, 2.95, 3.05]).unwrap();
        let wide = bootstrap(vec![2.0, 3.0, 4.0, 3.0, 2.5, 3.5]).unwrap();
        assert_eq!(narrow.estimate, 3.0);
        for r in [narrow, wide] {
            assert!(r.low <= r.estimate && r.estimate <= r.high, "{r:?}");
        }
        assert!(wide.high - wide.low > 3.0 * (narrow.high - narrow.low), "{narrow:?} {wide:?}");
        // Seeded: the same ratios draw the same interval.
        assert_eq!(bootstrap(vec![2.0, 3.0, 4.0, 3.0, 2.5, 3.5]), Some(wide));
        // Within the range of the ratios, never beyond.
        assert!(wide.low >= 2.0 && wide.high <= 4.0);
    }

    #[test]
    fn a_publish_replaces_the_report_whole_and_keeps_what_other_steps_wrote() {
        let root = std::env::temp_dir().join(format!("tdbench-publish-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("report");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in [("README.md", "old"), ("calibration.md", "calibrated"), ("stale.png", "old chart")] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        // A fill that fails leaves the old report as it was.
        assert!(publish(&dir, |_| Err("drawing failed".into())).is_err());
        assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), "old");
        publish(&dir, |staging| std::fs::write(staging.join("README.md"), "new").map_err(|e| e.to_string())).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(dir.join("calibration.md")).unwrap(), "calibrated");
        assert!(!dir.join("stale.png").exists(), "a file the new report did not write survived");
        // Stopped between the two renames: the next publish puts the old report back first.
        std::fs::rename(&dir, root.join(".report.old")).unwrap();
        publish(&dir, |staging| {
            assert!(staging.join("calibration.md").exists(), "the old report was not put back");
            std::fs::write(staging.join("README.md"), "newer").map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), "newer");
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("report")]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_calibration_from_another_machine_says_so_under_its_heading() {
        let machine = |cpu: &str| Machine {
            cpu: cpu.into(),
            os: "os".into(),
            cores: 2,
            rustc: "rustc".into(),
            target: "x86_64".into(),
            profile: "release".into(),
        };
        let calibration = "## Gate calibration\n\nMeasured at commit `d17d85c` on AMD EPYC, 2 cores, os.\n\n### Identical code\n";
        // The same machine, or none known: the section as it was kept.
        assert_eq!(calibration_section(calibration, Some(&machine("AMD EPYC"))), calibration);
        assert_eq!(calibration_section(calibration, None), calibration);
        let other = calibration_section(calibration, Some(&machine("Intel Xeon")));
        let older =
            calibration_section(&calibration.replace("calibration\n", "calibration on this machine\n"), Some(&machine("Intel Xeon")));
        assert_eq!(older, other, "an older heading claimed this machine");
        assert!(other.starts_with("## Gate calibration\n\n> Measured on another machine than the run above (Intel Xeon)"), "{other}");
        assert!(other.ends_with("Measured at commit `d17d85c` on AMD EPYC, 2 cores, os.\n\n### Identical code\n"), "{other}");
    }
}
