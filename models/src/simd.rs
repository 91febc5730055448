//! The one module that uses `std::arch`: SSE2, which every x86-64 target has (it is the
//! baseline), so nothing is detected at run time and no other instruction set is assumed. Other
//! targets get the same answers from plain Rust.
//!
//! What it offers is [`chunk_attention`] and [`chunk_ascii_attention`]: which of sixteen bytes
//! end a plain run inside a JSON string, for the reader and for the writer. Safe to call; the `unsafe` is the call into a `#[target_feature]` function, sound
//! because that code is compiled only when the build's target has SSE2.

/// Bytes [`chunk_attention`] tests at once.
pub const CHUNK: usize = 16;

/// One bit per byte of `chunk` (bit `k` for byte `k`) that is a quote, a backslash or a control
/// character: the reader's stops. Sixteen bytes in one vector test, where two eight-byte word
/// tests (the "has a zero byte" arithmetic) take about twice the instructions: escape-dense
/// text (TDLib escapes every character above ASCII) stops every twenty-odd bytes, so most of its
/// runs fit in one or two chunks.
#[inline(always)]
pub fn chunk_attention(chunk: &[u8; CHUNK]) -> u32 {
    chunk_stops::<false>(chunk)
}

/// [`chunk_attention`], and every byte above ASCII as well: the writer's stops (TDLib escapes
/// those).
#[inline(always)]
pub fn chunk_ascii_attention(chunk: &[u8; CHUNK]) -> u32 {
    chunk_stops::<true>(chunk)
}

#[inline(always)]
fn chunk_stops<const ABOVE_ASCII: bool>(chunk: &[u8; CHUNK]) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: `sse2::chunk_stops` needs SSE2 and nothing else, and this line is compiled
        // only where the build's target has SSE2.
        unsafe { sse2::chunk_stops::<ABOVE_ASCII>(chunk) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        chunk_stops_portable::<ABOVE_ASCII>(chunk)
    }
}

/// [`chunk_stops`] a byte at a time: the definition the vector code must agree with, and what
/// targets without SSE2 run.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn chunk_stops_portable<const ABOVE_ASCII: bool>(chunk: &[u8; CHUNK]) -> u32 {
    let stops = |byte: u8| byte == b'"' || byte == b'\\' || byte < 0x20 || (ABOVE_ASCII && !byte.is_ascii());
    chunk.iter().enumerate().fold(0, |mask, (k, &byte)| mask | u32::from(stops(byte)) << k)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8};

    /// [`super::chunk_stops`]. The vector is built from two words rather than loaded through a
    /// pointer: LLVM folds them into one unaligned load, and nothing is read unchecked.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn chunk_stops<const ABOVE_ASCII: bool>(chunk: &[u8; super::CHUNK]) -> u32 {
        let low = i64::from_le_bytes(chunk[..8].try_into().expect("8 bytes"));
        let high = i64::from_le_bytes(chunk[8..].try_into().expect("8 bytes"));
        let bytes = _mm_set_epi64x(high, low);
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        // A byte at most 0x1f (unsigned) is its own minimum with 0x1f.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
        let mut stops = _mm_or_si128(_mm_or_si128(quote, backslash), control);
        if ABOVE_ASCII {
            // `movemask` reads each byte's high bit: a byte above ASCII has it set already.
            stops = _mm_or_si128(stops, bytes);
        }
        _mm_movemask_epi8(stops) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every position, alone among plain bytes and after an earlier stop:
    /// the vector code and the byte-at-a-time definition agree bit for bit.
    #[test]
    fn chunk_attention_marks_exactly_the_bytes_that_end_a_plain_run() {
        for byte in 0..=255u8 {
            for at in 0..CHUNK {
                for background in [b'a', 0xc3, b'"'] {
                    let mut chunk = [background; CHUNK];
                    chunk[at] = byte;
                    assert_eq!(
                        chunk_attention(&chunk),
                        chunk_stops_portable::<false>(&chunk),
                        "byte {byte:#x} at {at} among {background:#x}"
                    );
                    assert_eq!(
                        chunk_ascii_attention(&chunk),
                        chunk_stops_portable::<true>(&chunk),
                        "byte {byte:#x} at {at} among {background:#x}"
                    );
                }
            }
        }
        assert_eq!(chunk_attention(b"abc\\def\"ghi\x01jkl\x7f"), 0b0000_1000_1000_1000);
        assert_eq!(chunk_ascii_attention(b"abc\\def\"ghi\x01jk\xc3\x7f"), 0b0100_1000_1000_1000);
    }
}
