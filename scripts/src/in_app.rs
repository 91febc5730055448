//! The in-app figures: the `in-app` processes' results checked against one another and merged
//! into one table per question — how fast each format fills an app's store, how much of its
//! corpus speed-up survives there, what the heap holds, and how late a 60 Hz ticker runs beside
//! it. Read only from files, like the rest of the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use tdbench_contract::{IN_APP_SCHEMA_VERSION, InAppResult, Machine};

/// The reference every speed-up is against.
pub const REFERENCE: &str = "json";

/// A merged in-app run, as `in-app.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InAppRun {
    pub command: Vec<String>,
    pub commit: String,
    pub dirty: bool,
    pub machine: Machine,
    pub updates: u64,
    pub json_bytes: u64,
    pub rows: Vec<Row>,
    pub ticker_idle: Ticker,
    /// Every process's result, in the order they ran.
    pub samples: Vec<InAppResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub implementation: String,
    pub processes: usize,
    pub encoded_bytes: u64,
    /// Medians over processes of each process's median pass.
    pub corpus_us_per_update: f64,
    pub in_situ_us_per_update: f64,
    /// TDLib JSON megabytes of the stream per second of in-situ decoding (the same MB for every
    /// format, so the column compares formats), and the format's own bytes per second.
    pub in_situ_json_mb_per_s: f64,
    pub in_situ_wire_mb_per_s: f64,
    pub corpus_allocations_per_update: f64,
    pub in_situ_allocations_per_update: f64,
    pub peak_heap_bytes: u64,
    pub retained_heap_bytes: u64,
    /// Against [`REFERENCE`], from processes of the same round and direction: median, low, high.
    pub corpus_speedup: Option<Spread>,
    pub in_situ_speedup: Option<Spread>,
    pub ticker_busy: Ticker,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

/// Ticker lateness over processes: the median process's p50 and p99, the worst tick.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Ticker {
    pub ticks: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Checks the processes' results against the run and one another, and merges them. `expected`
