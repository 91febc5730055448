//! A run's report, drawn from a merged `results.json` alone (so a saved run can be drawn
//! again): `README.md`, `throughput.png`, `size.png` and the published `results.json`
//! ([`crate::files::published_json`]).
//!
//! Figures are the current tree's: per lane, implementation and operation, the median over
//! worker processes of each process's fastest batch. They are ratios from one run on one
//! machine; the report says so.

pub mod chart;
mod markdown;

use std::collections::BTreeMap;
use std::path::Path;

use tdbench_contract::{Compressed, ImplementationKind, Operation, Role};

use crate::results::Results;

pub use chart::{draw, draw_sizes};
pub use markdown::render;

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
    cells: BTreeMap<(String, String, Operation), Cell>,
}

impl<'a> Figures<'a> {
    pub fn of(results: &'a Results) -> Figures<'a> {
        let mut fastest: BTreeMap<(String, String, Operation), (Vec<f64>, Cell)> = BTreeMap::new();
        for s in results.samples.iter().filter(|s| s.role == Role::Current) {
            for op in &s.operations {
                let entry = fastest.entry((s.lane.clone(), s.implementation.clone(), op.operation)).or_insert_with(|| {
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
                // Without timing (instructions only) the cell has no ns/op.
                entry.0.push(op.stats.map_or(f64::NAN, |stats| stats.fastest));
            }
        }
        let cells = fastest
            .into_iter()
            .map(|(key, (mut values, mut cell))| {
                values.sort_by(f64::total_cmp);
                cell.ns_per_op = values[values.len() / 2];
                cell.samples = values.len();
                (key, cell)
            })
            .collect();
        let is_tdlib = |name: &String| results.provenance.catalog.iter().any(|i| &i.name == name && i.kind == ImplementationKind::Tdlib);
        let (tdlib_implementations, implementations) = results.provenance.implementations.iter().cloned().partition(is_tdlib);
        Figures { results, lanes: results.provenance.lanes.clone(), implementations, tdlib_implementations, cells }
    }

    pub fn cell(&self, lane: &str, implementation: &str, operation: Operation) -> Option<Cell> {
        self.cells.get(&(lane.to_string(), implementation.to_string(), operation)).copied()
    }

    /// How many times faster than `json` (above 1: faster).
    pub fn speedup(&self, lane: &str, implementation: &str, operation: Operation) -> Option<f64> {
        let json = self.cell(lane, "json", operation)?;
        let this = self.cell(lane, implementation, operation)?;
        let ratio = json.ns_per_op / this.ns_per_op;
        ratio.is_finite().then_some(ratio)
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

/// Writes the report files into `dir`.
pub fn write(results: &Results, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let figures = Figures::of(results);
    let mut readme = render(&figures);
    // The gate's calibration (`./run.sh --calibrate --publish`) is its own run, kept beside the
    // report and shown in it with its own provenance.
    if let Ok(calibration) = std::fs::read_to_string(dir.join("calibration.md")) {
        readme += "\n";
        readme += &calibration;
    }
    std::fs::write(dir.join("README.md"), readme).map_err(|e| format!("cannot write README.md: {e}"))?;
    draw(&figures, &dir.join("throughput.png"))?;
    draw_sizes(&figures, &dir.join("size.png"))?;
    crate::files::write_atomically(&dir.join("results.json"), &crate::files::published_json(results))
}
