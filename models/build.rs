//! Wires the schema parser to the generator: `schema/td_api.tl` → Rust sources in `OUT_DIR`
//! (and `td_api.proto` there, which a test compares with the committed `proto/td_api.proto`).
//! Protobuf numbers come from the committed number map `proto/numbers.txt`.
//!
//! With the `schema-skew` feature it also generates the models of other schema releases, each
//! into a folder of its own under `OUT_DIR` (module `skew` of the crate): the measured build
//! never has them.

use std::{env, fs, path::Path};

use tl_gen::{NumberMap, Numbering};

const NUMBER_MAP: &str = "proto/numbers.txt";
const KNOWN_NUMBER_MAP: &str = "testdata/skew/numbers.txt";

fn main() {
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let numbers = number_map(NUMBER_MAP);
    generate("schema/td_api.tl", Numbering::Stable(&numbers), &Path::new(&out_dir).join("current"));
    if env::var_os("CARGO_FEATURE_SCHEMA_SKEW").is_some() {
        let known = number_map(KNOWN_NUMBER_MAP);
        for (schema, numbering, folder) in [
            ("schema/td_api-1.8.65.tl", Numbering::Stable(&numbers), "v1_8_65"),
            ("schema/td_api-1.8.65.tl", Numbering::ByPosition, "v1_8_65_by_position"),
            // The map starts at 1.8.60: there its numbers are the positions (a tl-gen test checks).
            ("schema/td_api-1.8.60.tl", Numbering::Stable(&numbers), "v1_8_60"),
            ("schema/td_api.tl", Numbering::ByPosition, "v1_8_66_by_position"),
            ("testdata/skew/known-1.8.65.tl", Numbering::Stable(&known), "known_1_8_65"),
            ("testdata/skew/known-1.8.66.tl", Numbering::Stable(&known), "known_1_8_66"),
            ("testdata/skew/known-1.8.66.tl", Numbering::ByPosition, "known_1_8_66_by_position"),
        ] {
            generate(schema, numbering, &Path::new(&out_dir).join(folder));
        }
    }
}

fn number_map(path: &str) -> NumberMap {
    println!("cargo:rerun-if-changed={path}");
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    NumberMap::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn generate(schema_path: &str, numbering: Numbering, out: &Path) {
    println!("cargo:rerun-if-changed={schema_path}");
    let text = fs::read_to_string(schema_path).unwrap_or_else(|e| panic!("reading {schema_path}: {e}"));
    let definitions = tl_parser::parse_schema(&text).unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    let generated =
        tl_gen::generate(&definitions, &format!("models/{schema_path}"), numbering).unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    let proto = generated.proto.unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    let proto_file = generated.proto_file.unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    fs::create_dir_all(out).unwrap_or_else(|e| panic!("creating {}: {e}", out.display()));
    for (name, text) in [
        ("types.rs", &generated.types),
        ("serde_impls.rs", &generated.serde),
        ("tl_impls.rs", &generated.tl),
        ("td_json_impls.rs", &generated.td_json),
        ("validated_impls.rs", &generated.validated),
        ("proto_impls.rs", &proto),
        ("td_api.proto", &proto_file),
    ] {
        fs::write(out.join(name), text).unwrap_or_else(|e| panic!("writing {name}: {e}"));
    }
}
