//! Protobuf glue for abstract TL types, on prost's own encoding functions.
//!
//! An abstract type (`MessageSender`) is a message holding one `oneof` whose members are its
//! constructors, numbered from 1 in schema order. prost's `Oneof` derive cannot sit on our
//! shared enums, so the generator implements [`ProtoOneof`] for them and these functions put
//! the wrapper message around it. Decoding goes through prost's `message::merge`, so its
//! recursion limit and length checks apply to our wrappers too.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::{DecodeError, Message};

/// The members of a protobuf `oneof`: one per constructor of an abstract TL type.
pub trait ProtoOneof: Sized + std::fmt::Debug + Send + Sync {
    /// Writes the set member as a field of the wrapper message.
    fn encode_variant(&self, buf: &mut impl BufMut);
    /// The length of what [`ProtoOneof::encode_variant`] writes.
    fn variant_encoded_len(&self) -> usize;
    /// Merges wrapper field `tag` into `slot`; unknown tags are skipped.
    fn merge_variant(
        slot: &mut Option<Self>,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError>;
}

impl<T: ProtoOneof> ProtoOneof for Box<T> {
    fn encode_variant(&self, buf: &mut impl BufMut) {
        (**self).encode_variant(buf)
    }

    fn variant_encoded_len(&self) -> usize {
        (**self).variant_encoded_len()
    }

    fn merge_variant(
        slot: &mut Option<Self>,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let mut inner = slot.take().map(|boxed| *boxed);
        let result = T::merge_variant(&mut inner, tag, wire_type, buf, ctx);
        *slot = inner.map(Box::new);
        result
    }
}

/// The wrapper message of an abstract type, seen by prost as an ordinary message.
#[derive(Debug)]
pub struct OneofMessage<'a, T>(pub &'a mut Option<T>);

impl<T: ProtoOneof> Message for OneofMessage<'_, T> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(value) = &*self.0 {
            value.encode_variant(buf);
        }
    }

    fn merge_field(&mut self, tag: u32, wire_type: WireType, buf: &mut impl Buf, ctx: DecodeContext) -> Result<(), DecodeError> {
        T::merge_variant(self.0, tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.as_ref().map_or(0, ProtoOneof::variant_encoded_len)
    }

    fn clear(&mut self) {
        *self.0 = None;
    }
}

/// A decode error with our own message. prost marks `DecodeError::new` deprecated (it was meant for
/// derived code) but offers no other way to say what was wrong; this is the one place that uses it.
#[allow(deprecated)]
pub fn decode_error(message: String) -> DecodeError {
    DecodeError::new(message)
}

/// Field `tag` holding the wrapper message of `value`.
pub fn encode_oneof<T: ProtoOneof>(tag: u32, value: &T, buf: &mut impl BufMut) {
    encoding::encode_key(tag, WireType::LengthDelimited, buf);
    encoding::encode_varint(value.variant_encoded_len() as u64, buf);
    value.encode_variant(buf);
}

pub fn oneof_encoded_len<T: ProtoOneof>(tag: u32, value: &T) -> usize {
    let len = value.variant_encoded_len();
    encoding::key_len(tag) + encoding::encoded_len_varint(len as u64) + len
}

pub fn merge_oneof<T: ProtoOneof>(
    wire_type: WireType,
    slot: &mut Option<T>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    encoding::message::merge(wire_type, &mut OneofMessage(slot), buf, ctx)
}

pub fn encode_repeated_oneof<T: ProtoOneof>(tag: u32, values: &[T], buf: &mut impl BufMut) {
    for value in values {
        encode_oneof(tag, value, buf);
    }
}

pub fn encoded_len_repeated_oneof<T: ProtoOneof>(tag: u32, values: &[T]) -> usize {
    values.iter().map(|value| oneof_encoded_len(tag, value)).sum()
}

/// A repeated element with no member set would be a null element, which the models cannot hold.
pub fn merge_repeated_oneof<T: ProtoOneof>(
    wire_type: WireType,
    values: &mut Vec<T>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    let mut slot = None;
    merge_oneof(wire_type, &mut slot, buf, ctx)?;
    values.push(slot.ok_or_else(|| decode_error("a vector element has no constructor set (null elements are not supported)".into()))?);
    Ok(())
}

/// Writes a whole payload: the body of the `Object` wrapper message, with no outer length.
pub fn encode_payload<T: ProtoOneof>(value: &T, buf: &mut Vec<u8>) {
    buf.reserve(value.variant_encoded_len());
    value.encode_variant(buf);
}

/// Reads a whole payload written by [`encode_payload`].
pub fn decode_payload<T: ProtoOneof>(mut bytes: &[u8]) -> Result<T, DecodeError> {
    let mut slot = None;
    OneofMessage(&mut slot).merge(&mut bytes)?;
    slot.ok_or_else(|| decode_error("the payload has no constructor set".into()))
}
