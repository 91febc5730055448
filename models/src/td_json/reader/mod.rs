//! The pull reader: tokens are read where they lie in the input; numbers are parsed in place,
//! strings are copied (unescaped) once into the `String` the model keeps, base64 is decoded
//! straight into the model's `Vec<u8>`, and vectors are allocated at their final length.
//!
//! One concern per file, as serde_json splits its reader: this file holds the cursor, depth and
//! errors; [`object`] the objects, their `@type` and fields; [`vector`] the arrays; [`number`]
//! the literals and numbers; [`string`] strings and base64; [`skip`] unknown members.

mod number;
mod object;
mod skip;
mod string;
mod vector;

pub use object::fill;

use std::borrow::Cow;

use super::JsonError;

/// Objects and arrays nest at most this deep (serde_json's limit too); deeper input is refused
/// rather than recursed into.
pub const MAX_DEPTH: u32 = 128;

/// [`JsonReader::next_field`]'s answer after the object's last member.
pub const FIELD_END: usize = usize::MAX - 2;
/// [`JsonReader::next_field`]'s answer for an `@type` member.
pub const FIELD_TYPE: usize = usize::MAX - 1;
/// [`JsonReader::next_field`]'s answer for a member that is not a field of the object.
pub const FIELD_UNKNOWN: usize = usize::MAX;

/// Array elements read onto the stack per recursive call of [`JsonReader::vector`].
const CHUNK: usize = 8;

/// Stack the reader may use before arrays stop being read in chunks on the stack and the rest
/// of an array is counted ahead instead; `tests/json_td.rs` reads a 200,000-element array on a
/// 512 KB thread stack. Nesting is bounded separately by [`MAX_DEPTH`].
const CHUNK_STACK_BUDGET: usize = 256 * 1024;

/// How the generated field loop treats an `@type` member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKey {
    /// Already read as the first member: another one is a duplicate.
    Consumed,
    /// Found by the slow path at this byte (the start of its key): skip that one, refuse others.
    At(usize),
    /// A field of a concrete type: TDLib (and serde's derived structs) ignore `@type` there.
    Ignore,
}

/// The `@type` of an object: the name, and its [`tl_parser::name_hash`] for the dispatch. The
/// name is always borrowed: from the input, or, for a name written with escapes, from the
/// schema's own list of names (a name that is in neither is refused as it is read).
pub struct TypeName<'a> {
    pub text: &'a [u8],
    pub hash: u32,
}

/// A string token: where its content lies and what reading it will need.
struct StringToken {
    start: usize,
    end: usize,
    /// Length after unescaping, so the destination is allocated once at its final size.
    unescaped_len: usize,
    has_escapes: bool,
}

/// A number token; `magnitude` is `None` when the number has a fraction or exponent or does
/// not fit a u64.
struct NumberToken {
    start: usize,
    end: usize,
    negative: bool,
    is_integer: bool,
    magnitude: Option<u64>,
}

pub struct JsonReader<'a> {
    input: &'a [u8],
    pos: usize,
    depth: u32,
    /// Right after `{` or `[`: the next member comes without a comma.
    after_open: bool,
    /// Where the key of the member being read starts, for errors about it.
    key_at: usize,
    /// The address of a local in [`JsonReader::new`]: where the reader's stack use starts.
    stack_base: usize,
}

