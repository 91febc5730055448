//! `tl`: binary TL, the MTProto serialization, written by the generated impls over
//! `tdbench_models::tl` (whose docs give the byte layout, including `null#56730bcc` for null
//! pointers, since TDLib has no binary null of its own).

use tdbench_models::Object;
use tdbench_models::tl::{TlReader, TlWriter};

use crate::{Codec, CodecError};

pub struct Tl;

impl Codec for Tl {
    fn name(&self) -> &'static str {
        "tl"
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut writer = TlWriter::new(std::mem::take(out));
        writer.write_object(value);
        *out = writer.finish().map_err(|e| CodecError::new(self.name(), e.message))?;
        Ok(())
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        let mut reader = TlReader::new(bytes);
        let value = reader.read_object::<Object>();
        if value.is_ok()
            && let Err(e) = reader.finish()
        {
            return Err(CodecError::at(self.name(), e.offset, e.message));
        }
        value.map_err(|e| CodecError::at(self.name(), e.offset, e.message))
    }
}
