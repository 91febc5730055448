//! `json`: TDLib JSON through serde_json, modelled the way Rust TDLib bindings do it: derived
//! `Deserialize` with `#[serde(tag = "@type")]` enums, int64 as quoted strings, bytes as base64.
//!
//! The writer produces TDLib's exact bytes ([`TdlibFormatter`]): `@type` first, fields in
//! declaration order (the generated `Serialize` impls), doubles in fixed notation with six
//! decimals, and strings escaped as TDLib's `to_json` escapes them.

use std::io::{self, Write};

use serde_json::ser::{CharEscape, Formatter};
use tdbench_models::Object;

use crate::{Codec, CodecError};

pub struct Json;

impl Codec for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn is_tdlib_json(&self) -> bool {
        true
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut serializer = serde_json::Serializer::with_formatter(out, TdlibFormatter);
        serde::Serialize::serialize(value, &mut serializer).map_err(|e| CodecError::new(self.name(), e))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        serde_json::from_slice(bytes).map_err(|e| json_error(self.name(), bytes, &e))
    }
}

/// serde_json reports line and column; payloads are single lines, so that is a byte offset.
/// serde's "unknown variant" message lists every constructor of the schema: keep the name only.
pub(crate) fn json_error(codec: &'static str, bytes: &[u8], error: &serde_json::Error) -> CodecError {
    let text = error.to_string();
    let message = match (text.find("unknown variant"), text.find(", expected")) {
        (Some(start), Some(end)) if start < end => format!("{} (not in the schema)", &text[start..end]).replace("variant", "@type"),
        _ => text.rsplit_once(" at line ").map_or(text.clone(), |(message, _)| message.to_string()),
    };
    // serde_json cannot place an error inside an `@type`-tagged object (it buffers the object
    // before it can choose the variant: line 0, "no position"), and calls a payload that is not
    // an object a variant-identifier mismatch. The json-td reader, over the same bytes and the
    // same schema, stops at the same place and names it: its offset fills the gap, and for a
    // payload that is not an object, its reason too. Only on this error path.
    let located = || tdbench_models::td_json::from_slice::<Object>(bytes).err();
    let not_an_object = bytes.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|&b| b != b'{');
    if let Some(e) = located().filter(|_| not_an_object) {
        return CodecError::at(codec, e.offset(), e.message());
    }
    // Offset of the reported line's start plus the column; line 0 means "no position".
    match error.line() {
        0 => match located() {
            Some(e) => CodecError::at(codec, e.offset(), message),
            None => CodecError::new(codec, message),
        },
        line => {
            let line_start: usize = bytes.split(|&b| b == b'\n').take(line - 1).map(|l| l.len() + 1).sum();
            let offset = line_start + error.column().saturating_sub(1);
            CodecError::at(codec, offset.min(bytes.len()), message)
        }
    }
}

/// What TDLib's `to_json` writes for numbers and strings: compact, `1.500000` for doubles,
/// `"`, `\`, `\b`, `\f`, `\n`, `\r`, `\t` escaped by name, other control bytes as `\u00XX`, every
/// non-ASCII character as lowercase `\uXXXX` (surrogate pairs above the BMP), `/` and DEL as is.
pub struct TdlibFormatter;

fn write_u16_escape<W: ?Sized + Write>(writer: &mut W, unit: u16) -> io::Result<()> {
    writer.write_all(&tdbench_models::td_json::unicode_escape(unit))
}

impl Formatter for TdlibFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        write!(writer, "{value:.6}")
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        // serde_json passes the runs between the characters it escapes itself; only non-ASCII
        // characters are left for us to escape.
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if c.is_ascii() {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..at])?;
            let mut units = [0u16; 2];
            for &unit in c.encode_utf16(&mut units).iter() {
                write_u16_escape(writer, unit)?;
            }
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        let named: &[u8] = match escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(byte) => return write_u16_escape(writer, u16::from(byte)),
        };
        writer.write_all(named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str) -> String {
        let mut out = Vec::new();
        serde::Serialize::serialize(s, &mut serde_json::Serializer::with_formatter(&mut out, TdlibFormatter)).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn double(d: f64) -> String {
        let mut out = Vec::new();
        serde::Serialize::serialize(&d, &mut serde_json::Serializer::with_formatter(&mut out, TdlibFormatter)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn doubles_have_six_decimals() {
        assert_eq!(double(1.5), "1.500000");
        assert_eq!(double(0.0), "0.000000");
        assert_eq!(double(-2.25), "-2.250000");
        assert_eq!(double(1e20), "100000000000000000000.000000");
    }

    #[test]
    fn escapes_follow_tdlib() {
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(string("\u{1}\u{1f}"), r#""\u0001\u001f""#);
        assert_eq!(string("a/b\u{7f}"), "\"a/b\u{7f}\"");
        assert_eq!(string("café"), r#""caf\u00e9""#);
        assert_eq!(string("日本"), r#""\u65e5\u672c""#);
        assert_eq!(string("😀"), r#""\ud83d\ude00""#);
    }
}
