//! Where time and instruction counts tell different stories: a slowdown in time that the counts
//! do not show is a memory, cache or allocator effect the counts cannot see; more instructions
//! (beyond the threshold) that time does not show were hidden by the machine (or its noise).

use std::collections::BTreeMap;

use tdbench_contract::{Metric, Verdict};

use crate::results::{Comparison, Key};

pub fn notes(comparisons: &[Comparison], threshold: f64) -> Vec<String> {
    let mut by_key: BTreeMap<Key, (Option<&Comparison>, Option<&Comparison>)> = BTreeMap::new();
    for c in comparisons {
        let entry = by_key.entry(c.key()).or_default();
        match c.metric {
            Metric::Latency => entry.0 = Some(c),
            Metric::Instructions => entry.1 = Some(c),
            Metric::Allocations | Metric::Bytes => {}
        }
    }
    let mut notes = Vec::new();
    for (key, pair) in by_key {
        let (Some(time), Some(counts)) = pair else { continue };
        let percent = |x: f64| format!("{:+.2}%", x * 100.0);
        if time.verdict == Verdict::Regression && counts.change <= threshold {
            notes.push(format!(
                "{key}: time says slower ({}) where instructions say {}: a memory, cache or allocator effect the counts cannot see",
                percent(time.change),
                percent(counts.change)
            ));
        }
        if let Some((_, high)) = time.interval
            && counts.change > threshold
            && high < counts.change
        {
            notes.push(format!(
                "{key}: instructions say {} where time says at most {}: the machine hid the extra work",
                percent(counts.change),
                percent(high)
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use tdbench_contract::{Operation, Stage};

    use super::*;

    fn comparison(metric: Metric, change: f64, interval: Option<(f64, f64)>, verdict: Verdict) -> Comparison {
        Comparison {
            lane: "status".into(),
            implementation: "tl".into(),
            operation: Operation::Decode,
            metric,
            baseline: 1.0,
            current: 1.0 + change,
            change,
            interval,
            detectable: None,
            standard_error: None,
            pairs: 6,
            stage: Stage::Screen,
            verdict,
            class: None,
            threshold: None,
        }
    }

    #[test]
    fn time_and_counts_that_disagree_are_named() {
        let slower_in_time = [
            comparison(Metric::Latency, 0.05, Some((0.03, 0.07)), Verdict::Regression),
            comparison(Metric::Instructions, 0.0, None, Verdict::Pass),
        ];
        assert!(notes(&slower_in_time, 0.01)[0].contains("counts cannot see"));
        let more_instructions = [
            comparison(Metric::Latency, 0.0, Some((-0.01, 0.01)), Verdict::Pass),
            comparison(Metric::Instructions, 0.04, None, Verdict::Regression),
        ];
        assert!(notes(&more_instructions, 0.01)[0].contains("hid the extra work"));
        let agree = [
            comparison(Metric::Latency, 0.04, Some((0.02, 0.06)), Verdict::Regression),
            comparison(Metric::Instructions, 0.04, None, Verdict::Regression),
        ];
        assert!(notes(&agree, 0.01).is_empty());
    }
}
