//! Scalars: literals, integers parsed in place (int64 from its quoted decimal string without a
//! `String`), doubles correctly rounded by std.

use super::{JsonError, JsonReader, NumberToken};

impl<'a> JsonReader<'a> {
    /// `null` (consumed) → `None`; anything else is read by `read`.
    #[inline]
    pub fn optional<T>(&mut self, read: impl FnOnce(&mut Self) -> Result<T, JsonError>) -> Result<Option<T>, JsonError> {
        self.skip_whitespace();
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            return Ok(None);
        }
        read(self).map(Some)
    }

    /// `true`, `false`, `null`: inline (every flag of every object is one), the error out of line.
    #[inline(always)]
    pub(super) fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.invalid_literal(word))
        }
    }

    #[cold]
    #[inline(never)]
    fn invalid_literal(&self, word: &'static [u8]) -> JsonError {
        self.error_here(format!("invalid literal, expected `{}`", String::from_utf8_lossy(word)))
    }

    #[inline(always)]
    pub fn bool(&mut self) -> Result<bool, JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|_| true),
            Some(b'f') => self.literal(b"false").map(|_| false),
            _ => Err(self.unexpected("a boolean")),
        }
    }

    #[inline(always)]
    pub fn int32(&mut self) -> Result<i32, JsonError> {
        if let Some((value, end)) = integer_prefix(self.input, self.pos)
            && let Ok(value) = i32::try_from(value)
        {
            self.pos = end;
            return Ok(value);
        }
        self.int32_general()
    }

    /// [`Self::int32`] for what the word-at-a-time path leaves: out of line, so that the common
    /// path saves no registers for it.
    #[inline(never)]
    fn int32_general(&mut self) -> Result<i32, JsonError> {
        let token = self.integer_token("an int32")?;
        signed(&token).and_then(|v| i32::try_from(v).ok()).ok_or_else(|| self.error_at(token.start, "number out of range for int32"))
    }

    /// `int53`: a plain JSON number.
    #[inline(always)]
    pub fn int53(&mut self) -> Result<i64, JsonError> {
        if let Some((value, end)) = integer_prefix(self.input, self.pos) {
            self.pos = end;
            return Ok(value);
        }
        self.int53_general()
    }

    /// [`Self::int53`] for what the word-at-a-time path leaves, out of line.
    #[inline(never)]
    fn int53_general(&mut self) -> Result<i64, JsonError> {
        let token = self.integer_token("an int53")?;
        signed(&token).ok_or_else(|| self.error_at(token.start, "number out of range for int53"))
    }

    /// `int64`: TDLib writes a decimal string; a plain number is accepted too, as the `json`
    /// codec does.
    pub fn int64(&mut self) -> Result<i64, JsonError> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            let token = self.integer_token("an int64 as a decimal string")?;
            return signed(&token).ok_or_else(|| self.error_at(token.start, "number out of range for int64"));
        }
        // TDLib's own form, `"` digits `"`, read in place; anything else (a sign, escapes,
        // junk) the general way, which says what is wrong.
        let input = self.input;
        let first = self.pos + 1;
        let mut i = first;
        let mut magnitude = 0u64;
        while let Some(&digit @ b'0'..=b'9') = input.get(i) {
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
            i += 1;
        }
        if i > first && i - first < 19 && input.get(i) == Some(&b'"') {
            self.pos = i + 1;
            // Fewer than 19 digits: below 10^18, no overflow.
            return Ok(magnitude as i64);
        }
        let token = self.scan_string()?;
        let text = self.content(&token)?;
        parse_i64(&text).ok_or_else(|| self.error_at(token.start, "invalid int64: expected a decimal string"))
    }

    #[inline(always)]
    pub fn double(&mut self) -> Result<f64, JsonError> {
        if let Some((value, end)) = decimal_prefix(self.input, self.pos) {
            self.pos = end;
            return Ok(value);
        }
        self.double_general()
    }

    /// [`Self::double`] for what the word-at-a-time path leaves, out of line.
    #[inline(never)]
    fn double_general(&mut self) -> Result<f64, JsonError> {
        self.skip_whitespace();
        let token = self.number_token("a double")?;
        match (token.is_integer, token.magnitude) {
            (true, Some(m)) => Ok(if token.negative { -(m as f64) } else { m as f64 }),
            _ => match exact_decimal(&self.input[token.start..token.end]) {
                Some(value) => Ok(value),
                None => self.parse_float(&token),
            },
        }
    }

    pub(super) fn parse_float(&self, token: &NumberToken) -> Result<f64, JsonError> {
        // The token is ASCII by construction.
        let text = std::str::from_utf8(&self.input[token.start..token.end]).map_err(|_| self.error_at(token.start, "invalid number"))?;
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(self.error_at(token.start, "number out of range")),
        }
    }

    #[inline(always)]
    pub(super) fn integer_token(&mut self, expected: &'static str) -> Result<NumberToken, JsonError> {
        self.skip_whitespace();
        let token = self.number_token(expected)?;
        if !token.is_integer {
            return Err(self.not_an_integer(&token, expected));
        }
        Ok(token)
    }

    #[cold]
    #[inline(never)]
    fn not_an_integer(&self, token: &NumberToken, expected: &'static str) -> JsonError {
        self.error_at(token.start, format!("expected {expected}, found a floating-point number"))
    }

    /// Scans a number by JSON's grammar (no leading zeros, digits after `.` and `e`). Always
    /// inline: as a call (it was one) every integer paid a frame and a token returned in memory.
    #[inline(always)]
    pub(super) fn number_token(&mut self, expected: &str) -> Result<NumberToken, JsonError> {
        let input = self.input;
        let start = self.pos;
        let negative = input.get(start) == Some(&b'-');
        let first = start + usize::from(negative);
        let mut i = first;
        let mut magnitude = 0u64;
        while let Some(&digit @ b'0'..=b'9') = input.get(i) {
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
            i += 1;
        }
        let digits = i - first;
        if digits == 0 {
            self.pos = first;
            return Err(if negative { self.error_here("invalid number") } else { self.unexpected(expected) });
        }
        if digits > 1 && input[first] == b'0' {
            self.pos = first + 1;
            return Err(self.error_here("invalid number: leading zero"));
        }
        self.pos = i;
        let fits = digits < 20 || (digits == 20 && parse_u64(&input[first..i]).is_some());
        let mut is_integer = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.digits()?;
            is_integer = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            self.digits()?;
            is_integer = false;
        }
        let magnitude = (is_integer && fits).then_some(magnitude);
        Ok(NumberToken { start, end: self.pos, negative, is_integer, magnitude })
    }

    pub(super) fn digits(&mut self) -> Result<(), JsonError> {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error_here("invalid number: expected a digit"));
        }
        Ok(())
    }
}

