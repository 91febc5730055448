//! The plan of a run: every worker slot in the order it runs, written before the first worker
//! starts so the gate can tell a missing, duplicated, reordered or reused sample from a good one,
//! and what every sample must contain (the catalog's operations, the plan's settings).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tdbench_contract::{ImplementationInfo, Measure, Role, Settings, Stage};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub nonce: String,
    pub command: Vec<String>,
    pub lanes: Vec<String>,
    pub implementations: Vec<String>,
    /// The current worker's catalog entry of every implementation measured.
    pub catalog: Vec<ImplementationInfo>,
    pub baseline: Option<TreeInfo>,
    pub current: TreeInfo,
    pub settings: PlanSettings,
    /// How baseline and current latency samples are paired.
    #[serde(default)]
    pub pairing: Pairing,
    /// What the run left out that it would otherwise measure, and why (one line each).
    #[serde(default)]
    pub left_out: Vec<String>,
    pub slots: Vec<Slot>,
}

/// Which implementations time both trees in one process (the `paired` harness, each tree's
/// kernels loaded as a library, batches alternating), and why the others use process pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// Their baseline and current samples of one index come from one process.
    pub in_process: Vec<String>,
    /// One line for the summary and the report: what was paired how, and why.
    pub note: String,
}

impl Plan {
    pub fn tree(&self, role: Role) -> Option<&TreeInfo> {
        match role {
            Role::Baseline => self.baseline.as_ref(),
            Role::Current => Some(&self.current),
        }
    }

    pub fn implementation(&self, name: &str) -> Option<&ImplementationInfo> {
        self.catalog.iter().find(|i| i.name == name)
    }

    /// Whether `slot`'s implementation times both trees in one process.
    pub fn in_process(&self, implementation: &str) -> bool {
        self.pairing.in_process.iter().any(|i| i == implementation)
    }

    /// The looks a group on `schedule` may take, fixed before its first timed sample.
    pub fn looks(&self, schedule: Schedule) -> Looks {
        match schedule {
            Schedule::Full => Looks {
                first: 2 * self.settings.rounds as usize,
                step: 2 * self.settings.look_rounds as usize,
                count: if self.settings.look_rounds == 0 { 1 } else { self.settings.looks.max(1) as usize },
            },
            Schedule::Backstop => Looks { first: 2 * self.settings.backstop_rounds.max(1) as usize, step: 0, count: 1 },
        }
    }

    /// Sample indices below this are the screen's (every look, either schedule); confirmation
    /// samples start here, whether or not a comparison took all its looks.
    pub fn screen_samples(&self) -> u32 {
        self.looks(Schedule::Full).most().max(self.looks(Schedule::Backstop).most()) as u32
    }

    /// Whether the run counts both trees, so the gate can tell unchanged comparisons from
    /// changed ones: it has count slots of each tree.
    pub fn counts_both_trees(&self) -> bool {
        [Role::Baseline, Role::Current].iter().all(|role| self.slots.iter().any(|s| s.stage == Stage::Count && s.role == *role))
    }
}

/// How many rounds a (lane, implementation) group is timed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// The run's full budget (`--rounds`, then further looks while undecided): a group with a
    /// comparison its counts say changed (or that counts cannot judge).
    Full,
    /// A light backstop (`--backstop-rounds`): every comparison of the group ran the same
    /// machine code in both trees, by its counts.
    Backstop,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeInfo {
    /// The ref asked for (`HEAD`, a branch, a commit).
    pub reference: String,
    pub commit: String,
    pub dirty: bool,
    pub path: String,
    /// How the tree's measured binaries were built; absent in runs older than the measurement
    /// build, which used cargo's default release profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Build>,
}

/// How a tree's measured binaries (worker, kernel library, in-app binary) are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum Build {
    /// One codegen unit, no LTO, whatever the tree's Cargo.toml says (MEASUREMENT_PROFILE)
    Measurement,
    /// The tree's own release profile: cargo's default of 16 codegen units here
    CargoDefault,
}

impl Build {
    pub fn as_str(self) -> &'static str {
        match self {
            Build::Measurement => "measurement",
            Build::CargoDefault => "cargo-default",
        }
    }

    /// One line for a report: what the build is.
    pub fn describe(build: Option<Build>) -> String {
        match build {
            Some(Build::Measurement) => format!(
                "the measurement build ({})",
                MEASUREMENT_PROFILE.iter().map(|(key, value)| format!("{}={value}", profile_key(key))).collect::<Vec<_>>().join(", ")
            ),
            Some(Build::CargoDefault) => "the tree's own release profile (cargo's default: 16 codegen units)".into(),
            None => "cargo's default release profile (16 codegen units; before the measurement build)".into(),
        }
    }
}

