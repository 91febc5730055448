//! The verdict table, for the terminal and as markdown for a pull-request comment.

use tdbench_contract::{Metric, Stage, Verdict};

use crate::results::{Class, Comparison, FROM_ZERO, GATE_LEVELS, Results};

fn percent(x: f64) -> String {
    if x == FROM_ZERO { "from 0".into() } else { format!("{:+.2}%", x * 100.0) }
}

fn value(c: &Comparison, x: f64) -> String {
    match c.metric {
        Metric::Latency => format!("{x:.1} ns"),
        Metric::Instructions => format!("{x:.0} Ir"),
        Metric::Allocations | Metric::Bytes => format!("{x:.2}"),
    }
}

fn row(c: &Comparison) -> [String; 9] {
    [
        c.lane.clone(),
        c.implementation.clone(),
        format!("{} {}", c.operation, c.metric),
        value(c, c.baseline),
        value(c, c.current),
        percent(c.change),
        match (c.interval, c.metric) {
            (Some((l, h)), _) => format!("{} … {}", percent(l), percent(h)),
            // Too few pairs to bound the change at the family's confidence.
            (None, Metric::Latency) => "unbounded".into(),
            (None, _) => "–".into(),
        },
        match (c.detectable, c.metric) {
            (Some(d), _) => format!("{:.1}%", d * 100.0),
            (None, Metric::Latency) => "none".into(),
            (None, _) => "–".into(),
        },
        verdict(c),
    ]
}

/// A row's verdict, and what decided it: the counts, time at the threshold, or the backstop.
fn verdict(c: &Comparison) -> String {
    let held = |t: Option<f64>| t.map_or(String::new(), |t| format!(", {}%", t * 100.0));
    let by = match (c.metric, c.class, c.verdict) {
        (Metric::Latency, Some(Class::Unchanged), Verdict::Regression) => format!(" (backstop{})", held(c.threshold)),
        (Metric::Latency, Some(Class::Unchanged), _) => " (counts)".into(),
        (Metric::Latency, Some(Class::Changed), Verdict::Bounded) => " (counts, where time could not gate it)".into(),
        (Metric::Latency, Some(Class::Changed), _) => format!(" (time{})", held(c.threshold)),
        (Metric::Latency, Some(Class::RoundTrip), _) => format!(" (round trip{})", held(c.threshold)),
        _ => String::new(),
    };
    let confirmed = if c.stage == Stage::Confirm { " (confirmation rounds)" } else { "" };
    format!("{}{by}{confirmed}", c.verdict)
}

const HEADER: [&str; 9] =
    ["lane", "implementation", "operation", "baseline", "current", "change", "interval", "detectable (80%)", "verdict"];

/// Latency and instruction rows for every comparison, allocation rows only where they changed;
/// what the run could not decide first.
fn shown(results: &Results) -> impl Iterator<Item = &Comparison> {
    let rows = || results.comparisons.iter().filter(|c| matches!(c.metric, Metric::Latency | Metric::Instructions) || c.change != 0.0);
    let undecided = |c: &&Comparison| results.undecided().any(|u| std::ptr::eq(u, *c));
    rows().filter(undecided).chain(rows().filter(move |c| !undecided(c)))
}

pub fn text(results: &Results) -> String {
    let rows: Vec<[String; 9]> = shown(results).map(row).collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string() + "\n"
    };
    let mut out = headline(results);
    out += &line(&HEADER.map(String::from));
    for r in &rows {
        out += &line(r);
    }
    out += &footer(results);
    out
}

