//! The plan of a run: every worker slot in the order it runs, written before the first worker
//! starts so the merger can tell a missing, duplicated, reordered or reused sample from a good
//! one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub nonce: String,
    pub command: Vec<String>,
    pub lanes: Vec<String>,
    pub implementations: Vec<String>,
    pub baseline: Option<TreeInfo>,
    pub current: TreeInfo,
    pub settings: PlanSettings,
    pub slots: Vec<Slot>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeInfo {
    /// The ref asked for (`HEAD`, a branch, a commit).
    pub reference: String,
    pub commit: String,
    pub dirty: bool,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSettings {
    #[serde(default = "time")]
    pub measure: String,
    #[serde(default)]
    pub instruction_cycles: u64,
    pub duration_ms: u64,
    pub warmup_ms: u64,
    pub rounds: u32,
    pub confirm_rounds: u32,
    pub allocation_iterations: u64,
    pub threshold_percent: f64,
    pub allow_format_change: bool,
}

fn time() -> String {
    "time".into()
}

/// One worker process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub lane: String,
    pub implementation: String,
    pub role: String,
    pub sample: u32,
    /// `screen` for the rounds every comparison gets, `confirm` for the re-runs.
    pub stage: String,
}

impl Slot {
    /// Where this slot's result lives inside the output folder.
    pub fn file(&self, output: &Path) -> PathBuf {
        output.join("samples").join(&self.lane).join(&self.implementation).join(format!("{}-{}.json", self.role, self.sample))
    }
}

/// One implementation as a lane measures it: in both trees, or in the current tree only (an
/// implementation the baseline does not have yet: measured, shown, not compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub implementation: String,
    pub roles: Vec<&'static str>,
}

/// Balanced order for one lane: each round runs every (implementation, role) forward, then in
/// reverse, so every baseline/current pair is adjacent, once in each order.
pub fn lane_slots(lane: &str, entries: &[Entry], rounds: u32, first_sample: u32, stage: &str) -> Vec<Slot> {
    let forward: Vec<(&String, &str)> = entries.iter().flat_map(|e| e.roles.iter().map(move |r| (&e.implementation, *r))).collect();
    let mut slots = Vec::new();
    for round in 0..rounds {
        for (direction, sample) in [(false, first_sample + 2 * round), (true, first_sample + 2 * round + 1)] {
            let mut order = forward.clone();
            if direction {
                order.reverse();
            }
            slots.extend(order.into_iter().map(|(implementation, role)| Slot {
                lane: lane.to_string(),
                implementation: implementation.clone(),
                role: role.to_string(),
                sample,
                stage: stage.to_string(),
            }));
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_adjacent_in_both_orders() {
        let both = |name: &str| Entry { implementation: name.into(), roles: vec!["baseline", "current"] };
        let slots = lane_slots("status", &[both("a"), both("b")], 1, 0, "screen");
        let order: Vec<String> = slots.iter().map(|s| format!("{}{}{}", s.implementation, &s.role[..1], s.sample)).collect();
        assert_eq!(order, ["ab0", "ac0", "bb0", "bc0", "bc1", "bb1", "ac1", "ab1"]);
    }

    #[test]
    fn an_implementation_new_in_the_current_tree_runs_there_only() {
        let entries = [
            Entry { implementation: "a".into(), roles: vec!["baseline", "current"] },
            Entry { implementation: "new".into(), roles: vec!["current"] },
        ];
        let slots = lane_slots("status", &entries, 1, 0, "screen");
        let order: Vec<String> = slots.iter().map(|s| format!("{}{}{}", s.implementation, &s.role[..1], s.sample)).collect();
        assert_eq!(order, ["ab0", "ac0", "newc0", "newc1", "ac1", "ab1"]);
    }
}
