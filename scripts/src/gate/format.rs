//! Baseline and current must produce the same bytes (the same encodings, the same decoded
//! values): a faster codec that writes something else is not faster. `--allow-format-change`
//! accepts a deliberate change.

use super::Grouped;
use crate::plan::Plan;
use crate::results::Violation;
use crate::results::ViolationKind;

pub fn check(plan: &Plan, grouped: &Grouped) -> Vec<Violation> {
    if plan.settings.allow_format_change {
        return Vec::new();
    }
    grouped
        .iter()
        .filter_map(|(key, by_role)| {
            let (b, c) = by_role.firsts()?;
            (b.encoded_bytes != c.encoded_bytes || b.proof != c.proof).then(|| {
                Violation::at(
                    ViolationKind::FormatChange,
                    key,
                    format!(
                        "encoding differs from the baseline ({:.1} → {:.1} bytes per payload, proof {} → {}); pass --allow-format-change if intended",
                        b.encoded_bytes,
                        c.encoded_bytes,
                        &b.proof.sha256[..b.proof.sha256.len().min(12)],
                        &c.proof.sha256[..c.proof.sha256.len().min(12)]
                    ),
                )
            })
        })
        .collect()
}
