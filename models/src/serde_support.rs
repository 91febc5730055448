//! The two places TDLib JSON differs from serde's defaults, for the derived `Deserialize` and the
//! generated `Serialize` impls.
//!
//! - int64 is a quoted decimal string (`"-5"`), also inside vectors; int32 and int53 are numbers.
//! - bytes are standard, padded base64.
//!
//! Serializers that are not human-readable (MessagePack) get native integers and binary bytes;
//! readers accept either form, so the same impls serve every serde format.

use std::fmt;

use base64::Engine;
use serde::Serialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};

use crate::TDLIB_BASE64 as BASE64;

/// Serializes an int64 as TDLib writes it.
pub struct Int64(pub i64);

impl Serialize for Int64 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            let mut buffer = [0u8; 20];
            serializer.serialize_str(format_i64(self.0, &mut buffer))
        } else {
            serializer.serialize_i64(self.0)
        }
    }
}

/// A `vector<int64>`.
pub struct Int64Slice<'a>(pub &'a [i64]);

impl Serialize for Int64Slice<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for &value in self.0 {
            seq.serialize_element(&Int64(value))?;
        }
        seq.end()
    }
}

/// Serializes bytes as TDLib writes them.
pub struct Base64<'a>(pub &'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() { serializer.serialize_str(&BASE64.encode(self.0)) } else { serializer.serialize_bytes(self.0) }
    }
}

/// A `vector<bytes>`.
pub struct Base64Slice<'a>(pub &'a [Vec<u8>]);

impl Serialize for Base64Slice<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for value in self.0 {
            seq.serialize_element(&Base64(value))?;
        }
        seq.end()
    }
}

/// Formats without allocating, as the json-td writer does.
fn format_i64(value: i64, buffer: &mut [u8; 20]) -> &str {
    std::str::from_utf8(crate::td_json::decimal(value, buffer)).expect("ASCII digits")
}

struct Int64Visitor;

impl Visitor<'_> for Int64Visitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an int64 as a decimal string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<i64, E> {
        text.parse().map_err(|_| E::invalid_value(de::Unexpected::Str(text), &self))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<i64, E> {
        Ok(value)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<i64, E> {
        i64::try_from(value).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(value), &self))
    }
}

pub fn int64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    deserializer.deserialize_any(Int64Visitor)
}

struct Int64Element(i64);

impl<'de> de::Deserialize<'de> for Int64Element {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        int64(deserializer).map(Int64Element)
    }
}

pub fn int64_vector<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<i64>, D::Error> {
    <Vec<Int64Element> as de::Deserialize>::deserialize(deserializer).map(|v| v.into_iter().map(|e| e.0).collect())
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("bytes as standard base64")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Vec<u8>, E> {
        BASE64.decode(text).map_err(|e| E::custom(format_args!("invalid base64: {e}")))
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
        Ok(bytes.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(bytes)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut out = Vec::new();
        while let Some(byte) = seq.next_element::<u8>()? {
            out.push(byte);
        }
        Ok(out)
    }
}

pub fn bytes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_any(BytesVisitor)
}

struct BytesElement(Vec<u8>);

impl<'de> de::Deserialize<'de> for BytesElement {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        bytes(deserializer).map(BytesElement)
    }
}

pub fn bytes_vector<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Vec<u8>>, D::Error> {
    <Vec<BytesElement> as de::Deserialize>::deserialize(deserializer).map(|v| v.into_iter().map(|e| e.0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_i64_extremes() {
        let mut buffer = [0u8; 20];
        assert_eq!(format_i64(i64::MIN, &mut buffer), "-9223372036854775808");
        assert_eq!(format_i64(0, &mut buffer), "0");
        assert_eq!(format_i64(i64::MAX, &mut buffer), "9223372036854775807");
    }
}
