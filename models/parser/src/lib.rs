//! Turns TDLib `.tl` schema text into [`Definition`]s and computes each one's constructor id.
//!
//! It knows nothing of Rust code: the generator (`tl-gen`) consumes what this crate produces.
//! It reads the whole upstream `td_api.tl` — `//@` doc comments, builtins such as
//! `vector {t:Type} # [ t ] = Vector t;` and the `---functions---` separator — as well as the
//! project's own comment-free schema.

mod definition;
mod error;
mod parse;

pub use definition::{Category, Definition, Parameter, Type};
pub use error::ParseError;
pub use parse::parse_schema;

/// The hash of a constructor name that generated readers switch on before comparing the name
/// exactly (FNV-1a, 32 bits): cheap enough to fold in while the name is being scanned, one byte
/// at a time with [`name_hash_step`] from [`NAME_HASH_SEED`].
///
/// ```
/// let folded = b"ok".iter().fold(tl_parser::NAME_HASH_SEED, |h, &b| tl_parser::name_hash_step(h, b));
/// assert_eq!(folded, tl_parser::name_hash(b"ok"));
/// ```
pub fn name_hash(name: &[u8]) -> u32 {
    name.iter().fold(NAME_HASH_SEED, |hash, &byte| name_hash_step(hash, byte))
}

/// The starting value of [`name_hash`].
pub const NAME_HASH_SEED: u32 = 0x811c_9dc5;

/// One byte of [`name_hash`].
#[inline(always)]
pub fn name_hash_step(hash: u32, byte: u8) -> u32 {
    (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
}
