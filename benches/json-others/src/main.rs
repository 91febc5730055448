//! Decodes the `message` and `messages` lanes with serde_json, sonic-rs and simd-json (all three
//! through the models' derived serde `Deserialize`, `@type`-tagged enums) and with json-td, in
//! one process, after checking that every reader returns the corpus's reference values. Prints
//! the fastest pass per reader: the statistic NOISE.md found stable on this machine kind.

use std::hint::black_box;
use std::time::Instant;

use tdbench::corpus::Corpus;
use tdbench::registry::codec;
use tdbench::Object;

/// The fastest of `passes` runs of `pass`, in ns.
fn fastest(passes: usize, mut pass: impl FnMut()) -> f64 {
    (0..passes)
        .map(|_| {
            let started = Instant::now();
            pass();
            started.elapsed().as_nanos() as f64
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let corpus = Corpus::load(&Corpus::default_dir()).unwrap_or_else(|_| panic!("the corpus does not load"));
    let json_td = codec("json-td").expect("json-td is registered");
    for (lane, passes) in [("message", 3000), ("messages", 60)] {
        let payloads = corpus.lane(lane);
        let inputs: Vec<Vec<u8>> = payloads.iter().map(|p| p.json.clone()).collect();
        for (payload, input) in payloads.iter().zip(&inputs) {
            assert_eq!(serde_json::from_slice::<Object>(input).unwrap(), payload.value, "serde_json");
            assert_eq!(sonic_rs::from_slice::<Object>(input).unwrap(), payload.value, "sonic-rs");
            assert_eq!(simd_json::serde::from_slice::<Object>(&mut input.clone()).unwrap(), payload.value, "simd-json");
            assert_eq!(json_td.decode(input).unwrap(), payload.value, "json-td");
        }
        let n = inputs.len() as f64;
        // simd-json parses in place: each pass copies the inputs first (timed apart as `copy`).
        let mut scratch = inputs.clone();
        let serde = fastest(passes, || inputs.iter().for_each(|i| drop(black_box(serde_json::from_slice::<Object>(i).unwrap())))) / n;
        let sonic = fastest(passes, || inputs.iter().for_each(|i| drop(black_box(sonic_rs::from_slice::<Object>(i).unwrap())))) / n;
        let simd = fastest(passes, || {
            for (input, s) in inputs.iter().zip(scratch.iter_mut()) {
                s.clear();
                s.extend_from_slice(input);
                drop(black_box(simd_json::serde::from_slice::<Object>(s).unwrap()));
            }
        }) / n;
        let copy = fastest(passes, || {
            for (input, s) in inputs.iter().zip(scratch.iter_mut()) {
                s.clear();
                s.extend_from_slice(input);
                black_box(&s);
            }
        }) / n;
        let td = fastest(passes, || inputs.iter().for_each(|i| drop(black_box(json_td.decode(i).unwrap())))) / n;
        println!("{lane}: ns per decode, fastest of {passes} passes over {} payloads", inputs.len());
        println!("  serde_json {serde:>9.0}   json-td is {:.2}x faster", serde / td);
        println!("  sonic-rs   {sonic:>9.0}   json-td is {:.2}x faster", sonic / td);
        println!("  simd-json  {simd:>9.0}   json-td is {:.2}x faster (includes {copy:.0} to copy the input it parses in place)", simd / td);
        println!("  json-td    {td:>9.0}");
    }
}
