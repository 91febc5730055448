//! The generator on the project's schema and on TDLib's whole public schema (its declarations,
//! committed as test data in `models/testdata/td_api_full.tl`).

use std::path::PathBuf;

fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const FULL_SCHEMA: &str = "../testdata/td_api_full.tl";

#[test]
fn project_schema_generates_every_part() {
    let text = read("../schema/td_api.tl");
    let definitions = tl_parser::parse_schema(&text).unwrap();
    let generated = tl_gen::generate(&definitions, "schema", tl_gen::Numbering::ByPosition).unwrap();
    assert!(generated.types.contains("pub struct UpdateNewMessage {"));
    assert!(generated.types.contains("pub enum MessageSender {"));
    assert!(generated.types.contains("crate::absent_type!(LinkPreview, \"linkPreview\");"));
    assert!(generated.proto.unwrap().contains("impl prost::Message for Message {"));
    assert!(generated.proto_file.unwrap().contains("message Object {"));
}

/// Each line of the project's schema is a declaration exactly as upstream writes it.
#[test]
fn project_schema_lines_are_upstream_lines() {
    let upstream = read(FULL_SCHEMA);
    let ours = read("../schema/td_api.tl");
    let upstream_lines: std::collections::HashSet<&str> = upstream.lines().collect();
    for line in ours.lines().filter(|l| !l.is_empty() && !l.starts_with("//")) {
        assert!(upstream_lines.contains(line), "not an upstream line: {line}");
    }
}

/// The whole upstream schema models without name collisions; its vectors of vectors are the one
/// thing the protobuf mapping refuses, by name.
#[test]
fn whole_upstream_schema_generates() {
    let text = read(FULL_SCHEMA);
    let definitions = tl_parser::parse_schema(&text).unwrap();
    let generated = tl_gen::generate(&definitions, "td_api.tl", tl_gen::Numbering::ByPosition).expect("models, serde and TL generate");
    let structs = generated.types.matches("\npub struct ").count() + generated.types.starts_with("pub struct") as usize;
    assert!(structs > 1500, "{structs} structs");
    assert!(generated.tl.contains("impl crate::tl::TlObject for ChatTypeSupergroup {"));
    let proto_error = generated.proto.expect_err("vectors of vectors");
    assert!(proto_error.0.contains("vectors of vectors"), "{proto_error}");
}

/// json-td's reader notes the fields it has read in a `u64`: 64 fields generate, 65 are refused
/// by name (TDLib's widest constructor has fewer than 50).
#[test]
fn a_constructor_of_more_than_64_fields_is_refused_by_name() {
    let schema = |fields: usize| {
        let params: Vec<String> = (0..fields).map(|i| format!("f{i}:int32")).collect();
        format!("wide {} = Wide;\n", params.join(" "))
    };
    let generate = |text: &str| tl_gen::generate(&tl_parser::parse_schema(text).unwrap(), "wide.tl", tl_gen::Numbering::ByPosition);
    assert!(generate(&schema(64)).expect("64 fields").td_json.contains("seen |= 1 << 63;"));
    let error = generate(&schema(65)).err().expect("65 fields are refused");
    assert!(error.0.contains("`wide` has 65 fields"), "{error}");
}

/// The committed protobuf number map starts at TDLib 1.8.60: there every field's and every
/// constructor's number is its position, so the 1.8.60 models are also 1.8.60 numbered by
/// position (the schema-skew measurement relies on it). Re-seeding the map elsewhere fails here.
#[test]
fn the_number_map_starts_at_1_8_60() {
    let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let text = std::fs::read_to_string(models.join("schema/td_api-1.8.60.tl")).unwrap();
    let model = tl_gen::Model::resolve(&tl_parser::parse_schema(&text).unwrap()).unwrap();
    let map = tl_gen::NumberMap::parse(&std::fs::read_to_string(models.join("proto/numbers.txt")).unwrap()).unwrap();
    for s in &model.structs {
        for (i, f) in s.fields.iter().enumerate() {
            assert_eq!(map.get(&s.tl_name, &f.tl_name), Some(i as u32 + 1), "{}.{}", s.tl_name, f.tl_name);
        }
    }
    for sum in model.sum_types() {
        for (i, (_, s)) in sum.variants.iter().enumerate() {
            assert_eq!(map.get(sum.tl_name, &s.tl_name), Some(i as u32 + 1), "{} member {}", sum.tl_name, s.tl_name);
        }
    }
}
