//! The report section "Schema skew" (`schema-skew.md`), drawn from a `./run.sh --schema-skew`
//! run: per format and direction, what a reader on another TDLib release makes of the data, and
//! what the skewed read costs against reading its own release's bytes.

use std::fmt::Write;

use serde::{Deserialize, Serialize};
use tdbench_contract::skew::{SkewResult, Survey, Tally};

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

/// What changed between an older release and the newer one among the modelled declarations, as
/// the section says it; a release it does not know gets no sentence.
fn what_changed(older: &str) -> &'static str {
    match older {
        "TDLib 1.8.65" => {
            "Among the declarations this project models, only `message` changed: 1.8.66 inserted `receiver_id` (third \
             field), appended `ephemeral_message_id` and renamed `is_paid_ton_suggested_post` to \
             `is_paid_gram_suggested_post`."
        }
        "TDLib 1.8.60" => {
            "Among the declarations this project models, nine changed — `message` (six fields inserted or renamed), \
             `messageReplyToMessage`, `messagePhoto`, `userTypeBot`, `chatMemberStatusCreator`, \
             `chatMemberStatusAdministrator`, `chatAdministratorRights`, `chatPermissions` and `chat`, each with fields \
             inserted or removed — and `textEntityTypeDateTime` is new, so a payload carrying one has no 1.8.60 form."
        }
        _ => "",
    }
}

/// One row's tally: a format's surveys of one older release and direction, over every lane.
fn summed<'a>(surveys: impl Iterator<Item = &'a Survey>) -> (Tally, usize) {
    let mut tally = Tally::default();
    let mut unwritable = 0;
    for survey in surveys {
        tally.correct += survey.tally.correct;
        tally.refused += survey.tally.refused;
        tally.wrong += survey.tally.wrong;
        unwritable += survey.unwritable;
        if tally.first_error.is_none() {
            tally.first_error = survey.tally.first_error.clone();
        }
        for (field, n) in &survey.tally.wrong_fields {
            *tally.wrong_fields.entry(field.clone()).or_default() += n;
        }
    }
    (tally, unwritable)
}

/// Each distinct value in order of first appearance.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for value in values {
        if !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

