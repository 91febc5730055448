//! `ValidatedClone` impls over the runtime in `tdbench_models::validated`: a deep clone that
//! checks every string as UTF-8 on the way, field by field — the least an owned decode of
//! untrusted bytes must do, as a floor beside the plain clone.

use std::fmt::Write;

use crate::model::{Kind, Model};

pub fn emit(model: &Model) -> String {
    let mut out = String::new();
    for s in &model.structs {
        writeln!(out, "impl crate::validated::ValidatedClone for {} {{", s.rust_name).unwrap();
        writeln!(out, "    fn validated_clone(&self) -> Self {{").unwrap();
        if s.fields.is_empty() {
            writeln!(out, "        Self {{}}").unwrap();
        } else {
            writeln!(out, "        Self {{").unwrap();
            for f in &s.fields {
                let place = format!("self.{}", f.rust_name);
                let expression = match &f.kind {
                    // `Option<T>` and `Option<Box<T>>` both clone through the runtime's impls.
                    Kind::Object(_) => format!("crate::validated::ValidatedClone::validated_clone(&{place})"),
                    kind => clone_expression(kind, &format!("&{place}")),
                };
                writeln!(out, "            {}: {expression},", f.rust_name).unwrap();
            }
            writeln!(out, "        }}").unwrap();
        }
        writeln!(out, "    }}\n}}\n").unwrap();
    }
    for sum in model.sum_types() {
        writeln!(out, "impl crate::validated::ValidatedClone for {} {{", sum.rust_name).unwrap();
        writeln!(out, "    fn validated_clone(&self) -> Self {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (variant, _) in &sum.variants {
            writeln!(
                out,
                "            Self::{variant}(value) => Self::{variant}(crate::validated::ValidatedClone::validated_clone(value)),"
            )
            .unwrap();
        }
        writeln!(out, "        }}\n    }}\n}}\n").unwrap();
    }
    out
}

/// An expression cloning `place` (an expression of type `&T`).
fn clone_expression(kind: &Kind, place: &str) -> String {
    match kind {
        Kind::Int32 | Kind::Int53 | Kind::Int64 | Kind::Double | Kind::Bool => format!("*{place}"),
        Kind::String => format!("crate::validated::string({place})"),
        // Bytes are not text: copied, not checked.
        Kind::Bytes => format!("crate::validated::bytes({place})"),
        Kind::Object(_) => format!("crate::validated::ValidatedClone::validated_clone({place})"),
        Kind::Vector(inner) => format!("({place}).iter().map(|x| {}).collect()", clone_expression(inner, "x")),
    }
}
