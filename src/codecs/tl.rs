//! `tl`: binary TL, the MTProto serialization, written by the generated impls over
//! `tdbench_models::tl` (whose docs give the byte layout, including `null#56730bcc` for null
//! pointers, since TDLib has no binary null of its own).

use tdbench_models::Object;
use tdbench_models::tl::{TlError, TlWriter};

use crate::{Codec, CodecError};

pub struct Tl;

const NAME: &str = "tl";

impl Codec for Tl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut writer = TlWriter::new(std::mem::take(out));
        writer.write_object(value);
        writer.finish_into(out).map_err(refused)
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        // Straight into this `Result`: converting the reader's own afterwards moved the whole
        // `Object` once more.
        Object::from_tl(bytes)
    }
}

/// Out of line, as the refusal it builds: inlined, its registers were saved on every encode.
#[cold]
#[inline(never)]
fn refused(e: TlError) -> CodecError {
    CodecError::new(NAME, e.message)
}

impl From<TlError> for CodecError {
    fn from(e: TlError) -> Self {
        CodecError::at(NAME, e.offset, e.message)
    }
}
