//! `json-value`: TDLib JSON read and written the way the Rust TDLib bindings do it, through a
//! `serde_json::Value`. tdlib-rs parses every response with `serde_json::from_str` into a
//! `Value` (to look at `@extra` and `@client_id` first) and then `from_value` into its
//! `@type`-tagged enums, and builds every request as a `Value` (`json!`) that it sends with
//! `to_string`; rust-tdlib also goes through a `Value`. Same models and validation as `json`.
//!
//! A `Value`'s object is a sorted map (serde_json without `preserve_order`, as the bindings
//! use it), so the request's members come out `@type` first and then in name order, not
//! TDLib's declaration order: TDLib reads them in any order, and the validation checks that
//! this encoding reads back to the same object rather than TDLib's exact bytes.

use serde::Deserialize;
use tdbench_models::Object;

use crate::codecs::json::{TdlibFormatter, json_error};
use crate::{Codec, CodecError};

pub struct JsonValue;

impl Codec for JsonValue {
    fn name(&self) -> &'static str {
        "json-value"
    }

    fn is_tdlib_json(&self) -> bool {
        true
    }

    fn writes_tdlib_bytes(&self) -> bool {
        false
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let tree = serde_json::to_value(value).map_err(|e| CodecError::new(self.name(), e))?;
        // TDLib's number and string forms (six-decimal doubles, `\uXXXX`), as `json` writes them.
        let mut serializer = serde_json::Serializer::with_formatter(out, TdlibFormatter);
        serde::Serialize::serialize(&tree, &mut serializer).map_err(|e| CodecError::new(self.name(), e))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        let tree: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| json_error(self.name(), bytes, &e))?;
        Object::deserialize(tree).map_err(|e| json_error(self.name(), bytes, &e))
    }
}
