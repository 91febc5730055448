//! `serde::Serialize` impls that write what TDLib's `to_json` writes: `@type` first, then every
//! field in declaration order, null object pointers omitted. Number formats, escapes and int64
//! quoting are decided by the serializer (see the `json` codec's formatter) and by the wrappers in
//! `serde_support`, so the same impls serve MessagePack with native integers and binary bytes.

use std::fmt::Write;

use crate::model::{Kind, Model};

pub fn emit(model: &Model) -> String {
    let mut out = String::new();
    for s in &model.structs {
        let always = s.fields.iter().filter(|f| !matches!(f.kind, Kind::Object(_))).count();
        let optional: Vec<String> = s
            .fields
            .iter()
            .filter(|f| matches!(f.kind, Kind::Object(_)))
            .map(|f| format!(" + usize::from(self.{}.is_some())", f.rust_name))
            .collect();
        writeln!(out, "impl serde::Serialize for {} {{", s.rust_name).unwrap();
        writeln!(out, "    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{").unwrap();
        writeln!(out, "        use serde::ser::SerializeStruct;").unwrap();
        // The exact count matters: MessagePack writes the map length before the entries.
        writeln!(out, "        let len = {}{};", 1 + always, optional.concat()).unwrap();
        writeln!(out, "        let mut out = serializer.serialize_struct(Self::TL_NAME, len)?;").unwrap();
        writeln!(out, "        out.serialize_field(\"@type\", Self::TL_NAME)?;").unwrap();
        for f in &s.fields {
            let key = &f.tl_name;
            let name = &f.rust_name;
            let line = match &f.kind {
                Kind::Object(_) => format!("if let Some(value) = &self.{name} {{ out.serialize_field(\"{key}\", value)?; }}"),
                Kind::Int64 => format!("out.serialize_field(\"{key}\", &crate::serde_support::Int64(self.{name}))?;"),
                Kind::Bytes => format!("out.serialize_field(\"{key}\", &crate::serde_support::Base64(&self.{name}))?;"),
                Kind::Vector(inner) if **inner == Kind::Int64 => {
                    format!("out.serialize_field(\"{key}\", &crate::serde_support::Int64Slice(&self.{name}))?;")
                }
                Kind::Vector(inner) if **inner == Kind::Bytes => {
                    format!("out.serialize_field(\"{key}\", &crate::serde_support::Base64Slice(&self.{name}))?;")
                }
                _ => format!("out.serialize_field(\"{key}\", &self.{name})?;"),
            };
            writeln!(out, "        {line}").unwrap();
        }
        writeln!(out, "        out.end()\n    }}\n}}\n").unwrap();
    }
    for sum in model.sum_types() {
        writeln!(out, "impl serde::Serialize for {} {{", sum.rust_name).unwrap();
        writeln!(out, "    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (v, _) in &sum.variants {
            writeln!(out, "            Self::{v}(value) => value.serialize(serializer),").unwrap();
        }
        writeln!(out, "        }}\n    }}\n}}\n").unwrap();
    }
    out
}
