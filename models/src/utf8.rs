//! The one UTF-8 check of every owned decode (`tl`, `json-td`) and of the `validated-clone`
//! floor, so the floor stays the least such a decode must do with the validator it uses.
//!
//! `simdutf8` checks 64 bytes at a time with AVX2 or SSE 4.2, picked at run time, and hands
//! shorter input to the standard library's check. Measured on `tl` decode (callgrind): the
//! standard check was 76% of the instructions on `option`, whose strings are ~380 bytes with
//! Cyrillic, Chinese and emoji, and 13–30% on `messages`, `mix` and `string-64k`.
//!
//! Its `basic` flavour says only whether the input is valid; an error is looked at again by the
//! standard check for where it is, which also makes the standard check the final word.

use std::str::Utf8Error;

/// `bytes` as text, or where they stop being UTF-8.
#[inline]
pub fn check(bytes: &[u8]) -> Result<&str, Utf8Error> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => located(bytes),
    }
}

#[cold]
#[inline(never)]
fn located(bytes: &[u8]) -> Result<&str, Utf8Error> {
    std::str::from_utf8(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agrees with the standard check, error position included, on valid and broken text of
    /// every length around the 64-byte SIMD block, each kind of fault at every position.
    #[test]
    fn agrees_with_the_standard_check_at_every_length_and_fault_position() {
        let text = "aé€😀Жx中\u{7f}\u{80}\u{10ffff}".repeat(12);
        let faults: [&[u8]; 7] = [b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80"];
        let bytes = text.as_bytes();
        for len in 0..bytes.len().min(200) {
            let prefix = &bytes[..len];
            assert_eq!(check(prefix).ok(), std::str::from_utf8(prefix).ok(), "length {len}");
            for fault in faults {
                let mut broken = prefix.to_vec();
                broken.extend_from_slice(fault);
                broken.extend_from_slice(&bytes[..len % 70]);
                let (ours, standard) = (check(&broken), std::str::from_utf8(&broken));
                assert!(ours.is_err() && standard.is_err(), "length {len}, fault {fault:?}");
                assert_eq!(ours.unwrap_err().valid_up_to(), standard.unwrap_err().valid_up_to());
            }
        }
    }
}
