//! The gate: reads a run's plan and worker files (and nothing else), rejects what cannot be
//! trusted, compares baseline and current, and says pass or fail. Re-runnable on a saved
//! output folder: `cargo run --release -p tdbench-scripts --bin merge -- DIR`.
//!
//! One module per thing it checks, in the order they run:
//! - [`integrity`]: every planned sample is there, once, from this run, in its slot, from the
//!   plan's trees, machine, settings and corpus, with every operation the catalog promises and
//!   only valid figures; and at the end, every comparison the plan implies was made;
//! - [`determinism`]: within one tree, every process allocated, produced and counted the same;
//! - [`format`]: baseline and current produced the same bytes;
//! - [`counts`]: which comparisons the change touched, by their counts (what gets timed, and
//!   by which rules it is judged);
//! - [`allocations`], [`instructions`], [`latency`]: the regressions;
//! - [`disagreement`]: under `--measure both`, where time and instruction counts disagree.
//!
//! A key that one tree has and the other lacks, or a figure that is zero, negative or not a
//! number, is a violation, never a skipped comparison.

mod allocations;
pub mod counts;
mod determinism;
mod disagreement;
mod format;
pub mod in_app;
mod instructions;
mod integrity;
mod latency;
pub mod stats;

use std::collections::BTreeMap;
use std::path::Path;

use tdbench_contract::{OperationResult, Role, RunVerdict, WorkerResult};

use crate::plan::Plan;
use crate::results::{Comparison, Key, Provenance, RESULTS_SCHEMA_VERSION, Results, Violation};

pub use integrity::load_samples;
pub use latency::{FAMILY_ALPHA, Prospect, Screened, look_first, screen};

/// One process's figures for one operation.
#[derive(Clone, Copy)]
pub(crate) struct Measured<'a> {
    pub sample: u32,
    pub op: &'a OperationResult,
    /// Timed in one process with the other tree's sample of the same index, in blocks of this
    /// many batches per side.
    pub in_process: Option<u32>,
    /// From a count (instructions and allocations, no time).
    pub counted: bool,
}

/// A key's measurements in each tree, in sample order.
#[derive(Default)]
pub(crate) struct ByRole<'a> {
    pub baseline: Vec<Measured<'a>>,
    pub current: Vec<Measured<'a>>,
}

impl<'a> ByRole<'a> {
    pub fn role(&self, role: Role) -> &[Measured<'a>] {
        match role {
            Role::Baseline => &self.baseline,
            Role::Current => &self.current,
        }
    }

    /// The first process of each tree, when both trees measured the key.
    pub fn firsts(&self) -> Option<(&'a OperationResult, &'a OperationResult)> {
        Some((self.baseline.first()?.op, self.current.first()?.op))
    }
}

pub(crate) type Grouped<'a> = BTreeMap<Key, ByRole<'a>>;

pub(crate) fn group(samples: &[WorkerResult]) -> Grouped<'_> {
    let mut grouped: Grouped = BTreeMap::new();
    for s in samples {
        for op in &s.operations {
            let key = Key { lane: s.lane.clone(), implementation: s.implementation.clone(), operation: op.operation };
            let by_role = grouped.entry(key).or_default();
            let list = match s.role {
                Role::Baseline => &mut by_role.baseline,
                Role::Current => &mut by_role.current,
            };
            list.push(Measured { sample: s.sample, op, in_process: s.in_process.map(|p| p.batches_per_block), counted: s.counted });
        }
    }
    // Counts first, then timed samples, each in sample order.
    for by_role in grouped.values_mut() {
        by_role.baseline.sort_by_key(|m| (!m.counted, m.sample));
        by_role.current.sort_by_key(|m| (!m.counted, m.sample));
    }
    grouped
}

