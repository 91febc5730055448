//! The formats of the skew table, written and read with either release's models. Each is
//! configured as its codec in `src/codecs/` is (msgpack as named maps with a depth limit, bincode
//! with the standard configuration), so that a skewed read here is what that codec would do.

use bincode::config;
use tdbench_models::{proto, td_json, tl::TlWriter};

use crate::release::Release;

/// A row of the skew table: a format, and for protobuf how its fields are numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// serde_json over the serde models: TDLib JSON, by name.
    Json,
    /// The project's own TDLib JSON reader and writer, by name.
    JsonTd,
    /// rmp-serde, structs as maps keyed by field name.
    MsgPack,
    /// bincode 2, positional.
    Bincode,
    /// Binary TL: every object opens with its constructor's id, the CRC32 of its declaration.
    Tl,
    /// Protobuf numbered by declaration order (what the schema alone gives).
    ProtobufByPosition,
    /// Protobuf numbered by the committed number map (models/proto/numbers.txt).
    ProtobufStable,
}

impl Format {
    pub const ALL: [Format; 7] =
        [Format::Json, Format::JsonTd, Format::MsgPack, Format::Bincode, Format::Tl, Format::ProtobufByPosition, Format::ProtobufStable];

    /// The name on the command line and in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::JsonTd => "json-td",
            Format::MsgPack => "msgpack",
            Format::Bincode => "bincode",
            Format::Tl => "tl",
            Format::ProtobufByPosition => "protobuf-by-position",
            Format::ProtobufStable => "protobuf-stable",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether this row reads the newer release through its by-position protobuf models.
    pub fn numbers_by_position(self) -> bool {
        self == Format::ProtobufByPosition
    }

    pub fn encode<R: Release>(self, value: &R::Object, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            Format::Json => serde_json::to_writer(&mut *out, value).map_err(|e| e.to_string()),
            Format::JsonTd => {
                td_json::to_vec(value, out);
                Ok(())
            }
            Format::MsgPack => {
                let mut serializer = rmp_serde::Serializer::new(out).with_struct_map();
                serde::Serialize::serialize(value, &mut serializer).map_err(|e| e.to_string())
            }
            Format::Bincode => bincode::encode_into_std_write(value, out, config::standard()).map(drop).map_err(|e| e.to_string()),
            Format::Tl => {
                let mut writer = TlWriter::new(std::mem::take(out));
                writer.write_object(value);
                *out = writer.finish().map_err(|e| e.message)?;
                Ok(())
            }
            Format::ProtobufByPosition | Format::ProtobufStable => {
                proto::encode_payload(value, out);
                Ok(())
            }
        }
    }

    pub fn decode<R: Release>(self, bytes: &[u8]) -> Result<R::Object, String> {
        match self {
            Format::Json => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
            Format::JsonTd => td_json::from_slice(bytes).map_err(|e| format!("at byte {}: {}", e.offset(), e.message())),
            Format::MsgPack => {
                let mut deserializer = rmp_serde::Deserializer::from_read_ref(bytes);
                deserializer.set_max_depth(128);
                serde::Deserialize::deserialize(&mut deserializer).map_err(|e| e.to_string())
            }
            Format::Bincode => {
                let limited = config::standard().with_limit::<{ 1 << 30 }>();
                let (value, read) = bincode::decode_from_slice(bytes, limited).map_err(|e| e.to_string())?;
                if read != bytes.len() {
                    return Err(format!("{} bytes left after the object", bytes.len() - read));
                }
                Ok(value)
            }
            Format::Tl => R::read_tl(bytes).map_err(|e| format!("at byte {}: {}", e.offset, e.message)),
            Format::ProtobufByPosition | Format::ProtobufStable => proto::decode_payload(bytes).map_err(|e| e.to_string()),
        }
    }
}
