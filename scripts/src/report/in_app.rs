//! The in-app figures as the report shows them: the section "In the app" and the headline the
//! report opens with.

use std::fmt::Write as _;

use tdbench_contract::InAppResult;

use crate::gate::in_app::{InAppRun, REFERENCE, Row, Spread, ranking, separated_flips};

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn ratio(spread: Option<Spread>) -> String {
    match spread {
        Some(s) if (s.high - s.low) / s.median > 0.005 => format!("{:.2}× ({:.2}–{:.2})", s.median, s.low, s.high),
        Some(s) => format!("{:.2}×", s.median),
        None => "—".into(),
    }
}

/// The in-app figures the report leads with: per format, the start-up stream decoded into the
/// app's store, under the first host allocator.
pub fn headline(run: &InAppRun) -> String {
    let mut out = String::new();
    let Some(host) = run.hosts.first() else { return out };
    writeln!(
        out,
        "In the app: the start-up stream ({} updates, {} of TDLib JSON) decoded into an app's store, under the {} allocator \
         ([In the app](#in-the-app) below has the method, the jank and the allocators).\n",
        run.updates,
        mb(run.json_bytes),
        host.allocator
    )
    .unwrap();
    writeln!(out, "| format | wire size | µs/update in situ | vs json in situ | allocations/update |").unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|").unwrap();
    for row in &host.rows {
        writeln!(
            out,
            "| {} | {} | {:.2} | {} | {:.2} |",
            row.implementation,
            mb(row.encoded_bytes),
            row.in_situ_us_per_update,
            ratio(row.in_situ_speedup),
            row.in_situ_allocations_per_update
        )
        .unwrap();
    }
    out + "\n"
}

/// The report's section "In the app".
pub fn render(run: &InAppRun) -> String {
    let mut out = String::new();
    let m = &run.machine;
    let Some(host) = run.hosts.first() else { return out };
    writeln!(out, "## In the app\n").unwrap();
    writeln!(
        out,
        "The start-up stream (`src/corpus/startup.rs`): {} generated updates of a client's first sync, {} of TDLib JSON. \
         Each format decodes it in a fresh process of its own (`in-app`), in balanced order, twice per round: \
         **corpus-style** (decode each update, drop it — what every corpus figure above measures) and **in situ** \
         (on a background thread, into an app store that keeps users, chats, messages by chat and files by id, \
         replacing what an update sends again). The tables below are under the {} allocator. \
         `{}` at `{}`{}, on {} ({} cores, {}).\n",
        run.updates,
        mb(run.json_bytes),
        host.allocator,
        run.command.join(" "),
        &run.commit[..run.commit.len().min(10)],
        if run.dirty { " with uncommitted changes" } else { "" },
        m.cpu,
        m.cores,
        m.os
    )
    .unwrap();
    writeln!(out, "| format | wire size | µs/update in situ | MB/s of JSON (of wire) | allocations/update | peak heap | retained heap |")
        .unwrap();
    writeln!(out, "|---|---|---|---|---|---|---|").unwrap();
    for row in &host.rows {
        writeln!(
            out,
            "| {} | {} | {:.2} | {:.0} ({:.0}) | {:.2} | {} | {} |",
            row.implementation,
            mb(row.encoded_bytes),
            row.in_situ_us_per_update,
            row.in_situ_json_mb_per_s,
            row.in_situ_wire_mb_per_s,
            row.in_situ_allocations_per_update,
            mb(row.peak_heap_bytes),
            mb(row.retained_heap_bytes),
        )
        .unwrap();
    }
    writeln!(out, "\n### How much of the corpus speed-up survives in the app\n").unwrap();
    writeln!(
        out,
        "Times faster than `{REFERENCE}` on the same stream, in processes of the same round and direction \
         (median, and the range over those pairs when it is wider than 0.5%). \
         *Survives* is the in-situ speed-up over the corpus speed-up: the share of a corpus ratio an app would see.\n"
    )
    .unwrap();
    writeln!(out, "| format | µs/update corpus-style | in situ | corpus speed-up | in-situ speed-up | survives |").unwrap();
    writeln!(out, "|---|---|---|---|---|---|").unwrap();
    for row in &host.rows {
        let survives = match (row.corpus_speedup, row.in_situ_speedup) {
            (Some(c), Some(i)) if row.implementation != REFERENCE => format!("{:.0}%", 100.0 * i.median / c.median),
            _ => "—".into(),
        };
        writeln!(
            out,
            "| {} | {:.2} | {:.2} | {} | {} | {} |",
            row.implementation,
            row.corpus_us_per_update,
            row.in_situ_us_per_update,
            ratio(row.corpus_speedup),
            ratio(row.in_situ_speedup),
            survives
        )
        .unwrap();
    }
    writeln!(out, "\n### Jank: a 60 Hz ticker beside the decoding thread\n").unwrap();
    writeln!(
        out,
        "The main thread ticks every 16.67 ms and does a small fixed frame's work (walks 16 KB of state, builds 32 short \
         strings); lateness is how long after its due time a tick started (median process's p50 and p99, worst tick of all).\n"
    )
    .unwrap();
    writeln!(out, "| beside | ticks | p50 µs | p99 µs | max µs |").unwrap();
    writeln!(out, "|---|---|---|---|---|").unwrap();
    let t = &host.ticker_idle;
    writeln!(out, "| nothing (idle) | {} | {:.0} | {:.0} | {:.0} |", t.ticks, t.p50_us, t.p99_us, t.max_us).unwrap();
    for row in &host.rows {
        let t = &row.ticker_busy;
        writeln!(out, "| {} | {} | {:.0} | {:.0} | {:.0} |", row.implementation, t.ticks, t.p50_us, t.p99_us, t.max_us).unwrap();
    }
    if run.hosts.len() > 1 {
        allocators(&mut out, run);
    }
    out
}

