//! Types the schema references but does not declare (`linkPreview`, `ReplyMarkup`, ...).
//!
//! Each becomes an uninhabited enum: a field of that type is always `None`, a vector of it always
//! empty, and every decoder rejects a payload carrying one with an error naming the type, instead
//! of guessing at its contents.

/// The message every format's decoder gives for an absent type.
pub fn absent_message(tl_name: &str) -> String {
    format!("type `{tl_name}` is outside tdbench's schema (models/schema/td_api.tl)")
}

/// Declares an absent type and its impls for every format.
#[macro_export]
#[doc(hidden)]
macro_rules! absent_type {
    ($name:ident, $tl_name:literal) => {
        #[doc = concat!("`", $tl_name, "`: referenced by the schema but outside it; always absent.")]
        #[derive(Clone, Debug, PartialEq)]
        pub enum $name {}

        impl $name {
            pub const TL_NAME: &'static str = $tl_name;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                match *self {}
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
                Err(<D::Error as serde::de::Error>::custom($crate::absent::absent_message($tl_name)))
            }
        }

        impl bincode::Encode for $name {
            fn encode<E: bincode::enc::Encoder>(&self, _: &mut E) -> Result<(), bincode::error::EncodeError> {
                match *self {}
            }
        }

        impl<Context> bincode::Decode<Context> for $name {
            fn decode<D: bincode::de::Decoder<Context = Context>>(_: &mut D) -> Result<Self, bincode::error::DecodeError> {
                Err(bincode::error::DecodeError::OtherString($crate::absent::absent_message($tl_name)))
            }
        }

        impl<'de, Context> bincode::BorrowDecode<'de, Context> for $name {
            fn borrow_decode<D: bincode::de::BorrowDecoder<'de, Context = Context>>(
                _: &mut D,
            ) -> Result<Self, bincode::error::DecodeError> {
                Err(bincode::error::DecodeError::OtherString($crate::absent::absent_message($tl_name)))
            }
        }

        impl $crate::tl::TlObject for $name {
            fn write_boxed(&self, _: &mut $crate::tl::TlWriter) {
                match *self {}
            }

            fn read_with_id(_: u32, r: &mut $crate::tl::TlReader<'_>) -> Result<Self, $crate::tl::TlError> {
                Err(r.error($crate::absent::absent_message($tl_name)))
            }
        }

        impl $crate::td_json::TdJson for $name {
            fn write_json(&self, _: &mut $crate::td_json::JsonWriter<'_>) {
                match *self {}
            }

            fn read_json(r: &mut $crate::td_json::JsonReader<'_>) -> Result<Self, $crate::td_json::JsonError> {
                Err(r.absent($tl_name))
            }
        }

        impl $crate::validated::ValidatedClone for $name {
            fn validated_clone(&self) -> Self {
                match *self {}
            }
        }

        impl $crate::proto::ProtoOneof for $name {
            fn encode_variant(&self, _: &mut impl prost::bytes::BufMut) {
                match *self {}
            }

            fn variant_encoded_len(&self) -> usize {
                match *self {}
            }

            fn merge_variant(
                _: &mut Option<Self>,
                _: u32,
                _: prost::encoding::WireType,
                _: &mut impl prost::bytes::Buf,
                _: prost::encoding::DecodeContext,
            ) -> Result<(), prost::DecodeError> {
                Err($crate::proto::decode_error($crate::absent::absent_message($tl_name)))
            }
        }
    };
}