/// Powers of ten a double holds exactly.
const EXACT_POWERS_OF_TEN: [f64; 23] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/// A number token without an exponent whose digits, read as one integer, stay below 2^53 and
/// whose fraction has at most 22 digits: that integer and the power of ten are both exact
/// doubles, so one division rounds correctly (Clinger's fast path, which std also takes, after
/// more work). TDLib writes doubles as `%f`, six decimals (`"self_destruct_in":0.000000`); this
/// skips `str::parse` for them. `None` for anything else.
fn exact_decimal(token: &[u8]) -> Option<f64> {
    let (negative, digits) = match token.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, token),
    };
    let mut mantissa = 0u64;
    let mut fraction_digits = None;
    for (i, &byte) in digits.iter().enumerate() {
        match byte {
            b'0'..=b'9' => mantissa = mantissa.checked_mul(10)?.checked_add(u64::from(byte - b'0'))?,
            b'.' if fraction_digits.is_none() => fraction_digits = Some(digits.len() - i - 1),
            _ => return None,
        }
    }
    if mantissa >= 1 << 53 {
        return None;
    }
    let value = mantissa as f64 / EXACT_POWERS_OF_TEN.get(fraction_digits.unwrap_or(0))?;
    Some(if negative { -value } else { value })
}

/// A JSON integer of up to 16 digits at `at`, read eight digits at a time, and where it ends;
/// `None` for anything else (whitespace first, a fraction or exponent, a leading zero, more
/// digits, fewer than 17 bytes of input left), which the general path reads and judges.
///
/// Why: TDLib's ids and dates have 10–13 digits, and the general path's loop paid a compare, a
/// multiply and an add per digit (`message`: 14 int32 and 8 int53 fields, 15% of its decode).
/// Here each word of eight bytes is tested for digits as a whole and converted with three
/// multiplies (the SWAR conversion simdjson uses).
#[inline(always)]
fn integer_prefix(input: &[u8], at: usize) -> Option<(i64, usize)> {
    let negative = *input.get(at)? == b'-';
    let first = at + usize::from(negative);
    let words = input.get(first..first + 17)?;
    let high = u64::from_le_bytes(words[..8].try_into().expect("8 bytes"));
    let count = leading_digits(high);
    if count == 0 || (count > 1 && words[0] == b'0') {
        return None;
    }
    let (magnitude, end) = if count < 8 {
        (eight_digits(high << (8 * (8 - count))), first + count)
    } else {
        let low = u64::from_le_bytes(words[8..16].try_into().expect("8 bytes"));
        let more = leading_digits(low);
        if more == 8 && words[16].is_ascii_digit() {
            return None;
        }
        let low_value = if more == 0 { 0 } else { eight_digits(low << (8 * (8 - more))) };
        (eight_digits(high) * POWERS_OF_TEN[more] + low_value, first + 8 + more)
    };
    if let Some(b'.' | b'e' | b'E') = input.get(end) {
        return None;
    }
    // At most 16 digits: below 2^63, so the negation cannot overflow.
    let value = magnitude as i64;
    Some((if negative { -value } else { value }, end))
}