/// The hosts side by side, and every mode where the ranking of formats changes between them.
fn allocators(out: &mut String, run: &InAppRun) {
    let hosts = &run.hosts;
    let names: Vec<&str> = hosts.iter().map(|h| h.allocator.as_str()).collect();
    writeln!(out, "\n### {} allocators as {} hosts\n", hosts.len(), hosts.len()).unwrap();
    writeln!(
        out,
        "The same processes under each allocator ({}), each a separate build of `in-app`: µs per update in situ and \
         corpus-style, and the in-situ speed-up against `{REFERENCE}` under the same allocator.\n",
        names.join(", ")
    )
    .unwrap();
    let columns = |label: &str| names.iter().map(|n| format!("{label} {n}")).collect::<Vec<_>>().join(" | ");
    writeln!(out, "| format | {} | {} | {} |", columns("in situ"), columns("corpus-style"), columns("speed-up")).unwrap();
    writeln!(out, "|---|{}", "---|".repeat(3 * names.len())).unwrap();
    for row in &hosts[0].rows {
        let cells = |value: &dyn Fn(&Row) -> String| {
            hosts
                .iter()
                .map(|h| h.rows.iter().find(|r| r.implementation == row.implementation).map_or_else(|| "—".to_string(), value))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.implementation,
            cells(&|r| format!("{:.2}", r.in_situ_us_per_update)),
            cells(&|r| format!("{:.2}", r.corpus_us_per_update)),
            cells(&|r| r.in_situ_speedup.map_or("—".into(), |s| format!("{:.2}×", s.median))),
        )
        .unwrap();
    }
    writeln!(out).unwrap();
    writeln!(
        out,
        "Medians ranked fastest first. A ranking counts as changed only where two formats swap with room to spare: \
         every process of one faster than every process of the other under one allocator, and the reverse under another.\n"
    )
    .unwrap();
    type Pass = fn(&InAppResult) -> &[f64];
    /// A mode's name, its median, and its passes.
    type Mode = (&'static str, fn(&Row) -> f64, Pass);
    let modes: [Mode; 2] = [
        ("in situ", |r| r.in_situ_us_per_update, |s| &s.in_situ.pass_ns_per_update),
        ("corpus-style", |r| r.corpus_us_per_update, |s| &s.corpus.pass_ns_per_update),
    ];
    for (mode, time, pass) in modes {
        let rankings: Vec<Vec<&str>> = hosts.iter().map(|h| ranking(h, time)).collect();
        let listed = hosts.iter().zip(&rankings).map(|(h, r)| format!("{}: {}", h.allocator, r.join(" < "))).collect::<Vec<_>>().join("; ");
        let flips = separated_flips(run, pass);
        let flag = if !flips.is_empty() {
            format!("**the ranking changes between allocators**: {}", flips.join("; "))
        } else if rankings.windows(2).any(|w| w[0] != w[1]) {
            "medians reorder, but only within the formats' process spread: the same ranking as far as these runs can tell".to_string()
        } else {
            "the same ranking under every allocator".to_string()
        };
        writeln!(out, "- {mode} — {flag}. {listed}.").unwrap();
    }
}
