//! The in-app figures: the `in-app` processes' results checked against one another and merged
//! into one table per question — how fast each format fills an app's store, how much of its
//! corpus speed-up survives there, what the heap holds, and how late a 60 Hz ticker runs beside
//! it. Read only from files, like the rest of the report. Checked and merged here, in the
//! gate's room; drawn as the report's section "In the app" and its headline by
//! [`crate::report::in_app`].

use std::collections::BTreeMap;

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
    /// One per allocator, in the order asked for.
    pub hosts: Vec<Host>,
    /// Every process's result, in the order they ran.
    pub samples: Vec<InAppResult>,
}

/// The figures under one host allocator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub allocator: String,
    pub rows: Vec<Row>,
    pub ticker_idle: Ticker,
}

/// One process the runner started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub allocator: String,
    pub implementation: String,
    pub sample: u32,
}

impl std::fmt::Display for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} under {} sample {}", self.implementation, self.allocator, self.sample)
    }
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
/// is every process the runner started, in order.
pub fn merge(command: Vec<String>, nonce: &str, expected: &[Slot], samples: Vec<InAppResult>) -> Result<InAppRun, String> {
    let first = samples.first().ok_or("no in-app results")?;
    for (slot, sample) in expected.iter().zip(&samples) {
        if sample.schema_version != IN_APP_SCHEMA_VERSION {
            return Err(format!("{slot}: schema version {} (this merger reads {IN_APP_SCHEMA_VERSION})", sample.schema_version));
        }
        if sample.nonce != nonce || sample.implementation != slot.implementation || sample.sample != slot.sample {
            return Err(format!("{slot}: the file names another run or slot ({} sample {})", sample.implementation, sample.sample));
        }
        if sample.allocator != slot.allocator {
            return Err(format!("{slot}: measured under the {} allocator", sample.allocator));
        }
        if (sample.stream.updates, sample.stream.json_bytes, sample.stream.seed)
            != (first.stream.updates, first.stream.json_bytes, first.stream.seed)
        {
            return Err(format!("{slot}: decoded another stream than {} did", first.implementation));
        }
        if sample.store != first.store {
            return Err(format!("{slot}: its store holds {:?}, {}'s {:?}", sample.store, first.implementation, first.store));
        }
        if sample.corpus.pass_ns_per_update.is_empty() || sample.in_situ.pass_ns_per_update.is_empty() {
            return Err(format!("{slot}: no passes"));
        }
        let times = sample.corpus.pass_ns_per_update.iter().chain(&sample.in_situ.pass_ns_per_update);
        if let Some(bad) = times.clone().find(|t| !(t.is_finite() && **t > 0.0)) {
            return Err(format!("{slot}: a pass took {bad} ns per update"));
        }
        if sample.ticker_idle.ticks == 0 || sample.ticker_busy.ticks == 0 {
            return Err(format!("{slot}: the ticker never ticked"));
        }
        if sample.in_situ.retained_heap_bytes == 0 {
            return Err(format!("{slot}: the store retained nothing"));
        }
    }
    if expected.len() != samples.len() {
        return Err(format!("{} processes started, {} results", expected.len(), samples.len()));
    }
    // What a decoder asks the allocator for does not depend on which allocator answers: the
    // exact counts must agree between all processes of one format, whatever their host.
    let mut counts: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for s in &samples {
        counts.entry(&s.implementation).or_default().push((s.corpus.allocations_per_update, s.in_situ.allocations_per_update));
    }
    if let Some((name, differing)) = counts.iter().find(|(_, c)| c.windows(2).any(|w| w[0] != w[1])) {
        return Err(format!("{name}: allocation counts differ between its processes: {differing:?}"));
    }

    let mut allocators: Vec<&str> = Vec::new();
    for slot in expected {
        if !allocators.contains(&slot.allocator.as_str()) {
            allocators.push(&slot.allocator);
        }
    }
    let hosts = allocators.iter().map(|&a| host(a, samples.iter().filter(|s| s.allocator == a).collect())).collect();
    Ok(InAppRun {
        command,
        commit: first.tree.commit.clone(),
        dirty: samples.iter().any(|s| s.tree.dirty),
        machine: first.machine.clone(),
        updates: first.stream.updates,
        json_bytes: first.stream.json_bytes,
        hosts,
        samples,
    })
}

