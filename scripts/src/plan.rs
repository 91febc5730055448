//! The plan of a run: every worker slot in the order it runs, written before the first worker
//! starts so the gate can tell a missing, duplicated, reordered or reused sample from a good one,
//! and what every sample must contain (the catalog's operations, the plan's settings).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tdbench_contract::{ImplementationInfo, Role, Settings, Stage};

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
    /// Set only by `./run.sh --calibrate`: the slowdown this run plants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    pub slots: Vec<Slot>,
}

/// A calibration run's planted slowdown: every decode of `implementation` in the current tree
/// spins for `planted_percent` of its own time (0: timed the same way, nothing planted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub implementation: String,
    pub planted_percent: f64,
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

    /// The slowdown a sample of `implementation` from `role`'s tree must carry: set only in a
    /// calibration run, for its implementation (0 on the baseline side).
    pub fn planted(&self, implementation: &str, role: Role) -> Option<f64> {
        let c = self.calibration.as_ref().filter(|c| c.implementation == implementation)?;
        Some(if role == Role::Current { c.planted_percent } else { 0.0 })
    }

    /// The looks the screen may take, fixed before the first sample.
    pub fn looks(&self) -> Looks {
        Looks {
            first: 2 * self.settings.rounds as usize,
            step: 2 * self.settings.look_rounds as usize,
            count: if self.settings.look_rounds == 0 { 1 } else { self.settings.looks.max(1) as usize },
        }
    }

    /// Sample indices below this are the screen's (every look); confirmation samples start
    /// here, whether or not a comparison took all its looks.
    pub fn screen_samples(&self) -> u32 {
        self.looks().most() as u32
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeInfo {
    /// The ref asked for (`HEAD`, a branch, a commit).
    pub reference: String,
    pub commit: String,
    pub dirty: bool,
    pub path: String,
}

/// The run's settings: what every worker measures with, and how the gate judges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSettings {
    #[serde(flatten)]
    pub worker: Settings,
    pub rounds: u32,
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

/// One worker process.
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
        output.join("samples").join(&self.lane).join(&self.implementation).join(format!("{}-{}.json", self.role, self.sample))
    }

    pub fn name(&self) -> String {
        format!("{}/{} {} sample {}", self.lane, self.implementation, self.role, self.sample)
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
    let forward: Vec<(&String, Role)> = entries.iter().flat_map(|e| e.roles.iter().map(move |r| (&e.implementation, *r))).collect();
    let mut slots = Vec::new();
    for round in 0..rounds {
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
    fn an_implementation_new_in_the_current_tree_runs_there_only() {
        let entries = [
            Entry { implementation: "a".into(), roles: vec![Role::Baseline, Role::Current] },
            Entry { implementation: "new".into(), roles: vec![Role::Current] },
        ];
        let slots = lane_slots("status", &entries, 1, 0, Stage::Screen);
        assert_eq!(order(&slots), ["ab0", "ac0", "newc0", "newc1", "ac1", "ab1"]);
    }
}
