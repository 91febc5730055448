//! Binary TL (MTProto serialization) impls over the runtime in `tdbench_models::tl`: the
//! constructor id before every object, fields in declaration order, null pointers as `null`.

use std::fmt::Write;

use crate::model::{Field, Kind, Model, Struct, Target};

pub fn emit(model: &Model) -> String {
    let mut out = String::new();
    // The room the runtime's string writes leave spare must be the room counted here.
    writeln!(out, "const _: () = assert!(crate::tl::ROOM == {ROOM});\n").unwrap();
    for s in &model.structs {
        writeln!(out, "#[allow(unsafe_code)]").unwrap();
        writeln!(out, "impl crate::tl::TlObject for {} {{", s.rust_name).unwrap();
        writeln!(out, "    // SAFETY: every `put` is within the room tl-gen counted for its stretch, and every stretch").unwrap();
        writeln!(out, "    // is closed before any other write (see `TlWriter`).").unwrap();
        writeln!(out, "    fn write_boxed(&self, w: &mut crate::tl::TlWriter) {{").unwrap();
        let mut writes = vec![FieldWrite::Fixed("Self::CONSTRUCTOR_ID.to_le_bytes()".to_string(), 4)];
        for f in &s.fields {
            let place = format!("&self.{}", f.rust_name);
            writes.push(match (&f.kind, width(&f.kind)) {
                (kind, Some(width)) => FieldWrite::Fixed(fixed_bytes(kind, &place), width),
                (Kind::String, None) => FieldWrite::Text(place, "write_string"),
                (Kind::Bytes, None) => FieldWrite::Text(place, "write_bytes"),
                (Kind::Object(target), None) => FieldWrite::Optional(place, write_in_room(model, *target, WRITE_IN_DEPTH)),
                (kind, None) => FieldWrite::Checked(checked_write(model, kind, &place)),
            });
        }
        WriteBody::new(&mut out).emit(&writes);
        writeln!(out, "    }}\n").unwrap();
        if struct_write_in_room(model, s, WRITE_IN_DEPTH).is_some() {
            emit_struct_write_in(s, &mut out);
        }
        writeln!(out, "    fn read_with_id(id: u32, r: &mut crate::tl::TlReader<'_>) -> Result<Self, crate::tl::TlError> {{").unwrap();
        writeln!(out, "        r.expect_constructor(id, Self::CONSTRUCTOR_ID, Self::TL_NAME)?;").unwrap();
        // Each field into a local in wire order, runs of fixed-width fields read as one array
        // (one bounds check, as they were written), then the struct.
        let local = |f: &Field| format!("f_{}", f.rust_name.trim_start_matches("r#"));
        let mut run: Vec<&Field> = Vec::new();
        let mut runs = 0;
        for f in &s.fields {
            if width(&f.kind).is_some() {
                run.push(f);
                continue;
            }
            read_run(&mut out, &mut run, &mut runs, &local);
            let expression = match &f.kind {
                Kind::Object(_) => "r.read_optional()?".to_string(),
                kind => read_expression(kind),
            };
            writeln!(out, "        let {} = {expression};", local(f)).unwrap();
        }
        read_run(&mut out, &mut run, &mut runs, &local);
        writeln!(out, "        Ok(Self {{").unwrap();
        for f in &s.fields {
            writeln!(out, "            {}: {},", f.rust_name, local(f)).unwrap();
        }
        writeln!(out, "        }})\n    }}\n}}\n").unwrap();
    }
    for sum in model.sum_types() {
        let (name, tl_name) = (sum.rust_name, sum.tl_name);
        let variants: Vec<(&str, &str)> = sum.variants.iter().map(|(v, s)| (*v, s.rust_name.as_str())).collect();
        let write_in = sum_write_in_room(model, &sum.variants, WRITE_IN_DEPTH).is_some();
        if write_in {
            writeln!(out, "#[allow(unsafe_code)]").unwrap();
        }
        writeln!(out, "impl crate::tl::TlObject for {name} {{").unwrap();
        writeln!(out, "    fn write_boxed(&self, w: &mut crate::tl::TlWriter) {{").unwrap();
        writeln!(out, "        match self {{").unwrap();
        for (variant, _) in &variants {
            writeln!(out, "            Self::{variant}(value) => value.write_boxed(w),").unwrap();
        }
        writeln!(out, "        }}\n    }}\n").unwrap();
        if write_in {
            writeln!(out, "    #[inline(always)]").unwrap();
            writeln!(out, "    {} {{", write_in_signature("s")).unwrap();
            writeln!(out, "        // SAFETY: the caller's promise, and its room covers the largest of these constructors.").unwrap();
            writeln!(out, "        match self {{").unwrap();
            for (variant, _) in &variants {
                writeln!(out, "            Self::{variant}(value) => unsafe {{ value.write_in(w, s) }},").unwrap();
            }
            writeln!(out, "        }}\n    }}\n").unwrap();
        }
        writeln!(out, "    fn read_with_id(id: u32, r: &mut crate::tl::TlReader<'_>) -> Result<Self, crate::tl::TlError> {{").unwrap();
        writeln!(out, "        match id {{").unwrap();
        for (variant, struct_name) in &variants {
            writeln!(out, "            {struct_name}::CONSTRUCTOR_ID => Ok(Self::{variant}(crate::tl::TlObject::read_with_id(id, r)?)),")
                .unwrap();
        }
        writeln!(out, "            _ => Err(r.unexpected_constructor(id, \"{tl_name}\")),").unwrap();
        writeln!(out, "        }}\n    }}\n}}\n").unwrap();
    }
    emit_payload_reader(model, &mut out);
    out
}

