//! Every implementation tdbench measures, by name: the codecs, and the two floors shown beside
//! them so each figure can be read against what no format can beat.

use crate::codecs::{bincode::Bincode, json::Json, json_td::JsonTd, msgpack::MsgPack, protobuf::Protobuf, tl::Tl};
use crate::Codec;

/// The codecs: `json` (the path being argued about) first, then the project's own TDLib JSON.
pub const CODECS: &[&dyn Codec] = &[&Json, &JsonTd, &Protobuf, &MsgPack, &Tl, &Bincode];

/// Reference operations that are not formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// Deep clone of the decoded value: the allocation floor of a decoder that owns its strings
    /// (it cannot allocate less without borrowing from the input). Shown as a decode.
    Clone,
    /// Copying the payload's TDLib JSON bytes into a reused buffer: the bandwidth floor of an
    /// encoder. Shown as an encode.
    Memcpy,
}

impl Floor {
    pub const ALL: [Floor; 2] = [Floor::Clone, Floor::Memcpy];

    pub fn name(self) -> &'static str {
        match self {
            Floor::Clone => "clone",
            Floor::Memcpy => "memcpy",
        }
    }
}

/// A codec or a floor.
#[derive(Clone, Copy)]
pub enum Implementation {
    Codec(&'static dyn Codec),
    Floor(Floor),
}

impl Implementation {
    pub fn name(&self) -> &'static str {
        match self {
            Implementation::Codec(codec) => codec.name(),
            Implementation::Floor(floor) => floor.name(),
        }
    }
}

/// Every implementation in report order: codecs, then floors.
pub fn implementations() -> Vec<Implementation> {
    CODECS.iter().map(|&c| Implementation::Codec(c)).chain(Floor::ALL.map(Implementation::Floor)).collect()
}

pub fn codec(name: &str) -> Option<&'static dyn Codec> {
    CODECS.iter().copied().find(|c| c.name() == name)
}

/// Looks an implementation up by name; the error lists the valid names.
pub fn implementation(name: &str) -> Result<Implementation, String> {
    implementations().into_iter().find(|i| i.name() == name).ok_or_else(|| {
        let names: Vec<_> = implementations().iter().map(|i| i.name()).collect();
        format!("unknown implementation `{name}`; valid: {}", names.join(", "))
    })
}

/// The codecs that read and write TDLib JSON.
pub fn tdlib_json_codecs() -> impl Iterator<Item = &'static dyn Codec> {
    CODECS.iter().copied().filter(|c| c.is_tdlib_json())
}
