//! The cost of a skewed read: decoding what the other release wrote against decoding what the
//! reader's own release wrote, for the same payloads, in one process, in alternating batches
//! (same, skewed, skewed, same, ...), so that the machine's drift hits both alike
//! (`../shared/NOISE.md`). The pairs go out raw; the runner's statistics turn them into a ratio
//! with its interval, as for every other comparison. Allocations are counted exactly, once.

use std::hint::black_box;
use std::time::Instant;

use tdbench::alloc;
use tdbench_contract::skew::Cost;

use crate::format::Format;
use crate::outcome::convert;
use crate::release::Release;

/// A batch lasts at least this long, so the clock's granularity is noise.
const BATCH_NANOS: u128 = 5_000_000;

/// Times the skewed read of `written` against the same-release read of its reference values.
pub fn measure<W: Release, R: Release>(format: Format, written: &[W::Object], blocks: usize) -> Cost {
    let mut own = Vec::new();
    let mut skewed = Vec::new();
    for value in written {
        let Some(expected) = convert::<W, R>(value) else { continue };
        let mut bytes = Vec::new();
        format.encode::<R>(&expected, &mut bytes).expect("the reader's own release writes its values");
        own.push(bytes);
        let mut bytes = Vec::new();
        format.encode::<W>(value, &mut bytes).expect("the writer's release writes its values");
        skewed.push(bytes);
    }
    let pass = |inputs: &[Vec<u8>]| {
        for bytes in inputs {
            let _ = black_box(format.decode::<R>(black_box(bytes)));
        }
    };
    let count = |inputs: &[Vec<u8>]| alloc::measure(|| pass(inputs)).1;
    let per_payload = |total: u64| total as f64 / own.len().max(1) as f64;
    let (own_counts, skewed_counts) = (count(&own), count(&skewed));

    // Warm both, then size a batch from the slower of the two.
    let mut repeats = 1u32;
    loop {
        let started = Instant::now();
        for _ in 0..repeats {
            pass(&own);
            pass(&skewed);
        }
        if started.elapsed().as_nanos() >= BATCH_NANOS || own.is_empty() {
            break;
        }
        repeats *= 2;
    }
    let batch = |inputs: &[Vec<u8>]| {
        let started = Instant::now();
        for _ in 0..repeats {
            pass(inputs);
        }
        started.elapsed().as_nanos() as f64 / (f64::from(repeats) * own.len().max(1) as f64)
    };
    let mut pairs = Vec::with_capacity(blocks);
    for block in 0..blocks {
        // Alternate which goes first, so neither always runs on a warmer machine.
        pairs.push(if block % 2 == 0 {
            let a = batch(&own);
            (a, batch(&skewed))
        } else {
            let b = batch(&skewed);
            (batch(&own), b)
        });
    }
    Cost {
        payloads: own.len(),
        pairs,
        allocations: (per_payload(own_counts.allocations), per_payload(skewed_counts.allocations)),
        bytes: (per_payload(own_counts.bytes), per_payload(skewed_counts.bytes)),
    }
}
