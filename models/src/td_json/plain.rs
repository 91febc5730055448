//! Which bytes a JSON string carries as they are, tested a chunk (16 bytes, one SSE2 test in
//! [`crate::simd`]), a block (64) or, at the end of the text, a word (8) at a time. Shared by both directions: the reader stops at a quote, a backslash or a control
//! character; the writer stops at those and at every byte above ASCII, which TDLib escapes.

/// Bytes [`block_is_plain`] and [`block_is_plain_ascii`] check at once.
pub const BLOCK: usize = 64;

/// Whether none of `block`'s bytes is a quote, a backslash or a control character: the least,
/// over the block, of `byte ^ '"'`, `byte ^ '\\'` and `byte - 0x1f` (saturating) is not zero.
/// Minimums of bytes are what LLVM vectorizes cleanly (SSE2 is x86-64's baseline; no `unsafe`):
/// about 0.8 instructions per byte against 2.5 for the eight-byte word test (a chunk takes about
/// 1), and a few vector operations a cycle. Only long runs come here: for a short string, a block costs more than
/// the words it would save.
#[inline(always)]
pub fn block_is_plain(block: &[u8; BLOCK]) -> bool {
    block.iter().fold(u8::MAX, |least, &b| least.min(b ^ b'"').min(b ^ b'\\').min(b.saturating_sub(0x1f))) != 0
}

/// [`block_is_plain`], and every byte ASCII as well (`0x80 - byte`, saturating, is not zero).
#[inline(always)]
pub fn block_is_plain_ascii(block: &[u8; BLOCK]) -> bool {
    block.iter().fold(u8::MAX, |least, &b| least.min(b ^ b'"').min(b ^ b'\\').min(b.saturating_sub(0x1f)).min(0x80u8.saturating_sub(b)))
        != 0
}

