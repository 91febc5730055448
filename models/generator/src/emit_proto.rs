//! `prost::Message` impls on the shared model structs, and oneof glue for abstract types, so
//! prost encodes the very values the other formats do (no parallel prost-build model to convert).
//! The mapping is the one `emit_proto_file` writes down: field and oneof numbers come from the
//! [`Numbering`] (declaration order, or the committed map), an abstract type is a message holding
//! one `oneof`, proto3 implicit presence for scalars.

use std::fmt::Write;

use crate::GenError;
use crate::model::{Kind, Model, Target};
use crate::numbering::Numbering;

/// The protobuf scalar type of a TL scalar kind; also the name of prost's encoding module for it.
pub fn proto_scalar(kind: &Kind) -> Option<&'static str> {
    Some(match kind {
        Kind::Int32 => "int32",
        Kind::Int53 | Kind::Int64 => "int64",
        Kind::Double => "double",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
        _ => return None,
    })
}

/// Proto3 leaves default scalars off the wire.
fn is_set(kind: &Kind, place: &str) -> String {
    match kind {
        Kind::Int32 | Kind::Int53 | Kind::Int64 => format!("{place} != 0"),
        Kind::Double => format!("{place} != 0.0"),
        Kind::Bool => place.to_string(),
        _ => format!("!{place}.is_empty()"),
    }
}

struct FieldCode {
    encode: String,
    merge: String,
    len: String,
}

fn field_code(kind: &Kind, tag: u32, name: &str, owner: &str) -> Result<FieldCode, GenError> {
    let p = "prost::encoding";
    let place = format!("self.{name}");
    Ok(match kind {
        Kind::Object(Target::Struct(_)) => FieldCode {
            encode: format!("if let Some(value) = &{place} {{ {p}::message::encode({tag}, value, buf); }}"),
            merge: format!("{p}::message::merge(wire_type, {place}.get_or_insert_with(Default::default), buf, ctx)"),
            len: format!("{place}.as_ref().map_or(0, |value| {p}::message::encoded_len({tag}, value))"),
        },
        Kind::Object(_) => FieldCode {
            encode: format!("if let Some(value) = &{place} {{ crate::proto::encode_oneof({tag}, value, buf); }}"),
            merge: format!("crate::proto::merge_oneof(wire_type, &mut {place}, buf, ctx)"),
            len: format!("{place}.as_ref().map_or(0, |value| crate::proto::oneof_encoded_len({tag}, value))"),
        },
        Kind::Vector(inner) => match &**inner {
            Kind::Int32 | Kind::Int53 | Kind::Int64 | Kind::Double | Kind::Bool => {
                let m = proto_scalar(inner).unwrap();
                FieldCode {
                    encode: format!("{p}::{m}::encode_packed({tag}, &{place}, buf);"),
                    merge: format!("{p}::{m}::merge_repeated(wire_type, &mut {place}, buf, ctx)"),
                    len: format!("{p}::{m}::encoded_len_packed({tag}, &{place})"),
                }
            }
            Kind::String | Kind::Bytes => {
                let m = proto_scalar(inner).unwrap();
                FieldCode {
                    encode: format!("{p}::{m}::encode_repeated({tag}, &{place}, buf);"),
                    merge: format!("{p}::{m}::merge_repeated(wire_type, &mut {place}, buf, ctx)"),
                    len: format!("{p}::{m}::encoded_len_repeated({tag}, &{place})"),
                }
            }
            Kind::Object(Target::Struct(_)) => FieldCode {
                encode: format!("{p}::message::encode_repeated({tag}, &{place}, buf);"),
                merge: format!("{p}::message::merge_repeated(wire_type, &mut {place}, buf, ctx)"),
                len: format!("{p}::message::encoded_len_repeated({tag}, &{place})"),
            },
            Kind::Object(_) => FieldCode {
                encode: format!("crate::proto::encode_repeated_oneof({tag}, &{place}, buf);"),
                merge: format!("crate::proto::merge_repeated_oneof(wire_type, &mut {place}, buf, ctx)"),
                len: format!("crate::proto::encoded_len_repeated_oneof({tag}, &{place})"),
            },
            Kind::Vector(_) => {
                return Err(GenError(format!("field `{name}` of `{owner}`: vectors of vectors have no protobuf mapping yet")));
            }
        },
        scalar => {
            let m = proto_scalar(scalar).unwrap();
            let set = is_set(scalar, &place);
            FieldCode {
                encode: format!("if {set} {{ {p}::{m}::encode({tag}, &{place}, buf); }}"),
                merge: format!("{p}::{m}::merge(wire_type, &mut {place}, buf, ctx)"),
                len: format!("if {set} {{ {p}::{m}::encoded_len({tag}, &{place}) }} else {{ 0 }}"),
            }
        }
    })
}

