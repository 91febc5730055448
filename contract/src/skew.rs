//! What a `schema-skew` process reports to the runner: per lane, format and direction, the
//! outcomes of skewed reads and their cost (crate `tdbench-skew`, `./run.sh --schema-skew`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One `schema-skew` process: one format over the lanes asked for, against each older release.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkewResult {
    pub format: String,
    /// The models' own release, e.g. "TDLib 1.8.66".
    pub newer: String,
    pub surveys: Vec<Survey>,
}

/// One lane, format, older release and direction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Survey {
    pub lane: String,
    pub format: String,
    /// The older release, e.g. "TDLib 1.8.65".
    pub older: String,
    /// "old reads new" or "new reads old".
    pub direction: String,
    /// Payloads of the lane the writer's release cannot model (a constructor or field type it
    /// lacks): not written, not read.
    pub unwritable: usize,
    pub tally: Tally,
    pub cost: Option<Cost>,
}

/// The outcomes of one format and direction over a set of payloads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub correct: usize,
    pub refused: usize,
    pub wrong: usize,
    /// The first error a refused read gave.
    pub first_error: Option<String>,
    /// Each field read wrong, with how many payloads it was wrong in.
    pub wrong_fields: BTreeMap<String, usize>,
}

impl Tally {
    /// The verdict of the table: any silent misread outweighs any refusal.
    pub fn verdict(&self) -> &'static str {
        if self.wrong > 0 {
            "wrong values, no error"
        } else if self.refused > 0 {
            "refused"
        } else {
            "read correctly"
        }
    }
}

/// The skewed read against the same-release read of the same payloads, in one process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cost {
    /// Payloads timed: those the reader's release models too.
    pub payloads: usize,
    /// Per batch pair: nanoseconds per payload decoding the reader's own bytes, then the skewed
    /// bytes.
    pub pairs: Vec<(f64, f64)>,
    /// Allocations per payload: same release, skewed.
    pub allocations: (f64, f64),
    /// Bytes allocated per payload: same release, skewed.
    pub bytes: (f64, f64),
}
