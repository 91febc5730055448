//! Every implementation tdbench measures, by name: the codecs, the two floors shown beside
//! them so each figure can be read against what no format can beat, and TDLib round trips
//! (when libtdjson is installed) for what a request costs end to end.

use tdbench_contract::{ImplementationKind, Operation};

use crate::Codec;
use crate::codecs::bincode::Bincode;
use crate::codecs::json::Json;
use crate::codecs::json_simd::JsonSimd;
use crate::codecs::json_sonic::JsonSonic;
use crate::codecs::json_td::JsonTd;
use crate::codecs::json_value::JsonValue;
use crate::codecs::msgpack::MsgPack;
use crate::codecs::protobuf::Protobuf;
use crate::codecs::tl::Tl;

/// The codecs: `json` (the path being argued about) first, then the project's own TDLib JSON,
/// then TDLib JSON the way the Rust bindings read it (through a `serde_json::Value`), then the
/// two SIMD JSON libraries a Rust user would pick instead of serde_json, then the other formats.
pub const CODECS: &[&dyn Codec] = &[&Json, &JsonTd, &JsonValue, &JsonSonic, &JsonSimd, &Protobuf, &MsgPack, &Tl, &Bincode];

/// Reference operations that are not formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// Deep clone of the decoded value: the allocation floor of a decoder that owns its strings
    /// (it cannot allocate less without borrowing from the input). Shown as a decode.
    Clone,
    /// The same clone checking every string as UTF-8 on the way: the least an owned decode of
    /// untrusted bytes must do (same allocations, more work). Shown as a decode.
    ValidatedClone,
    /// Copying the payload as one format encodes it into a reused buffer: the bandwidth floor
    /// of an encoder that writes that many bytes. Shown as an encode.
    Memcpy(MemcpyOf),
}

/// Whose bytes a `memcpy` floor copies. An encoder is held against a copy of the bytes it
/// writes itself: a floor copying TDLib JSON would credit `tl` (a third of the size on
/// `message`) with a floor three times too slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemcpyOf {
    /// The floor's name: `memcpy` for TDLib JSON, the floor of all three TDLib JSON codecs.
    pub name: &'static str,
    /// The codec whose encoding is copied.
    pub codec: &'static str,
}

impl Floor {
    pub const ALL: [Floor; 7] = [
        Floor::Clone,
        Floor::ValidatedClone,
        Floor::Memcpy(MemcpyOf { name: "memcpy", codec: "json" }),
        Floor::Memcpy(MemcpyOf { name: "memcpy-protobuf", codec: "protobuf" }),
        Floor::Memcpy(MemcpyOf { name: "memcpy-msgpack", codec: "msgpack" }),
        Floor::Memcpy(MemcpyOf { name: "memcpy-tl", codec: "tl" }),
        Floor::Memcpy(MemcpyOf { name: "memcpy-bincode", codec: "bincode" }),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Floor::Clone => "clone",
            Floor::ValidatedClone => "validated-clone",
            Floor::Memcpy(of) => of.name,
        }
    }
}

/// TDLib itself in the loop: a request encoded by one of our TDLib JSON codecs goes through
/// `td_send`, TDLib's parser, an echo method, TDLib's serializer and `td_receive`, and the
/// answer is decoded by the same codec. Each codec on our side is its own implementation.
pub const TDLIB: &[(&str, &dyn Codec)] = &[("tdlib-json", &Json), ("tdlib-json-td", &JsonTd), ("tdlib-json-value", &JsonValue)];

/// The lanes TDLib has an echo method for (`testCallString` and so on).
pub const TDLIB_LANES: &[&str] = &["string-1k", "string-64k", "bytes-1k", "bytes-64k", "vector-int", "vector-object"];

/// A codec, a floor, or a TDLib round trip.
#[derive(Clone, Copy)]
pub enum Implementation {
    Codec(&'static dyn Codec),
    Floor(Floor),
    Tdlib { name: &'static str, codec: &'static dyn Codec },
}

impl Implementation {
    pub fn name(&self) -> &'static str {
        match self {
            Implementation::Codec(codec) => codec.name(),
            Implementation::Floor(floor) => floor.name(),
            Implementation::Tdlib { name, .. } => name,
        }
    }

    /// Whether this implementation has a measurement for `lane`: TDLib only where it has an
    /// echo method.
    pub fn measures(&self, lane: &str) -> bool {
        match self {
            Implementation::Tdlib { .. } => TDLIB_LANES.contains(&lane),
            _ => true,
        }
    }

    /// What it needs beyond this build: libtdjson for the TDLib round trips.
    pub fn needs_tdlib(&self) -> bool {
        matches!(self, Implementation::Tdlib { .. })
    }

    pub fn kind(&self) -> ImplementationKind {
        match self {
            Implementation::Codec(_) => ImplementationKind::Codec,
            Implementation::Floor(_) => ImplementationKind::Floor,
            Implementation::Tdlib { .. } => ImplementationKind::Tdlib,
        }
    }

    /// The operations its worker measures, in the order it measures them.
    pub fn operations(&self) -> &'static [Operation] {
        match self {
            Implementation::Codec(_) => &[Operation::Encode, Operation::Decode],
            Implementation::Floor(Floor::Clone | Floor::ValidatedClone) => &[Operation::Decode],
            Implementation::Floor(Floor::Memcpy(_)) => &[Operation::Encode],
            Implementation::Tdlib { .. } => &[Operation::RoundTrip, Operation::EmptyCall],
        }
    }
}

/// Every implementation in report order: codecs, floors, then TDLib round trips.
pub fn implementations() -> Vec<Implementation> {
    CODECS
        .iter()
        .map(|&c| Implementation::Codec(c))
        .chain(Floor::ALL.map(Implementation::Floor))
        .chain(TDLIB.iter().map(|&(name, codec)| Implementation::Tdlib { name, codec }))
        .collect()
}

pub fn codec(name: &str) -> Option<&'static dyn Codec> {
    CODECS.iter().copied().find(|c| c.name() == name)
}

/// Looks an implementation up by name without allocating: the counter looks names up between
/// counts, where an allocation would move every later count's buffers.
pub fn find(name: &str) -> Option<Implementation> {
    let codecs = CODECS.iter().map(|&c| Implementation::Codec(c));
    let floors = Floor::ALL.into_iter().map(Implementation::Floor);
    let tdlib = TDLIB.iter().map(|&(name, codec)| Implementation::Tdlib { name, codec });
    codecs.chain(floors).chain(tdlib).find(|i| i.name() == name)
}

/// Looks an implementation up by name; the error lists the valid names.
pub fn implementation(name: &str) -> Result<Implementation, String> {
    find(name).ok_or_else(|| {
        let names: Vec<_> = implementations().iter().map(|i| i.name()).collect();
        format!("unknown implementation `{name}`; valid: {}", names.join(", "))
    })
}

/// The codecs that read and write TDLib JSON.
pub fn tdlib_json_codecs() -> impl Iterator<Item = &'static dyn Codec> {
    CODECS.iter().copied().filter(|c| c.is_tdlib_json())
}
