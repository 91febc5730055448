//! The in-app measurement: one codec decodes the start-up stream in this fresh process, first
//! corpus-style (decode each update, drop it), then in situ — on a background thread, into an
//! [`app::store::Store`](crate::app::store::Store) that keeps it — while the main thread ticks
//! at 60 Hz as a UI thread would and records how late each tick starts.
//!
//! Both kinds of pass run under the same counting (the decoding thread's allocations are counted
//! in every pass), so their times differ by what the store costs, not by instrumentation.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tdbench_contract::{DecodePass, IN_APP_SCHEMA_VERSION, InAppResult, Lateness, Role, StoreSummary, StreamSummary, Tree};

use crate::Codec;
use crate::alloc;
use crate::app::store::Store;
use crate::codecs::json::Json;
use crate::corpus::startup;
use crate::registry;
use crate::worker::machine;

/// One frame at 60 Hz.
pub const TICK: Duration = Duration::from_nanos(16_666_667);

pub struct InAppJob {
    pub implementation: String,
    pub nonce: String,
    pub sample: u32,
    pub tree: std::path::PathBuf,
    /// Passes of each kind, at least.
    pub passes: u32,
    /// In-situ passes go on until the ticker has run this long beside them, so that fast and
    /// slow codecs give the ticker samples of the same size.
    pub busy: Duration,
    /// Ticks with nothing else running.
    pub idle_ticks: u32,
    /// The allocator this binary was built with, as the report names it.
    pub allocator: &'static str,
}

pub fn run(job: &InAppJob) -> Result<InAppResult, String> {
    let codec = registry::codec(&job.implementation).ok_or_else(|| {
        let names: Vec<_> = registry::CODECS.iter().map(|c| c.name()).collect();
        format!("`{}` is not a codec; the in-app measurement takes one of: {}", job.implementation, names.join(", "))
    })?;
    let stream = startup::generate();
    let mut json_bytes = 0u64;
    let mut inputs = Vec::with_capacity(stream.updates.len());
    let mut buffer = Vec::new();
    for (index, update) in stream.updates.iter().enumerate() {
        buffer.clear();
        Json.encode(update, &mut buffer).map_err(|e| format!("update {}: {e}", index + 1))?;
        json_bytes += buffer.len() as u64;
        let mut encoded = Vec::new();
        codec.encode(update, &mut encoded).map_err(|e| format!("update {}: {e}", index + 1))?;
        // Validate before measuring: a decode that returns another object is not faster.
        match codec.decode(&encoded) {
            Ok(back) if back == *update => {}
            Ok(_) => return Err(format!("update {} ({}) decodes to a different object", index + 1, update.tl_name())),
            Err(e) => return Err(format!("update {} ({}): {e}", index + 1, update.tl_name())),
        }
        inputs.push(encoded);
    }
    let encoded_bytes = inputs.iter().map(|i| i.len() as u64).sum();
    let updates = inputs.len() as f64;

    let ticker_idle = lateness(&tick(|ticks| ticks >= job.idle_ticks as usize));

    // Corpus-style: what every corpus figure measures. One pass first to warm up, unrecorded;
    // then passes until both `passes` and `busy / 3` are reached, so a fast codec's median is not
    // one of five 20 ms passes.
    for input in &inputs {
        black_box(codec.decode(black_box(input)).expect("validated above"));
    }
    let mut corpus = DecodePass { pass_ns_per_update: Vec::new(), allocations_per_update: 0.0, peak_heap_bytes: 0, retained_heap_bytes: 0 };
    let corpus_started = Instant::now();
    while corpus.pass_ns_per_update.len() < job.passes as usize || corpus_started.elapsed() < job.busy / 3 {
        let before = alloc::heap();
        alloc::reset_peak();
        let started = Instant::now();
        let ((), counts) = alloc::measure(|| {
            for input in &inputs {
                black_box(codec.decode(black_box(input)).expect("validated above"));
            }
        });
        corpus.pass_ns_per_update.push(started.elapsed().as_nanos() as f64 / updates);
        corpus.allocations_per_update = counts.allocations as f64 / updates;
        let after = alloc::heap();
        corpus.peak_heap_bytes = after.peak.saturating_sub(before.live) as u64;
        corpus.retained_heap_bytes = after.live.saturating_sub(before.live) as u64;
    }

    // In situ, the ticker beside it.
    let done = AtomicBool::new(false);
    let (in_situ, store, busy_ticks) = thread::scope(|scope| {
        let decoder = scope.spawn(|| {
            let mut pass =
                DecodePass { pass_ns_per_update: Vec::new(), allocations_per_update: 0.0, peak_heap_bytes: 0, retained_heap_bytes: 0 };
            let started_all = Instant::now();
            let mut store = Store::new();
            while pass.pass_ns_per_update.len() < job.passes as usize || started_all.elapsed() < job.busy {
                drop(std::mem::take(&mut store));
                let before = alloc::heap();
                alloc::reset_peak();
                let started = Instant::now();
                let ((), counts) = alloc::measure(|| {
                    for input in &inputs {
                        store.apply(codec.decode(black_box(input)).expect("validated above"));
                    }
                });
                pass.pass_ns_per_update.push(started.elapsed().as_nanos() as f64 / updates);
                pass.allocations_per_update = counts.allocations as f64 / updates;
                let after = alloc::heap();
                pass.peak_heap_bytes = after.peak.saturating_sub(before.live) as u64;
                pass.retained_heap_bytes = after.live.saturating_sub(before.live) as u64;
            }
            done.store(true, Ordering::Release);
            (pass, store)
        });
        let busy = tick(|_| done.load(Ordering::Acquire));
        let (pass, store) = decoder.join().expect("the decoding thread does not panic");
        (pass, store, busy)
    });

    if store.held() != stream.expected || store.unmatched != 0 || store.ignored != 0 {
        return Err(format!(
            "after the stream the store does not hold what the generator sent ({} unmatched, {} ignored updates)",
            store.unmatched, store.ignored
        ));
    }
    let summary = StoreSummary {
        users: store.users.len() as u64,
        chats: store.chats.len() as u64,
        messages: store.messages.values().map(|m| m.len() as u64).sum(),
        files: store.files.len() as u64,
    };
    drop(store);

    let (commit, dirty) = machine::tree_state(&job.tree, Role::Current);
    Ok(InAppResult {
        schema_version: IN_APP_SCHEMA_VERSION,
        implementation: job.implementation.clone(),
        nonce: job.nonce.clone(),
        sample: job.sample,
        tree: Tree { commit, dirty },
        machine: machine::current(),
        allocator: job.allocator.to_string(),
        stream: StreamSummary { updates: inputs.len() as u64, json_bytes, encoded_bytes, seed: startup::SEED },
        corpus,
        in_situ,
        store: summary,
        ticker_idle,
        ticker_busy: lateness(&busy_ticks),
    })
}

