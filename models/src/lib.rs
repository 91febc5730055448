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

// The models and every format's glue, generated or not, are safe Rust, except for two things,
// each allowed by name below: the TL writer's unchecked `put` (see `tl::TlWriter`), which only
// `tl` and the TL impls that `tl-gen` emits may use, and the call into SSE2 code in `simd`,
// which the TDLib JSON reader and writer use to test sixteen string bytes at once.
#![deny(unsafe_code)]

#[macro_use]
mod absent;
pub mod proto;
pub mod serde_support;
#[allow(unsafe_code)]
mod simd;
pub mod td_json;
#[allow(unsafe_code)]
pub mod tl;
pub mod utf8;
pub mod validated;

/// The generated models of one schema, from the folder `build.rs` wrote them to. Never edited
/// by hand: change the schema or `tl-gen` instead. Lints are for hand-written code: generated
/// code is regular by construction (`x | 0`, one-arm matches).
macro_rules! generated_models {
    ($folder:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $folder, "/types.rs"));
        include!(concat!(env!("OUT_DIR"), "/", $folder, "/serde_impls.rs"));
        include!(concat!(env!("OUT_DIR"), "/", $folder, "/tl_impls.rs"));
        include!(concat!(env!("OUT_DIR"), "/", $folder, "/td_json_impls.rs"));
        include!(concat!(env!("OUT_DIR"), "/", $folder, "/validated_impls.rs"));
        include!(concat!(env!("OUT_DIR"), "/", $folder, "/proto_impls.rs"));
    };
}

#[allow(clippy::all)]
mod generated {
    generated_models!("current");
}

pub use generated::*;

/// Models of other schema releases, for the schema-skew measurement (crate `tdbench-skew`): only
/// with the `schema-skew` feature, so the measured build never compiles them.
#[cfg(feature = "schema-skew")]
#[allow(clippy::all)]
pub mod skew {
    /// `schema/td_api-1.8.65.tl`, protobuf numbered by the committed map.
    pub mod v1_8_65 {
        generated_models!("v1_8_65");
        pub const SCHEMA: &str = include_str!("../schema/td_api-1.8.65.tl");
    }

    /// The same, protobuf numbered by declaration order.
    pub mod v1_8_65_by_position {
        generated_models!("v1_8_65_by_position");
        pub const SCHEMA: &str = include_str!("../schema/td_api-1.8.65.tl");
    }

    /// `schema/td_api-1.8.60.tl`, protobuf numbered by the committed map, which starts there:
    /// its numbers are 1.8.60's positions, so this module is also 1.8.60 by position.
    pub mod v1_8_60 {
        generated_models!("v1_8_60");
        pub const SCHEMA: &str = include_str!("../schema/td_api-1.8.60.tl");
    }

    /// The models' own schema (1.8.66) with protobuf numbered by declaration order, as before
    /// the number map: the "numbered by position" side of the skew table.
    pub mod v1_8_66_by_position {
        generated_models!("v1_8_66_by_position");
        pub const SCHEMA: &str = include_str!("../schema/td_api.tl");
    }

    /// The known cases (`testdata/skew/`): a few real declarations of 1.8.65 and of 1.8.66 that
    /// append, insert, rename, widen, add and remove, for the skew tests.
    pub mod known_1_8_65 {
        generated_models!("known_1_8_65");
        pub const SCHEMA: &str = include_str!("../testdata/skew/known-1.8.65.tl");
    }

    pub mod known_1_8_66 {
        generated_models!("known_1_8_66");
        pub const SCHEMA: &str = include_str!("../testdata/skew/known-1.8.66.tl");
    }

    pub mod known_1_8_66_by_position {
        generated_models!("known_1_8_66_by_position");
        pub const SCHEMA: &str = include_str!("../testdata/skew/known-1.8.66.tl");
    }
}

/// TDLib's base64 for `bytes`: the standard alphabet, padded.
pub(crate) const TDLIB_BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The `.proto` file describing the protobuf encoding, as generated from the schema.
pub const PROTO_FILE: &str = include_str!(concat!(env!("OUT_DIR"), "/current/td_api.proto"));

/// The project's schema text.
pub const SCHEMA: &str = include_str!("../schema/td_api.tl");
