//! Criterion benches: every implementation × lane × operation, with `Throughput::Bytes` of the
//! implementation's own encoding, filterable: `cargo bench --bench formats -- messages`.
//!
//! They use the registry, corpus and validation the worker uses, so `cargo bench` and
//! `./run.sh` cannot measure different code. Criterion times everything in one process, one
//! after another: fine for exploring, while the gate's numbers come from `./run.sh`'s fresh,
//! balanced processes.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tdbench::corpus::{lanes::LANES, Corpus};
use tdbench::registry::{self, Floor, Implementation};
use tdbench::validate::validate_payload;

fn formats(c: &mut Criterion) {
    let corpus = Corpus::load(&Corpus::default_dir()).unwrap_or_else(|errors| {
        panic!("corpus does not load:\n{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))
    });
    let failures: Vec<String> = corpus.payloads.iter().flat_map(validate_payload).map(|f| f.to_string()).collect();
    assert!(failures.is_empty(), "validation failed; nothing measured:\n{}", failures.join("\n"));

    for lane in LANES {
        let payloads = corpus.lane(lane.name);
        if payloads.is_empty() {
            continue;
        }
        let mut group = c.benchmark_group(lane.name);
        for implementation in registry::implementations() {
            let name = implementation.name();
            match implementation {
                Implementation::Codec(codec) => {
                    let encoded: Vec<Vec<u8>> = payloads
                        .iter()
                        .map(|p| {
                            let mut out = Vec::new();
                            codec.encode(&p.value, &mut out).expect("validated");
                            out
                        })
                        .collect();
                    let bytes: usize = encoded.iter().map(Vec::len).sum();
                    group.throughput(Throughput::Bytes(bytes as u64));
                    let mut buffer = Vec::new();
                    group.bench_function(BenchmarkId::new("encode", name), |b| {
                        b.iter(|| {
                            for p in &payloads {
                                buffer.clear();
                                codec.encode(&p.value, &mut buffer).expect("validated");
                                black_box(&buffer);
                            }
                        })
                    });
                    group.bench_function(BenchmarkId::new("decode", name), |b| {
                        b.iter(|| {
                            for bytes in &encoded {
                                drop(black_box(codec.decode(bytes).expect("validated")));
                            }
                        })
                    });
                }
                Implementation::Floor(Floor::Clone) => {
                    let bytes: usize = payloads.iter().map(|p| p.json.len()).sum();
                    group.throughput(Throughput::Bytes(bytes as u64));
                    group.bench_function(BenchmarkId::new("decode", name), |b| {
                        b.iter(|| {
                            for p in &payloads {
                                drop(black_box(p.value.clone()));
                            }
                        })
                    });
                }
                // A live TDLib client's threads would colour everything measured after it in this
                // process: TDLib round trips are measured by `./run.sh` only, one process each.
                Implementation::Tdlib { .. } => {}
                Implementation::Floor(Floor::Memcpy) => {
                    let bytes: usize = payloads.iter().map(|p| p.json.len()).sum();
                    group.throughput(Throughput::Bytes(bytes as u64));
                    let mut buffer = Vec::new();
                    group.bench_function(BenchmarkId::new("encode", name), |b| {
                        b.iter(|| {
                            for p in &payloads {
                                buffer.clear();
                                buffer.extend_from_slice(&p.json);
                                black_box(&buffer);
                            }
                        })
                    });
                }
            }
        }
        group.finish();
    }
}

criterion_group!(benches, formats);
criterion_main!(benches);