/// The release-profile settings the runner imposes on both trees' measured binaries, as the
/// environment cargo reads them (`CARGO_PROFILE_RELEASE_*` overrides the tree's Cargo.toml, so a
/// baseline older than this list is built the same way).
///
/// Why one codegen unit: with cargo's default 16, which unit a function lands in — and so what
/// LLVM inlines into it — depends on every other function of the crate, and an edit to one
/// codec changed another's machine code (at 8e3cc16: a change to `src/codecs/tl.rs` moved
/// msgpack encode from 6,820 to 8,059 instructions per op on `message`). With one unit per
/// crate the same edit left every other comparison's count unchanged. The other keys are
/// pinned so that a tree's own profile cannot move them: no LTO across crates, unwinding
/// panics, line tables only.
pub const MEASUREMENT_PROFILE: &[(&str, &str)] = &[
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1"),
    ("CARGO_PROFILE_RELEASE_LTO", "off"),
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3"),
    ("CARGO_PROFILE_RELEASE_PANIC", "unwind"),
    ("CARGO_PROFILE_RELEASE_DEBUG", "line-tables-only"),
    ("CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS", "false"),
    ("CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS", "false"),
    ("CARGO_PROFILE_RELEASE_INCREMENTAL", "false"),
];

/// `CARGO_PROFILE_RELEASE_CODEGEN_UNITS` as Cargo.toml spells it: `codegen-units`.
fn profile_key(variable: &str) -> String {
    variable.trim_start_matches("CARGO_PROFILE_RELEASE_").to_lowercase().replace('_', "-")
}

/// The run's settings: what every worker measures with, and how the gate judges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSettings {
    /// What the run measures: counts first and then time (`both`), time only, counts only.
    pub measure: Measure,
    #[serde(flatten)]
    pub worker: Settings,
    pub rounds: u32,
    /// Rounds of the timed backstop of a group whose counts are unchanged (0 in plans older
    /// than counting first).
    #[serde(default)]
    pub backstop_rounds: u32,
    /// The slowdown the backstop is held to, in percent, where the counts say nothing changed
    /// (and for TDLib round trips, which counts cannot judge).
    #[serde(default)]
    pub backstop_threshold_percent: f64,
    /// Rounds each further look of the screen adds to a comparison still undecided.
    #[serde(default)]
    pub look_rounds: u32,
    /// Looks the screen may take, the first included (1: no extension).
    #[serde(default = "one")]
    pub looks: u32,
    /// Seconds further looks may take in all, per run.
    #[serde(default)]
    pub look_seconds: u32,
    pub confirm_rounds: u32,
    pub threshold_percent: f64,
    /// Spread, in percent, of the shift a latency comparison's pairs share within a run: each
    /// latency verdict's bound must clear it (0 in plans that predate it).
    #[serde(default)]
    pub run_spread_percent: f64,
    pub allow_format_change: bool,
    /// Latency comparisons that could not have caught the threshold fail the run.
    #[serde(default)]
    pub strict: bool,
}

fn one() -> u32 {
    1
}

/// The looks a comparison's screen may take, in pairs: `first` at the first look, `step` more
/// at each of the others, `count` looks at most. Fixed by the plan before any sample exists, so
/// the false-alarm budget can be spent over them in advance ([`crate::gate::stats::spend`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Looks {
    pub first: usize,
    pub step: usize,
    pub count: usize,
}

impl Looks {
    /// Pairs at look `look` (1-based).
    pub fn pairs(&self, look: usize) -> usize {
        self.first + self.step * (look.max(1) - 1)
    }

    /// Pairs at the last look.
    pub fn most(&self) -> usize {
        self.pairs(self.count)
    }

    /// The look `pairs` pairs reached: the last whose pairs they cover (1 at least).
    pub fn reached(&self, pairs: usize) -> usize {
        (1..=self.count).rev().find(|&look| self.pairs(look) <= pairs).unwrap_or(1)
    }
}

/// Count slots for one lane: every entry in each of its trees, `counts` times (one `counter`
/// process per lane, tree and count runs all of a tree's entries).
pub fn count_slots(lane: &str, entries: &[Entry], counts: u32) -> Vec<Slot> {
    let mut slots = Vec::new();
    for sample in 0..counts {
        for role in [Role::Baseline, Role::Current] {
            slots.extend(entries.iter().filter(|e| e.roles.contains(&role)).map(|e| Slot {
                lane: lane.to_string(),
                implementation: e.implementation.clone(),
                role,
                sample,
                stage: Stage::Count,
            }));
        }
    }
    slots
}

/// One worker process (for a count: one implementation's share of a counter process).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub lane: String,
    pub implementation: String,
    pub role: Role,
    pub sample: u32,
    pub stage: Stage,
}