/// Reads the plan a run wrote before its first worker.
pub fn read_plan(output: &Path) -> Result<Plan, String> {
    let path = output.join("plan.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Merges a run folder: the full results, whatever the verdict, with the profiles the run took.
pub fn merge(output: &Path) -> Result<Results, String> {
    let plan = read_plan(output)?;
    let (samples, violations) = integrity::load_samples(output, &plan);
    let mut results = judge(&plan, samples, violations);
    let passes = results.provenance.settings.worker.instruction_cycles;
    let payloads = |lane: &str| results.samples.iter().find(|s| s.lane == lane).map(|s| s.corpus.lane_payloads as u64);
    results.profiles = crate::profile::read_all(output, passes, payloads);
    Ok(results)
}

/// Every check over samples already loaded; `violations` are those found while loading.
pub fn judge(plan: &Plan, mut samples: Vec<WorkerResult>, mut violations: Vec<Violation>) -> Results {
    // One order whatever order the files were read in: by lane, implementation and tree, counts
    // first. The published copy writes each such run of samples' shared figures once.
    samples.sort_by(|a, b| {
        (&a.lane, &a.implementation, a.role, !a.counted, a.sample).cmp(&(&b.lane, &b.implementation, b.role, !b.counted, b.sample))
    });
    violations.extend(integrity::check_provenance(plan, &samples));
    violations.extend(integrity::check_contents(plan, &samples));
    violations.extend(integrity::check_pairing(plan, &samples));
    let grouped = group(&samples);
    violations.extend(determinism::check(&grouped));
    violations.extend(format::check(plan, &grouped));
    let mut comparisons: Vec<Comparison> = Vec::new();
    for found in [allocations::compare(&grouped), instructions::compare(plan, &grouped), latency::compare(plan, &grouped)] {
        let (c, v) = found;
        comparisons.extend(c);
        violations.extend(v);
    }
    comparisons.sort_by_key(|a| (a.key(), a.metric));
    violations.extend(integrity::check_coverage(plan, &comparisons));
    let notes = disagreement::notes(&comparisons, plan.settings.threshold_percent / 100.0);
    let verdict = if violations.is_empty() { RunVerdict::Pass } else { RunVerdict::Fail };
    Results {
        schema_version: RESULTS_SCHEMA_VERSION,
        verdict,
        provenance: Provenance {
            nonce: plan.nonce.clone(),
            command: plan.command.clone(),
            lanes: plan.lanes.clone(),
            implementations: plan.implementations.clone(),
            catalog: plan.catalog.clone(),
            baseline: plan.baseline.clone(),
            current: plan.current.clone(),
            machine: samples.first().map(|s| s.machine.clone()),
            corpus_sha256: samples.first().map(|s| s.corpus.sha256.clone()).unwrap_or_default(),
            settings: plan.settings.clone(),
            pairing: plan.pairing.clone(),
            left_out: plan.left_out.clone(),
            merged_at_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        },
        violations,
        comparisons,
        notes,
        profiles: Vec::new(),
        samples,
    }
}

#[cfg(test)]
pub(crate) mod fixture;

#[cfg(test)]
mod tests {
    use tdbench_contract::{BatchStats, InProcess, Measure, Metric, Operation, Verdict};

    use super::fixture;
    use super::*;
    use crate::results::Class;

    fn kinds(results: &Results) -> Vec<&str> {
        let mut kinds: Vec<&str> = results.violations.iter().map(|v| v.kind.as_str()).collect();
        kinds.dedup();
        kinds
    }

    /// Judges the fixture after `tamper`.
    fn judged(measure: Measure, tamper: impl FnOnce(&mut Vec<WorkerResult>)) -> Results {
        let plan = fixture::plan(measure);
        let mut samples = fixture::samples(&plan);
        tamper(&mut samples);
        judge(&plan, samples, Vec::new())
    }

    fn current_tl(samples: &mut [WorkerResult]) -> impl Iterator<Item = &mut WorkerResult> {
        samples.iter_mut().filter(|s| s.role == Role::Current && s.implementation == "tl")
    }

    #[test]
    fn the_untouched_fixture_passes_with_every_comparison() {
        for measure in [Measure::Time, Measure::Instructions, Measure::Both] {
            let results = judged(measure, |_| {});
            assert!(results.passed(), "{measure}: {:?}", results.violations);
            let latency = results.comparisons.iter().filter(|c| c.metric == Metric::Latency).count();
            let counted = results.comparisons.iter().filter(|c| c.metric == Metric::Instructions).count();
            assert_eq!((latency, counted), (if measure.times() { 3 } else { 0 }, if measure.counts() { 3 } else { 0 }), "{measure}");
            for c in &results.comparisons {
                let floor = c.implementation == "clone" && c.metric == Metric::Latency;
                // Equal counts: unchanged, whether time runs or not; timed without counts: a pass.
                let expected = match c.metric {
                    _ if floor => Verdict::Reference,
                    Metric::Instructions => Verdict::Unchanged,
                    Metric::Latency if measure.counts() => Verdict::Unchanged,
                    _ => Verdict::Pass,
                };
                assert_eq!(c.verdict, expected, "{measure}: {c:?}");
            }
        }
    }

    /// The current tree's tl decode counted `by` more instructions per op, with another profile.
    fn counted_more(samples: &mut [WorkerResult], by: f64) {
        for s in current_tl(samples).filter(|s| s.counted) {
            let op = &mut s.operations[1];
            op.instructions_per_op = op.instructions_per_op.map(|n| n + by);
            op.instruction_profile = Some(format!("{:064x}", 1501));
        }
    }

    /// The current tree's tl decode batches `factor` times as long.
    fn slower_decode(samples: &mut [WorkerResult], factor: f64) {
        for s in current_tl(samples).filter(|s| !s.counted) {
            s.operations[1].batches_ns_per_op.iter_mut().for_each(|b| *b *= factor);
            s.operations[1].stats = BatchStats::of(&s.operations[1].batches_ns_per_op);
        }
    }

    #[test]
    fn counts_first_decide_which_comparisons_time_judges_at_the_threshold() {
        // tl's decode counted differently: judged by time at 1%; its encode, equal counts:
        // unchanged; the floor: a reference.
        let results = judged(Measure::Both, |samples| counted_more(samples, 1.0));
        assert!(results.passed(), "{:?}", results.violations);
        let latency = |operation: Operation| {
            results
                .comparisons
                .iter()
                .find(|c| c.metric == Metric::Latency && c.implementation == "tl" && c.operation == operation)
                .unwrap()
        };
        let (decode, encode) = (latency(Operation::Decode), latency(Operation::Encode));
        assert_eq!((decode.class, decode.verdict, decode.threshold), (Some(Class::Changed), Verdict::Pass, Some(0.01)));
        assert_eq!((encode.class, encode.verdict, encode.threshold), (Some(Class::Unchanged), Verdict::Unchanged, Some(0.05)));
        // The same counts with another profile: changed too (the machine code that ran moved).
        let moved = judged(Measure::Both, |samples| counted_more(samples, 0.0));
        let decode =
            moved.comparisons.iter().find(|c| c.metric == Metric::Latency && c.implementation == "tl" && c.operation == Operation::Decode);
        assert_eq!(decode.unwrap().class, Some(Class::Changed));
        let text = crate::summary::text(&results);
        assert!(
            text.starts_with("latency at 1%: all 2 comparisons decided: 1 unchanged by their instruction counts, 1 by time (1 with 80% power at 1%, 0 by \
                 their interval alone)"),
            "{text}"
        );
    }

    #[test]
    fn a_changed_comparison_fails_at_the_threshold_and_an_unchanged_one_only_beyond_the_backstop() {
        // +2% where the counts changed: a regression of the 1% threshold.
        let changed = judged(Measure::Both, |samples| {
            counted_more(samples, 1.0);
            slower_decode(samples, 1.02);
        });
        assert_eq!(kinds(&changed), ["latency regression"]);
        // +2% where the counts are equal: below half the 5% backstop, unchanged.
        let hidden = judged(Measure::Both, |samples| slower_decode(samples, 1.02));
        assert!(hidden.passed(), "{:?}", hidden.violations);
        // +20% where the counts are equal: what counts cannot see, caught by the backstop.
        let large = judged(Measure::Both, |samples| slower_decode(samples, 1.2));
        assert_eq!(kinds(&large), ["latency regression"]);
        assert!(large.violations[0].message.contains("backstop"), "{}", large.violations[0].message);
        // Instruction counts alone fail nothing when time judges.
        let more = judged(Measure::Both, |samples| counted_more(samples, 100.0));
        assert!(more.passed(), "{:?}", more.violations);
    }

    #[test]
    fn a_count_without_a_profile_or_a_timed_sample_without_batches_fails() {
        let results = judged(Measure::Both, |samples| {
            current_tl(samples).filter(|s| s.counted).for_each(|s| s.operations[0].instruction_profile = None)
        });
        assert_eq!(kinds(&results), ["invalid value"]);
    }

    #[test]
    fn an_operation_missing_from_one_tree_fails() {
        let results = judged(Measure::Time, |samples| {
            for s in current_tl(samples) {
                s.operations.retain(|o| o.operation != Operation::Decode);
            }
        });
        assert!(!results.passed());
        assert_eq!(kinds(&results), ["missing operation", "missing comparison"]);
    }

    #[test]
    fn an_operation_missing_from_both_trees_fails() {
        let results = judged(Measure::Time, |samples| {
            for s in samples.iter_mut().filter(|s| s.implementation == "tl") {
                s.operations.retain(|o| o.operation != Operation::Decode);
            }
        });
        assert_eq!(kinds(&results), ["missing operation", "missing comparison"]);
    }

    #[test]
    fn a_summary_that_disagrees_with_its_batches_fails() {
        let results = judged(Measure::Time, |samples| {
            let s = current_tl(samples).next().unwrap();
            let stats = s.operations[1].stats.as_mut().unwrap();
            stats.fastest /= 2.0;
        });
        assert_eq!(kinds(&results), ["invalid value"]);
        assert!(results.violations[0].message.contains("summary"), "{}", results.violations[0].message);
    }

    /// A stream lane's summary is of whole passes: a sample saying so passes with that summary,
    /// fails with the plain one, and fails naming a stream other than its lane's length.
    #[test]
    fn a_stream_summary_must_be_of_whole_passes() {
        let as_stream = |samples: &mut Vec<WorkerResult>, stream: u64| {
            for s in samples.iter_mut().filter(|s| s.implementation == "tl" && s.lane == "status") {
                let op = &mut s.operations[1];
                op.stream_updates = Some(stream);
                op.ops_per_batch = 4; // chunks of 4 updates: a pass is 4 batches
                op.stats = BatchStats::of_stream(&op.batches_ns_per_op, op.ops_per_batch, stream);
            }
        };
        let lane_payloads = 16; // the fixture's
        assert!(kinds(&judged(Measure::Time, |samples| as_stream(samples, lane_payloads))).is_empty());
        let plain = judged(Measure::Time, |samples| {
            as_stream(samples, lane_payloads);
            let s = current_tl(samples).next().unwrap();
            s.operations[1].stats = BatchStats::of(&s.operations[1].batches_ns_per_op);
        });
        assert_eq!(kinds(&plain), ["invalid value"]);
        let other = judged(Measure::Time, |samples| as_stream(samples, 17));
        assert!(
            kinds(&other).iter().all(|k| *k == "invalid value") && other.violations[0].message.contains("a stream of"),
            "{:?}",
            other.violations
        );
    }

    #[test]
    fn nulled_stats_fail() {
        let results = judged(Measure::Time, |samples| current_tl(samples).for_each(|s| s.operations[1].stats = None));
        assert_eq!(kinds(&results), ["invalid value"]);
    }

    #[test]
    fn zero_negative_or_nan_batches_fail_and_leave_no_silent_gap() {
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            let results = judged(Measure::Time, |samples| {
                for s in current_tl(samples) {
                    s.operations[1].batches_ns_per_op[0] = bad;
                    s.operations[1].stats = BatchStats::of(&s.operations[1].batches_ns_per_op);
                }
            });
            assert_eq!(kinds(&results), ["invalid value", "missing comparison"], "batch {bad}");
        }
    }

    #[test]
    fn no_batches_under_time_fails() {
        let results = judged(Measure::Time, |samples| {
            for s in current_tl(samples) {
                s.operations[0].batches_ns_per_op.clear();
                s.operations[0].stats = None;
            }
        });
        assert_eq!(kinds(&results), ["invalid value", "missing comparison"]);
    }

    #[test]
    fn a_zero_instruction_count_fails() {
        for bad in [Some(0.0), None, Some(f64::NAN), Some(-1.0)] {
            let results =
                judged(Measure::Instructions, |samples| current_tl(samples).for_each(|s| s.operations[0].instructions_per_op = bad));
            assert_eq!(kinds(&results), ["invalid value", "missing comparison"], "count {bad:?}");
        }
    }

    #[test]
    fn a_dirty_sample_against_a_clean_plan_fails() {
        let results = judged(Measure::Time, |samples| current_tl(samples).next().unwrap().tree.dirty = true);
        assert_eq!(kinds(&results), ["metadata differs"]);
        assert!(results.violations[0].message.contains("dirty"));
    }

    #[test]
    fn a_broken_in_process_pair_fails() {
        // One side of a pair from another process; a pair opened by the wrong tree; a lone
        // sample the plan pairs; a floor claiming a shared process.
        let tampers: [fn(&mut Vec<WorkerResult>); 4] = [
            |samples| current_tl(samples).next().unwrap().in_process.as_mut().unwrap().pid += 1,
            |samples| {
                samples
                    .iter_mut()
                    .filter(|s| s.implementation == "tl" && s.sample == 0)
                    .for_each(|s| s.in_process.as_mut().unwrap().first = Role::Current)
            },
            |samples| current_tl(samples).next().unwrap().in_process = None,
            |samples| {
                samples.iter_mut().find(|s| s.implementation == "clone").unwrap().in_process =
                    Some(InProcess { pid: 1, first: Role::Baseline, batches_per_block: 1 })
            },
        ];
        for tamper in tampers {
            let results = judged(Measure::Time, tamper);
            assert!(kinds(&results).contains(&"pairing differs"), "{:?}", results.violations);
        }
    }

    #[test]
    fn settings_other_than_the_plans_fail() {
        let results = judged(Measure::Time, |samples| samples.iter_mut().for_each(|s| s.settings.duration_ms = 1));
        assert!(kinds(&results).contains(&"metadata differs"));
    }

    #[test]
    fn an_operation_the_catalog_does_not_promise_fails() {
        let results = judged(Measure::Time, |samples| {
            let s = samples.iter_mut().find(|s| s.implementation == "clone").unwrap();
            let mut extra = s.operations[0].clone();
            extra.operation = Operation::Encode;
            s.operations.push(extra);
        });
        assert_eq!(kinds(&results), ["invalid value"]);
    }

    #[test]
    fn slower_current_batches_fail_on_latency_only() {
        let results = judged(Measure::Time, |samples| {
            for s in current_tl(samples) {
                for b in &mut s.operations[1].batches_ns_per_op {
                    *b *= 1.2;
                }
                s.operations[1].stats = BatchStats::of(&s.operations[1].batches_ns_per_op);
            }
        });
        assert_eq!(kinds(&results), ["latency regression"]);
    }

    /// Current batches that wander ±8% from process to process: no slowdown, and no power.
    fn noisy(samples: &mut [WorkerResult]) {
        for s in samples.iter_mut().filter(|s| s.role == Role::Current) {
            let wobble = 1.0 + 0.08 * ((s.sample * 7 % 5) as f64 - 2.0) / 2.0;
            for op in &mut s.operations {
                op.batches_ns_per_op.iter_mut().for_each(|b| *b *= wobble);
                op.stats = BatchStats::of(&op.batches_ns_per_op);
            }
        }
    }

    #[test]
    fn a_comparison_without_the_power_to_see_the_threshold_passes_as_not_gated() {
        let results = judged(Measure::Time, |samples| noisy(samples));
        assert!(results.passed(), "{:?}", results.violations);
        assert!(results.not_gated().count() >= 1);
        assert_eq!(results.threshold_family().count(), 2, "tl's encode and decode; the clone floor is outside the family");
        assert_eq!(results.undecided().count(), results.not_gated().count());
        let text = crate::summary::text(&results);
        assert!(text.starts_with("latency at 1%: 2 of 2 comparisons NOT decided (listed first)"), "{text}");
        assert!(text.contains("undecided: 2 latency comparison(s)"), "{text}");
        // Listed first: the first row is one of them.
        let first_row = text.lines().nth(3).unwrap_or_default();
        assert!(first_row.contains("not-gated"), "{text}");
    }

    #[test]
    fn a_count_that_moved_under_a_quarter_of_the_threshold_decides_what_time_could_not() {
        let decode = |results: &Results| {
            results
                .comparisons
                .iter()
                .find(|c| c.metric == Metric::Latency && c.implementation == "tl" && c.operation == Operation::Decode)
                .unwrap()
                .clone()
        };
        // tl decode counted 1 instruction more in 1,500 (+0.07%), its time too noisy to gate:
        // bounded by its counts, decided, nothing left for `--ci` to fail.
        let nudged = judged(Measure::Both, |samples| {
            noisy(samples);
            counted_more(samples, 1.0);
        });
        assert!(nudged.passed(), "{:?}", nudged.violations);
        assert_eq!((decode(&nudged).class, decode(&nudged).verdict), (Some(Class::Changed), Verdict::Bounded));
        assert_eq!(nudged.undecided().count(), 0);
        let text = crate::summary::text(&nudged);
        assert!(text.starts_with("latency at 1%: all 2 comparisons decided: 1 unchanged by their instruction counts, 0 by time"), "{text}");
        assert!(text.contains("1 by counts that moved under 0.25% where time could not gate them"), "{text}");
        assert!(text.contains("bounded (counts, where time could not gate it)"), "{text}");
        // 4 in 1,500 (+0.27%), just over the bound: the same noisy time leaves it undecided.
        let moved = judged(Measure::Both, |samples| {
            noisy(samples);
            counted_more(samples, 4.0);
        });
        assert_eq!(decode(&moved).verdict, Verdict::NotGated);
        assert_eq!(moved.undecided().count(), 1);
        // Fewer instructions bound it the same way; more fewer do not.
        for (by, verdict) in [(-1.0, Verdict::Bounded), (-4.0, Verdict::NotGated)] {
            let fewer = judged(Measure::Both, |samples| {
                noisy(samples);
                counted_more(samples, by);
            });
            assert_eq!(decode(&fewer).verdict, verdict, "{by}");
        }
    }

    #[test]
    fn a_clear_speed_up_passes_however_noisy_and_ci_has_nothing_undecided() {
        // The same wandering, on current batches 20% faster: no power to see 1%, but every pair
        // shows the current tree faster, so the pairs themselves bound it below the threshold.
        let results = judged(Measure::Time, |samples| {
            noisy(samples);
            for s in samples.iter_mut().filter(|s| s.role == Role::Current) {
                for op in &mut s.operations {
                    op.batches_ns_per_op.iter_mut().for_each(|b| *b *= 0.8);
                    op.stats = BatchStats::of(&op.batches_ns_per_op);
                }
            }
        });
        assert!(results.passed(), "{:?}", results.violations);
        let family: Vec<_> = results.threshold_family().collect();
        assert_eq!(family.len(), 2);
        assert!(family.iter().all(|c| c.verdict == Verdict::Pass), "{family:?}");
        assert!(family.iter().all(|c| c.detectable.is_some_and(|d| d > 0.01)), "powered after all: {family:?}");
        assert_eq!(results.undecided().count(), 0);
        // And the summary says what decided them.
        let text = crate::summary::text(&results);
        assert!(text.contains("2 by time (0 with 80% power at 1%, 2 by their interval alone)"), "{text}");
    }

    #[test]
    fn strict_fails_a_comparison_that_is_not_gated() {
        let plan = {
            let mut plan = fixture::plan(Measure::Time);
            plan.settings.strict = true;
            plan
        };
        let mut samples = fixture::samples(&plan);
        noisy(&mut samples);
        let results = judge(&plan, samples, Vec::new());
        assert_eq!(kinds(&results), ["not gated"]);
    }

    #[test]
    fn an_allocation_where_there_was_none_fails_and_survives_json() {
        let results = judged(Measure::Time, |samples| {
            for s in samples.iter_mut().filter(|s| s.implementation == "clone") {
                s.operations[0].allocations_per_op = if s.role == Role::Current { 1.0 } else { 0.0 };
            }
        });
        assert_eq!(kinds(&results), ["allocation regression"]);
        let text = serde_json::to_string(&results).unwrap();
        let back: Results = serde_json::from_str(&text).expect("no infinity in the JSON");
        assert!(back.comparisons.iter().any(|c| c.change == crate::results::FROM_ZERO));
        assert!(crate::summary::text(&back).contains("from 0"));
    }

    #[test]
    fn more_allocations_and_more_instructions_fail() {
        let results = judged(Measure::Instructions, |samples| {
            for s in current_tl(samples) {
                s.operations[1].allocations_per_op = 4.0;
                s.operations[0].instructions_per_op = Some(1516.0);
            }
        });
        assert_eq!(kinds(&results), ["allocation regression", "instruction regression"]);
    }
}
