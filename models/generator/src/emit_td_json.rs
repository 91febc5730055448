//! The `json-td` reader and writer: one `TdJson` impl per type over the runtime in
//! `tdbench_models::td_json`.
//!
//! Writers emit `{"@type":"name"` and each `,"field":` as one constant. Readers of an abstract
//! type read `@type` first and switch on a hash of the name (`tl_parser::name_hash`, folded in
//! while the name is scanned), then compare it exactly. A constructor's fields are read first in
//! declaration order, as TDLib writes them, each key compared with its constant; from the first
//! surprise on, a field loop gets each member as an index into its field names (the reader
//! tries the next field in declaration order first, then looks the key up; both compare
//! exactly, so an unknown field is never taken for a known one) and skips unknown members of
//! any shape.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::GenError;
use crate::emit_types::{pointee_type, rust_type};
use crate::model::{Field, Kind, Model, Struct, SumType, Target};

const RT: &str = "crate::td_json";

pub fn emit(model: &Model) -> Result<String, GenError> {
    let mut out = String::new();
    // The structs some field holds in a `Box`: they get a reader straight into the box.
    let boxed: HashSet<usize> = model
        .structs
        .iter()
        .flat_map(|s| &s.fields)
        .filter_map(|f| match f.kind {
            Kind::Object(Target::Struct(index)) if f.boxed => Some(index),
            _ => None,
        })
        .collect();
    for (index, s) in model.structs.iter().enumerate() {
        if s.fields.len() > 64 {
            return Err(GenError(format!(
                "`{}` has {} fields; json-td's reader notes the fields it has read in a u64, one bit each",
                s.tl_name,
                s.fields.len()
            )));
        }
        emit_struct(model, s, boxed.contains(&index), &mut out);
    }
    for sum in model.sum_types() {
        let mut hashes: HashMap<u32, &str> = HashMap::new();
        for (_, s) in &sum.variants {
            if let Some(other) = hashes.insert(tl_parser::name_hash(s.tl_name.as_bytes()), &s.tl_name) {
                return Err(GenError(format!(
                    "constructors `{other}` and `{}` of `{}` have the same name hash; json-td's dispatch needs another hash",
                    s.tl_name, sum.tl_name
                )));
            }
        }
        let name = sum.rust_name;
        writeln!(out, "impl {RT}::TdJson for {name} {{").unwrap();
        writeln!(out, "    fn write_json(&self, w: &mut {RT}::JsonWriter<'_>) {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (variant, _) in &sum.variants {
            writeln!(out, "            Self::{variant}(value) => {RT}::TdJson::write_json(value, w),").unwrap();
        }
        writeln!(out, "        }}\n    }}\n").unwrap();
        writeln!(out, "    fn read_json(r: &mut {RT}::JsonReader<'_>) -> Result<Self, {RT}::JsonError> {{").unwrap();
        emit_dispatch(&sum, &mut out, |read| read.to_string(), "");
        writeln!(out, "    }}\n}}\n").unwrap();
        if sum.rust_name == "Object" {
            emit_payload_reader(&sum, &mut out);
        }
    }
    Ok(out)
}

/// The body of a sum type's reader: `@type` read first, the constructor found by the name's
/// hash and compared exactly, its fields read by `read` (given the constructor's call, an
/// expression of type `Result<Constructor, JsonError>`). `into` follows each error: `.into()`
/// where the caller's error type is another.
fn emit_dispatch(sum: &SumType<'_>, out: &mut String, read: impl Fn(&str) -> String, into: &str) {
    writeln!(out, "        let (name, type_key) = r.begin_typed_object()?;").unwrap();
    writeln!(out, "        let Some(name) = name else {{ return Err(r.missing_type(\"{}\"){into}) }};", sum.tl_name).unwrap();
    writeln!(out, "        match name.hash {{").unwrap();
    for (variant, s) in &sum.variants {
        writeln!(
            out,
            "            {:#010x} if name.text[..] == *b\"{}\" => Ok(Self::{variant}({}?)),",
            tl_parser::name_hash(s.tl_name.as_bytes()),
            s.tl_name,
            read(&format!("{}::read_json_fields(r, type_key)", s.rust_name))
        )
        .unwrap();
    }
    writeln!(out, "            _ => Err(r.unknown_constructor(&name.text, \"{}\"){into}),", sum.tl_name).unwrap();
    writeln!(out, "        }}").unwrap();
}

/// `Object::from_td_json`: a whole payload, into the caller's error type. Through
/// `td_json::from_slice` and a codec's own error, the 680-byte `Object` was moved twice more
/// after it was built (once into `from_slice`'s `Result` after the end was checked, once into
/// the codec's): a fifth of a `status` decode, in `memcpy`. Here the end is checked before the
/// constructor is wrapped, where the caller's `Result` lies (as `Object::from_tl` does).
fn emit_payload_reader(sum: &SumType<'_>, out: &mut String) {
    writeln!(out, "impl Object {{").unwrap();
    writeln!(out, "    /// Reads one whole payload of TDLib JSON: any constructor, then nothing but whitespace.").unwrap();
    writeln!(out, "    pub fn from_td_json<E: From<{RT}::JsonError>>(input: &[u8]) -> Result<Self, E> {{").unwrap();
    writeln!(out, "        let mut r = {RT}::JsonReader::new(input);").unwrap();
    emit_dispatch(sum, out, |read| format!("r.whole(|r| {read})"), ".into()");
    writeln!(out, "    }}\n}}\n").unwrap();
}

