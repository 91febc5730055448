//! TDLib's base64 (the standard alphabet, padded), decoded eight symbols at a time.
//!
//! Why not the `base64` crate's decoder: it took about 7 instructions per symbol here, 80% of
//! json-td's decode of a 64 KiB `bytes` payload. Here each symbol is one lookup in a table of
//! its value already shifted to its place, four ORed into 24 bits (a byte outside the alphabet
//! shows above them), eight written as six bytes: about half the instructions. It accepts exactly what the crate's
//! `STANDARD` engine accepts — a length that is a multiple of four, one or two `=` only at the
//! end, no other byte outside the alphabet, zero bits left over in the last symbol — which a
//! test checks against the crate on every short input and on damaged long ones.

/// What a symbol is worth; `INVALID` for a byte outside the alphabet (`=` included: padding is
/// handled apart).
static VALUE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

const INVALID: u8 = 0xff;

/// [`VALUE`] shifted to its place in a group of four symbols (24 bits), per position; a byte
/// outside the alphabet sets bits above the 24, so one test of four ORed lookups finds it.
static PLACED: [[u32; 256]; 4] = {
    let mut table = [[0u32; 256]; 4];
    let mut position = 0;
    while position < 4 {
        let mut b = 0;
        while b < 256 {
            table[position][b] = match VALUE[b] {
                INVALID => 0xff00_0000,
                value => (value as u32) << (6 * (3 - position)),
            };
            b += 1;
        }
        position += 1;
    }
    table
};

/// Why some base64 is not TDLib's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base64Error {
    /// Not a multiple of four symbols.
    Length,
    /// A byte outside the alphabet (or padding not at the end), at this offset.
    Symbol(usize),
    /// The last symbol carries bits the decoded bytes cannot hold.
    TrailingBits,
}

impl std::fmt::Display for Base64Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Base64Error::Length => write!(f, "a length that is not a multiple of four"),
            Base64Error::Symbol(at) => write!(f, "a byte outside the alphabet at offset {at}"),
            Base64Error::TrailingBits => write!(f, "bits left over in the last symbol"),
        }
    }
}

/// Decodes `text` into a vector of exactly its decoded length (one allocation).
pub fn decode(text: &[u8]) -> Result<Vec<u8>, Base64Error> {
    if !text.len().is_multiple_of(4) {
        return Err(Base64Error::Length);
    }
    let padding = match text {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    // The last quad (with its padding) is decoded apart; everything before it is whole.
    let body = text.len().saturating_sub(4);
    let mut out = vec![0u8; text.len() / 4 * 3 - padding];
    let (whole, last) = out.split_at_mut(body / 4 * 3);
    let mut eights = text[..body].chunks_exact(8);
    let mut sixes = whole.chunks_exact_mut(6);
    for (symbols, bytes) in (&mut eights).zip(&mut sixes) {
        let four = |at: usize| {
            PLACED[0][symbols[at] as usize]
                | PLACED[1][symbols[at + 1] as usize]
                | PLACED[2][symbols[at + 2] as usize]
                | PLACED[3][symbols[at + 3] as usize]
        };
        let (high, low) = (four(0), four(4));
        if (high | low) >> 24 != 0 {
            return Err(first_invalid(text, 0));
        }
        let word = u64::from(high) << 24 | u64::from(low);
        bytes.copy_from_slice(&word.to_be_bytes()[2..]);
    }
    let (rest, into) = (eights.remainder(), sixes.into_remainder());
    if !rest.is_empty() {
        let at = body - rest.len();
        let word = quad(rest).ok_or_else(|| first_invalid(text, at))?;
        into.copy_from_slice(&word.to_be_bytes()[1..]);
    }
    if body < text.len() {
        decode_last(&text[body..], body, last)?;
    }
    Ok(out)
}

/// Four symbols as 24 bits, or `None` if one is not in the alphabet.
#[inline]
fn quad(symbols: &[u8]) -> Option<u32> {
    symbols.iter().try_fold(0u32, |word, &symbol| match VALUE[symbol as usize] {
        INVALID => None,
        value => Some(word << 6 | u32::from(value)),
    })
}

/// The last four symbols, `at` bytes into the text, with their padding, into `out` (3, 2 or 1
/// bytes).
fn decode_last(symbols: &[u8], at: usize, out: &mut [u8]) -> Result<(), Base64Error> {
    let data = &symbols[..4 - (3 - out.len())];
    let mut word = 0u32;
    for (i, &symbol) in data.iter().enumerate() {
        match VALUE[symbol as usize] {
            INVALID => return Err(Base64Error::Symbol(at + i)),
            value => word = word << 6 | u32::from(value),
        }
    }
    // Left over: 2 bits with one `=`, 4 with two; they must be zero.
    let spare = 6 * data.len() - 8 * out.len();
    if word & ((1 << spare) - 1) != 0 {
        return Err(Base64Error::TrailingBits);
    }
    let word = word >> spare;
    let bytes = word.to_be_bytes();
    out.copy_from_slice(&bytes[4 - out.len()..]);
    Ok(())
}

/// The first byte outside the alphabet from `from` on (the slow path of an error).
#[cold]
fn first_invalid(text: &[u8], from: usize) -> Base64Error {
    let at = text[from..].iter().position(|&b| VALUE[b as usize] == INVALID).map_or(from, |i| from + i);
    Base64Error::Symbol(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn crate_decode(text: &[u8]) -> Option<Vec<u8>> {
        base64::engine::general_purpose::STANDARD.decode(text).ok()
    }

    #[test]
    fn decodes_what_the_crate_encodes() {
        for len in 0..200usize {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
            let text = base64::engine::general_purpose::STANDARD.encode(&data);
            assert_eq!(decode(text.as_bytes()).unwrap(), data, "{len} bytes");
            assert_eq!(decode(text.as_bytes()).unwrap().capacity(), len);
        }
    }

    #[test]
    fn accepts_exactly_what_the_crate_accepts() {
        // Every string of up to four symbols over a small alphabet with the edge cases (padding,
        // trailing bits, outside the alphabet).
        let symbols = [b'A', b'Q', b'B', b'/', b'+', b'=', b'-', b'z', b'0'];
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=4 {
            let mut next = Vec::new();
            for t in texts.iter().filter(|t| t.len() == len - 1) {
                for &s in &symbols {
                    let mut u = t.clone();
                    u.push(s);
                    next.push(u);
                }
            }
            texts.extend(next);
        }
        // Longer ones: a valid body, damaged once anywhere.
        let body = base64::engine::general_purpose::STANDARD.encode(b"tdbench decodes base64, eight at a time: 0123456789");
        for at in 0..body.len() {
            for s in [b'=', b'-', b'\n', b'A', 0x80] {
                let mut t = body.clone().into_bytes();
                t[at] = s;
                texts.push(t);
            }
        }
        for text in &texts {
            assert_eq!(decode(text).ok(), crate_decode(text), "{:?}", String::from_utf8_lossy(text));
        }
    }
}