/// One allocator's rows, formats in the order their processes first ran.
fn host(allocator: &str, samples: Vec<&InAppResult>) -> Host {
    let mut by_implementation: BTreeMap<&str, Vec<&InAppResult>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for &sample in &samples {
        if !order.contains(&sample.implementation.as_str()) {
            order.push(&sample.implementation);
        }
        by_implementation.entry(&sample.implementation).or_default().push(sample);
    }
    let pass_median = |passes: &[f64]| crate::median::median_or_nan(passes.to_vec());
    let by_slot: BTreeMap<(&str, u32), &InAppResult> = samples.iter().map(|s| ((s.implementation.as_str(), s.sample), *s)).collect();
    let speedup = |name: &str, pick: fn(&InAppResult) -> &[f64]| -> Option<Spread> {
        let reference = by_implementation.get(REFERENCE)?;
        let ratios: Vec<f64> =
            reference.iter().filter_map(|r| by_slot.get(&(name, r.sample)).map(|s| pass_median(pick(r)) / pass_median(pick(s)))).collect();
        (!ratios.is_empty()).then(|| spread(ratios))
    };
    let rows = order
        .iter()
        .map(|&name| {
            let runs = &by_implementation[name];
            let corpus = crate::median::median_or_nan(runs.iter().map(|r| pass_median(&r.corpus.pass_ns_per_update)).collect()) / 1e3;
            let in_situ = crate::median::median_or_nan(runs.iter().map(|r| pass_median(&r.in_situ.pass_ns_per_update)).collect()) / 1e3;
            let seconds = in_situ * 1e-6 * runs[0].stream.updates as f64;
            Row {
                implementation: name.to_string(),
                processes: runs.len(),
                encoded_bytes: runs[0].stream.encoded_bytes,
                corpus_us_per_update: corpus,
                in_situ_us_per_update: in_situ,
                in_situ_json_mb_per_s: runs[0].stream.json_bytes as f64 / 1e6 / seconds,
                in_situ_wire_mb_per_s: runs[0].stream.encoded_bytes as f64 / 1e6 / seconds,
                corpus_allocations_per_update: runs[0].corpus.allocations_per_update,
                in_situ_allocations_per_update: runs[0].in_situ.allocations_per_update,
                peak_heap_bytes: crate::median::median_or_nan(runs.iter().map(|r| r.in_situ.peak_heap_bytes as f64).collect()) as u64,
                retained_heap_bytes: crate::median::median_or_nan(runs.iter().map(|r| r.in_situ.retained_heap_bytes as f64).collect())
                    as u64,
                corpus_speedup: speedup(name, |r| &r.corpus.pass_ns_per_update),
                in_situ_speedup: speedup(name, |r| &r.in_situ.pass_ns_per_update),
                ticker_busy: ticker(runs.iter().map(|r| &r.ticker_busy)),
            }
        })
        .collect();
    Host { allocator: allocator.to_string(), rows, ticker_idle: ticker(samples.iter().map(|s| &s.ticker_idle)) }
}

/// Formats fastest first by `time`.
pub(crate) fn ranking(host: &Host, time: fn(&Row) -> f64) -> Vec<&str> {
    let mut rows: Vec<&Row> = host.rows.iter().collect();
    rows.sort_by(|a, b| time(a).total_cmp(&time(b)));
    rows.iter().map(|r| r.implementation.as_str()).collect()
}

/// The lowest and highest of a format's per-process medians under one allocator, µs per update.
fn process_range(run: &InAppRun, allocator: &str, implementation: &str, pass: fn(&InAppResult) -> &[f64]) -> Option<(f64, f64)> {
    let medians: Vec<f64> = run
        .samples
        .iter()
        .filter(|s| s.allocator == allocator && s.implementation == implementation)
        .map(|s| crate::median::median_or_nan(pass(s).to_vec()) / 1e3)
        .collect();
    (!medians.is_empty()).then(|| (medians.iter().copied().fold(f64::INFINITY, f64::min), medians.iter().copied().fold(0.0, f64::max)))
}

/// Pairs of formats whose order flips between two hosts with room to spare: under one, every
/// process of the first was faster than every process of the second, under the other the
/// reverse. A flip of two medians inside each other's process spread is noise, not a ranking.
pub(crate) fn separated_flips(run: &InAppRun, pass: fn(&InAppResult) -> &[f64]) -> Vec<String> {
    let mut flips = Vec::new();
    let hosts = &run.hosts;
    let names: Vec<&str> = hosts[0].rows.iter().map(|r| r.implementation.as_str()).collect();
    let faster = |allocator: &str, a: &str, b: &str| match (process_range(run, allocator, a, pass), process_range(run, allocator, b, pass))
    {
        (Some((_, a_high)), Some((b_low, _))) => a_high < b_low,
        _ => false,
    };
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            for (x, first) in hosts.iter().enumerate() {
                for second in &hosts[x + 1..] {
                    let (p, q) = (first.allocator.as_str(), second.allocator.as_str());
                    if (faster(p, a, b) && faster(q, b, a)) || (faster(p, b, a) && faster(q, a, b)) {
                        flips.push(format!("{a} and {b} swap between {p} and {q}"));
                    }
                }
            }
        }
    }
    flips
}