/// `TlObject::write_in`'s signature, the stretch bound as `stretch` (`mut s` where the body
/// puts into it).
fn write_in_signature(stretch: &str) -> String {
    format!("unsafe fn write_in(&self, w: &mut crate::tl::TlWriter, {stretch}: crate::tl::Stretch) -> Option<crate::tl::Stretch>")
}

/// A constructor's `write_in`: its puts, then its object field's `write_in`, if it has one.
fn emit_struct_write_in(s: &Struct, out: &mut String) {
    writeln!(out, "    #[inline(always)]").unwrap();
    writeln!(out, "    {} {{", write_in_signature("mut s")).unwrap();
    out.push_str(&put_statement(&fixed_run(s)));
    match s.fields.last() {
        Some(last) if width(&last.kind).is_none() => {
            writeln!(out, "        match &self.{} {{", last.rust_name).unwrap();
            writeln!(out, "            Some(value) => unsafe {{ value.write_in(w, s) }},").unwrap();
            writeln!(out, "            None => {{").unwrap();
            writeln!(out, "                unsafe {{ s.put(crate::tl::NULL.to_le_bytes()) }};").unwrap();
            writeln!(out, "                Some(s)").unwrap();
            writeln!(out, "            }}").unwrap();
            writeln!(out, "        }}").unwrap();
        }
        _ => writeln!(out, "        let _ = w;\n        Some(s)").unwrap(),
    }
    writeln!(out, "    }}\n").unwrap();
}

/// A field written through the runtime's checked methods (vectors): a vector of objects whose
/// type has `write_in` by `write_vector_in`, any other by [`write_statement`].
fn checked_write(model: &Model, kind: &Kind, place: &str) -> String {
    if let Kind::Vector(inner) = kind
        && let Kind::Object(target) = **inner
        && let Some(room) = write_in_room(model, target, WRITE_IN_DEPTH)
    {
        return format!("unsafe {{ w.write_vector_in({place}, {}) }};", room.max(ROOM));
    }
    write_statement(kind, place)
}

