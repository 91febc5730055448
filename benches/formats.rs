//! Criterion benches: every implementation × lane × operation, with `Throughput::Bytes` of the
//! implementation's own encoding, filterable: `cargo bench --bench formats -- messages`.
//!
//! They run the worker's own kernels ([`tdbench::worker::kernels`] through
//! [`tdbench::worker::measured_loop`]) on the corpus the worker validates, so `cargo bench` and
//! `./run.sh` cannot measure different code. Criterion times everything in one process, one
//! after another: fine for exploring, while the gate's numbers come from `./run.sh`'s fresh,
//! balanced processes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tdbench::corpus::{Corpus, lanes::LANES};
use tdbench::registry;
use tdbench::validate::validate_payload;
use tdbench::worker::{kernels, measured_loop, proof};

fn formats(c: &mut Criterion) {
    let corpus = Corpus::load(&Corpus::default_dir())
        .unwrap_or_else(|errors| panic!("corpus does not load:\n{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")));
    let failures: Vec<String> = corpus.payloads.iter().flat_map(validate_payload).map(|f| f.to_string()).collect();
    assert!(failures.is_empty(), "validation failed; nothing measured:\n{}", failures.join("\n"));

    for lane in LANES {
        let payloads = corpus.lane(lane.name);
        if payloads.is_empty() {
            continue;
        }
        let mut group = c.benchmark_group(lane.name);
        // A live TDLib client's threads would colour everything measured after it in this
        // process: TDLib round trips are measured by `./run.sh` only, one process each.
        for implementation in registry::implementations().into_iter().filter(|i| !i.needs_tdlib()) {
            for kernel in kernels(implementation, &payloads, None, lane.stream).expect("kernels of a validated lane") {
                let bytes_per_payload = proof(&kernel).encoded_bytes;
                group.throughput(Throughput::Bytes((bytes_per_payload * kernel.len() as f64) as u64));
                let (mut cursor, mut buffer) = (0, tdbench::worker::placement::output_buffer());
                // One iteration: every payload of the lane once.
                group.bench_function(BenchmarkId::new(kernel.operation().as_str(), implementation.name()), |b| {
                    b.iter(|| measured_loop(&kernel, kernel.len() as u64, &mut cursor, &mut buffer))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, formats);
criterion_main!(benches);
