//! Where the time goes: a decode's instructions by what they do — scanning, numbers, strings,
//! base64, allocation, dispatch — from callgrind's per-function counts of the worker's counted
//! loop (kept from the current tree's first count, or `counter --keep-callgrind DIR`), so the next
//! person knows what is left in a codec.
//!
//! A function is put in the first category whose pattern its name contains; inlined code
//! counts where it was inlined. Instructions, not time: exact and repeatable, but a cache miss
//! or a mispredicted branch costs nothing here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tdbench_contract::Operation;

/// What the report profiles: json-td's and tl's decode where a message's shape decides its cost.
pub const PROFILED: &[(&str, &str)] = &[("json-td", "message"), ("json-td", "messages"), ("tl", "message"), ("tl", "messages")];

/// The categories, in the order a function's name is tried against them.
pub const CATEGORIES: &[(&str, &[&str])] = &[
    ("base64", &["base64"]),
    (
        "allocation",
        &[
            "malloc",
            "free",
            "realloc",
            "_int_",
            "unlink_chunk",
            "__rust_alloc",
            "__rust_dealloc",
            "CountingAllocator",
            "RawVec",
            "drop_in_place",
        ],
    ),
    ("numbers", &["::number::", "dec2flt", "read_i32", "read_i64", "read_u32", "read_f64", "read_bool", "read_run", "parse_i64"]),
    ("strings", &["::string::", "from_utf8", "validate_utf8", "memcpy", "memmove", "read_string", "read_byte_slice", "read_bytes"]),
    ("scanning", &["::skip", "::vector::", "read_vector", "memcmp", "spec_extend", "JsonReader::"]),
    (
        "dispatch",
        &[
            "::object::",
            "read_json",
            "read_with_id",
            "read_optional",
            "read_present",
            "read_object",
            "from_tl",
            "TdJson",
            "TlObject",
            "Codec",
        ],
    ),
];

/// The category a function belongs to, or `other`.
pub fn category(function: &str) -> &'static str {
    CATEGORIES.iter().find(|(_, patterns)| patterns.iter().any(|p| function.contains(p))).map_or("other", |(name, _)| name)
}

/// One operation's profile: instructions per operation, and their share by category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub lane: String,
    pub implementation: String,
    pub operation: Operation,
    pub instructions_per_op: f64,
    /// Category → share of the instructions (summing to 1).
    pub shares: BTreeMap<String, f64>,
    /// The functions with the most instructions of their own, with their share: what to look
    /// at first.
    pub top: Vec<(String, f64)>,
}

impl Profile {
    /// From a callgrind output file of `operations` operations.
    pub fn of(lane: &str, implementation: &str, operation: Operation, callgrind: &str, operations: u64) -> Option<Profile> {
        let costs = tdbench_contract::callgrind::self_costs(callgrind);
        let total: u64 = costs.values().sum();
        if total == 0 || operations == 0 {
            return None;
        }
        let mut shares: BTreeMap<String, f64> = BTreeMap::new();
        for (function, cost) in &costs {
            *shares.entry(category(function).to_string()).or_default() += *cost as f64 / total as f64;
        }
        let mut by_cost: Vec<(&String, &u64)> = costs.iter().collect();
        by_cost.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top = by_cost.iter().take(5).map(|(f, c)| (short_name(f), **c as f64 / total as f64)).collect();
        Some(Profile {
            lane: lane.into(),
            implementation: implementation.into(),
            operation,
            instructions_per_op: total as f64 / operations as f64,
            shares,
            top,
        })
    }
}

/// Where a run folder keeps the callgrind files of the current tree's first count of `lane`
/// (every kernel's, as `IMPLEMENTATION-OPERATION.callgrind`).
pub fn folder(output: &std::path::Path, lane: &str) -> std::path::PathBuf {
    output.join("profiles").join(lane)
}

/// Where the profile of `implementation`'s decode on `lane` is kept in a run folder.
pub fn file(output: &std::path::Path, lane: &str, implementation: &str) -> std::path::PathBuf {
    folder(output, lane).join(format!("{implementation}-decode.callgrind"))
}

