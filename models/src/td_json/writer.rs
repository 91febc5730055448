//! The writer: TDLib's exact bytes, appended to the caller's buffer with no other allocation.
//!
//! What TDLib's `to_json` writes: compact; int64 as a quoted decimal (also in vectors); doubles
//! in fixed notation with six decimals; bytes as padded standard base64; strings with `"`, `\`,
//! `\b`, `\f`, `\n`, `\r`, `\t` escaped by name, other control bytes as `\u00XX`, every non-ASCII
//! character as lowercase `\uXXXX` (surrogate pairs above the BMP), `/` and DEL as they are.

use std::io::Write;

use base64::Engine;

use super::plain::plain_ascii_end;

pub struct JsonWriter<'o> {
    out: &'o mut Vec<u8>,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// What a byte inside a string becomes: 0 = itself, 1 = `\u00XX`, 2 = non-ASCII (escaped per
/// character), otherwise the letter of a named escape.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = 1;
        b += 1;
    }
    while b < 256 {
        if b >= 0x80 {
            table[b] = 2;
        }
        b += 1;
    }
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Two decimal digits per lookup: "00" to "99".
static DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut n = 0;
    while n < 100 {
        table[2 * n] = b'0' + (n / 10) as u8;
        table[2 * n + 1] = b'0' + (n % 10) as u8;
        n += 1;
    }
    table
};

/// 0 to 999 in decimal, left-aligned in three bytes, the fourth byte the digit count.
static SMALL_DECIMALS: [[u8; 4]; 1000] = {
    let mut table = [[0u8; 4]; 1000];
    let mut n = 0;
    while n < 1000 {
        let (hundreds, tens, ones) = (b'0' + (n / 100) as u8, b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8);
        table[n] = if n < 10 {
            [ones, 0, 0, 1]
        } else if n < 100 {
            [tens, ones, 0, 2]
        } else {
            [hundreds, tens, ones, 3]
        };
        n += 1;
    }
    table
};

impl<'o> JsonWriter<'o> {
    pub fn new(out: &'o mut Vec<u8>) -> Self {
        JsonWriter { out }
    }

    /// Literal JSON text: the generated code passes `{"@type":"name"` and `,"field":` as one
    /// constant each.
    #[inline]
    pub fn raw(&mut self, text: &[u8]) {
        self.out.extend_from_slice(text);
    }

    #[inline]
    pub fn bool(&mut self, value: bool) {
        self.raw(if value { b"true" } else { b"false" });
    }

    /// In 32-bit arithmetic: cheaper divisions than an i64's, as serde_json's `itoa` does (it
    /// wrote a vector of ints faster than json-td did with the i64 path).
    #[inline]
    pub fn int32(&mut self, value: i32) {
        let mut buffer = [0u8; 11];
        self.out.extend_from_slice(decimal32(value, &mut buffer));
    }

    #[inline]
    pub fn int53(&mut self, value: i64) {
        self.integer(value);
    }

    #[inline]
    pub fn int64(&mut self, value: i64) {
        self.out.push(b'"');
        self.integer(value);
        self.out.push(b'"');
    }

    fn integer(&mut self, value: i64) {
        let mut buffer = [0u8; 20];
        self.out.extend_from_slice(decimal(value, &mut buffer));
    }

    /// `1.500000`: what TDLib's `%f`-style formatting gives, by Rust's exact decimal expansion.
    pub fn double(&mut self, value: f64) {
        // Writing to a Vec cannot fail.
        let _ = write!(self.out, "{value:.6}");
    }