/// Ticks every [`TICK`] from now until `stop(ticks so far)`, doing a frame's small fixed work
/// each time; how late each tick started, in µs.
fn tick(stop: impl Fn(usize) -> bool) -> Vec<f64> {
    let start = Instant::now();
    let mut late = Vec::new();
    let mut frame = vec![0u64; 2048];
    let mut k = 1u32;
    while !stop(late.len()) {
        let due = start + TICK * k;
        let now = Instant::now();
        if now < due {
            thread::sleep(due - now);
        }
        late.push(Instant::now().saturating_duration_since(due).as_secs_f64() * 1e6);
        frame_work(&mut frame, k);
        // A tick that overran its frame waits for the next due time, as a display would.
        k = (start.elapsed().as_nanos() / TICK.as_nanos()) as u32 + 1;
    }
    late
}

/// What a UI thread does in a frame, small and fixed: walk its layout state and build a few
/// short strings (labels), so it also meets the allocator the decoder is using.
fn frame_work(frame: &mut [u64], k: u32) {
    let mut acc = k as u64;
    for slot in frame.iter_mut() {
        acc = acc.wrapping_mul(6364136223846793005).wrapping_add(*slot | 1);
        *slot = acc;
    }
    let labels: Vec<String> = (0..32).map(|i| format!("row {i}: {acc:x}")).collect();
    black_box(labels);
}

fn lateness(late_us: &[f64]) -> Lateness {
    let mut sorted = late_us.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| if sorted.is_empty() { 0.0 } else { sorted[((sorted.len() - 1) as f64 * q).round() as usize] };
    Lateness { ticks: sorted.len() as u64, p50_us: at(0.5), p99_us: at(0.99), max_us: sorted.last().copied().unwrap_or(0.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let l = lateness(&samples);
        assert_eq!((l.ticks, l.p50_us, l.p99_us, l.max_us), (100, 51.0, 99.0, 100.0));
        assert_eq!(lateness(&[]).ticks, 0);
    }
}