/// A decimal as TDLib writes a double (`%f`: up to 8 digits, a point, up to 8 more;
/// `"self_destruct_in":0.000000`) at `at`, read a word at a time, and where it ends; `None` for
/// anything else, which the general path reads. The value is [`exact_decimal`]'s — the digits
/// as one integer below 2^53 divided by an exact power of ten, one correctly rounded division —
/// without its loop over the bytes after the scan's own.
#[inline(always)]
fn decimal_prefix(input: &[u8], at: usize) -> Option<(f64, usize)> {
    let negative = *input.get(at)? == b'-';
    let first = at + usize::from(negative);
    let words = input.get(first..first + 18)?;
    let whole_word = u64::from_le_bytes(words[..8].try_into().expect("8 bytes"));
    let whole = leading_digits(whole_word);
    if whole == 0 || whole == 8 || (whole > 1 && words[0] == b'0') || words[whole] != b'.' {
        return None;
    }
    let fraction_word = u64::from_le_bytes(words[whole + 1..whole + 9].try_into().expect("8 bytes"));
    let fraction = leading_digits(fraction_word);
    let end = first + whole + 1 + fraction;
    if fraction == 0 || matches!(input.get(end), Some(b'0'..=b'9' | b'e' | b'E')) {
        return None;
    }
    let whole_value = eight_digits(whole_word << (8 * (8 - whole)));
    let fraction_value = eight_digits(fraction_word << (8 * (8 - fraction)));
    // At most 7 + 8 digits: below 10^15 < 2^53, an exact double, as is the power of ten.
    let mantissa = whole_value * POWERS_OF_TEN[fraction] + fraction_value;
    let value = mantissa as f64 / EXACT_POWERS_OF_TEN[fraction];
    Some((if negative { -value } else { value }, end))
}

