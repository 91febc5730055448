//! tdbench: what the TDLib JSON path costs per payload, against protobuf, MessagePack, binary TL
//! and bincode encodings of the same objects.
//!
//! Data flows one way: the generated models (`tdbench-models`) → [`codecs`] (one module per
//! wire format, all behind the [`Codec`] trait, listed in [`registry`]) → [`corpus`] (payloads
//! and the lanes that group them) → [`validate`] (every payload decodes, agrees and round-trips
//! before anything is timed).

pub mod alloc;
pub mod app;
pub mod codec;
pub mod codecs;
pub mod corpus;
pub mod registry;
pub mod sizes;
pub mod tdlib;
pub mod validate;
pub mod worker;

pub use codec::{Codec, CodecError};
pub use tdbench_models as models;
pub use tdbench_models::Object;
