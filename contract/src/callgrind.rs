//! Reading callgrind's output files: the counter writes one per kernel, and both its
//! fingerprint of the code that ran and the report's "Where the time goes" are read from them.

use std::collections::BTreeMap;

/// The `totals:` (or `summary:`) line: instructions, the first event.
pub fn total(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Instructions each function executed itself (not in what it called).
pub fn self_costs(text: &str) -> BTreeMap<String, u64> {
    let mut costs: BTreeMap<String, u64> = BTreeMap::new();
    for ((_, function), cost) in costs_by_object(text) {
        *costs.entry(function).or_default() += cost;
    }
    costs
}

/// Instructions each function executed itself, by the object file it is in, from callgrind's
/// output format: `ob=` names the object of the functions that follow, `fn=(id) name` opens a
/// function's cost lines, `calls=` marks the next cost line as a call's inclusive cost
/// (counted in the callee), and names are compressed to `(id)` after their first use.
pub fn costs_by_object(text: &str) -> BTreeMap<(String, String), u64> {
    let (mut functions, mut objects) = (BTreeMap::new(), BTreeMap::new());
    let mut costs: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut object = String::new();
    let mut current: Option<String> = None;
    let mut call_cost_next = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("ob=") {
            object = resolve(rest, &mut objects);
        } else if let Some(rest) = line.strip_prefix("cob=") {
            resolve(rest, &mut objects);
        } else if let Some(rest) = line.strip_prefix("fn=") {
            // Callgrind names a recursive call's cost `name'2`: the same function.
            let name = resolve(rest, &mut functions);
            let name = match name.rsplit_once('\'') {
                Some((base, depth)) if !depth.is_empty() && depth.bytes().all(|b| b.is_ascii_digit()) => base.to_string(),
                _ => name,
            };
            current = Some(name);
        } else if let Some(rest) = line.strip_prefix("cfn=") {
            resolve(rest, &mut functions);
        } else if line.starts_with("calls=") {
            call_cost_next = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-' || c == '*') {
            if std::mem::take(&mut call_cost_next) {
                continue;
            }
            let cost = line.split_whitespace().nth(1).and_then(|c| c.parse::<u64>().ok());
            if let (Some(function), Some(cost)) = (&current, cost) {
                *costs.entry((object.clone(), function.clone())).or_default() += cost;
            }
        }
    }
    costs
}

/// Whether an object file is a shared library (`libc.so.6`, the dynamic loader, valgrind's
/// preload), not the counted program itself.
pub fn is_shared_library(object: &str) -> bool {
    object.rsplit('/').next().is_some_and(|file| file.contains(".so"))
}

/// The counted program's own functions (its code, Rust's standard library compiled into it),
/// with their instructions: what [`profile_text`] fingerprints. The C library's `memcpy` and
/// `memcmp` take more or fewer instructions by where their operands lie, and a change anywhere
/// in the program moves its constants and heap: their counts are left out of the fingerprint
/// (their calls are not: each call is an instruction of its caller).
pub fn own_costs(text: &str) -> BTreeMap<String, u64> {
    let mut costs: BTreeMap<String, u64> = BTreeMap::new();
    for ((object, function), cost) in costs_by_object(text) {
        if !is_shared_library(&object) {
            *costs.entry(function).or_default() += cost;
        }
    }
    costs
}

/// `(12) name` defines id 12; `(12)` refers to it; a bare name is itself.
fn resolve(spec: &str, names: &mut BTreeMap<String, String>) -> String {
    match spec.strip_prefix('(').and_then(|s| s.split_once(')')) {
        Some((id, rest)) if !rest.trim().is_empty() => {
            names.insert(id.to_string(), rest.trim().to_string());
            rest.trim().to_string()
        }
        Some((id, _)) => names.get(id).cloned().unwrap_or_else(|| format!("({id})")),
        None => spec.trim().to_string(),
    }
}

/// The per-function counts as one text, a function a line (`name<TAB>instructions`, sorted by
/// name): two runs did the same work in the same functions exactly when their texts are equal.
/// What the counter hashes into an operation's fingerprint.
pub fn profile_text(costs: &BTreeMap<String, u64>) -> String {
    costs.iter().filter(|(_, cost)| **cost > 0).map(|(name, cost)| format!("{name}\t{cost}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const OUTPUT: &str = "\
events: Ir
ob=(1) /w/count-c
fl=(1) a.rs
fn=(1) tdbench_models::td_json::reader::object::<impl tdbench_models::td_json::reader::JsonReader>::next_field
3 100
+1 20
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfn=(2) malloc
calls=1 0
5 700
ob=(2)
fn=(2)
0 50
ob=(1)
fn=(3) tdbench_models::td_json::base64::decode
1 20
fn=(4) tdbench_models::td_json::base64::decode'2
1 10
totals: 200
";

    #[test]
    fn self_costs_leave_out_what_calls_cost() {
        let costs = self_costs(OUTPUT);
        assert_eq!(costs.len(), 3, "decode'2 is decode");
        assert_eq!(costs.values().sum::<u64>(), 200, "120 + 50 + 30: the call's 700 is malloc's inclusive cost");
        assert_eq!(costs["malloc"], 50);
    }

    #[test]
    fn the_program_s_own_costs_leave_the_c_library_out() {
        let own = own_costs(OUTPUT);
        assert_eq!(own.len(), 2);
        assert!(!own.contains_key("malloc"));
        assert_eq!(own.values().sum::<u64>(), 150);
        assert!(is_shared_library("/usr/lib/x86_64-linux-gnu/libc.so.6") && !is_shared_library("/tmp/so/w/count-c"));
    }

    #[test]
    fn totals_line() {
        assert_eq!(total("events: Ir\nfn=x\n1 5\ntotals: 12345\n"), Some(12345));
        assert_eq!(total("summary: 77\n"), Some(77));
        assert_eq!(total("events: Ir\n"), None);
    }

    #[test]
    fn a_profile_text_changes_with_any_function_s_count() {
        let costs = self_costs(OUTPUT);
        let text = profile_text(&costs);
        assert_eq!(text.lines().count(), 3);
        assert!(text.starts_with("malloc\t50\n"), "{text}");
        let mut moved = costs.clone();
        // The same total, spread differently: another profile.
        *moved.get_mut("malloc").unwrap() += 1;
        *moved.get_mut("tdbench_models::td_json::base64::decode").unwrap() -= 1;
        assert_ne!(profile_text(&moved), text);
    }
}