/// The profiles a run folder holds (`profiles/LANE/IMPLEMENTATION-decode.callgrind`, kept by the
/// current tree's first count), each counting `--instruction-cycles` passes over its lane's
/// payloads.
/// `passes` over each lane's payloads were counted; `payloads` says how many a lane has. (Given
/// as figures, not as the run's results: results hold profiles, so reading them here would
/// make the two modules import each other.)
pub fn read_all(output: &std::path::Path, passes: u64, payloads: impl Fn(&str) -> Option<u64>) -> Vec<Profile> {
    PROFILED
        .iter()
        .filter_map(|(implementation, lane)| {
            let text = std::fs::read_to_string(file(output, lane, implementation)).ok()?;
            Profile::of(lane, implementation, Operation::Decode, &text, passes * payloads(lane)?)
        })
        .collect()
}

/// A function's name without its crate paths and `impl` wrappers: `JsonReader::next_field`,
/// `Message::read_with_id`.
fn short_name(function: &str) -> String {
    let function = function.trim_start_matches('<');
    match function.rsplit_once(">::") {
        Some((owner, method)) => {
            let owner = owner.split(" as ").next().unwrap_or(owner);
            let owner = owner.rsplit("::").next().unwrap_or(owner).trim_start_matches('<').trim_start_matches("impl ");
            format!("{}::{method}", owner.trim_end_matches('>'))
        }
        None => {
            let parts: Vec<&str> = function.split("::").collect();
            parts[parts.len().saturating_sub(2)..].join("::")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
events: Ir
fl=(1) a.rs
fn=(1) tdbench_models::td_json::reader::object::<impl tdbench_models::td_json::reader::JsonReader>::next_field
3 100
+1 20
cfn=(2) malloc
calls=1 0
5 700
fn=(2)
0 50
fn=(3) tdbench_models::td_json::base64::decode
1 20
fn=(4) tdbench_models::td_json::base64::decode'2
1 10
totals: 200
";

    #[test]
    fn a_profile_splits_instructions_by_category() {
        let p = Profile::of("messages", "json-td", Operation::Decode, OUTPUT, 2).unwrap();
        assert_eq!(p.instructions_per_op, 100.0);
        assert_eq!(p.shares["dispatch"], 0.6);
        assert_eq!(p.shares["allocation"], 0.25);
        assert_eq!(p.shares["base64"], 0.15);
        assert_eq!(p.top[0], ("JsonReader::next_field".to_string(), 0.6));
        assert_eq!(Profile::of("x", "y", Operation::Decode, "events: Ir\n", 1), None);
    }

    #[test]
    fn names_are_shortened_to_owner_and_method() {
        assert_eq!(
            short_name("tdbench_models::td_json::reader::object::<impl tdbench_models::td_json::reader::JsonReader>::next_field"),
            "JsonReader::next_field"
        );
        assert_eq!(
            short_name("<tdbench_models::generated::Message as tdbench_models::tl::TlObject>::read_with_id"),
            "Message::read_with_id"
        );
        assert_eq!(short_name("tdbench_models::tl::TlReader::read_string"), "TlReader::read_string");
        assert_eq!(short_name("_int_malloc"), "_int_malloc");
    }

    #[test]
    fn functions_fall_in_the_first_category_they_match() {
        assert_eq!(category("tdbench_models::td_json::reader::string::<impl JsonReader>::scan_string"), "strings");
        assert_eq!(category("tdbench_models::td_json::reader::number::<impl JsonReader>::number_token"), "numbers");
        assert_eq!(category("tdbench_models::tl::TlReader::read_string"), "strings");
        assert_eq!(category("simdutf8::implementation::x86::avx2::validate_utf8_basic"), "strings");
        assert_eq!(category("<tdbench_models::generated::Message as tdbench_models::tl::TlObject>::read_with_id"), "dispatch");
        assert_eq!(category("tdbench_models::generated::Object::from_tl"), "dispatch");
        // A present optional object's constructor and a run of fixed-width fields: together
        // 5% of tl's message decode, counted as "other" before.
        assert_eq!(category("tdbench_models::tl::TlReader::read_present"), "dispatch");
        assert_eq!(category("tdbench_models::tl::TlReader::read_run"), "numbers");
        assert_eq!(category("core::ptr::drop_in_place<tdbench_models::generated::Message>"), "allocation");
        assert_eq!(category("_int_malloc"), "allocation");
        assert_eq!(category("something else"), "other");
    }
}
