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
/// exactly: eight bytes at a time (a byte-at-a-time hash made every `@type` a chain of dependent
/// multiplies, one per letter). Readers fold it in while they scan the name, a word at a time
/// with [`name_hash_word`] from [`NAME_HASH_SEED`] (the last word zero-padded), then
/// [`name_hash_finish`] with the length.
///
/// ```
/// let mut hash = tl_parser::NAME_HASH_SEED;
/// hash = tl_parser::name_hash_word(hash, u64::from_le_bytes(*b"updateNe"));
/// hash = tl_parser::name_hash_word(hash, u64::from_le_bytes(*b"wMessage"));
/// assert_eq!(tl_parser::name_hash_finish(hash, 16), tl_parser::name_hash(b"updateNewMessage"));
/// ```
pub fn name_hash(name: &[u8]) -> u32 {
    let hash = name.chunks(8).fold(NAME_HASH_SEED, |hash, chunk| {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        name_hash_word(hash, u64::from_le_bytes(word))
    });
    name_hash_finish(hash, name.len())
}

/// The starting value of [`name_hash`].
pub const NAME_HASH_SEED: u64 = 0xcbf2_9ce4_8422_2325;

const NAME_HASH_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// Eight bytes of a name, little-endian (the last word of a name zero-padded), into [`name_hash`].
/// A rotate and an exclusive or, two instructions with no multiply in the chain from one word to
/// the next: [`name_hash_finish`] does the mixing once per name. The rotation is odd, so a byte's
/// bits land across byte boundaries of the words after it.
#[inline(always)]
pub fn name_hash_word(hash: u64, word: u64) -> u64 {
    hash.rotate_left(29) ^ word
}

/// The end of [`name_hash`]: the name's length in, 32 bits out, after two rounds of multiply and
/// shift that spread every bit of the words over the result.
#[inline(always)]
pub fn name_hash_finish(hash: u64, len: usize) -> u32 {
    let mixed = (hash ^ len as u64).wrapping_mul(NAME_HASH_MULTIPLIER);
    ((mixed ^ (mixed >> 29)).wrapping_mul(NAME_HASH_MULTIPLIER) >> 32) as u32
}