/// A constructor's `TdJson` impl and its field readers; `boxed` when some field holds it in a
/// `Box`.
fn emit_struct(model: &Model, s: &Struct, boxed: bool, out: &mut String) {
    let name = &s.rust_name;
    // How TDLib opens this type's objects: the writer emits it, the reader expects it first.
    let typed_open = format!("br#\"{{\"@type\":\"{}\"\"#", s.tl_name);
    writeln!(out, "impl {RT}::TdJson for {name} {{").unwrap();
    writeln!(out, "    fn write_json(&self, w: &mut {RT}::JsonWriter<'_>) {{").unwrap();
    writeln!(out, "        w.raw({typed_open});").unwrap();
    for f in &s.fields {
        let key = format!("w.raw(br#\",\"{}\":\"#);", f.tl_name);
        let place = format!("&self.{}", f.rust_name);
        match &f.kind {
            Kind::Object(_) => {
                writeln!(out, "        if let Some(value) = {place} {{ {key} {RT}::TdJson::write_json(value, w); }}").unwrap()
            }
            kind => writeln!(out, "        {key} {}", write_statement(kind, &place)).unwrap(),
        }
    }
    writeln!(out, "        w.raw(b\"}}\");\n    }}\n").unwrap();
    writeln!(out, "    fn read_json(r: &mut {RT}::JsonReader<'_>) -> Result<Self, {RT}::JsonError> {{").unwrap();
    writeln!(out, "        r.begin_concrete_object({typed_open})?;").unwrap();
    writeln!(out, "        Self::read_json_fields(r, {RT}::TypeKey::Ignore)").unwrap();
    writeln!(out, "    }}").unwrap();
    if boxed {
        // Read straight into the box: read by value, the struct was moved out of the field
        // reader and again into the box, two `memcpy`s of `message`'s 680 bytes.
        writeln!(out, "\n    fn read_json_boxed(r: &mut {RT}::JsonReader<'_>) -> Result<Box<Self>, {RT}::JsonError> {{").unwrap();
        writeln!(out, "        r.begin_concrete_object({typed_open})?;").unwrap();
        writeln!(out, "        let mut value = Box::<Self>::default();").unwrap();
        writeln!(out, "        Self::read_json_fields_into(&mut value, r, {RT}::TypeKey::Ignore)?;").unwrap();
        writeln!(out, "        Ok(value)").unwrap();
        writeln!(out, "    }}").unwrap();
    }
    writeln!(out, "}}\n").unwrap();

    writeln!(out, "impl {name} {{").unwrap();
    let names: Vec<String> = s.fields.iter().map(|f| format!("br#\"{}\":\"#", f.tl_name)).collect();
    writeln!(out, "    /// Field keys in declaration order, as TDLib writes them after the opening quote.").unwrap();
    writeln!(out, "    const JSON_FIELDS: &'static [&'static [u8]] = &[{}];\n", names.join(", ")).unwrap();
    writeln!(out, "    /// Reads this constructor's members after the object's `{{` (and its `@type`, if that came first).").unwrap();
    writeln!(out, "    #[doc(hidden)]").unwrap();
    writeln!(out, "    pub fn read_json_fields(r: &mut {RT}::JsonReader<'_>, type_key: {RT}::TypeKey) -> Result<Self, {RT}::JsonError> {{")
        .unwrap();
    // The value itself at its default, which TDLib leaves a missing field at, each field read
    // into it. With a local per field, LLVM kept `message`'s 43 apart: stored and reloaded
    // around every call, then moved one by one into the struct. Read in place, `message`
    // decoded 3.4% fewer instructions and 13.6% faster (the one move left is a `memcpy`).
    let binding = if s.fields.is_empty() { "value" } else { "mut value" };
    writeln!(out, "        let {binding} = Self::default();").unwrap();
    emit_field_reads(model, s, out);
    writeln!(out, "        Ok(value)\n    }}").unwrap();
    if boxed {
        // The same reads into a value behind a reference, for the box. A second body, not the
        // one above calling this: wrapped so, the by-value reader kept its value in memory for
        // the call and copied it out after (`vector-object` +1.1% instructions, `messages`
        // +0.4%).
        writeln!(out, "\n    /// [`Self::read_json_fields`] into `value`, which holds the default.").unwrap();
        writeln!(out, "    #[doc(hidden)]").unwrap();
        let binding = if s.fields.is_empty() { "_value" } else { "value" };
        writeln!(
            out,
            "    pub fn read_json_fields_into({binding}: &mut Self, r: &mut {RT}::JsonReader<'_>, type_key: {RT}::TypeKey) -> Result<(), {RT}::JsonError> {{"
        )
        .unwrap();
        emit_field_reads(model, s, out);
        writeln!(out, "        Ok(())\n    }}").unwrap();
    }
    writeln!(out, "}}\n").unwrap();
}

