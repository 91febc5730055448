//! What a merged run is: its verdict, provenance, violations, comparisons and samples. The gate
//! produces it; the summary, the files and the report only read it.

use serde::{Deserialize, Serialize};
use tdbench_contract::{ImplementationInfo, Machine, Metric, Operation, RunVerdict, Stage, Verdict, WorkerResult};

use crate::plan::{Pairing, PlanSettings, TreeInfo};

/// The slowdowns (fractions) at which the summary counts latency comparisons gated.
pub const GATE_LEVELS: [f64; 3] = [0.01, 0.03, 0.05];

/// Which rules a latency comparison was judged by: what its counts said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Its counts differ between the trees, or the run could not count it: timed with the run's
    /// budget and judged at the threshold.
    Changed,
    /// Equal counts and instruction profiles in both trees: the same machine code did the same
    /// work. Decided by the counts; timed only by the backstop, at its larger size.
    Unchanged,
    /// A TDLib round trip: counts cannot judge it (TDLib's threads), so it is timed, and judged
    /// outside the threshold's family, at the backstop's size.
    RoundTrip,
    /// A floor: reported, never a regression.
    Reference,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Changed => "changed",
            Class::Unchanged => "unchanged",
            Class::RoundTrip => "round-trip",
            Class::Reference => "reference",
        }
    }
}

/// Bumped when a field changes meaning.
pub const RESULTS_SCHEMA_VERSION: u32 = 2;

/// What a violation is. Written in results as its words (`"latency regression"`), so results
/// of earlier versions read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ViolationKind {
    #[serde(rename = "missing sample")]
    MissingSample,
    #[serde(rename = "unreadable sample")]
    UnreadableSample,
    #[serde(rename = "reused sample")]
    ReusedSample,
    #[serde(rename = "reordered sample")]
    ReorderedSample,
    #[serde(rename = "duplicate sample")]
    DuplicateSample,
    #[serde(rename = "metadata differs")]
    MetadataDiffers,
    #[serde(rename = "unplanned implementation")]
    UnplannedImplementation,
    #[serde(rename = "missing operation")]
    MissingOperation,
    #[serde(rename = "invalid value")]
    InvalidValue,
    #[serde(rename = "pairing differs")]
    PairingDiffers,
    #[serde(rename = "missing comparison")]
    MissingComparison,
    #[serde(rename = "format change")]
    FormatChange,
    #[serde(rename = "nondeterministic allocations")]
    NondeterministicAllocations,
    #[serde(rename = "nondeterministic output")]
    NondeterministicOutput,
    #[serde(rename = "nondeterministic instructions")]
    NondeterministicInstructions,
    #[serde(rename = "latency regression")]
    LatencyRegression,
    #[serde(rename = "allocation regression")]
    AllocationRegression,
    #[serde(rename = "instruction regression")]
    InstructionRegression,
    #[serde(rename = "not gated")]
    NotGated,
}

impl ViolationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ViolationKind::MissingSample => "missing sample",
            ViolationKind::UnreadableSample => "unreadable sample",
            ViolationKind::ReusedSample => "reused sample",
            ViolationKind::ReorderedSample => "reordered sample",
            ViolationKind::DuplicateSample => "duplicate sample",
            ViolationKind::MetadataDiffers => "metadata differs",
            ViolationKind::UnplannedImplementation => "unplanned implementation",
            ViolationKind::MissingOperation => "missing operation",
            ViolationKind::InvalidValue => "invalid value",
            ViolationKind::PairingDiffers => "pairing differs",
            ViolationKind::MissingComparison => "missing comparison",
            ViolationKind::FormatChange => "format change",
            ViolationKind::NondeterministicAllocations => "nondeterministic allocations",
            ViolationKind::NondeterministicOutput => "nondeterministic output",
            ViolationKind::NondeterministicInstructions => "nondeterministic instructions",
            ViolationKind::LatencyRegression => "latency regression",
            ViolationKind::AllocationRegression => "allocation regression",
            ViolationKind::InstructionRegression => "instruction regression",
            ViolationKind::NotGated => "not gated",
        }
    }

    /// Whether it says the change is slower or allocates more; every other kind says the run
    /// cannot be trusted (`--accept-regressions` accepts only these).
    pub fn is_regression(self) -> bool {
        matches!(self, ViolationKind::LatencyRegression | ViolationKind::AllocationRegression | ViolationKind::InstructionRegression)
    }
}

impl std::fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something that makes a run fail: a regression, or a reason its samples cannot be trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    pub kind: ViolationKind,
    pub lane: Option<String>,
    pub implementation: Option<String>,
    pub operation: Option<Operation>,
    pub message: String,
}

impl Violation {
    pub fn general(kind: ViolationKind, message: String) -> Violation {
        Violation { kind, lane: None, implementation: None, operation: None, message }
    }

    pub fn at(kind: ViolationKind, key: &Key, message: String) -> Violation {
        Violation {
            kind,
            lane: Some(key.lane.clone()),
            implementation: Some(key.implementation.clone()),
            operation: Some(key.operation),
            message,
        }
    }
}

/// One lane, implementation and operation: what a comparison is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub lane: String,
    pub implementation: String,
    pub operation: Operation,
}

