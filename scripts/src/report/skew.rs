//! The report section "Schema skew" (`schema-skew.md`), drawn from a `./run.sh --schema-skew`
//! run: per format and direction, what a reader one TDLib release away makes of the data, and
//! what the skewed read costs against reading its own release's bytes.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};
use tdbench_contract::skew::{SkewResult, Tally};

use crate::gate::stats::Paired;

/// A whole skew run, as `schema-skew.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkewRun {
    pub command: Vec<String>,
    pub commit: String,
    pub dirty: bool,
    pub machine: String,
    /// One per format, in the table's order.
    pub results: Vec<SkewResult>,
}

/// The lanes whose cost the section shows, when the run measured them: the message-shaped ones,
/// where the two releases differ.
const COST_LANES: &[&str] = &["message", "messages", "mix"];

/// This machine, as the section names it: the CPU model and its core count.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo.lines().find_map(|l| l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_string()));
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{}, {cores} cores", model.unwrap_or_else(|| std::env::consts::ARCH.to_string()))
}

/// One sentence of a reader's error, for a table cell.
fn short(error: &str) -> String {
    let line = error.lines().next().unwrap_or("").replace('|', "\\|");
    if line.chars().count() > 90 { format!("{}…", line.chars().take(90).collect::<String>()) } else { line }
}

