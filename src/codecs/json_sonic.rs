//! `json-sonic`: TDLib JSON through sonic-rs, the SIMD JSON library a Rust user picks when
//! serde_json is too slow. Same models and derived serde impls as `json` (`@type`-tagged enums,
//! int64 as quoted strings, bytes as base64), so the figure is what swapping the library buys.
//!
//! Built as users build it: no `-C target-cpu`, so sonic-rs uses the SIMD the default x86-64
//! target guarantees (SSE2). Its writer is its own (UTF-8 as is, shortest round-trip doubles),
//! so its encoding is not TDLib's bytes; validation checks it reads back to the same object.

use tdbench_models::Object;

use crate::{Codec, CodecError};

pub struct JsonSonic;

impl Codec for JsonSonic {
    fn name(&self) -> &'static str {
        "json-sonic"
    }

    fn is_tdlib_json(&self) -> bool {
        true
    }

    fn writes_tdlib_bytes(&self) -> bool {
        false
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        sonic_rs::to_writer(out, value).map_err(|e| CodecError::new(self.name(), e))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        sonic_rs::from_slice(bytes).map_err(|e| {
            // sonic-rs appends the position and a snippet of the input; the offset says it.
            let text = e.to_string();
            let message = text.split_once(" at line ").map_or(text.as_str(), |(message, _)| message);
            CodecError::at(self.name(), e.offset().min(bytes.len()), message)
        })
    }
}
