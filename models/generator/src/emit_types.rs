//! Structs, enums, the `Object` enum and absent placeholders, with the derives every format
//! shares: `Deserialize` (serde, `@type`-tagged the way Rust TDLib bindings do it) and
//! bincode's own `Encode`/`Decode`.

use std::fmt::Write;

use crate::model::{Field, Kind, Model, Struct};

pub fn emit(model: &Model) -> String {
    let mut out = String::new();
    for s in &model.structs {
        emit_struct(model, s, &mut out);
    }
    for e in &model.enums {
        let variants: Vec<(&str, &str, &str)> = e
            .variants
            .iter()
            .map(|v| (v.rust_name.as_str(), model.structs[v.target].rust_name.as_str(), model.structs[v.target].tl_name.as_str()))
            .collect();
        let doc = format!("The abstract TDLib type `{}`.", e.tl_name);
        emit_enum(&e.rust_name, &doc, &variants, &mut out);
    }
    let all: Vec<(&str, &str, &str)> =
        model.structs.iter().map(|s| (s.rust_name.as_str(), s.rust_name.as_str(), s.tl_name.as_str())).collect();
    emit_enum("Object", "Any TDLib object of the schema, as TDLib's `td_api::Object`.", &all, &mut out);
    emit_object_helpers(model, &mut out);
    for a in &model.absents {
        writeln!(out, "crate::absent_type!({}, \"{}\");", a.rust_name, a.tl_name).unwrap();
    }
    out
}

pub fn rust_type(model: &Model, kind: &Kind) -> String {
    match kind {
        Kind::Int32 => "i32".into(),
        Kind::Int53 | Kind::Int64 => "i64".into(),
        Kind::Double => "f64".into(),
        Kind::Bool => "bool".into(),
        Kind::String => "String".into(),
        Kind::Bytes => "Vec<u8>".into(),
        Kind::Object(t) => model.target_rust_name(*t).to_string(),
        Kind::Vector(inner) => format!("Vec<{}>", rust_type(model, inner)),
    }
}

/// The Rust type of a struct field: object pointers are `Option`, boxed where the model says.
pub fn field_type(model: &Model, f: &Field) -> String {
    match &f.kind {
        Kind::Object(_) => format!("Option<{}>", pointee_type(model, f)),
        kind => rust_type(model, kind),
    }
}

/// What an object field's `Option` holds: the target type, in a `Box` where the model says.
pub fn pointee_type(model: &Model, f: &Field) -> String {
    let Kind::Object(t) = &f.kind else { unreachable!("only object fields are pointers") };
    let name = model.target_rust_name(*t);
    if f.boxed { format!("Box<{name}>") } else { name.to_string() }
}

fn emit_struct(model: &Model, s: &Struct, out: &mut String) {
    writeln!(out, "/// `{}`", s.declaration).unwrap();
    writeln!(out, "#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, bincode::Encode, bincode::Decode)]").unwrap();
    // TDLib's reader leaves a missing field at its default value.
    writeln!(out, "#[serde(default)]").unwrap();
    writeln!(out, "pub struct {} {{", s.rust_name).unwrap();
    for f in &s.fields {
        if let Some(helper) = serde_helper(&f.kind) {
            writeln!(out, "    #[serde(deserialize_with = \"crate::serde_support::{helper}\")]").unwrap();
        }
        writeln!(out, "    pub {}: {},", f.rust_name, field_type(model, f)).unwrap();
    }
    writeln!(out, "}}\n").unwrap();
    writeln!(out, "impl {} {{", s.rust_name).unwrap();
    writeln!(out, "    pub const CONSTRUCTOR_ID: u32 = {:#010x};", s.id).unwrap();
    writeln!(out, "    pub const TL_NAME: &'static str = \"{}\";", s.tl_name).unwrap();
    writeln!(out, "}}\n").unwrap();
}

/// int64 travels as a quoted decimal and bytes as base64 in TDLib JSON; serde's own impls for
/// i64 and Vec<u8> would not read those.
fn serde_helper(kind: &Kind) -> Option<&'static str> {
    match kind {
        Kind::Int64 => Some("int64"),
        Kind::Bytes => Some("bytes"),
        Kind::Vector(inner) => match **inner {
            Kind::Int64 => Some("int64_vector"),
            Kind::Bytes => Some("bytes_vector"),
            _ => None,
        },
        _ => None,
    }
}

fn emit_enum(rust_name: &str, doc: &str, variants: &[(&str, &str, &str)], out: &mut String) {
    writeln!(out, "/// {doc}").unwrap();
    writeln!(out, "#[derive(Clone, Debug, PartialEq, serde::Deserialize, bincode::Encode, bincode::Decode)]").unwrap();
    writeln!(out, "#[serde(tag = \"@type\")]").unwrap();
    writeln!(out, "pub enum {rust_name} {{").unwrap();
    for (variant, struct_name, tl_name) in variants {
        writeln!(out, "    #[serde(rename = \"{tl_name}\")]").unwrap();
        writeln!(out, "    {variant}({struct_name}),").unwrap();
    }
    writeln!(out, "}}\n").unwrap();
    writeln!(out, "impl {rust_name} {{").unwrap();
    writeln!(out, "    /// The TDLib name of the constructor this value holds.").unwrap();
    writeln!(out, "    pub fn tl_name(&self) -> &'static str {{").unwrap();
    writeln!(out, "        match self {{").unwrap();
    for (variant, struct_name, _) in variants {
        writeln!(out, "            Self::{variant}(_) => {struct_name}::TL_NAME,").unwrap();
    }
    writeln!(out, "        }}\n    }}\n").unwrap();
    writeln!(out, "    /// The constructor id of the value held.").unwrap();
    writeln!(out, "    pub fn constructor_id(&self) -> u32 {{").unwrap();
    writeln!(out, "        match self {{").unwrap();
    for (variant, struct_name, _) in variants {
        writeln!(out, "            Self::{variant}(_) => {struct_name}::CONSTRUCTOR_ID,").unwrap();
    }
    writeln!(out, "        }}\n    }}\n}}\n").unwrap();
}

fn emit_object_helpers(model: &Model, out: &mut String) {
    writeln!(out, "/// Every constructor of the schema: TDLib name and constructor id.").unwrap();
    writeln!(out, "pub const CONSTRUCTORS: &[(&str, u32)] = &[").unwrap();
    for s in &model.structs {
        writeln!(out, "    ({:?}, {:#010x}),", s.tl_name, s.id).unwrap();
    }
    writeln!(out, "];\n").unwrap();
    writeln!(out, "/// Types the schema references but does not declare: always absent.").unwrap();
    writeln!(out, "pub const ABSENT_TYPES: &[&str] = &[").unwrap();
    for a in &model.absents {
        writeln!(out, "    {:?},", a.tl_name).unwrap();
    }
    writeln!(out, "];\n").unwrap();
}
