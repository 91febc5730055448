//! `protobuf`: prost's encoding on the shared models, following the mapping in
//! `models/proto/td_api.proto` (generated with the models; other languages can decode with it).
//! A payload is the body of the `Object` message: a oneof of every constructor.

use tdbench_models::{Object, proto};

use crate::{Codec, CodecError};

pub struct Protobuf;

impl Codec for Protobuf {
    fn name(&self) -> &'static str {
        "protobuf"
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        proto::encode_payload(value, out);
        Ok(())
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        proto::decode_payload(bytes).map_err(|e| CodecError::new(self.name(), e))
    }
}