/// `Object::from_tl`: a whole payload, into the caller's error type. Through `read_object` and
/// a codec's own error, the 680-byte `Object` was moved once more after it was built (a
/// `Result` of another error type is another value): a fifth of a `status` decode, in
/// `memcpy`. Here each constructor is read, the end checked, and the value wrapped where the
/// caller's `Result` lies.
fn emit_payload_reader(model: &Model, out: &mut String) {
    writeln!(out, "impl Object {{").unwrap();
    writeln!(out, "    /// Reads one whole payload: any constructor, nothing after it.").unwrap();
    writeln!(out, "    pub fn from_tl<E: From<crate::tl::TlError>>(bytes: &[u8]) -> Result<Self, E> {{").unwrap();
    writeln!(out, "        let mut r = crate::tl::TlReader::new(bytes);").unwrap();
    writeln!(out, "        let id = r.read_u32()?;").unwrap();
    writeln!(out, "        match id {{").unwrap();
    for s in &model.structs {
        writeln!(out, "            {0}::CONSTRUCTOR_ID => Ok(Self::{0}(r.read_whole(id)?)),", s.rust_name).unwrap();
    }
    writeln!(out, "            _ => Err(r.unexpected_constructor(id, \"Object\").into()),").unwrap();
    writeln!(out, "        }}\n    }}\n}}\n").unwrap();
}

/// The bytes a fixed-width field takes on the wire; `None` when that depends on its value.
fn width(kind: &Kind) -> Option<usize> {
    match kind {
        Kind::Int32 | Kind::Bool => Some(4),
        Kind::Int53 | Kind::Int64 | Kind::Double => Some(8),
        _ => None,
    }
}

/// The bytes of a constructor whose fields are all fixed-width, id included; `None` for any
/// other.
fn fixed_size(s: &Struct) -> Option<usize> {
    s.fields.iter().try_fold(4, |total, f| Some(total + width(&f.kind)?))
}

/// How deep `write_in` nests: a bound on the recursion through the schema's types.
const WRITE_IN_DEPTH: usize = 3;

/// The room a constructor's `write_in` needs: all fixed-width fields, or fixed-width fields
/// then one object field whose type has `write_in` of its own.
fn struct_write_in_room(model: &Model, s: &Struct, depth: usize) -> Option<usize> {
    if let Some(size) = fixed_size(s) {
        return Some(size);
    }
    let (last, prefix) = s.fields.split_last()?;
    let Kind::Object(target) = last.kind else { return None };
    let prefix: usize = prefix.iter().map(|f| width(&f.kind)).sum::<Option<usize>>()?;
    let child = write_in_room(model, target, depth.checked_sub(1)?)?;
    Some(4 + prefix + child.max(4))
}

/// A `write_in` constructor's puts: its id, then its fixed-width fields.
fn fixed_run(s: &Struct) -> Vec<(String, usize)> {
    let fields = s.fields.iter().filter_map(|f| {
        let width = width(&f.kind)?;
        Some((fixed_bytes(&f.kind, &format!("&self.{}", f.rust_name)), width))
    });
    std::iter::once(("Self::CONSTRUCTOR_ID.to_le_bytes()".to_string(), 4)).chain(fields).collect()
}

/// The room an object field of type `target` needs to be written into its parent's stretch,
/// when its type has `write_in`: a constructor that only puts ([`struct_write_in_room`]), or an
/// abstract type with at least one. (An abstract type with none would gain nothing: its every
/// value closes the stretch.)
fn write_in_room(model: &Model, target: Target, depth: usize) -> Option<usize> {
    match target {
        Target::Struct(i) => struct_write_in_room(model, &model.structs[i], depth),
        Target::Enum(i) => {
            let variants: Vec<(&str, &Struct)> =
                model.enums[i].variants.iter().map(|v| (v.rust_name.as_str(), &model.structs[v.target])).collect();
            sum_write_in_room(model, &variants, depth)
        }
        Target::Absent(_) => None,
    }
}

/// For an abstract type: the most room any of its `write_in` constructors needs, if it has any.
/// Measured on `tl` encode (fixed-width constructors only, then), against writing only the
/// abstract types more than half of whose constructors are: `message` 642 → 640 instructions,
/// `messages` 31,100 → 31,032; the same figures as writing every abstract type this way.
fn sum_write_in_room(model: &Model, variants: &[(&str, &Struct)], depth: usize) -> Option<usize> {
    variants.iter().filter_map(|(_, s)| struct_write_in_room(model, s, depth)).max()
}