impl<'a> JsonReader<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        let base = 0u8;
        let stack_base = std::ptr::addr_of!(base) as usize;
        JsonReader { input, pos: 0, depth: 0, after_open: false, key_at: 0, stack_base }
    }

    /// The object of a whole payload, read by `read`: nothing but whitespace may follow it.
    /// The generated `Object::from_td_json` calls it for each constructor before it wraps the
    /// value, so the end is checked before the (large) `Object` is built, and built once.
    #[inline(always)]
    pub fn whole<T>(&mut self, read: impl FnOnce(&mut Self) -> Result<T, JsonError>) -> Result<T, JsonError> {
        let value = read(self)?;
        self.finish()?;
        Ok(value)
    }

    /// Succeeds when only whitespace is left.
    pub fn finish(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error_here("trailing characters after the object")),
        }
    }

    pub fn error_at(&self, offset: usize, message: impl Into<Cow<'static, str>>) -> JsonError {
        JsonError::new(offset, message)
    }

    fn error_here(&self, message: impl Into<Cow<'static, str>>) -> JsonError {
        self.error_at(self.pos.min(self.input.len()), message)
    }

    fn unexpected(&self, expected: &str) -> JsonError {
        match self.peek() {
            None => self.error_here(format!("unexpected end of input, expected {expected}")),
            Some(byte) => self.error_here(format!("expected {expected}, found {}", describe(byte))),
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    /// Skips whitespace and consumes `byte`, or fails naming what was expected.
    #[inline]
    fn expect(&mut self, byte: u8, expected: &str) -> Result<(), JsonError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// On every object's and array's path: inline, the error (which formats) out of line.
    #[inline]
    fn enter(&mut self) -> Result<(), JsonError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.too_deep());
        }
        self.depth += 1;
        self.after_open = true;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> JsonError {
        self.error_here(format!("nesting deeper than {MAX_DEPTH} levels"))
    }

    #[inline]
    fn leave(&mut self) {
        self.depth -= 1;
        self.after_open = false;
    }
}

