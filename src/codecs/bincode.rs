//! `bincode`: bincode 2 with its own `Encode`/`Decode` derive (its serde path cannot decode the
//! `@type`-tagged enums), standard configuration: little-endian, variable-length integers.
//!
//! bincode sizes an allocation from a length prefix before reading the elements, checked only
//! against the configuration's byte limit, which is a compile-time constant. Decoding picks the
//! smallest of three limits that is at least 64× the input, so a prefix claiming a gigabyte in a
//! short buffer fails before it allocates.

use bincode::config::{self, Config};
use tdbench_models::Object;

use crate::{Codec, CodecError};

pub struct Bincode;

fn decode_with<C: Config>(bytes: &[u8], config: C) -> Result<Object, CodecError> {
    let (value, read) = bincode::decode_from_slice(bytes, config).map_err(|e| CodecError::new("bincode", e))?;
    if read != bytes.len() {
        return Err(CodecError::at("bincode", read, format!("{} bytes left after the object", bytes.len() - read)));
    }
    Ok(value)
}

impl Codec for Bincode {
    fn name(&self) -> &'static str {
        "bincode"
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        bincode::encode_into_std_write(value, out, config::standard()).map_err(|e| CodecError::new(self.name(), e))?;
        Ok(())
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        let base = config::standard();
        match bytes.len() {
            0..=4096 => decode_with(bytes, base.with_limit::<{ 64 * 4096 }>()),
            4097..=262_144 => decode_with(bytes, base.with_limit::<{ 64 * 262_144 }>()),
            _ => decode_with(bytes, base.with_limit::<{ 1 << 30 }>()),
        }
    }
}
