//! TDLib JSON without serde: the runtime of the `json-td` codec's generated reader and writer.
//!
//! serde's `#[serde(tag = "@type")]` enums cannot pick a variant before they have seen the tag,
//! so serde_json buffers every object's content into a tree first and then walks it again: most
//! of its decode time goes there (see `../shared/NOISE.md`). TDLib always writes `@type` first,
//! so a reader that reads it first can dispatch at once and build the model straight from the
//! input bytes. That is this module: a pull reader over `&[u8]` ([`JsonReader`]) and an appending
//! writer ([`JsonWriter`]); `tl-gen` generates one [`TdJson`] impl per type that calls them.
//!
//! What it accepts is what the `json` codec (serde_json with the derived models) accepts, so the
//! two can be compared on the same payloads; where it differs on purpose, the differential test
//! in `tests/json_td.rs` lists the difference and why.
//!
//! No `unsafe` here: bounds are checked by the slice accesses themselves.
#![forbid(unsafe_code)]

mod base64;
mod plain;
mod reader;
mod writer;

pub use reader::{FIELD_END, FIELD_TYPE, FIELD_UNKNOWN, JsonReader, MAX_DEPTH, TypeKey, TypeName, fill};
pub use writer::{JsonWriter, decimal, unicode_escape};

use std::borrow::Cow;
use std::fmt;

/// A TDLib object or abstract type that can be written as TDLib JSON and read back from it.
pub trait TdJson: Sized {
    /// Appends the object, `@type` first and fields in declaration order.
    fn write_json(&self, w: &mut JsonWriter<'_>);

    /// Reads one object value (not `null`) at the reader's position.
    fn read_json(r: &mut JsonReader<'_>) -> Result<Self, JsonError>;

    /// [`Self::read_json`] into a box, as a pointer field (`Box<T>`) holds it. The generated
    /// structs that some field boxes read their fields straight into the box; anything else is
    /// read, then boxed.
    #[inline]
    fn read_json_boxed(r: &mut JsonReader<'_>) -> Result<Box<Self>, JsonError> {
        Self::read_json(r).map(Box::new)
    }
}

impl<T: TdJson> TdJson for Box<T> {
    #[inline]
    fn write_json(&self, w: &mut JsonWriter<'_>) {
        (**self).write_json(w)
    }

    #[inline]
    fn read_json(r: &mut JsonReader<'_>) -> Result<Self, JsonError> {
        T::read_json_boxed(r)
    }
}

/// Why TDLib JSON could not be read: the byte where reading failed and what was expected there.
/// Boxed, so that every `Result` on the hot path is two words and only failures allocate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError(Box<(usize, Cow<'static, str>)>);

impl JsonError {
    pub fn new(offset: usize, message: impl Into<Cow<'static, str>>) -> Self {
        JsonError(Box::new((offset, message.into())))
    }

    /// The input byte where reading failed.
    pub fn offset(&self) -> usize {
        self.0.0
    }

    pub fn message(&self) -> &str {
        &self.0.1
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset(), self.message())
    }
}

impl std::error::Error for JsonError {}

/// Decodes one whole payload: an object of type `T` and nothing after it but whitespace.
pub fn from_slice<T: TdJson>(input: &[u8]) -> Result<T, JsonError> {
    let mut reader = JsonReader::new(input);
    let value = T::read_json(&mut reader)?;
    reader.finish()?;
    Ok(value)
}

/// Appends the TDLib JSON of `value` to `out`; allocates nothing but the growth of `out`.
pub fn to_vec<T: TdJson>(value: &T, out: &mut Vec<u8>) {
    value.write_json(&mut JsonWriter::new(out));
}