/// The high bit of each byte of `word` that is a quote, a backslash or a control character
/// (the classic "has a zero byte" and "has a byte below n" tests); bits above the lowest may be
/// false (a borrow), the lowest is exact.
#[inline(always)]
pub fn attention_bits(word: u64) -> u64 {
    let quote = zero_bytes(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_bytes(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

/// The bytes of `word` where plain ASCII stops (a quote, a backslash, a control character, a
/// byte above ASCII), as high bits; the lowest set bit is exact, the only one to read.
#[inline(always)]
pub fn plain_ascii_stops(word: u64) -> u64 {
    attention_bits(word) | (word & HIGH)
}

pub use crate::simd::{CHUNK, chunk_ascii_attention, chunk_attention};

pub const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each zero byte of `v` (the classic test): the lowest set bit is exact, bits
/// above it may be false (a borrow).
#[inline(always)]
pub fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGH
}

/// Bytes that end a plain run inside a string: the quote, the backslash, control characters.
pub static NEEDS_ATTENTION: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Where the run that starts at `from` and needs no attention (no quote, backslash or control
/// character) ends. The reader's scan of a string.
#[inline(always)]
pub fn plain_end(bytes: &[u8], from: usize) -> usize {
    run_end(bytes, from, chunk_attention, attention_bits, block_is_plain, |b| !NEEDS_ATTENTION[b as usize])
}

/// Where the run of plain ASCII that starts at `from` ends. The writer's scan of a string.
#[inline(always)]
pub fn plain_ascii_end(bytes: &[u8], from: usize) -> usize {
    run_end(bytes, from, chunk_ascii_attention, plain_ascii_stops, block_is_plain_ascii, |b| b.is_ascii() && !NEEDS_ATTENTION[b as usize])
}

/// Where the run from `from` ends, for both scans: a chunk (16 bytes) at a time (`chunk_stops`
/// gives a bit per byte that stops the run), and once the run proves long (two chunks), a block
/// at a time out of line; then a word (`word_stops` gives the word's stops as high bits, the
/// lowest exact) and the last few bytes one by one (`plain`). The chunk that stops the run
/// places the stop itself: going back to its start and on byte by byte cost the reader 1% of
/// `message`'s decode instructions.
#[inline(always)]
fn run_end(
    bytes: &[u8],
    from: usize,
    chunk_stops: impl Fn(&[u8; CHUNK]) -> u32,
    word_stops: impl Fn(u64) -> u64,
    block: impl Fn(&[u8; BLOCK]) -> bool + Copy,
    plain: impl Fn(u8) -> bool,
) -> usize {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + CHUNK) {
        let stops = chunk_stops(chunk.try_into().expect("CHUNK bytes"));
        if stops != 0 {
            return i + stops.trailing_zeros() as usize;
        }
        i += CHUNK;
        if i - from == 2 * CHUNK {
            i = plain_blocks_from(bytes, i, block);
        }
    }
    // Fewer than a chunk's bytes left: the end of the text (the writer scans a value alone).
    if let Some(word) = bytes.get(i..i + 8) {
        let stops = word_stops(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        if stops != 0 {
            return i + stops.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while i < bytes.len() && plain(bytes[i]) {
        i += 1;
    }
    i
}

/// Where the run from `i` stops being a whole number of blocks that `plain` accepts. Out of
/// line: its vector constants would otherwise be loaded on every call of the scan that calls
/// it, for short strings too (seen in the reader: escape-dense text 4.5% slower with the blocks
/// inlined).
#[inline(never)]
pub fn plain_blocks_from(bytes: &[u8], mut i: usize, plain: impl Fn(&[u8; BLOCK]) -> bool) -> usize {
    while let Some(block) = bytes.get(i..i + BLOCK) {
        if !plain(block.try_into().expect("BLOCK bytes")) {
            break;
        }
        i += BLOCK;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain_ascii(byte: u8) -> bool {
        byte.is_ascii() && !NEEDS_ATTENTION[byte as usize]
    }

    #[test]
    fn words_that_need_attention() {
        for byte in 0..=255u8 {
            for at in 0..8 {
                let mut word = [b'a'; 8];
                word[at] = byte;
                let word = u64::from_le_bytes(word);
                let stops = attention_bits(word);
                let first = (stops != 0).then(|| stops.trailing_zeros() as usize / 8);
                assert_eq!(first, NEEDS_ATTENTION[byte as usize].then_some(at), "byte {byte:#x} at {at}");
                let stops = plain_ascii_stops(word);
                let first = (stops != 0).then(|| stops.trailing_zeros() as usize / 8);
                assert_eq!(first, (!plain_ascii(byte)).then_some(at), "byte {byte:#x} at {at}");
            }
        }
    }

    #[test]
    fn blocks_that_need_attention() {
        for byte in 0..=255u8 {
            for at in [0, 1, 15, 16, 31, 32, 63] {
                let mut block = [b'a'; BLOCK];
                block[at] = byte;
                assert_eq!(block_is_plain(&block), !NEEDS_ATTENTION[byte as usize], "byte {byte:#x} at {at}");
                assert_eq!(block_is_plain_ascii(&block), plain_ascii(byte), "byte {byte:#x} at {at}");
            }
        }
    }

    #[test]
    fn a_plain_run_ends_at_the_first_byte_that_needs_attention() {
        // As below, for the reader's scan: bytes above ASCII are plain here.
        for len in [0, 1, 7, 8, 9, 31, 32, 33, 40, 95, 96, 97, 200] {
            for stop in [b'"', b'\\', 0x00, 0x1f] {
                for at in (0..=len).step_by(if len > 40 { 7 } else { 1 }) {
                    let mut bytes = vec![0xc3; len];
                    if at < len {
                        bytes[at] = stop;
                    }
                    for from in [0, 1, 5].into_iter().filter(|&f| f <= at) {
                        assert_eq!(plain_end(&bytes, from), at, "len {len}, stop {stop:#x} at {at}, from {from}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_plain_ascii_run_ends_at_the_first_byte_that_is_not() {
        // Every end position, from every start, over lengths that reach the blocks and the
        // byte-by-byte tail, for a byte of each kind that stops the run.
        for len in [0, 1, 7, 8, 9, 31, 32, 33, 40, 95, 96, 97, 200] {
            for stop in [b'"', b'\\', 0x00, 0x1f, 0x80, 0xc3, 0xff] {
                for at in (0..=len).step_by(if len > 40 { 7 } else { 1 }) {
                    let mut bytes = vec![b'x'; len];
                    if at < len {
                        bytes[at] = stop;
                    }
                    for from in [0, 1, 5].into_iter().filter(|&f| f <= at) {
                        assert_eq!(plain_ascii_end(&bytes, from), at, "len {len}, stop {stop:#x} at {at}, from {from}");
                    }
                }
            }
        }
    }
}
