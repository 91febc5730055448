//! Binary TL (MTProto serialization) impls over the runtime in `tdbench_models::tl`: the
//! constructor id before every object, fields in declaration order, null pointers as `null`.

use std::fmt::Write;

use crate::model::{Kind, Model};

pub fn emit(model: &Model) -> String {
    let mut out = String::new();
    for s in &model.structs {
        writeln!(out, "impl crate::tl::TlObject for {} {{", s.rust_name).unwrap();
        writeln!(out, "    fn write_boxed(&self, w: &mut crate::tl::TlWriter) {{").unwrap();
        writeln!(out, "        w.write_u32(Self::CONSTRUCTOR_ID);").unwrap();
        for f in &s.fields {
            let place = format!("&self.{}", f.rust_name);
            let statement = match &f.kind {
                Kind::Object(_) => format!("w.write_optional({place});"),
                kind => write_statement(kind, &place),
            };
            writeln!(out, "        {statement}").unwrap();
        }
        writeln!(out, "    }}\n").unwrap();
        writeln!(out, "    fn read_with_id(id: u32, r: &mut crate::tl::TlReader<'_>) -> Result<Self, crate::tl::TlError> {{").unwrap();
        writeln!(out, "        r.expect_constructor(id, Self::CONSTRUCTOR_ID, Self::TL_NAME)?;").unwrap();
        writeln!(out, "        Ok(Self {{").unwrap();
        for f in &s.fields {
            let expression = match &f.kind {
                Kind::Object(_) => "r.read_optional()?".to_string(),
                kind => read_expression(kind),
            };
            writeln!(out, "            {}: {expression},", f.rust_name).unwrap();
        }
        writeln!(out, "        }})\n    }}\n}}\n").unwrap();
    }
    for sum in model.sum_types() {
        let (name, tl_name) = (sum.rust_name, sum.tl_name);
        let variants: Vec<(&str, &str)> = sum.variants.iter().map(|(v, s)| (*v, s.rust_name.as_str())).collect();
        writeln!(out, "impl crate::tl::TlObject for {name} {{").unwrap();
        writeln!(out, "    fn write_boxed(&self, w: &mut crate::tl::TlWriter) {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (variant, _) in &variants {
            writeln!(out, "            Self::{variant}(value) => value.write_boxed(w),").unwrap();
        }
        writeln!(out, "        }}\n    }}\n").unwrap();
        writeln!(out, "    fn read_with_id(id: u32, r: &mut crate::tl::TlReader<'_>) -> Result<Self, crate::tl::TlError> {{").unwrap();
        writeln!(out, "        match id {{").unwrap();
        for (variant, struct_name) in &variants {
            writeln!(out, "            {struct_name}::CONSTRUCTOR_ID => Ok(Self::{variant}(crate::tl::TlObject::read_with_id(id, r)?)),")
                .unwrap();
        }
        writeln!(out, "            _ => Err(r.unexpected_constructor(id, \"{tl_name}\")),").unwrap();
        writeln!(out, "        }}\n    }}\n}}\n").unwrap();
    }
    out
}

/// A statement writing `place` (an expression of type `&T`).
fn write_statement(kind: &Kind, place: &str) -> String {
    match kind {
        Kind::Int32 => format!("w.write_i32(*{place});"),
        Kind::Int53 | Kind::Int64 => format!("w.write_i64(*{place});"),
        Kind::Double => format!("w.write_f64(*{place});"),
        Kind::Bool => format!("w.write_bool(*{place});"),
        Kind::String => format!("w.write_string({place});"),
        Kind::Bytes => format!("w.write_bytes({place});"),
        // Vector elements are not nullable.
        Kind::Object(_) => format!("w.write_object({place});"),
        Kind::Vector(inner) => match scalar(inner) {
            Some(ty) => format!("w.write_scalar_vector({place}, {ty}::to_le_bytes);"),
            None => format!("w.write_vector({place}, |w, x| {{ {} }});", write_statement(inner, "x")),
        },
    }
}

/// The Rust type of a fixed-width little-endian scalar, whose vectors are read and written in
/// one pass ([`crate::tl`]'s `read_scalar_vector`).
fn scalar(kind: &Kind) -> Option<&'static str> {
    match kind {
        Kind::Int32 => Some("i32"),
        Kind::Int53 | Kind::Int64 => Some("i64"),
        Kind::Double => Some("f64"),
        _ => None,
    }
}

fn read_expression(kind: &Kind) -> String {
    match kind {
        Kind::Int32 => "r.read_i32()?".into(),
        Kind::Int53 | Kind::Int64 => "r.read_i64()?".into(),
        Kind::Double => "r.read_f64()?".into(),
        Kind::Bool => "r.read_bool()?".into(),
        Kind::String => "r.read_string()?".into(),
        Kind::Bytes => "r.read_bytes()?".into(),
        Kind::Object(_) => "r.read_object()?".into(),
        Kind::Vector(inner) => match scalar(inner) {
            Some(ty) => format!("r.read_scalar_vector({ty}::from_le_bytes)?"),
            None => format!("r.read_vector(|r| Ok({}))?", read_expression(inner)),
        },
    }
}