/// A fixed-width field's little-endian bytes, an expression of type `[u8; width]`.
fn fixed_bytes(kind: &Kind, place: &str) -> String {
    match kind {
        Kind::Bool => format!("crate::tl::bool_bytes(*{place})"),
        _ => format!("({place}).to_le_bytes()"),
    }
}

/// The room one `open` makes: `tdbench_models::tl::ROOM`, which the generated code asserts.
const ROOM: usize = 256;

/// One write of a generated `write_boxed`, in wire order.
enum FieldWrite {
    /// A fixed-width field, or the constructor id: its little-endian bytes and their width.
    Fixed(String, usize),
    /// A `string` or `bytes` field, and the writer's method for one that is not empty.
    Text(String, &'static str),
    /// An object field: the sub-object or `null`; and the room its type's `write_in` needs,
    /// if it has one.
    Optional(String, Option<usize>),
    /// Any other field (vectors), through the runtime's checked methods.
    Checked(String),
}

impl FieldWrite {
    /// Whether it puts bytes, and so needs room counted before it.
    fn puts(&self) -> bool {
        !matches!(self, FieldWrite::Checked(_))
    }
}

/// The body of a generated `write_boxed`: the stretch of puts it has open, if any, and the room
/// that stretch may still `put` into without a check: the room it was opened with less what was
/// put since, on the path with the least. A call that can write closes the stretch first; after
/// a string's write, a stretch resumes in the [`ROOM`] it left.
struct WriteBody<'o> {
    out: &'o mut String,
    /// The open stretch's room; `None` when no stretch is open.
    room: Option<usize>,
    /// Whether the local `s` is declared yet (the first open declares it).
    declared: bool,
    /// Fixed-width writes not yet emitted: the constructor id and each run of fixed fields
    /// after it go out as one array, one `put`.
    run: Vec<(String, usize)>,
}