fn ticker<'a>(runs: impl Iterator<Item = &'a tdbench_contract::Lateness>) -> Ticker {
    let runs: Vec<_> = runs.collect();
    Ticker {
        ticks: runs.iter().map(|l| l.ticks).sum(),
        p50_us: crate::median::median_or_nan(runs.iter().map(|l| l.p50_us).collect()),
        p99_us: crate::median::median_or_nan(runs.iter().map(|l| l.p99_us).collect()),
        max_us: runs.iter().map(|l| l.max_us).fold(0.0, f64::max),
    }
}

fn spread(values: Vec<f64>) -> Spread {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Spread { median: crate::median::median_or_nan(values), low, high }
}

#[cfg(test)]
mod tests {
    use tdbench_contract::{DecodePass, Lateness, StoreSummary, StreamSummary, Tree};

    use super::*;
    // The merge's tests check what the report draws of it too: the merged figures in words.
    use crate::report::in_app::render;

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
    fn run() -> (Vec<Slot>, Vec<InAppResult>) {
        let slot = |name: &str, sample| Slot { allocator: "system".into(), implementation: name.into(), sample };
        let slots = vec![slot("json", 0), slot("fast", 0), slot("fast", 1), slot("json", 1)];
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
        let fast = merged.hosts[0].rows.iter().find(|r| r.implementation == "fast").unwrap();
        let corpus = fast.corpus_speedup.unwrap();
        assert!((corpus.low - 4.0).abs() < 1e-9 && (corpus.high - 5.0).abs() < 1e-9 && (corpus.median - 4.5).abs() < 1e-9);
        assert!((fast.in_situ_speedup.unwrap().median - 3.0).abs() < 1e-9);
        assert!((fast.in_situ_us_per_update - 8.0).abs() < 1e-9);
        assert!((fast.in_situ_json_mb_per_s - 250.0).abs() < 1e-6, "20 MB in 80 ms");
        assert_eq!(merged.hosts[0].ticker_idle.max_us, 2001.0);
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
        check(|s| s[1].allocator = "mimalloc".into(), "under the mimalloc allocator");
    }

    /// Two hosts: under `system` json-td is faster than protobuf in situ, under `mimalloc` the
    /// other way round; corpus-style both rank alike. Only the in-situ ranking is flagged.
    #[test]
    fn hosts_side_by_side_and_ranking_changes_flagged() {
        let mut slots = Vec::new();
        let mut samples = Vec::new();
        for (allocator, td_in_situ, protobuf_in_situ) in [("system", 6_000.0, 7_000.0), ("mimalloc", 6_000.0, 5_000.0)] {
            for (name, corpus, in_situ) in
                [("json", 20_000.0, 24_000.0), ("json-td", 5_000.0, td_in_situ), ("protobuf", 3_000.0, protobuf_in_situ)]
            {
                slots.push(Slot { allocator: allocator.into(), implementation: name.into(), sample: 0 });
                let mut result = sample(name, 0, corpus, in_situ);
                result.allocator = allocator.into();
                samples.push(result);
            }
        }
        let merged = merge(vec![], "n", &slots, samples.clone()).unwrap();
        assert_eq!(merged.hosts.iter().map(|h| h.allocator.as_str()).collect::<Vec<_>>(), ["system", "mimalloc"]);
        let text = render(&merged);
        assert!(text.contains("### 2 allocators as 2 hosts"), "{text}");
        assert!(text.contains("| json-td | 6.00 | 6.00 | 5.00 | 5.00 | 4.00× | 4.00× |"), "{text}");
        assert!(
            text.contains("- in situ — **the ranking changes between allocators**: json-td and protobuf swap between system and mimalloc. system: json-td < protobuf < json; mimalloc: protobuf < json-td < json."),
            "{text}"
        );
        assert!(text.contains("- corpus-style — the same ranking under every allocator."), "{text}");

        // A decoder asks for as many allocations whichever allocator answers.
        samples[4].in_situ.allocations_per_update = 8.0;
        let err = merge(vec![], "n", &slots, samples).unwrap_err();
        assert!(err.contains("json-td: allocation counts differ"), "{err}");
    }
}