/// is the (implementation, sample) of every process the runner started.
pub fn merge(command: Vec<String>, nonce: &str, expected: &[(String, u32)], samples: Vec<InAppResult>) -> Result<InAppRun, String> {
    let first = samples.first().ok_or("no in-app results")?;
    for (slot, sample) in expected.iter().zip(&samples) {
        let at = format!("{} sample {}", slot.0, slot.1);
        if sample.schema_version != IN_APP_SCHEMA_VERSION {
            return Err(format!("{at}: schema version {} (this merger reads {IN_APP_SCHEMA_VERSION})", sample.schema_version));
        }
        if sample.nonce != nonce || sample.implementation != slot.0 || sample.sample != slot.1 {
            return Err(format!("{at}: the file names another run or slot ({} sample {})", sample.implementation, sample.sample));
        }
        if (sample.stream.updates, sample.stream.json_bytes, sample.stream.seed)
            != (first.stream.updates, first.stream.json_bytes, first.stream.seed)
        {
            return Err(format!("{at}: decoded another stream than {} did", first.implementation));
        }
        if sample.store != first.store {
            return Err(format!("{at}: its store holds {:?}, {}'s {:?}", sample.store, first.implementation, first.store));
        }
        let times = sample.corpus.pass_ns_per_update.iter().chain(&sample.in_situ.pass_ns_per_update);
        if sample.corpus.pass_ns_per_update.is_empty() || sample.in_situ.pass_ns_per_update.is_empty() {
            return Err(format!("{at}: no passes"));
        }
        if let Some(bad) = times.clone().find(|t| !(t.is_finite() && **t > 0.0)) {
            return Err(format!("{at}: a pass took {bad} ns per update"));
        }
        if sample.ticker_idle.ticks == 0 || sample.ticker_busy.ticks == 0 {
            return Err(format!("{at}: the ticker never ticked"));
        }
        if sample.in_situ.retained_heap_bytes == 0 {
            return Err(format!("{at}: the store retained nothing"));
        }
    }
    if expected.len() != samples.len() {
        return Err(format!("{} processes started, {} results", expected.len(), samples.len()));
    }

    let mut by_implementation: BTreeMap<&str, Vec<&InAppResult>> = BTreeMap::new();
    for sample in &samples {
        by_implementation.entry(&sample.implementation).or_default().push(sample);
    }
    // Exact counts must agree between processes of one format.
    for (name, runs) in &by_implementation {
        let counts: Vec<(f64, f64)> = runs.iter().map(|r| (r.corpus.allocations_per_update, r.in_situ.allocations_per_update)).collect();
        if counts.windows(2).any(|w| w[0] != w[1]) {
            return Err(format!("{name}: allocation counts differ between its processes: {counts:?}"));
        }
    }
    let pass_median = |passes: &[f64]| median(passes.to_vec());
    let by_slot: BTreeMap<(&str, u32), &InAppResult> = samples.iter().map(|s| ((s.implementation.as_str(), s.sample), s)).collect();
    let speedup = |name: &str, pick: fn(&InAppResult) -> &[f64]| -> Option<Spread> {
        let reference: Vec<&InAppResult> = by_implementation.get(REFERENCE)?.clone();
        let ratios: Vec<f64> =
            reference.iter().filter_map(|r| by_slot.get(&(name, r.sample)).map(|s| pass_median(pick(r)) / pass_median(pick(s)))).collect();
        (!ratios.is_empty()).then(|| spread(ratios))
    };
    let order: Vec<&str> = {
        let mut seen = Vec::new();
        for sample in &samples {
            if !seen.contains(&sample.implementation.as_str()) {
                seen.push(sample.implementation.as_str());
            }
        }
        seen
    };
    let rows = order
        .iter()
        .map(|&name| {
            let runs = &by_implementation[name];
            let corpus = median(runs.iter().map(|r| pass_median(&r.corpus.pass_ns_per_update)).collect()) / 1e3;
            let in_situ = median(runs.iter().map(|r| pass_median(&r.in_situ.pass_ns_per_update)).collect()) / 1e3;
            let seconds = in_situ * 1e-6 * first.stream.updates as f64;
            Row {
                implementation: name.to_string(),
                processes: runs.len(),
                encoded_bytes: runs[0].stream.encoded_bytes,
                corpus_us_per_update: corpus,
                in_situ_us_per_update: in_situ,
                in_situ_json_mb_per_s: first.stream.json_bytes as f64 / 1e6 / seconds,
                in_situ_wire_mb_per_s: runs[0].stream.encoded_bytes as f64 / 1e6 / seconds,
                corpus_allocations_per_update: runs[0].corpus.allocations_per_update,
                in_situ_allocations_per_update: runs[0].in_situ.allocations_per_update,
                peak_heap_bytes: median(runs.iter().map(|r| r.in_situ.peak_heap_bytes as f64).collect()) as u64,
                retained_heap_bytes: median(runs.iter().map(|r| r.in_situ.retained_heap_bytes as f64).collect()) as u64,
                corpus_speedup: speedup(name, |r| &r.corpus.pass_ns_per_update),
                in_situ_speedup: speedup(name, |r| &r.in_situ.pass_ns_per_update),
                ticker_busy: ticker(runs.iter().map(|r| &r.ticker_busy)),
            }
        })
        .collect();
    Ok(InAppRun {
        command,
        commit: first.tree.commit.clone(),
        dirty: samples.iter().any(|s| s.tree.dirty),
        machine: first.machine.clone(),
        updates: first.stream.updates,
        json_bytes: first.stream.json_bytes,
        rows,
        ticker_idle: ticker(samples.iter().map(|s| &s.ticker_idle)),
        samples,
    })
}