pub fn render(run: &SkewRun) -> String {
    let mut out = String::new();
    let newer = run.results.first().map_or("?", |r| r.newer.as_str());
    let surveys = || run.results.iter().flat_map(|r| r.surveys.iter());
    let olders = distinct(surveys().map(|s| s.older.as_str()));
    let lanes = distinct(surveys().map(|s| s.lane.as_str()));
    writeln!(out, "## Schema skew: {} against {newer}\n", olders.join(" and ")).unwrap();
    writeln!(
        out,
        "What each format does when the app's models and the data's are TDLib releases apart: an app on the older \
         release reading what {newer} wrote (old reads new), and an app on {newer} reading what the older release \
         wrote (new reads old). Every payload is judged field by field on the fields both releases declare, against \
         the value the reader's release should hold by name (TDLib's own rule: unknown fields skipped, absent ones \
         defaulted). Protobuf appears twice: numbered by declaration order, and by the committed number map \
         (`models/proto/numbers.txt`, kept from 1.8.60 on) in which a field keeps its number for life. Lanes: {}.\n",
        lanes.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ")
    )
    .unwrap();
    for older in &olders {
        writeln!(out, "### {older} against {newer}\n").unwrap();
        let changed = what_changed(older);
        if !changed.is_empty() {
            writeln!(out, "{changed}\n").unwrap();
        }
        writeln!(
            out,
            "| format | direction | outcome | payloads: correct / refused / wrong | what the reader said, or which fields were wrong |"
        )
        .unwrap();
        writeln!(out, "|---|---|---|---|---|").unwrap();
        for result in &run.results {
            let of_older = || result.surveys.iter().filter(|s| s.older == *older);
            for direction in distinct(of_older().map(|s| s.direction.as_str())) {
                let (tally, unwritable) = summed(of_older().filter(|s| s.direction == direction));
                let mut detail = if tally.wrong > 0 {
                    tally.wrong_fields.iter().map(|(f, n)| format!("`{f}` ({n})")).collect::<Vec<_>>().join(", ")
                } else {
                    tally.first_error.as_deref().map(short).unwrap_or_default()
                };
                if unwritable > 0 {
                    detail = format!("{detail}{}{unwritable} the writer's release cannot model", if detail.is_empty() { "" } else { "; " });
                }
                let verdict = if tally.wrong > 0 { format!("**{}**", tally.verdict()) } else { tally.verdict().to_string() };
                writeln!(
                    out,
                    "| {} | {direction} | {verdict} | {} / {} / {} | {detail} |",
                    result.format, tally.correct, tally.refused, tally.wrong
                )
                .unwrap();
            }
        }
        writeln!(out).unwrap();
    }

    let shown: Vec<&str> = if lanes.iter().any(|l| COST_LANES.contains(l)) {
        lanes.iter().copied().filter(|l| COST_LANES.contains(l)).collect()
    } else {
        lanes.clone()
    };
    writeln!(
        out,
        "### What the skewed read costs\n\nDecode time of the skewed read ÷ the same-release read of the same payloads, \
         measured side by side in one process per format (alternating batches; Hodges–Lehmann estimate with its 95% \
         interval), and allocations per payload, same release → skewed. A refused read's time is the time to refuse.\n"
    )
    .unwrap();
    writeln!(out, "| format | older release | direction | lane | time, skewed ÷ same | allocations per payload | bytes per payload |")
        .unwrap();
    writeln!(out, "|---|---|---|---|---|---|---|").unwrap();
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
                "| {} | {} | {} | `{}` | {time} | {:.1} → {:.1} | {:.0} → {:.0} |",
                result.format,
                survey.older.trim_start_matches("TDLib "),
                survey.direction,
                survey.lane,
                cost.allocations.0,
                cost.allocations.1,
                cost.bytes.0,
                cost.bytes.1
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
    use tdbench_contract::skew::Cost;

    fn survey(lane: &str, direction: &str, tally: Tally, cost: Option<Cost>) -> Survey {
        let older = "TDLib 1.8.65".into();
        Survey { lane: lane.into(), format: "bincode".into(), older, direction: direction.into(), unwritable: 0, tally, cost }
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
                newer: "TDLib 1.8.66".into(),
                surveys: vec![
                    survey("message", "old reads new", refused.clone(), Some(ten_percent_slower())),
                    survey("mix", "old reads new", wrong, None),
                    survey("message", "new reads old", refused, None),
                ],
            }],
        };
        let text = render(&run);
        assert!(text.contains("## Schema skew: TDLib 1.8.65 against TDLib 1.8.66"), "{text}");
        assert!(text.contains("### TDLib 1.8.65 against TDLib 1.8.66\n\nAmong the declarations"), "{text}");
        assert!(
            text.contains("| bincode | old reads new | **wrong values, no error** | 40 / 8 / 2 | `message.chat_id` (2) |"),
            "a silent misread in one lane outweighs the refusals of another:\n{text}"
        );
        assert!(text.contains("| bincode | new reads old | refused | 0 / 8 / 0 | UnexpectedVariant \\| at byte 3 |"), "{text}");
        let row = text.lines().find(|l| l.starts_with("| bincode | 1.8.65 | old reads new | `message` |")).expect("a cost row");
        let ratio: f64 = row.split(" | ").nth(4).and_then(|c| c.split('×').next()).and_then(|r| r.parse().ok()).expect("a ratio");
        assert!((ratio - 1.10).abs() < 0.005, "{row}");
        assert!(row.contains("4.4 → 4.0") && row.contains("1158 → 363"), "{row}");
        assert!(text.contains("Measured at 0123456789ab on test machine"), "{text}");
    }
}