impl WriteBody<'_> {
    fn new(out: &mut String) -> WriteBody<'_> {
        WriteBody { out, room: None, declared: false, run: Vec::new() }
    }

    fn emit(mut self, writes: &[FieldWrite]) {
        for (at, write) in writes.iter().enumerate() {
            if let FieldWrite::Fixed(bytes, width) = write {
                self.run.push((bytes.clone(), *width));
                continue;
            }
            self.flush_run();
            let put_follows = writes.get(at + 1).is_some_and(FieldWrite::puts);
            match write {
                FieldWrite::Fixed(..) => unreachable!("a fixed write joins the run"),
                FieldWrite::Text(place, method) => self.text(place, method, put_follows),
                FieldWrite::Optional(place, fixed) => self.optional(place, *fixed, put_follows),
                FieldWrite::Checked(statement) => {
                    self.close();
                    writeln!(self.out, "        {statement}").unwrap();
                }
            }
        }
        self.flush_run();
        self.close();
    }

    /// `s = w.open(n)`, declaring `s` the first time.
    fn open(&mut self, n: usize) {
        let room = n.max(ROOM);
        let declare = if self.declared { "" } else { "let mut " };
        writeln!(self.out, "        {declare}s = w.open({room});").unwrap();
        self.declared = true;
        self.room = Some(room);
    }

    /// Closes the open stretch, if any: its puts become part of the buffer.
    fn close(&mut self) {
        if self.room.take().is_some() {
            writeln!(self.out, "        unsafe {{ w.close(s) }};").unwrap();
        }
    }

    /// Makes sure a stretch with `n` bytes of room is open: the open one, or a new one.
    fn make_room(&mut self, n: usize) {
        if self.room.is_some_and(|room| room >= n) {
            return;
        }
        self.close();
        self.open(n);
    }

    /// Spends `n` bytes of the open stretch's room.
    fn spend(&mut self, n: usize) -> usize {
        let room = self.room.expect("a put within an open stretch") - n;
        self.room = Some(room);
        room
    }

    /// Puts the pending run of fixed-width writes and empties it.
    fn flush_run(&mut self) {
        if self.run.is_empty() {
            return;
        }
        let total: usize = self.run.iter().map(|(_, width)| width).sum();
        self.make_room(total);
        self.out.push_str(&put_statement(&self.run));
        self.spend(total);
        self.run.clear();
    }

    /// A `string` or `bytes` field: an empty one (most optional text in TDLib objects, such as
    /// `message`'s signature) is its four zero bytes, put; any other goes through `method`,
    /// after which a stretch resumes in the [`ROOM`] its one check left spare when a put
    /// follows.
    fn text(&mut self, place: &str, method: &str, put_follows: bool) {
        self.make_room(4);
        let room = self.spend(4);
        let close_after_put = if put_follows { "" } else { "; w.close(s)" };
        writeln!(self.out, "        if ({place}).is_empty() {{").unwrap();
        writeln!(self.out, "            unsafe {{ s.put([0u8; 4]){close_after_put} }};").unwrap();
        writeln!(self.out, "        }} else {{").unwrap();
        writeln!(self.out, "            unsafe {{ w.close(s) }};").unwrap();
        writeln!(self.out, "            w.{method}({place});").unwrap();
        if put_follows {
            writeln!(self.out, "            s = unsafe {{ w.resume() }};").unwrap();
        }
        writeln!(self.out, "        }}").unwrap();
        self.room = put_follows.then(|| room.min(ROOM));
    }

    /// An object field: the sub-object, or `null` put. A sub-object whose type has `write_in`
    /// (`fixed`: the room its largest fixed-width constructor needs) is handed this stretch: a
    /// fixed-width one is put in it, any other closes it and is written by a call. When a put
    /// follows, a sub-object that closed the stretch is followed by a new one in its own arm,
    /// so a `null` costs no check.
    fn optional(&mut self, place: &str, fixed: Option<usize>, put_follows: bool) {
        let need = fixed.unwrap_or(0).max(4);
        self.make_room(need);
        let room = self.spend(need);
        writeln!(self.out, "        match {place} {{").unwrap();
        writeln!(self.out, "            Some(value) => {{").unwrap();
        match (fixed, put_follows) {
            (None, _) => {
                writeln!(self.out, "                unsafe {{ w.close(s) }};").unwrap();
                writeln!(self.out, "                w.write_child(value);").unwrap();
                if put_follows {
                    writeln!(self.out, "                s = w.open({ROOM});").unwrap();
                }
            }
            (Some(_), true) => {
                writeln!(self.out, "                s = match unsafe {{ value.write_in(w, s) }} {{").unwrap();
                writeln!(self.out, "                    Some(open) => open,").unwrap();
                writeln!(self.out, "                    None => w.open({ROOM}),").unwrap();
                writeln!(self.out, "                }};").unwrap();
            }
            (Some(_), false) => {
                writeln!(self.out, "                if let Some(open) = unsafe {{ value.write_in(w, s) }} {{").unwrap();
                writeln!(self.out, "                    unsafe {{ w.close(open) }};").unwrap();
                writeln!(self.out, "                }}").unwrap();
            }
        }
        writeln!(self.out, "            }}").unwrap();
        let close_after_put = if put_follows { "" } else { "; w.close(s)" };
        writeln!(self.out, "            None => unsafe {{ s.put(crate::tl::NULL.to_le_bytes()){close_after_put} }},").unwrap();
        writeln!(self.out, "        }}").unwrap();
        self.room = put_follows.then(|| room.min(ROOM));
    }
}

/// The statement that puts a run of fixed-width writes into the stretch `s`: one `put` of a
/// single write, or of one array for two or more.
fn put_statement(run: &[(String, usize)]) -> String {
    let mut out = String::new();
    if let [(bytes, _)] = run {
        writeln!(out, "        unsafe {{ s.put({bytes}) }};").unwrap();
        return out;
    }
    let total: usize = run.iter().map(|(_, width)| width).sum();
    writeln!(out, "        unsafe {{").unwrap();
    writeln!(out, "            s.put({{").unwrap();
    writeln!(out, "                let mut run = [0u8; {total}];").unwrap();
    let mut at = 0;
    for (bytes, width) in run {
        writeln!(out, "                run[{at}..{}].copy_from_slice(&{bytes});", at + width).unwrap();
        at += width;
    }
    writeln!(out, "                run").unwrap();
    writeln!(out, "            }})").unwrap();
    writeln!(out, "        }};").unwrap();
    out
}

