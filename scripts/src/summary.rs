//! The verdict table, for the terminal and as markdown for a pull-request comment.

use tdbench_contract::{Metric, Stage};

use crate::results::{Comparison, FROM_ZERO, GATE_LEVELS, Results};

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
        format!("{}{}", c.verdict, if c.stage == Stage::Confirm { " (confirmation rounds)" } else { "" }),
    ]
}

const HEADER: [&str; 9] =
    ["lane", "implementation", "operation", "baseline", "current", "change", "interval", "detectable (80%)", "verdict"];

/// Latency and instruction rows for every comparison; allocation rows only where they changed.
fn shown(results: &Results) -> impl Iterator<Item = &Comparison> {
    results.comparisons.iter().filter(|c| matches!(c.metric, Metric::Latency | Metric::Instructions) || c.change != 0.0)
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

/// What the latency gate could see, before anything else: how many comparisons could have
/// caught a slowdown of 1%, 3% and 5% with 80% power.
pub fn headline(results: &Results) -> String {
    let left_out: String = results.provenance.left_out.iter().map(|why| format!("{why}\n")).collect();
    let [(at_1, family), (at_3, _), (at_5, _)] = GATE_LEVELS.map(|level| results.gated_at(level));
    if family == 0 {
        return left_out;
    }
    let pairing = &results.provenance.pairing.note;
    format!(
        "latency gated at 1%: {at_1} of {family}; at 3%: {at_3}; at 5%: {at_5} \
         (comparisons that would catch a slowdown that size with 80% power; floors outside the family)\n{}{left_out}",
        if pairing.is_empty() { String::new() } else { format!("{pairing}\n") }
    )
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
    let not_gated: Vec<&Comparison> = results.not_gated().collect();
    if !not_gated.is_empty() {
        let threshold = results.provenance.settings.threshold_percent;
        let mut widest: Vec<f64> = not_gated.iter().filter_map(|c| c.detectable).collect();
        widest.sort_by(f64::total_cmp);
        out += &format!(
            "warning: {} latency comparison(s) passed without the power to see a {threshold}% slowdown \
             (median detectable {}): more rounds, or --strict to fail on this\n",
            not_gated.len(),
            widest.get(widest.len() / 2).map_or("–".into(), |d| format!("{:.1}%", d * 100.0))
        );
    }
    out += &format!("verdict: {} ({} comparisons, {} violations)\n", results.verdict, results.comparisons.len(), results.violations.len());
    out
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}