fn ticker<'a>(runs: impl Iterator<Item = &'a tdbench_contract::Lateness>) -> Ticker {
    let runs: Vec<_> = runs.collect();
    Ticker {
        ticks: runs.iter().map(|l| l.ticks).sum(),
        p50_us: median(runs.iter().map(|l| l.p50_us).collect()),
        p99_us: median(runs.iter().map(|l| l.p99_us).collect()),
        max_us: runs.iter().map(|l| l.max_us).fold(0.0, f64::max),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn spread(values: Vec<f64>) -> Spread {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Spread { median: median(values), low, high }
}

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

/// The report's section "In the app".
pub fn render(run: &InAppRun) -> String {
    let mut out = String::new();
    let m = &run.machine;
    writeln!(out, "## In the app\n").unwrap();
    writeln!(
        out,
        "The start-up stream (`src/corpus/startup.rs`): {} generated updates of a client's first sync, {} of TDLib JSON. \
         Each format decodes it in a fresh process of its own (`in-app`), in balanced order, twice per round: \
         **corpus-style** (decode each update, drop it — what every corpus figure above measures) and **in situ** \
         (on a background thread, into an app store that keeps users, chats, messages by chat and files by id, \
         replacing what an update sends again). Both under the system allocator. \
         `{}` at `{}`{}, on {} ({} cores, {}).\n",
        run.updates,
        mb(run.json_bytes),
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
    for row in &run.rows {
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
    for row in &run.rows {
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
    let t = &run.ticker_idle;
    writeln!(out, "| nothing (idle) | {} | {:.0} | {:.0} | {:.0} |", t.ticks, t.p50_us, t.p99_us, t.max_us).unwrap();
    for row in &run.rows {
        let t = &row.ticker_busy;
        writeln!(out, "| {} | {} | {:.0} | {:.0} | {:.0} |", row.implementation, t.ticks, t.p50_us, t.p99_us, t.max_us).unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use tdbench_contract::{DecodePass, Lateness, StoreSummary, StreamSummary, Tree};

    use super::*;

    fn sample(implementation: &str, sample: u32, corpus_ns: f64, in_situ_ns: f64) -> InAppResult {
        let pass = |ns: f64| DecodePass {
            pass_ns_per_update: vec![ns * 1.1, ns, ns * 0.99],
            allocations_per_update: 7.5,
            peak_heap_bytes: 12_000_000,
            retained_heap_bytes: 11_900_000,
        };
        let lateness = Lateness { ticks: 180, p50_us: 150.0, p99_us: 900.0, max_us: 2000.0 + sample as f64 };
        InAppResult {
            schema_version: IN_APP_SCHEMA_VERSION,
            implementation: implementation.into(),
            nonce: "n".into(),
            sample,
            tree: Tree { commit: "0123456789abcdef".into(), dirty: false },
            machine: Machine {
                cpu: "cpu".into(),
                os: "os".into(),
                cores: 2,
                rustc: "rustc".into(),
                target: "x86_64".into(),
                profile: "release".into(),
            },
            allocator: "system".into(),
            stream: StreamSummary { updates: 10_000, json_bytes: 20_000_000, encoded_bytes: 5_000_000, seed: 1 },
            corpus: pass(corpus_ns),
            in_situ: pass(in_situ_ns),
            store: StoreSummary { users: 1280, chats: 500, messages: 3722, files: 677 },
            ticker_idle: lateness.clone(),
            ticker_busy: lateness,
        }
    }

    /// json at 20 µs corpus-style and 24 in situ; `fast` 4× faster corpus-style in one direction
    /// and 5× in the other, 3× in situ: its figures follow, and 3 / 4.5 survives.
    fn run() -> (Vec<(String, u32)>, Vec<InAppResult>) {
        let slots = vec![("json".to_string(), 0), ("fast".to_string(), 0), ("fast".to_string(), 1), ("json".to_string(), 1)];
        let samples = vec![
            sample("json", 0, 20_000.0, 24_000.0),
            sample("fast", 0, 5_000.0, 8_000.0),
            sample("fast", 1, 4_000.0, 8_000.0),
            sample("json", 1, 20_000.0, 24_000.0),
        ];
        (slots, samples)
    }

    #[test]
    fn speedups_pair_processes_of_one_round_and_direction() {
        let (slots, samples) = run();
        let merged = merge(vec!["./run.sh".into(), "--in-app".into()], "n", &slots, samples).unwrap();
        let fast = merged.rows.iter().find(|r| r.implementation == "fast").unwrap();
        let corpus = fast.corpus_speedup.unwrap();
        assert!((corpus.low - 4.0).abs() < 1e-9 && (corpus.high - 5.0).abs() < 1e-9 && (corpus.median - 4.5).abs() < 1e-9);
        assert!((fast.in_situ_speedup.unwrap().median - 3.0).abs() < 1e-9);
        assert!((fast.in_situ_us_per_update - 8.0).abs() < 1e-9);
        assert!((fast.in_situ_json_mb_per_s - 250.0).abs() < 1e-6, "20 MB in 80 ms");
        assert_eq!(merged.ticker_idle.max_us, 2001.0);
        let text = render(&merged);
        assert!(text.starts_with("## In the app") && text.contains("| fast | 4.50 | 8.00 | 4.50× (4.00–5.00) | 3.00× | 67% |"), "{text}");
    }

    #[test]
    fn results_that_do_not_belong_or_disagree_are_refused() {
        let check = |edit: fn(&mut Vec<InAppResult>), expect: &str| {
            let (slots, mut samples) = run();
            edit(&mut samples);
            let err = merge(vec![], "n", &slots, samples).unwrap_err();
            assert!(err.contains(expect), "{err}");
        };
        check(|s| s[1].nonce = "stale".into(), "another run or slot");
        check(|s| s[2].implementation = "json".into(), "another run or slot");
        check(|s| s[2].store.messages += 1, "its store holds");
        check(|s| s[3].stream.json_bytes += 1, "another stream");
        check(|s| s[2].in_situ.allocations_per_update = 7.6, "allocation counts differ");
        check(|s| s[1].corpus.pass_ns_per_update.push(0.0), "a pass took 0");
        check(|s| s[1].ticker_busy.ticks = 0, "never ticked");
        check(|s| s[1].in_situ.retained_heap_bytes = 0, "retained nothing");
        check(|s| s[0].schema_version += 1, "schema version");
        check(|s| drop(s.pop()), "4 processes started, 3 results");
    }
}