/// Reads the pending run of fixed-width fields into their locals and empties it: two or more
/// as one array, a single field on its own.
fn read_run(out: &mut String, run: &mut Vec<&Field>, runs: &mut usize, local: &dyn Fn(&Field) -> String) {
    match run.len() {
        0 => {}
        1 => writeln!(out, "        let {} = {};", local(run[0]), read_expression(&run[0].kind)).unwrap(),
        _ => {
            let total: usize = run.iter().filter_map(|f| width(&f.kind)).sum();
            let name = format!("run_{runs}");
            *runs += 1;
            writeln!(out, "        let {name}: [u8; {total}] = r.read_run()?;").unwrap();
            // The run's `Bool`s are checked together, one branch for all (`message` has ten).
            let mut bools = Vec::new();
            let mut at = 0;
            for f in run.iter() {
                if f.kind == Kind::Bool {
                    bools.push(at.to_string());
                }
                at += width(&f.kind).unwrap_or(0);
            }
            if !bools.is_empty() {
                writeln!(out, "        r.check_bools(&{name}, &[{}])?;", bools.join(", ")).unwrap();
            }
            let mut at = 0;
            for f in run.iter() {
                let expression = match f.kind {
                    Kind::Int32 => format!("i32::from_le_bytes(crate::tl::bytes_in(&{name}, {at}))"),
                    Kind::Int53 | Kind::Int64 => format!("i64::from_le_bytes(crate::tl::bytes_in(&{name}, {at}))"),
                    Kind::Double => format!("f64::from_le_bytes(crate::tl::bytes_in(&{name}, {at}))"),
                    Kind::Bool => format!("crate::tl::bool_at(&{name}, {at})"),
                    _ => unreachable!("a run holds fixed-width fields only"),
                };
                writeln!(out, "        let {} = {expression};", local(f)).unwrap();
                at += width(&f.kind).unwrap_or(0);
            }
        }
    }
    run.clear();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str) -> Model {
        Model::resolve(&tl_parser::parse_schema(text).unwrap()).unwrap()
    }

    fn room_of(m: &Model, tl_name: &str) -> Option<usize> {
        let s = m.structs.iter().find(|s| s.tl_name == tl_name).expect("declared");
        struct_write_in_room(m, s, WRITE_IN_DEPTH)
    }

    #[test]
    fn write_in_is_for_values_that_only_put_and_counts_their_largest() {
        let m = model(
            "bold = EntityType;\nmention user_id:int53 = EntityType;\ntextUrl url:string = EntityType;\n\
             entity offset:int32 length:int32 type:EntityType = Entity;\nlink url:string = Link;\n\
             linked offset:int32 link:link = Linked;\nnode v:int32 next:node = Node;\n",
        );
        assert_eq!(room_of(&m, "bold"), Some(4));
        assert_eq!(room_of(&m, "mention"), Some(12));
        assert_eq!(room_of(&m, "textUrl"), None, "a string is a write of its own");
        // The abstract type: its largest `write_in` constructor.
        let entity_type = m.enums.iter().position(|e| e.rust_name == "EntityType").unwrap();
        assert_eq!(write_in_room(&m, Target::Enum(entity_type), WRITE_IN_DEPTH), Some(12));
        // Id, two int32s, and the largest entity type (12 bytes, more than a `null`'s 4).
        assert_eq!(room_of(&m, "entity"), Some(4 + 8 + 12));
        assert_eq!(room_of(&m, "linked"), None, "its object field's type has no `write_in`");
        assert_eq!(room_of(&m, "node"), None, "a cycle never ends in puts alone");
    }
}
