//! Wires the schema parser to the generator: `schema/td_api.tl` → Rust sources in `OUT_DIR`
//! (and `td_api.proto` there, which a test compares with the committed `proto/td_api.proto`).

use std::{env, fs, path::Path};

fn main() {
    let schema_path = "schema/td_api.tl";
    println!("cargo:rerun-if-changed={schema_path}");
    let text = fs::read_to_string(schema_path).unwrap_or_else(|e| panic!("reading {schema_path}: {e}"));
    let definitions = tl_parser::parse_schema(&text).unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    let generated = tl_gen::generate(&definitions, "models/schema/td_api.tl").unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out_dir);
    let proto = generated.proto.unwrap_or_else(|e| panic!("{schema_path}: {e}"));
    let proto_file = generated.proto_file.unwrap_or_else(|e| panic!("{schema_path}: {e}"));
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