    pub fn string(&mut self, value: &str) {
        let bytes = value.as_bytes();
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let escape = ESCAPE[bytes[i] as usize];
            if escape == 0 {
                // A plain byte. Two in a row start a run, found a word (long runs a block) at a
                // time: byte by byte, plain ASCII text cost 11 instructions a byte. A lone one
                // (`":"` between escapes) is passed as it is: a word test there cost more.
                i += 1;
                if bytes.get(i).is_some_and(|&b| ESCAPE[b as usize] == 0) {
                    i = plain_ascii_end(bytes, i + 1);
                }
                continue;
            }
            self.out.extend_from_slice(&bytes[start..i]);
            match escape {
                1 => self.unit_escape(u16::from(bytes[i])),
                2 => {
                    // A non-ASCII character starts here (`value` is UTF-8): escape its UTF-16 units.
                    let c = value[i..].chars().next().expect("a character starts at a non-ASCII lead byte");
                    let mut units = [0u16; 2];
                    for &unit in c.encode_utf16(&mut units).iter() {
                        self.unit_escape(unit);
                    }
                    i += c.len_utf8() - 1;
                }
                letter => self.out.extend_from_slice(&[b'\\', letter]),
            }
            i += 1;
            start = i;
        }
        self.out.extend_from_slice(&bytes[start..]);
        self.out.push(b'"');
    }

    fn unit_escape(&mut self, unit: u16) {
        self.out.extend_from_slice(&unicode_escape(unit));
    }

    /// Padded standard base64, encoded in place at the end of the output.
    pub fn bytes(&mut self, value: &[u8]) {
        let start = self.out.len();
        let len = value.len().div_ceil(3) * 4;
        self.out.resize(start + len + 2, b'"');
        let written =
            crate::TDLIB_BASE64.encode_slice(value, &mut self.out[start + 1..start + 1 + len]).expect("the slice has the encoded length");
        debug_assert_eq!(written, len);
    }

    /// `[a,b,...]` of int32s. The output grows once by the longest the vector can be and is cut
    /// back at the end, so each number's digits go straight into place: no capacity check, no
    /// `memcpy` call of a few bytes and no staging buffer per element, which
    /// [`JsonWriter::vector`] with [`JsonWriter::int32`] pays (json-td wrote the vector-int lane
    /// slower than serde_json with it, with fewer instructions).
    ///
    /// (Tried and dropped, each measured side by side with this in the gate: writing back to
    /// front, every number as all ten digits with no branch on its length, leading zeros left
    /// in the free room: 21% slower. Front to back with no branch on the length — ten digits
    /// as five pairs staged in an array and copied with one fixed-size copy: 79% slower; ten
    /// digits formed in registers, shifted by the digit count and stored as two words: 95%
    /// slower, with only 9–18% more instructions, so a stall, not work.)
    pub fn int32_vector(&mut self, items: &[i32]) {
        let start = self.out.len();
        self.out.resize(start + 2 + items.len() * 12, 0);
        let room = &mut self.out[start..];
        room[0] = b'[';
        let mut at = 1;
        for (i, &value) in items.iter().enumerate() {
            if i > 0 {
                room[at] = b',';
                at += 1;
            }
            let window: &mut [u8; 11] = (&mut room[at..at + 11]).try_into().expect("11 bytes");
            // Below 1000 (counts, small ids, most of a typical vector): the digits come from a
            // table as one 4-byte store, its fourth byte the length, left in the free room where
            // the next comma or the closing bracket overwrites it.
            if let Ok(small) = u16::try_from(value)
                && let Some(entry) = SMALL_DECIMALS.get(usize::from(small))
            {
                window[..4].copy_from_slice(entry);
                at += usize::from(entry[3]);
                continue;
            }
            at += decimal32_in_place(value, window);
        }
        room[at] = b']';
        self.out.truncate(start + at + 1);
    }

    /// `[a,b,...]`, each element written by `element`.
    #[inline]
    pub fn vector<T>(&mut self, items: &[T], mut element: impl FnMut(&mut Self, &T)) {
        self.out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            element(self, item);
        }
        self.out.push(b']');
    }
}