pub fn render(run: &SkewRun) -> String {
    let mut out = String::new();
    let (older, newer) = run.results.first().map_or(("?", "?"), |r| (r.older.as_str(), r.newer.as_str()));
    writeln!(out, "## Schema skew: {older} ↔ {newer}\n").unwrap();
    writeln!(
        out,
        "What each format does when the app's models and the data's are one TDLib release apart: an old app \
         ({older} models) reading what {newer} wrote, and a new app reading what {older} wrote. Among the \
         declarations this project models, {newer} changed only `message`: it inserted `receiver_id` (third \
         field), appended `ephemeral_message_id` and renamed `is_paid_ton_suggested_post` to \
         `is_paid_gram_suggested_post`. Every payload is judged field by field on the fields both releases \
         declare, against the value the reader's release should hold by name (TDLib's own rule: unknown fields \
         skipped, absent ones defaulted). Protobuf appears twice: numbered by declaration order, and by the \
         committed number map (`models/proto/numbers.txt`) in which a field keeps its number for life.\n"
    )
    .unwrap();
    let lanes: Vec<&str> = run
        .results
        .first()
        .map(|r| {
            let mut lanes: Vec<&str> = r.surveys.iter().map(|s| s.lane.as_str()).collect();
            lanes.dedup();
            lanes
        })
        .unwrap_or_default();
    writeln!(out, "Lanes: {}.\n", lanes.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ")).unwrap();

    writeln!(
        out,
        "| format | direction | outcome | payloads: correct / refused / wrong | what the reader said, or which fields were wrong |"
    )
    .unwrap();
    writeln!(out, "|---|---|---|---|---|").unwrap();
    for result in &run.results {
        let mut by_direction: BTreeMap<&str, Tally> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        for survey in &result.surveys {
            if !order.contains(&survey.direction.as_str()) {
                order.push(&survey.direction);
            }
            let tally = by_direction.entry(&survey.direction).or_default();
            tally.correct += survey.tally.correct;
            tally.refused += survey.tally.refused;
            tally.wrong += survey.tally.wrong;
            if tally.first_error.is_none() {
                tally.first_error = survey.tally.first_error.clone();
            }
            for (field, n) in &survey.tally.wrong_fields {
                *tally.wrong_fields.entry(field.clone()).or_default() += n;
            }
        }
        for direction in order {
            let tally = &by_direction[direction];
            let detail = if tally.wrong > 0 {
                tally.wrong_fields.iter().map(|(f, n)| format!("`{f}` ({n})")).collect::<Vec<_>>().join(", ")
            } else {
                tally.first_error.as_deref().map(short).unwrap_or_default()
            };
            let verdict = if tally.wrong > 0 { format!("**{}**", tally.verdict()) } else { tally.verdict().to_string() };
            writeln!(
                out,
                "| {} | {direction} | {verdict} | {} / {} / {} | {detail} |",
                result.format, tally.correct, tally.refused, tally.wrong
            )
            .unwrap();
        }
    }

    let shown: Vec<&str> = if lanes.iter().any(|l| COST_LANES.contains(l)) {
        lanes.iter().copied().filter(|l| COST_LANES.contains(l)).collect()
    } else {
        lanes.clone()
    };
    writeln!(
        out,
        "\n### What the skewed read costs\n\nDecode time of the skewed read ÷ the same-release read of the same payloads, \
         measured side by side in one process per format (alternating batches; Hodges–Lehmann estimate with its 95% \
         interval), and allocations per payload, same release → skewed. A refused read's time is the time to refuse.\n"
    )
    .unwrap();
    writeln!(out, "| format | direction | lane | time, skewed ÷ same | allocations per payload | bytes per payload |").unwrap();
    writeln!(out, "|---|---|---|---|---|---|").unwrap();
    for result in &run.results {
        for survey in result.surveys.iter().filter(|s| shown.contains(&s.lane.as_str())) {
            let Some(cost) = &survey.cost else { continue };
            let time = match Paired::of(&cost.pairs) {
                Some(paired) => {
                    let (a, b) = paired.interval(0.05);
                    format!("{:.3}× ({:.3}…{:.3}, {} pairs)", paired.ratio(), a.min(b), a.max(b), paired.pairs)
                }
                None => "–".into(),
            };
            writeln!(
                out,
                "| {} | {} | `{}` | {time} | {:.1} → {:.1} | {:.0} → {:.0} |",
                result.format, survey.direction, survey.lane, cost.allocations.0, cost.allocations.1, cost.bytes.0, cost.bytes.1
            )
            .unwrap();
        }
    }
    writeln!(
        out,
        "\nThe known cases beyond this corpus (a constructor removed or added, int53 widened to int64, where \
         bincode and position-numbered protobuf read one constructor as another without an error) are pinned \
         by `skew/tests/known_cases.rs`; docs/formats.md says what each format does and why.\n"
    )
    .unwrap();
    writeln!(
        out,
        "Measured at {}{} on {}, with `{}`.",
        &run.commit[..run.commit.len().min(12)],
        if run.dirty { " (uncommitted changes)" } else { "" },
        run.machine,
        run.command.join(" ")
    )
    .unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tdbench_contract::skew::{Cost, Survey};

    fn survey(lane: &str, direction: &str, tally: Tally, cost: Option<Cost>) -> Survey {
        Survey { lane: lane.into(), format: "bincode".into(), direction: direction.into(), unwritable: 0, tally, cost }
    }

    /// Seeded pairs whose skewed read is 10% slower, with noise that hits both alike.
    fn ten_percent_slower() -> Cost {
        let mut state = 7u64;
        let pairs = (0..20)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let same = 100.0 * (1.0 + (state >> 40) as f64 / (1u64 << 24) as f64 * 0.2);
                (same, same * 1.10)
            })
            .collect();
        Cost { payloads: 8, pairs, allocations: (4.4, 4.0), bytes: (1158.0, 363.0) }
    }

    #[test]
    fn the_section_sums_lanes_names_wrong_fields_and_gives_the_cost_with_its_interval() {
        let refused = Tally { refused: 8, first_error: Some("UnexpectedVariant | at byte 3".into()), ..Tally::default() };
        let wrong =
            Tally { correct: 40, wrong: 2, wrong_fields: [("message.chat_id".to_string(), 2)].into_iter().collect(), ..Tally::default() };
        let run = SkewRun {
            command: vec!["./run.sh".into(), "--schema-skew".into()],
            commit: "0123456789abcdef".into(),
            dirty: false,
            machine: "test machine".into(),
            results: vec![SkewResult {
                format: "bincode".into(),
                older: "TDLib 1.8.65".into(),
                newer: "TDLib 1.8.66".into(),
                surveys: vec![
                    survey("message", "old reads new", refused.clone(), Some(ten_percent_slower())),
                    survey("mix", "old reads new", wrong, None),
                    survey("message", "new reads old", refused, None),
                ],
            }],
        };
        let text = render(&run);
        assert!(text.contains("## Schema skew: TDLib 1.8.65 ↔ TDLib 1.8.66"), "{text}");
        assert!(
            text.contains("| bincode | old reads new | **wrong values, no error** | 40 / 8 / 2 | `message.chat_id` (2) |"),
            "a silent misread in one lane outweighs the refusals of another:\n{text}"
        );
        assert!(text.contains("| bincode | new reads old | refused | 0 / 8 / 0 | UnexpectedVariant \\| at byte 3 |"), "{text}");
        let row = text.lines().find(|l| l.starts_with("| bincode | old reads new | `message` |")).expect("a cost row");
        let ratio: f64 = row.split(" | ").nth(3).and_then(|c| c.split('×').next()).and_then(|r| r.parse().ok()).expect("a ratio");
        assert!((ratio - 1.10).abs() < 0.005, "{row}");
        assert!(row.contains("4.4 → 4.0") && row.contains("1158 → 363"), "{row}");
        assert!(text.contains("Measured at 0123456789ab on test machine"), "{text}");
    }
}