impl Slot {
    /// Where this slot's result lives inside the output folder.
    pub fn file(&self, output: &Path) -> PathBuf {
        let name = match self.stage {
            Stage::Count => format!("{}-count-{}.json", self.role, self.sample),
            _ => format!("{}-{}.json", self.role, self.sample),
        };
        output.join("samples").join(&self.lane).join(&self.implementation).join(name)
    }

    pub fn name(&self) -> String {
        let what = if self.stage == Stage::Count { "count" } else { "sample" };
        format!("{}/{} {} {what} {}", self.lane, self.implementation, self.role, self.sample)
    }
}

/// One implementation as a lane measures it: in both trees, or in the current tree only (an
/// implementation the baseline does not have yet: measured, shown, not compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub implementation: String,
    pub roles: Vec<Role>,
}

/// Balanced order for one lane: each round runs every (implementation, role) forward, then in
/// reverse, so every baseline/current pair is adjacent, once in each order.
pub fn lane_slots(lane: &str, entries: &[Entry], rounds: u32, first_sample: u32, stage: Stage) -> Vec<Slot> {
    let scheduled: Vec<(&Entry, u32)> = entries.iter().map(|e| (e, rounds)).collect();
    scheduled_slots(lane, &scheduled, first_sample, stage)
}

/// [`lane_slots`] with rounds of its own for each entry: round r runs, in balanced order, the
/// entries that have more than r rounds.
pub fn scheduled_slots(lane: &str, entries: &[(&Entry, u32)], first_sample: u32, stage: Stage) -> Vec<Slot> {
    let most = entries.iter().map(|(_, rounds)| *rounds).max().unwrap_or(0);
    let mut slots = Vec::new();
    for round in 0..most {
        let forward: Vec<(&String, Role)> = entries
            .iter()
            .filter(|(_, rounds)| *rounds > round)
            .flat_map(|(e, _)| e.roles.iter().map(move |r| (&e.implementation, *r)))
            .collect();
        for (reverse, sample) in [(false, first_sample + 2 * round), (true, first_sample + 2 * round + 1)] {
            let mut order = forward.clone();
            if reverse {
                order.reverse();
            }
            slots.extend(order.into_iter().map(|(implementation, role)| Slot {
                lane: lane.to_string(),
                implementation: implementation.clone(),
                role,
                sample,
                stage,
            }));
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(slots: &[Slot]) -> Vec<String> {
        slots.iter().map(|s| format!("{}{}{}", s.implementation, &s.role.as_str()[..1], s.sample)).collect()
    }

    #[test]
    fn pairs_are_adjacent_in_both_orders() {
        let both = |name: &str| Entry { implementation: name.into(), roles: vec![Role::Baseline, Role::Current] };
        let slots = lane_slots("status", &[both("a"), both("b")], 1, 0, Stage::Screen);
        assert_eq!(order(&slots), ["ab0", "ac0", "bb0", "bc0", "bc1", "bb1", "ac1", "ab1"]);
    }

    #[test]
    fn entries_with_fewer_rounds_drop_out_of_later_rounds() {
        let both = |name: &str| Entry { implementation: name.into(), roles: vec![Role::Baseline, Role::Current] };
        let (a, b) = (both("a"), both("b"));
        let slots = scheduled_slots("status", &[(&a, 2), (&b, 1)], 0, Stage::Screen);
        assert_eq!(order(&slots), ["ab0", "ac0", "bb0", "bc0", "bc1", "bb1", "ac1", "ab1", "ab2", "ac2", "ac3", "ab3"]);
    }

    #[test]
    fn count_slots_cover_each_tree_s_entries() {
        let entries = [
            Entry { implementation: "a".into(), roles: vec![Role::Baseline, Role::Current] },
            Entry { implementation: "new".into(), roles: vec![Role::Current] },
        ];
        let slots = count_slots("status", &entries, 2);
        assert_eq!(order(&slots), ["ab0", "ac0", "newc0", "ab1", "ac1", "newc1"]);
        assert!(slots.iter().all(|s| s.stage == Stage::Count));
        assert!(slots[0].file(Path::new("/o")).ends_with("samples/status/a/baseline-count-0.json"));
    }

    #[test]
    fn an_implementation_new_in_the_current_tree_runs_there_only() {
        let entries = [
            Entry { implementation: "a".into(), roles: vec![Role::Baseline, Role::Current] },
            Entry { implementation: "new".into(), roles: vec![Role::Current] },
        ];
        let slots = lane_slots("status", &entries, 1, 0, Stage::Screen);
        assert_eq!(order(&slots), ["ab0", "ac0", "newc0", "newc1", "ac1", "ab1"]);
    }
}
