//! `json-td`: TDLib JSON through tdbench's own reader and writer, generated from the schema by
//! `tl-gen` (runtime in `tdbench_models::td_json`). Same bytes as `json`, same objects; the
//! reader reads `@type` first and builds the model straight from the input, so it neither
//! buffers objects as serde's tagged enums must nor allocates anything but the object graph.

use tdbench_models::Object;
use tdbench_models::td_json::{self, JsonError};

use crate::{Codec, CodecError};

pub struct JsonTd;

const NAME: &str = "json-td";

impl Codec for JsonTd {
    fn name(&self) -> &'static str {
        NAME
    }

    fn is_tdlib_json(&self) -> bool {
        true
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        td_json::to_vec(value, out);
        Ok(())
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        // Straight into this `Result`, as `tl` does: through `td_json::from_slice` and a
        // conversion of its error, the whole `Object` was moved twice more.
        Object::from_td_json(bytes)
    }
}

impl From<JsonError> for CodecError {
    fn from(e: JsonError) -> Self {
        CodecError::at(NAME, e.offset(), e.message())
    }
}