fn describe(byte: u8) -> String {
    match byte {
        b'{' => "`{`".into(),
        b'[' => "an array".into(),
        b'"' => "a string".into(),
        b'-' | b'0'..=b'9' => "a number".into(),
        b't' | b'f' => "a boolean".into(),
        b'n' => "null".into(),
        0x20..=0x7e => format!("`{}`", char::from(byte)),
        _ => format!("byte 0x{byte:02x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fill` forgets what a field held, so it may only meet a field at its default: in a debug
    /// build (the test command's), a second fill of one field stops there.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a field was filled twice")]
    fn a_field_filled_twice_is_caught_in_debug_builds() {
        let mut slot = String::new();
        fill(&mut slot, "first".to_owned());
        fill(&mut slot, "second".to_owned());
    }

    /// A struct that some field boxes (`file` is one) is read straight into its box by a second
    /// body of its field reader: the same value as read by value, in order and out of it, and
    /// the same error at the same offset.
    #[test]
    fn a_boxed_struct_reads_into_its_box_as_it_reads_by_value() {
        use crate::generated::File;
        use crate::td_json::TdJson;
        let local = r#"{"@type":"localFile","path":"/a","can_be_downloaded":true,"can_be_deleted":false,"is_downloading_active":false,"is_downloading_completed":true,"download_offset":0,"downloaded_prefix_size":5,"downloaded_size":5}"#;
        for json in [
            format!(r#"{{"@type":"file","id":7,"size":5,"expected_size":5,"local":{local},"remote":null}}"#),
            format!(r#"{{"size":5,"local":{local},"@type":"file","expected_size":5,"id":7}}"#),
            format!(r#"{{"@type":"file","id":7,"size":"five","local":{local}}}"#),
        ] {
            let by_value = File::read_json(&mut JsonReader::new(json.as_bytes()));
            assert_eq!(by_value.is_ok(), !json.contains("five"), "{json}: {by_value:?}");
            let boxed = <Box<File> as TdJson>::read_json(&mut JsonReader::new(json.as_bytes()));
            assert_eq!(boxed.map(|file| *file), by_value, "{json}");
        }
    }

    /// The generated readers never fill a field twice: a repeated key is refused at the key,
    /// in order and out of it, before its value is read.
    #[test]
    fn a_repeated_key_is_refused_before_its_field_is_filled_again() {
        for json in [
            r#"{"@type":"textEntity","offset":1,"offset":2,"length":3,"type":{"@type":"textEntityTypeBold"}}"#,
            r#"{"@type":"textEntity","offset":1,"length":3,"type":{"@type":"textEntityTypeBold"},"type":null}"#,
        ] {
            let mut reader = JsonReader::new(json.as_bytes());
            let error = <crate::generated::TextEntity as crate::td_json::TdJson>::read_json(&mut reader).unwrap_err();
            assert!(error.to_string().contains("duplicate field"), "{json}: {error}");
        }
    }

    #[test]
    fn a_type_name_hashes_as_name_hash_whatever_its_length_and_what_follows() {
        for len in 0..40 {
            let name: String = (0..len).map(|i| (b'a' + (i * 7 % 26) as u8) as char).collect();
            // Followed closely (the byte-by-byte tail near the input's end) or by a word's room;
            // then the same name with a byte above ASCII, read the slow way.
            for json in [format!("\"{name}\"}}"), format!("\"{name}\",\"field\":12345678}}"), format!("\"é{name}\",\"field\":12345678}}")]
            {
                let mut reader = JsonReader::new(json.as_bytes());
                let type_name = reader.type_name().unwrap();
                let text = type_name.text.to_vec();
                let expected = json[1..json.find("\",").unwrap_or(json.len() - 2)].to_string();
                assert_eq!(String::from_utf8(text.clone()).unwrap(), expected, "{json}");
                assert_eq!(type_name.hash, tl_parser::name_hash(&text), "{json}");
                assert_eq!(reader.peek(), Some(if json.ends_with("\"}") { b'}' } else { b',' }), "{json}");
            }
        }
    }

    /// A name written with escapes reads as the schema spells it (borrowed from the schema's
    /// list, with the same hash); one that is not in the schema is refused as it is read, after
    /// its closing quote, as the dispatch refuses an unknown plain name.
    #[test]
    fn an_escaped_type_name_reads_as_the_schema_spells_it() {
        for (json, name) in
            [(&br#""textEntityType\u0042old"}"#[..], "textEntityTypeBold"), (br#""\u0074estString","value":""}"#, "testString")]
        {
            let mut reader = JsonReader::new(json);
            let type_name = reader.type_name().unwrap();
            assert_eq!((type_name.text, type_name.hash), (name.as_bytes(), tl_parser::name_hash(name.as_bytes())));
            assert!(matches!(reader.peek(), Some(b'}' | b',')));
        }
        let json = br#""noSuch\u0054ype"}"#;
        let error = JsonReader::new(json).type_name().err().unwrap();
        assert_eq!((error.message(), error.offset()), ("unknown @type `noSuchType` (not in the schema)", json.len() - 1));
        let plain = crate::Object::from_td_json::<JsonError>(br#"{"@type":"noSuchType"}"#).err().unwrap();
        assert_eq!(plain.message(), error.message());
    }

    /// `{"@type":"` as TDLib writes it takes one compare (`compact_typed_open`), and a concrete
    /// object opened with its own name one more (`begin_concrete_object`'s `typed_open`); the
    /// same objects with whitespace, or a concrete one with another name, take the general
    /// path. All must give the same names, leave the reader at the same member, and refuse
    /// nesting deeper than [`MAX_DEPTH`] with the same message, right after the `{` that goes
    /// too deep.
    #[test]
    fn a_compact_object_opening_reads_as_the_general_path_does() {
        let name = "textEntityTypeCode";
        let compact = format!("{{\"@type\":\"{name}\"");
        let spaced = format!("{{ \"@type\" : \"{name}\"");
        for piece in [&compact, &spaced] {
            // Abstract objects (the name is read) and concrete ones (the name is skipped), each
            // followed by what comes next in the input.
            let input = format!("{piece},\"x\":1}}");
            let mut typed = JsonReader::new(input.as_bytes());
            let (read, type_key) = typed.begin_typed_object().unwrap();
            let read = read.unwrap();
            assert_eq!((read.text, read.hash, type_key), (name.as_bytes(), tl_parser::name_hash(name.as_bytes()), TypeKey::Consumed));
            // A concrete reader expecting this name (the one-compare path when compact) and one
            // expecting another (a name only one letter longer: the compact open, then the scan).
            let own_open = compact.as_bytes();
            let other_open: &[u8] = b"{\"@type\":\"textEntityTypeCodeX\"";
            for typed_open in [own_open, other_open] {
                let mut concrete = JsonReader::new(input.as_bytes());
                concrete.begin_concrete_object(typed_open).unwrap();
                for r in [&typed, &concrete] {
                    assert_eq!((&input[r.pos..], r.depth, r.after_open), (",\"x\":1}", 1, false), "{input}");
                }
            }

            let nested = piece.repeat(MAX_DEPTH as usize + 1);
            let too_deep = nested.len() - piece.len() + 1;
            let mut typed = JsonReader::new(nested.as_bytes());
            let mut own = JsonReader::new(nested.as_bytes());
            let mut other = JsonReader::new(nested.as_bytes());
            for _ in 0..MAX_DEPTH {
                typed.begin_typed_object().unwrap();
                own.begin_concrete_object(own_open).unwrap();
                other.begin_concrete_object(other_open).unwrap();
            }
            for error in [
                typed.begin_typed_object().err().unwrap(),
                own.begin_concrete_object(own_open).unwrap_err(),
                other.begin_concrete_object(other_open).unwrap_err(),
            ] {
                assert_eq!(
                    (error.offset(), error.message()),
                    (too_deep, format!("nesting deeper than {MAX_DEPTH} levels").as_str()),
                    "{piece}"
                );
            }
        }
    }

    #[test]
    fn int64_text_follows_str_parse() {
        for text in [
            "0",
            "-0",
            "+5",
            "007",
            "-9223372036854775808",
            "9223372036854775807",
            "",
            "-",
            "+",
            "1 ",
            "9223372036854775808",
            "-9223372036854775809",
            "1_0",
        ] {
            assert_eq!(number::parse_i64(text.as_bytes()), text.parse::<i64>().ok(), "{text:?}");
        }
        // The reader's int64 (digits read in place when that is all there is) agrees, for every
        // length of digits too.
        let long: Vec<String> = (1..=21).map(|n| "9876543210".repeat(3)[..n].to_string()).collect();
        for text in ["0", "-0", "+5", "007", "-9223372036854775808", "9223372036854775807", "", "-", "1 ", "9223372036854775808", "1_0"]
            .into_iter()
            .chain(long.iter().map(String::as_str))
        {
            let json = format!("\"{text}\",");
            let read = JsonReader::new(json.as_bytes()).int64().ok();
            assert_eq!(read, text.parse::<i64>().ok(), "{json}");
        }
    }

    #[test]
    fn strings_unescape_to_their_exact_length() {
        let input = br#""a\n\u00e9\u65e5\ud83d\ude00\/""#;
        let mut r = JsonReader::new(input);
        let s = r.string().unwrap();
        assert_eq!(s, "a\n\u{e9}\u{65e5}\u{1f600}/");
        assert_eq!(s.capacity(), s.len());
        // Escapes first, last, alone and back to back: the scan takes a run of them without
        // testing words in between.
        for (input, expected) in [
            (&br#""\n""#[..], "\n"),
            (br#""\\\\""#, "\\\\"),
            (br#""\u0041x""#, "Ax"),
            (br#""x\u0041""#, "xA"),
            (br#""\u0430\u0431\u0432 \u0433\"""#, "\u{430}\u{431}\u{432} \u{433}\""),
        ] {
            let s = JsonReader::new(input).string().unwrap();
            assert_eq!(s, expected, "{}", String::from_utf8_lossy(input));
            assert_eq!(s.capacity(), s.len());
        }
    }

    /// `string` takes a compact `""` inline and everything else out of line: an empty string is
    /// read the same with or without whitespace before it, and what is not a string is refused
    /// where it is.
    #[test]
    fn empty_strings_read_alike_compact_or_after_whitespace() {
        for (input, expected, pos) in [
            (&b"\"\""[..], "", 2),
            (b"\"\",\"a\"", "", 2),
            (b" \"\"", "", 3),
            (b"\n\t\"\"}", "", 4),
            (b"\"a\"", "a", 3),
            (b" \"a\"", "a", 4),
        ] {
            let mut r = JsonReader::new(input);
            let text = String::from_utf8_lossy(input);
            assert_eq!(r.string().unwrap(), expected, "{text}");
            assert_eq!(r.pos, pos, "{text}");
        }
        for (input, offset) in [(&b""[..], 0), (b"x", 0), (b" 1", 1), (b"\"", 1), (b" \"", 2)] {
            let error = JsonReader::new(input).string().expect_err(&String::from_utf8_lossy(input));
            assert_eq!(error.offset(), offset, "{}: {}", String::from_utf8_lossy(input), error.message());
        }
    }

    /// `string` reads text with escapes in one pass in the thread's scratch buffer when it fits
    /// (`unescape_in_scratch`); the two-pass path (scan, then unescape) is the reference: the
    /// same text at exact capacity, or the same error, and the reader left at the same byte, for
    /// text on both sides of the scratch buffer's size and every kind of fault at every position.
    /// The cases run one after another in one thread, so each also reads a buffer that the ones
    /// before it left dirty.
    #[test]
    fn the_one_pass_unescape_agrees_with_the_two_pass_path() {
        fn two_pass(input: &[u8]) -> (Result<String, String>, usize) {
            let mut r = JsonReader::new(input);
            let read = r.scan_string().and_then(|token| {
                if token.has_escapes { r.unescape(&token) } else { Ok(String::from_utf8(input[token.start..token.end].to_vec()).unwrap()) }
            });
            (read.map_err(|e| e.to_string()), r.pos)
        }
        let pieces: [&[u8]; 8] = [b"a", br"\u0430", br"\ud83d\ude00", br"\n", "é".as_bytes(), br#"\""#, b"plain text", br"\/\\"];
        let faults: [&[u8]; 8] = [br"\ud83d", br"\ude00", br"\ud83d\u0041", br"\x", br"\u12g4", b"\x01", b"\xff", b"\xe2\x82"];
        for len in (0..48).chain(1000..1060) {
            let mut body = br"\u2026".to_vec();
            let mut k = 0;
            while body.len() < len {
                body.extend_from_slice(pieces[k % pieces.len()]);
                k += 1;
            }
            let mut cases = vec![body.clone()];
            for (f, fault) in faults.iter().enumerate() {
                let mut damaged = body.clone();
                damaged.insert(0, b'x');
                let at = (len * (f + 1) / faults.len()).min(damaged.len());
                // Not inside an escape or a character: at a piece boundary is enough here.
                let at = (0..=at).rev().find(|&i| i == 0 || !matches!(damaged[i - 1], b'\\' | 0x80..=0xff)).unwrap();
                damaged.splice(at..at, fault.iter().copied());
                cases.push(damaged);
            }
            for body in cases {
                for closing in [&b"\","[..], b""] {
                    let mut input = vec![b'"'];
                    input.extend_from_slice(&body);
                    input.extend_from_slice(closing);
                    let (expected, expected_pos) = two_pass(&input);
                    let mut r = JsonReader::new(&input);
                    let read = r.string();
                    let text = String::from_utf8_lossy(&input);
                    if let Ok(s) = &read {
                        assert_eq!(s.capacity(), s.len(), "{text}");
                        assert_eq!(r.pos, expected_pos, "{text}");
                    }
                    assert_eq!(read.map_err(|e| e.to_string()), expected, "{text}");
                }
            }
        }
    }

    /// Every way an escape can be wrong, named and placed: at the backslash, or at the hex
    /// digits that are not hex; the same in text short enough for the one-pass unescape and in
    /// text too long for it, closed or cut off by the end of the input.
    #[test]
    fn every_escape_fault_is_named_where_it_is() {
        for (body, offset, message) in [
            (&br"\x"[..], 1, "invalid escape"),
            (br"\", 1, "unexpected end of input in an escape"),
            (br"\u12g4", 3, "invalid hex digit in a \\u escape"),
            (br"\u12", 3, "unexpected end of input in a \\u escape"),
            (br"\ude00", 1, "lone trailing surrogate in a \\u escape"),
            (br"\ud83d", 1, "lone leading surrogate in a \\u escape"),
            (br"\ud83dx", 1, "lone leading surrogate in a \\u escape"),
            (br"\ud83d\", 1, "lone leading surrogate in a \\u escape"),
            (br"\ud83d\u0041", 1, "lone leading surrogate in a \\u escape"),
            (br"\ud83d\u00g1", 9, "invalid hex digit in a \\u escape"),
            (br"\ud83d\u00", 9, "unexpected end of input in a \\u escape"),
        ] {
            for lead in [0, 1100] {
                // Closed, the end of the input, and closed where a cut-off escape reads the
                // quote as its own: then the fault is what the quote makes of it.
                for closing in [&b""[..], b"!\","] {
                    let mut input = vec![b'"'];
                    input.extend(std::iter::repeat_n(b'a', lead));
                    input.extend_from_slice(body);
                    input.extend_from_slice(closing);
                    let text = String::from_utf8_lossy(&input);
                    let error = JsonReader::new(&input).string().expect_err(&text);
                    if closing.is_empty() || !message.contains("end of input") {
                        assert_eq!((error.offset(), error.message()), (lead + offset, message), "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn lone_surrogates_are_refused() {
        for input in [&br#""\ud83d""#[..], br#""\ude00""#, br#""\ud83dx""#, br#""\ud83d\u0041""#] {
            assert!(JsonReader::new(input).string().is_err(), "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn skipping_an_unknown_array_or_object_stops_at_its_own_end() {
        let input = br#"{"x":[1,{"y":[2,"]}"]}],"z":{"a":{}}, "w": 3}"#;
        let mut r = JsonReader::new(input);
        r.begin_object().unwrap();
        let fields: &[&[u8]] = &[b"w\":", b"z\":"];
        let mut expected = 0;
        let mut seen = Vec::new();
        loop {
            match r.next_field(fields, &mut expected).unwrap() {
                FIELD_END => break,
                field => seen.push(field),
            }
            r.skip_value().unwrap();
        }
        assert_eq!(seen, [FIELD_UNKNOWN, 1, 0]);
        r.finish().unwrap();
    }

    #[test]
    fn in_order_keys_are_read_with_or_without_a_leading_type() {
        use crate::Error;
        use crate::td_json::TdJson;
        let expected = Error { code: 400, message: "x".into() };
        for input in [
            &br#"{"@type":"error","code":400,"message":"x"}"#[..],
            br#"{"code":400,"message":"x"}"#,
            br#"{"code":400,"message":"x","@type":"error"}"#,
            br#"{"codex":1,"code":400,"message":"x"}"#,
            br#"{"code":400,"messages":"y","message":"x"}"#,
            br#"{ "code":400,"message":"x"}"#,
            br#"{"code":400 ,"message":"x"}"#,
            // A concrete object's `@type` is skipped, not read: long, escaped, not a string.
            br#"{"@type":"errorOfAVeryLongNameIndeed","code":400,"message":"x"}"#,
            br#"{"@type":"err\u006fr","code":400,"message":"x"}"#,
            br#"{"@type":1,"code":400,"message":"x"}"#,
        ] {
            let mut r = JsonReader::new(input);
            let text = String::from_utf8_lossy(input);
            assert_eq!(Error::read_json(&mut r).unwrap(), expected, "{text}");
            r.finish().unwrap();
        }
        let mut r = JsonReader::new(br#"{"@type":"e"}"#);
        assert_eq!(Error::read_json(&mut r).unwrap(), Error::default());
        let mut r = JsonReader::new(br#"{"@type":"e\x","code":1}"#);
        assert!(Error::read_json(&mut r).unwrap_err().to_string().contains("escape"));
        let mut r = JsonReader::new(br#"{"code":400,"code":401}"#);
        assert_eq!(Error::read_json(&mut r).unwrap_err().to_string(), "at byte 12: duplicate field `code`");
    }

    /// Elements come back in order, at exact capacity, for every length around the chunk size:
    /// on the chunked path, and on the counted one (taken when the stack budget is spent: here
    /// from the start, the reader's stack base moved out of reach).
    #[test]
    fn vectors_keep_their_order_on_both_paths() {
        for len in 0..=3 * CHUNK + 1 {
            let numbers: Vec<i32> = (0..len as i32).map(|i| i * 7 - 3).collect();
            let input = format!("{numbers:?}");
            for budget_spent in [false, true] {
                let mut r = JsonReader::new(input.as_bytes());
                if budget_spent {
                    r.stack_base = 0;
                }
                let v = r.vector(|r| r.int32()).unwrap();
                assert_eq!((&v, v.capacity()), (&numbers, len), "{input}, budget spent: {budget_spent}");
            }
        }
    }

    #[test]
    fn elements_are_counted_before_the_vector_is_allocated() {
        let input = br#"[ "a,]", "b\"]", "c" ]"#;
        let v = JsonReader::new(input).vector(|r| r.string()).unwrap();
        assert_eq!(v, ["a,]", "b\"]", "c"]);
        assert_eq!(v.capacity(), 3);
    }
}