/// `value` in decimal, written two digits per step at the end of `buffer` (i64::MIN takes all
/// 20 bytes); the serde glue formats int64 with it too.
pub fn decimal(value: i64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut at = buffer.len();
    let mut n = value.unsigned_abs();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buffer[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        at -= 2;
        buffer[at..at + 2].copy_from_slice(&DIGIT_PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        at -= 1;
        buffer[at] = b'0' + n as u8;
    }
    if value < 0 {
        at -= 1;
        buffer[at] = b'-';
    }
    &buffer[at..]
}

/// [`decimal`] for an int32, in 32-bit arithmetic (`-2147483648` takes all 11 bytes).
///
/// (Tried and dropped: all digits of a word made at once by multiplying with reciprocals and
/// written as one 16-byte block cut to length. No `memcpy` call, but the 16-byte read of a block
/// just written in smaller stores waits for them: vector-int encode 8% slower in the gate.)
pub fn decimal32(value: i32, buffer: &mut [u8; 11]) -> &[u8] {
    let mut at = buffer.len();
    let mut n = value.unsigned_abs();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buffer[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        at -= 2;
        buffer[at..at + 2].copy_from_slice(&DIGIT_PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        at -= 1;
        buffer[at] = b'0' + n as u8;
    }
    if value < 0 {
        at -= 1;
        buffer[at] = b'-';
    }
    &buffer[at..]
}

/// How many decimal digits `n` has, from its highest set bit and one addition: entry `j` of the
/// table, for the numbers with `j` as their highest bit, is `(d + 1) << 32` less `10^d`, where `d`
/// is the digit count of `2^j`, so the addition carries into the top word exactly when `n` has
/// one digit more than `2^j` (Kendall Willets' method). `u32::ilog10` took some 60 instructions.
fn decimal_digits(n: u32) -> usize {
    static TABLE: [u64; 32] = {
        let mut table = [0u64; 32];
        let mut j = 0;
        while j < 32 {
            let (mut digits, mut power) = (1u32, 10u64);
            while power <= 1 << j {
                digits += 1;
                power *= 10;
            }
            table[j] = if digits < 10 { ((digits as u64 + 1) << 32) - power } else { (digits as u64) << 32 };
            j += 1;
        }
        table
    };
    ((u64::from(n) + TABLE[(n | 1).ilog2() as usize]) >> 32) as usize
}

/// [`decimal32`] written from the start of `window`; returns its length.
fn decimal32_in_place(value: i32, window: &mut [u8; 11]) -> usize {
    let mut n = value.unsigned_abs();
    let negative = usize::from(value < 0);
    let len = negative + decimal_digits(n);
    let mut at = len;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        window[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        window[at - 2..at].copy_from_slice(&DIGIT_PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        window[at - 1] = b'0' + n as u8;
    }
    if negative == 1 {
        window[0] = b'-';
    }
    len
}

/// `\uXXXX` with lowercase hex, as TDLib writes a UTF-16 unit (also used by the `json` codec's
/// formatter, so both writers escape alike by construction).
pub fn unicode_escape(unit: u16) -> [u8; 6] {
    let hex = |shift: u16| HEX[usize::from((unit >> shift) & 0xf)];
    [b'\\', b'u', hex(12), hex(8), hex(4), hex(0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(write: impl FnOnce(&mut JsonWriter)) -> String {
        let mut out = Vec::new();
        write(&mut JsonWriter::new(&mut out));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers() {
        for value in [0, 7, -7, 10, 99, 100, -100, 123456789, i64::MIN, i64::MAX] {
            assert_eq!(written(|w| w.int53(value)), value.to_string());
        }
        let mut edges = vec![0, 1, -1, i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1];
        for digits in 1..=10u32 {
            let p = 10i64.pow(digits);
            for v in [p - 1, p, p + 1, -p + 1, -p, -p - 1] {
                edges.extend(i32::try_from(v));
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            edges.push((state >> 32) as i32 >> (state % 31));
        }
        for value in &edges {
            assert_eq!(written(|w| w.int32(*value)), value.to_string());
        }
        let text = |values: &[i32]| format!("[{}]", values.iter().map(i32::to_string).collect::<Vec<_>>().join(","));
        // Every number the table of small ones holds and its neighbours, longest first, so
        // that each one's free room is overwritten by a shorter one.
        let small: Vec<i32> = (-5..1100).rev().collect();
        for values in [&edges[..], &small, &[], &[i32::MIN], &[i32::MIN; 50], &[0, -1, 9, 10, 99, 100]] {
            let mut out = b"prefix".to_vec();
            JsonWriter::new(&mut out).int32_vector(values);
            assert_eq!(out, [&b"prefix"[..], text(values).as_bytes()].concat());
        }
        assert_eq!(written(|w| w.int64(-5)), "\"-5\"");
    }

    #[test]
    fn digit_counts() {
        for n in (0..=10u32).flat_map(|k| 10u64.pow(k).checked_sub(1).into_iter().chain([10u64.pow(k), 10u64.pow(k) + 1])) {
            let Ok(n) = u32::try_from(n) else { continue };
            assert_eq!(decimal_digits(n), n.to_string().len(), "{n}");
        }
        for j in 0..32 {
            for n in [(1u32 << j) - 1, 1u32 << j] {
                assert_eq!(decimal_digits(n), n.to_string().len(), "{n}");
            }
        }
        assert_eq!(decimal_digits(u32::MAX), 10);
    }

    #[test]
    fn strings_escape_as_tdlib_does() {
        assert_eq!(written(|w| w.string("a\"b\\c")), r#""a\"b\\c""#);
        assert_eq!(written(|w| w.string("\u{8}\u{c}\n\r\t\u{1}\u{1f}")), r#""\b\f\n\r\t\u0001\u001f""#);
        assert_eq!(written(|w| w.string("a/b\u{7f}")), "\"a/b\u{7f}\"");
        assert_eq!(written(|w| w.string("café 日本 😀!")), r#""caf\u00e9 \u65e5\u672c \ud83d\ude00!""#);
    }

    /// Each character as TDLib escapes it, one at a time: what the run scans must agree with.
    fn escaped_one_by_one(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                ' '..='\u{7f}' => out.push(c),
                _ => {
                    for unit in c.encode_utf16(&mut [0; 2]) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn plain_runs_of_every_length_end_where_an_escape_starts() {
        // Runs long enough for words and blocks, each ended at every position by each kind of
        // byte that needs an escape, and runs of one plain byte between escapes.
        for len in [0, 1, 2, 7, 8, 9, 33, 64, 100, 130] {
            for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', '\u{7f}', '\u{e9}', '\u{65e5}', '\u{1f600}'] {
                for at in 0..=len {
                    let text: String = (0..len).map(|i| if i == at { special } else { (b'a' + (i % 26) as u8) as char }).collect();
                    assert_eq!(written(|w| w.string(&text)), escaped_one_by_one(&text), "{text:?}");
                }
            }
        }
        let sparse = "\"a\":\"\u{e9}\"x\u{1}y\tz".repeat(5);
        assert_eq!(written(|w| w.string(&sparse)), escaped_one_by_one(&sparse));
    }

    #[test]
    fn bytes_and_doubles() {
        assert_eq!(written(|w| w.bytes(b"")), "\"\"");
        assert_eq!(written(|w| w.bytes(b"ab")), "\"YWI=\"");
        assert_eq!(written(|w| w.bytes(b"abc")), "\"YWJj\"");
        assert_eq!(written(|w| w.double(1.5)), "1.500000");
        assert_eq!(written(|w| w.double(-2.25)), "-2.250000");
    }
}