/// What the latency gate could decide, before anything else: of the comparisons held to the
/// threshold, how many the counts found unchanged and how many time decided (with the power
/// to see the threshold, or by their interval alone), and what was left undecided; then what
/// the backstop and the TDLib round trips could see.
pub fn headline(results: &Results) -> String {
    let left_out: String = results.provenance.left_out.iter().map(|why| format!("{why}\n")).collect();
    let pairing = &results.provenance.pairing.note;
    let pairing = if pairing.is_empty() { String::new() } else { format!("{pairing}\n") };
    if !results.comparisons.iter().any(|c| c.class.is_some()) {
        // A run older than counting first, or one that times nothing.
        let [(at_1, family), (at_3, _), (at_5, _)] = GATE_LEVELS.map(|level| results.gated_at(level));
        if family == 0 {
            return left_out;
        }
        return format!(
            "latency gated at 1%: {at_1} of {family}; at 3%: {at_3}; at 5%: {at_5} \
             (comparisons that would catch a slowdown that size with 80% power; floors outside the family)\n{pairing}{left_out}"
        );
    }
    let threshold = results.provenance.settings.threshold_percent;
    let family: Vec<&Comparison> = results.threshold_family().collect();
    let unchanged = family.iter().filter(|c| c.class == Some(Class::Unchanged)).count();
    let undecided = results.undecided().count();
    let bounded = family.iter().filter(|c| c.verdict == Verdict::Bounded).count();
    let by_time = family.len() - unchanged - undecided - bounded;
    // Time decides a comparison with the power to see the threshold, or by its interval alone: a
    // pass whose upper end is below the threshold, a regression whose lower end is above half.
    let powered = family
        .iter()
        .filter(|c| c.class != Some(Class::Unchanged) && !matches!(c.verdict, Verdict::NotGated | Verdict::Bounded))
        .filter(|c| c.detectable.is_some_and(|d| d <= threshold / 100.0 + 1e-12))
        .count();
    let mut by_time =
        format!("{by_time} by time ({powered} with 80% power at {threshold}%, {} by their interval alone)", by_time - powered);
    if bounded > 0 {
        let share = crate::gate::counts::COUNT_BOUND_SHARE * threshold;
        by_time += &format!(", {bounded} by counts that moved under {share}% where time could not gate them");
    }
    let mut out = if undecided == 0 {
        format!(
            "latency at {threshold}%: all {} comparisons decided: {unchanged} unchanged by their instruction counts, {by_time}\n",
            family.len()
        )
    } else {
        format!(
            "latency at {threshold}%: {undecided} of {} comparisons NOT decided (listed first): their counts changed and time could not \
             gate them; {unchanged} unchanged by their instruction counts, {by_time}\n",
            family.len()
        )
    };
    let median = |d: Vec<f64>| crate::median::upper_median(d).map_or("–".to_string(), |d| format!("{:.1}%", d * 100.0));
    for (class, what) in [(Class::Unchanged, "backstop of the unchanged"), (Class::RoundTrip, "TDLib round trips (outside the family)")] {
        let held: Vec<&Comparison> = results.comparisons.iter().filter(|c| c.metric == Metric::Latency && c.class == Some(class)).collect();
        let Some(level) = held.first().and_then(|c| c.threshold) else { continue };
        let seen = held.iter().filter(|c| c.detectable.is_some_and(|d| d <= level + 1e-12)).count();
        out += &format!(
            "{what}: {seen} of {} would catch a {}% slowdown (80% power); median detectable {}\n",
            held.len(),
            level * 100.0,
            median(held.iter().filter_map(|c| c.detectable).collect())
        );
    }
    out + &pairing + &left_out
}

pub fn markdown(results: &Results) -> String {
    let p = &results.provenance;
    let mut out = format!("## tdbench: {}\n\n", if results.passed() { "pass" } else { "FAIL" });
    out += &format!(
        "current `{}`{} against baseline {}; {}.\n\n",
        short(&p.current.commit),
        if p.current.dirty { " (uncommitted changes)" } else { "" },
        p.baseline.as_ref().map_or("none".to_string(), |b| format!("`{}` ({})", short(&b.commit), b.reference)),
        p.machine.as_ref().map_or("no samples".to_string(), |m| format!("{}, {} cores, {}", m.cpu, m.cores, m.rustc)),
    );
    out += &headline(results);
    out += "\n";
    out += &format!("| {} |\n|{}|\n", HEADER.join(" | "), HEADER.map(|_| "---").join("|"));
    for r in shown(results).map(row) {
        out += &format!("| {} |\n", r.join(" | "));
    }
    out += "\n";
    out += &footer(results);
    out
}

fn footer(results: &Results) -> String {
    let mut out = String::new();
    for v in &results.violations {
        let at = match (&v.lane, &v.implementation, &v.operation) {
            (Some(l), Some(i), Some(o)) => format!("{l}/{i}/{o}: "),
            _ => String::new(),
        };
        out += &format!("violation: {}: {at}{}\n", v.kind, v.message);
    }
    for note in &results.notes {
        out += &format!("note: {note}\n");
    }
    let undecided: Vec<&Comparison> = results.undecided().collect();
    if !undecided.is_empty() {
        let threshold = results.provenance.settings.threshold_percent;
        let mut widest: Vec<f64> = undecided.iter().filter_map(|c| c.detectable).collect();
        widest.sort_by(f64::total_cmp);
        out += &format!(
            "undecided: {} latency comparison(s) passed without the power to see a {threshold}% slowdown \
             (median detectable {}); what would decide them: more time (--look-seconds, --rounds), fewer comparisons \
             sharing it (--data, --serializer), or a quieter machine. --ci fails on this (exit 3), --strict too (exit 1)\n",
            undecided.len(),
            widest.get(widest.len() / 2).map_or("–".into(), |d| format!("{:.1}%", d * 100.0))
        );
    }
    out += &format!("verdict: {} ({} comparisons, {} violations)\n", results.verdict, results.comparisons.len(), results.violations.len());
    out
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}