/// The body of a constructor's field readers: each field read into `value.<field>`, where
/// `value` (a local or a `&mut`) holds the default.
fn emit_field_reads(model: &Model, s: &Struct, out: &mut String) {
    if !s.fields.is_empty() {
        // A bit per field read, so that a repeated key is caught as serde catches it. It was an
        // `Option` per field: a tag to store per field and to test again to build the struct.
        writeln!(out, "        let mut seen = 0u64;").unwrap();
    }
    writeln!(out, "        let mut expected = 0;").unwrap();
    // In declaration order, as TDLib writes: each key a constant compare, no dispatch. A null
    // object may be left out; anything else unexpected leaves the rest to the loop below.
    // The label only where a field can break out of it (a struct of objects only has none).
    let label = if s.fields.iter().any(|f| !matches!(f.kind, Kind::Object(_))) { "'in_order: " } else { "" };
    writeln!(out, "        {label}{{").unwrap();
    // Each field's read, the same in order and in the loop below.
    let reads: Vec<String> = s.fields.iter().map(|f| field_read(model, f)).collect();
    for (index, (f, read)) in s.fields.iter().zip(&reads).enumerate() {
        let take = format!("{RT}::fill(&mut value.{}, {read}?); seen |= 1 << {index}; expected = {};", f.rust_name, index + 1);
        let member = format!("br#\",\"{}\":\"#", f.tl_name);
        match f.kind {
            Kind::Object(_) => writeln!(out, "            if r.expect_key({member}) {{ {take} }}").unwrap(),
            _ => writeln!(out, "            if !r.expect_key({member}) {{ break 'in_order; }} {take}").unwrap(),
        }
    }
    writeln!(out, "        }}").unwrap();
    // The `}` where the fields in order stopped, as TDLib writes it, ends the object inline;
    // anything else goes to the loop (a call per object, when it was the loop that found `}`).
    writeln!(out, "        if !r.end_object() {{ loop {{").unwrap();
    writeln!(out, "            match r.next_field(Self::JSON_FIELDS, &mut expected)? {{").unwrap();
    for (index, (f, read)) in s.fields.iter().zip(&reads).enumerate() {
        writeln!(
            out,
            "                {index} => {{ r.first_time(&mut seen, {index}, \"{}\")?; {RT}::fill(&mut value.{}, {read}?); }}",
            f.tl_name, f.rust_name
        )
        .unwrap();
    }
    writeln!(out, "                {RT}::FIELD_END => break,").unwrap();
    writeln!(out, "                {RT}::FIELD_TYPE => r.type_member(type_key)?,").unwrap();
    writeln!(out, "                _ => r.skip_value()?,").unwrap();
    writeln!(out, "            }}\n        }} }}").unwrap();
}

/// An expression reading field `f` with `r`: an object field may be `null` (`None`).
fn field_read(model: &Model, f: &Field) -> String {
    match &f.kind {
        Kind::Object(_) => format!("r.optional(<{} as {RT}::TdJson>::read_json)", pointee_type(model, f)),
        kind => read_expression(model, kind),
    }
}

/// A statement writing `place` (an expression of type `&T`).
fn write_statement(kind: &Kind, place: &str) -> String {
    match kind {
        Kind::Int32 => format!("w.int32(*{place});"),
        Kind::Int53 => format!("w.int53(*{place});"),
        Kind::Int64 => format!("w.int64(*{place});"),
        Kind::Double => format!("w.double(*{place});"),
        Kind::Bool => format!("w.bool(*{place});"),
        Kind::String => format!("w.string({place});"),
        Kind::Bytes => format!("w.bytes({place});"),
        // Vector elements are not nullable.
        Kind::Object(_) => format!("{RT}::TdJson::write_json({place}, w);"),
        // The commonest scalar vector has a writer of its own: one reservation for all of it.
        Kind::Vector(inner) if matches!(**inner, Kind::Int32) => format!("w.int32_vector({place});"),
        Kind::Vector(inner) => format!("w.vector({place}, |w, x| {{ {} }});", write_statement(inner, "x")),
    }
}

/// An expression reading a non-null value of `kind` with `r`.
fn read_expression(model: &Model, kind: &Kind) -> String {
    match kind {
        Kind::Int32 => "r.int32()".into(),
        Kind::Int53 => "r.int53()".into(),
        Kind::Int64 => "r.int64()".into(),
        Kind::Double => "r.double()".into(),
        Kind::Bool => "r.bool()".into(),
        Kind::String => "r.string()".into(),
        Kind::Bytes => "r.bytes()".into(),
        Kind::Object(_) => format!("<{} as {RT}::TdJson>::read_json(r)", rust_type(model, kind)),
        Kind::Vector(inner) => format!("r.vector(|r| {})", read_expression(model, inner)),
    }
}