const POWERS_OF_TEN: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// How many of the eight bytes of `word`, from its first (lowest), are ASCII digits. XOR with
/// `'0'` maps the digits, and only them, to 0–9; a byte then stops the run when its low seven bits
/// plus 0x76 reach 0x80 (it is 10 or more) or its own high bit is set. The sum is at most 0xF5,
/// so no byte carries into the next, and every stop found is exact. Seven operations, where
/// testing the high nibble and the carry of `+6` separately took twelve.
#[inline(always)]
fn leading_digits(word: u64) -> usize {
    let offsets = word ^ 0x3030_3030_3030_3030;
    let stops = (((offsets & 0x7F7F_7F7F_7F7F_7F7F) + 0x7676_7676_7676_7676) | offsets) & 0x8080_8080_8080_8080;
    stops.trailing_zeros() as usize / 8
}

/// The value of eight ASCII digits, the first in the lowest byte (zero bytes read as leading
/// zeros): pairs, then quads, then the whole, one multiply each.
#[inline(always)]
fn eight_digits(word: u64) -> u64 {
    let value = word & 0x0F0F_0F0F_0F0F_0F0F;
    // The products overflow into bits that are shifted out or masked off: wrapping on purpose.
    let value = value.wrapping_mul(10 << 8 | 1) >> 8;
    let value = (value & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 << 16 | 1) >> 16;
    (value & 0x0000_FFFF_0000_FFFF).wrapping_mul(10_000 << 32 | 1) >> 32
}

/// An integer token as i64, if it fits.
#[inline]
pub(super) fn signed(token: &NumberToken) -> Option<i64> {
    let magnitude = token.magnitude?;
    if token.negative { 0i64.checked_sub_unsigned(magnitude) } else { i64::try_from(magnitude).ok() }
}

/// Decimal digits as a u64, if they fit.
pub(super) fn parse_u64(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |m, &d| m.checked_mul(10)?.checked_add(u64::from(d - b'0')))
}

