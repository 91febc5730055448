//! The TDLib object model tdbench measures, generated from `schema/td_api.tl`, and the runtime
//! the generated per-format code calls into.
//!
//! Every format encodes from and decodes into these same values, so the benchmark compares
//! formats, not object models. One struct per TL constructor, one enum per abstract type, and
//! [`Object`] — any constructor, like TDLib's `td_api::Object` — as the unit a payload holds.
//! Object fields are `Option` (TDLib pointers can be null); vector elements are not.
//!
//! The runtime modules hold what the generated code needs per format: [`tl`] (binary TL
//! primitives), [`td_json`] (the serde-free TDLib JSON reader and writer), [`proto`] (protobuf oneof glue for prost), [`validated`] (the validated-clone floor), [`utf8`] (the UTF-8 check all of them share), [`serde_support`] (TDLib JSON's quoted
//! int64 and base64 bytes), and [`absent_type!`] for types the schema references but leaves out.

// The models and every format's glue, generated or not, are safe Rust.
#![forbid(unsafe_code)]

#[macro_use]
mod absent;
pub mod proto;
pub mod serde_support;
pub mod td_json;
pub mod tl;
pub mod utf8;
pub mod validated;

/// The generated models. Never edited by hand: change the schema or `tl-gen` instead. Lints are
/// for hand-written code: generated code is regular by construction (`x | 0`, one-arm matches).
#[allow(clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/types.rs"));
    include!(concat!(env!("OUT_DIR"), "/serde_impls.rs"));
    include!(concat!(env!("OUT_DIR"), "/tl_impls.rs"));
    include!(concat!(env!("OUT_DIR"), "/td_json_impls.rs"));
    include!(concat!(env!("OUT_DIR"), "/validated_impls.rs"));
    include!(concat!(env!("OUT_DIR"), "/proto_impls.rs"));
}

pub use generated::*;

/// TDLib's base64 for `bytes`: the standard alphabet, padded.
pub(crate) const TDLIB_BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The `.proto` file describing the protobuf encoding, as generated from the schema.
pub const PROTO_FILE: &str = include_str!(concat!(env!("OUT_DIR"), "/td_api.proto"));

/// The project's schema text.
pub const SCHEMA: &str = include_str!("../schema/td_api.tl");