pub fn emit(model: &Model, numbering: Numbering) -> Result<String, GenError> {
    let mut out = String::new();
    for s in &model.structs {
        let tags = s.fields.iter().enumerate().map(|(i, f)| numbering.number(&s.tl_name, &f.tl_name, i)).collect::<Result<Vec<_>, _>>()?;
        let codes = s
            .fields
            .iter()
            .zip(&tags)
            .map(|(f, tag)| field_code(&f.kind, *tag, &f.rust_name, &s.tl_name))
            .collect::<Result<Vec<_>, _>>()?;
        writeln!(out, "impl prost::Message for {} {{", s.rust_name).unwrap();
        writeln!(out, "    fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {{").unwrap();
        if codes.is_empty() {
            writeln!(out, "        let _ = buf;").unwrap();
        }
        for c in &codes {
            writeln!(out, "        {}", c.encode).unwrap();
        }
        writeln!(out, "    }}\n").unwrap();
        writeln!(out, "    fn merge_field(&mut self, tag: u32, wire_type: prost::encoding::WireType, buf: &mut impl prost::bytes::Buf, ctx: prost::encoding::DecodeContext) -> Result<(), prost::DecodeError> {{").unwrap();
        writeln!(out, "        match tag {{").unwrap();
        for (tag, c) in tags.iter().zip(&codes) {
            writeln!(out, "            {tag} => {},", c.merge).unwrap();
        }
        writeln!(out, "            _ => prost::encoding::skip_field(wire_type, tag, buf, ctx),").unwrap();
        writeln!(out, "        }}\n    }}\n").unwrap();
        writeln!(out, "    fn encoded_len(&self) -> usize {{").unwrap();
        write!(out, "        0").unwrap();
        for c in &codes {
            write!(out, "\n            + {}", c.len).unwrap();
        }
        writeln!(out, "\n    }}\n").unwrap();
        writeln!(out, "    fn clear(&mut self) {{\n        *self = Self::default();\n    }}\n}}\n").unwrap();
    }

    for sum in model.sum_types() {
        let variants: Vec<(&str, u32)> = sum
            .variants
            .iter()
            .enumerate()
            .map(|(i, (v, s))| Ok((*v, numbering.number(sum.tl_name, &s.tl_name, i)?)))
            .collect::<Result<_, GenError>>()?;
        writeln!(out, "impl crate::proto::ProtoOneof for {} {{", sum.rust_name).unwrap();
        writeln!(out, "    fn encode_variant(&self, buf: &mut impl prost::bytes::BufMut) {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (v, tag) in &variants {
            writeln!(out, "            Self::{v}(value) => prost::encoding::message::encode({tag}, value, buf),").unwrap();
        }
        writeln!(out, "        }}\n    }}\n").unwrap();
        writeln!(out, "    fn variant_encoded_len(&self) -> usize {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (v, tag) in &variants {
            writeln!(out, "            Self::{v}(value) => prost::encoding::message::encoded_len({tag}, value),").unwrap();
        }
        writeln!(out, "        }}\n    }}\n").unwrap();
        writeln!(out, "    fn merge_variant(slot: &mut Option<Self>, tag: u32, wire_type: prost::encoding::WireType, buf: &mut impl prost::bytes::Buf, ctx: prost::encoding::DecodeContext) -> Result<(), prost::DecodeError> {{").unwrap();
        writeln!(out, "        match tag {{").unwrap();
        for (v, tag) in &variants {
            // Protobuf merges a repeated oneof member into the value already there.
            writeln!(out, "            {tag} => {{").unwrap();
            writeln!(
                out,
                "                let mut value = match slot.take() {{ Some(Self::{v}(value)) => value, _ => Default::default() }};"
            )
            .unwrap();
            writeln!(out, "                prost::encoding::message::merge(wire_type, &mut value, buf, ctx)?;").unwrap();
            writeln!(out, "                *slot = Some(Self::{v}(value));").unwrap();
            writeln!(out, "                Ok(())\n            }}").unwrap();
        }
        writeln!(out, "            _ => prost::encoding::skip_field(wire_type, tag, buf, ctx),").unwrap();
        writeln!(out, "        }}\n    }}\n}}\n").unwrap();
    }
    Ok(out)
}
