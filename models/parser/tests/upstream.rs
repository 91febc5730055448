//! The parser against TDLib's whole public schema: its declarations, committed as test data in
//! `models/testdata/td_api_full.tl`.

use std::collections::HashMap;
use std::path::PathBuf;

use tl_parser::{Category, parse_schema};

fn upstream() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/td_api_full.tl");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn parses_the_whole_upstream_schema() {
    let text = upstream();
    let definitions = parse_schema(&text).expect("td_api.tl parses");
    let declarations = text.lines().filter(|l| !l.starts_with("//") && l.trim_end().ends_with(';')).count();
    assert_eq!(definitions.len(), declarations, "one definition per declaration line");
    let functions = definitions.iter().filter(|d| d.category == Category::Function).count();
    assert!(functions > 700, "{functions} functions");
    assert!(definitions.len() - functions > 2000);

    let by_name: HashMap<&str, i32> = definitions.iter().map(|d| (d.name.as_str(), d.id() as i32)).collect();
    assert_eq!(by_name.len(), definitions.len(), "names are unique");
    // As TDLib's generated td_api.h prints them.
    assert_eq!(by_name["ok"], -722616727);
    assert_eq!(by_name["error"], -1679978726);
    assert_eq!(by_name["testString"], -27891572);
    assert_eq!(by_name["vector"] as u32, 0x1cb5c415);
    assert_eq!(by_name["boolTrue"] as u32, 0x997275b5);

    let mut ids: Vec<u32> = definitions.iter().map(|d| d.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), definitions.len(), "constructor ids are unique");
}