impl Key {
    pub fn new(lane: &str, implementation: &str, operation: Operation) -> Key {
        Key { lane: lane.to_string(), implementation: implementation.to_string(), operation }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.lane, self.implementation, self.operation)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub lane: String,
    pub implementation: String,
    pub operation: Operation,
    pub metric: Metric,
    pub baseline: f64,
    pub current: f64,
    /// current/baseline − 1.
    pub change: f64,
    /// Family-wise interval of the change, where there is one.
    pub interval: Option<(f64, f64)>,
    /// The smallest slowdown this comparison could have detected.
    pub detectable: Option<f64>,
    /// Standard error of ln(1 + change) from the comparison's own pairs (latency): what
    /// calibration sets against the change's spread across runs to find the run-level shift.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standard_error: Option<f64>,
    pub pairs: usize,
    pub stage: Stage,
    pub verdict: Verdict,
    /// Latency: which rules judged it (absent in results older than counting first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    /// Latency: the slowdown (fraction) its verdict was held to: the threshold for a changed
    /// comparison, the backstop's size for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

/// The `change` of a figure that was zero in the baseline and is not now (JSON has no infinity).
pub const FROM_ZERO: f64 = f64::MAX;

impl Comparison {
    /// A comparison of exact figures (allocations, instructions): no interval, no power, one
    /// stage.
    pub fn exact(key: &Key, metric: Metric, baseline: f64, current: f64, pairs: usize, regression: bool) -> Comparison {
        let change = if baseline > 0.0 {
            current / baseline - 1.0
        } else if current > 0.0 {
            FROM_ZERO
        } else {
            0.0
        };
        Comparison {
            lane: key.lane.clone(),
            implementation: key.implementation.clone(),
            operation: key.operation,
            metric,
            baseline,
            current,
            change,
            interval: None,
            detectable: None,
            standard_error: None,
            pairs,
            stage: Stage::Screen,
            verdict: if regression { Verdict::Regression } else { Verdict::Pass },
            class: None,
            threshold: None,
        }
    }

    pub fn key(&self) -> Key {
        Key { lane: self.lane.clone(), implementation: self.implementation.clone(), operation: self.operation }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub nonce: String,
    pub command: Vec<String>,
    /// What the run was asked to measure, so a report can say what is missing.
    pub lanes: Vec<String>,
    pub implementations: Vec<String>,
    /// What the current tree's worker said of each implementation measured.
    #[serde(default)]
    pub catalog: Vec<ImplementationInfo>,
    pub baseline: Option<TreeInfo>,
    pub current: TreeInfo,
    pub machine: Option<Machine>,
    /// Of the corpus every sample measured (the gate checks they agree).
    #[serde(default)]
    pub corpus_sha256: String,
    pub settings: PlanSettings,
    /// How latency samples were paired.
    #[serde(default)]
    pub pairing: Pairing,
    /// What the run left out and why.
    #[serde(default)]
    pub left_out: Vec<String>,
    pub merged_at_unix: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub verdict: RunVerdict,
    pub provenance: Provenance,
    pub violations: Vec<Violation>,
    pub comparisons: Vec<Comparison>,
    /// Where time and instruction counts disagree under `--measure both`.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Where json-td's and tl's decode instructions go (absent in results older than them).
    #[serde(default)]
    pub profiles: Vec<crate::profile::Profile>,
    pub samples: Vec<WorkerResult>,
}

impl Results {
    pub fn passed(&self) -> bool {
        self.verdict == RunVerdict::Pass
    }

    /// Latency comparisons that passed without the power to see the size they were held to:
    /// not a failure (unless `--strict`, or `--ci` for those of the threshold's family), never
    /// silent.
    pub fn not_gated(&self) -> impl Iterator<Item = &Comparison> {
        self.comparisons.iter().filter(|c| c.verdict == Verdict::NotGated)
    }

    /// Latency comparisons in the family (floors are references outside it).
    pub fn gated_family(&self) -> impl Iterator<Item = &Comparison> {
        self.comparisons.iter().filter(|c| c.metric == Metric::Latency && c.verdict != Verdict::Reference)
    }

    /// Latency comparisons held to the threshold: the changed ones, judged by time, and the
    /// unchanged ones, decided by their counts (in runs older than counting first, every one
    /// but the floors).
    pub fn threshold_family(&self) -> impl Iterator<Item = &Comparison> {
        self.comparisons.iter().filter(|c| {
            c.metric == Metric::Latency
                && match c.class {
                    Some(class) => matches!(class, Class::Changed | Class::Unchanged),
                    None => c.verdict != Verdict::Reference,
                }
        })
    }

    /// Comparisons of the threshold's family the run could not decide: their counts changed
    /// and their time could not gate them. `--ci` fails on these (exit 3).
    pub fn undecided(&self) -> impl Iterator<Item = &Comparison> {
        self.threshold_family().filter(|c| c.verdict == Verdict::NotGated)
    }

    /// How many latency comparisons could have caught a slowdown of `level` (a fraction) with
    /// 80% power, of how many.
    pub fn gated_at(&self, level: f64) -> (usize, usize) {
        let family: Vec<&Comparison> = self.gated_family().collect();
        (family.iter().filter(|c| c.detectable.is_some_and(|d| d <= level + 1e-12)).count(), family.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_kind_is_written_as_its_words_and_read_back() {
        let violation = Violation::general(ViolationKind::LatencyRegression, "slower".into());
        let text = serde_json::to_string(&violation).unwrap();
        assert!(text.contains(r#""kind":"latency regression""#), "{text}");
        assert_eq!(serde_json::from_str::<Violation>(&text).unwrap(), violation);
        // Results of earlier versions wrote the same words.
        let earlier: Violation =
            serde_json::from_str(r#"{"kind":"metadata differs","lane":null,"implementation":null,"operation":null,"message":"m"}"#)
                .unwrap();
        assert_eq!(earlier.kind, ViolationKind::MetadataDiffers);
        assert!(ViolationKind::AllocationRegression.is_regression() && !ViolationKind::MetadataDiffers.is_regression());
    }
}