/// What `str::parse::<i64>` accepts (an optional sign, then at least one digit), without
/// building a `str`.
pub(super) fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut magnitude = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative { 0i64.checked_sub_unsigned(magnitude) } else { i64::try_from(magnitude).ok() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::td_json::JsonReader;

    /// The eight-digit path agrees with the general one, value, end and refusal alike: every
    /// length of digits, signs, leading zeros, what may follow, and input ending close behind.
    #[test]
    fn integers_read_a_word_at_a_time_as_the_general_path_reads_them() {
        let digits = "98765432109876543210";
        let mut texts: Vec<String> = Vec::new();
        for len in 0..=20 {
            for body in [&digits[..len], &"10000000000000000000"[..len], &"00700000000000000000"[..len]] {
                for sign in ["", "-", "+", " "] {
                    for after in ["}", ",\"x\":1}", ".5}", "e3}", "E-1}", " }", "x", "", "1234567890123456789"] {
                        texts.push(format!("{sign}{body}{after}"));
                    }
                }
            }
        }
        for text in &texts {
            let input = text.as_bytes();
            for at in [0, 1] {
                let Some(prefix) = input.get(at..) else { continue };
                let general = general_integer(prefix);
                match integer_prefix(input, at) {
                    Some((value, end)) => assert_eq!(general, Some((value, end - at)), "{text:?} at {at}"),
                    // Refused here: the general path reads it, or it is not a plain integer
                    // of at most 16 digits with 17 bytes to spare.
                    None => {
                        let digit_count =
                            prefix.iter().skip(usize::from(prefix.first() == Some(&b'-'))).take_while(|b| b.is_ascii_digit()).count();
                        let short = prefix.len() < 17 + usize::from(prefix.first() == Some(&b'-'));
                        assert!(general.is_none() || digit_count > 16 || short, "{text:?} at {at}: {general:?}");
                    }
                }
            }
        }
        for word in 0..=u16::MAX {
            let bytes = [word as u8, (word >> 8) as u8, b'1', b'2', b'3', b'4', b'5', b'6'];
            let expected = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            assert_eq!(leading_digits(u64::from_le_bytes(bytes)), expected, "{bytes:?}");
        }
        // Every byte at every place, behind digits and before bytes that could carry into it.
        for place in 0..8 {
            for byte in 0..=u8::MAX {
                for fill in [b'9', 0xFF, b'/'] {
                    let mut bytes = [fill; 8];
                    bytes[..place].fill(b'7');
                    bytes[place] = byte;
                    let expected = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
                    assert_eq!(leading_digits(u64::from_le_bytes(bytes)), expected, "{bytes:?}");
                }
            }
        }
    }

    /// The word-at-a-time decimal agrees bit for bit with the general path, or leaves the text
    /// to it: every split of up to 9 + 9 digits, signs, leading zeros, what may follow.
    #[test]
    fn decimals_read_a_word_at_a_time_as_the_general_path_reads_them() {
        let digits = "918273645546372819";
        let mut taken = 0;
        for whole in 0..=9 {
            for fraction in 0..=9 {
                for body in [
                    format!("{}.{}", &digits[..whole], &digits[9..9 + fraction]),
                    format!("0{}.{}", &digits[..whole], &"000000000"[..fraction]),
                ] {
                    for sign in ["", "-"] {
                        for after in ["}", ",\"x\":1}", "e3}", "E-1}", "5}", ".5}", " }", "", "12345678901234567890"] {
                            // Room behind the number, as inside an object, except at the end.
                            let room = if after.is_empty() { "" } else { ",\"pad\":\"0123456789012345\"}" };
                            let text = format!("{sign}{body}{after}{room}");
                            let input = text.as_bytes();
                            let mut r = JsonReader::new(input);
                            let general = r.double_general().ok().map(|v| (v.to_bits(), r.pos));
                            if let Some((value, end)) = decimal_prefix(input, 0) {
                                assert_eq!(Some((value.to_bits(), end)), general, "{text:?}");
                                taken += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(taken > 500, "{taken}");
        assert_eq!(decimal_prefix(b"0.000000,\"x\":0.000000}", 0).map(|(v, end)| (v.to_bits(), end)), Some((0f64.to_bits(), 8)));
        assert_eq!(decimal_prefix(b"-0.000000,\"x\":0.000000}", 0).map(|(v, end)| (v.to_bits(), end)), Some(((-0f64).to_bits(), 9)));
    }

    /// A plain integer as the general path reads it: its value and length, `None` when it is
    /// not one (a fraction, an exponent, a fault, a value past i64).
    fn general_integer(input: &[u8]) -> Option<(i64, usize)> {
        let mut r = JsonReader::new(input);
        let token = r.number_token("a number").ok()?;
        if !token.is_integer {
            return None;
        }
        Some((signed(&token)?, token.end))
    }

    #[test]
    fn plain_decimals_read_exactly_as_str_parse_reads_them() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut taken = 0;
        for round in 0..100_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let whole = rng % 10u64.pow((round % 12) as u32 + 1);
            let places = (rng >> 40) as usize % 24;
            let fraction = (rng >> 8) % 10u64.pow(places.min(19) as u32);
            let sign = if rng & 1 == 0 { "" } else { "-" };
            let text = if places == 0 { format!("{sign}{whole}.0") } else { format!("{sign}{whole}.{fraction:0places$}") };
            let expected: f64 = text.parse().unwrap();
            if let Some(value) = exact_decimal(text.as_bytes()) {
                assert_eq!(value.to_bits(), expected.to_bits(), "{text}");
                taken += 1;
            }
        }
        // Many of these take the fast path (long mantissas do not) and none may differ from std.
        assert!(taken > 30_000, "{taken}");
        for (text, expected) in [
            ("0.000000", Some(0.0)),
            ("-0.000000", Some(-0.0)),
            ("1.5", Some(1.5)),
            ("9007199254740993.0", None),
            ("1e5", None),
            ("0.1", Some(0.1)),
        ] {
            assert_eq!(exact_decimal(text.as_bytes()).map(f64::to_bits), expected.map(f64::to_bits), "{text}");
        }
    }
}
