//! One module per wire format. Adding a format: one file here and one line in
//! [`crate::registry`].

pub mod bincode;
pub mod json;
pub mod json_simd;
pub mod json_sonic;
pub mod json_td;
pub mod json_value;
pub mod msgpack;
pub mod protobuf;
pub mod tl;
