//! The one trait every wire format implements.

use std::fmt;

use tdbench_models::Object;

/// A wire format: encodes a model value and decodes it back into an equal one.
pub trait Codec: Send + Sync {
    /// The name used on the command line, in results and in reports.
    fn name(&self) -> &'static str;

    /// Whether the encoding is TDLib JSON text: such codecs must reproduce TDLib's exact bytes.
    fn is_tdlib_json(&self) -> bool {
        false
    }

    /// Whether its encoding is TDLib's exact bytes (every TDLib JSON codec's but one that, like
    /// the bindings it models, writes members in another order TDLib also reads).
    fn writes_tdlib_bytes(&self) -> bool {
        self.is_tdlib_json()
    }

    /// Appends the encoding of `value` to `out`. Callers pass a cleared, reused buffer: a fresh
    /// `Vec` per call measures the allocator's growth policy, not the format.
    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError>;

    /// Decodes one whole payload.
    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError>;
}

/// Why a codec could not encode or decode; `offset` is the input byte where decoding failed,
/// when the underlying library reports one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    pub codec: &'static str,
    pub offset: Option<usize>,
    pub message: String,
}

impl CodecError {
    pub fn new(codec: &'static str, message: impl fmt::Display) -> Self {
        CodecError { codec, offset: None, message: message.to_string() }
    }

    pub fn at(codec: &'static str, offset: usize, message: impl fmt::Display) -> Self {
        CodecError { codec, offset: Some(offset), message: message.to_string() }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{}: at byte {offset}: {}", self.codec, self.message),
            None => write!(f, "{}: {}", self.codec, self.message),
        }
    }
}

impl std::error::Error for CodecError {}
