//! `msgpack`: MessagePack through rmp-serde with named fields (maps keyed by field name, like
//! JSON: self-describing), on the same serde impls as `json`. int64 is a native integer and bytes
//! are MessagePack `bin`, since rmp-serde's serializer is not human-readable.
//!
//! rmp-serde's slice reader does not expose how much it consumed, so bytes after a complete value
//! go unnoticed; every other codec rejects them.

use tdbench_models::Object;

use crate::{Codec, CodecError};

pub struct MsgPack;

/// Nesting limit for unknown values, as serde_json's 128: rmp-serde's default of 1024 levels of
/// serde's recursive buffering overflows a 2 MiB thread stack in debug builds.
const MAX_DEPTH: usize = 128;

impl Codec for MsgPack {
    fn name(&self) -> &'static str {
        "msgpack"
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut serializer = rmp_serde::Serializer::new(out).with_struct_map();
        serde::Serialize::serialize(value, &mut serializer).map_err(|e| CodecError::new(self.name(), e))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        let mut deserializer = rmp_serde::Deserializer::from_read_ref(bytes);
        deserializer.set_max_depth(MAX_DEPTH);
        serde::Deserialize::deserialize(&mut deserializer).map_err(|e| CodecError::new(self.name(), e))
    }
}
