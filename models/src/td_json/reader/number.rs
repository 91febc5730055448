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

    #[inline]
    pub fn bool(&mut self) -> Result<bool, JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|_| true),
            Some(b'f') => self.literal(b"false").map(|_| false),
            _ => Err(self.unexpected("a boolean")),
        }
    }

    #[inline]
    pub fn int32(&mut self) -> Result<i32, JsonError> {
        let token = self.integer_token("an int32")?;
        signed(&token).and_then(|v| i32::try_from(v).ok()).ok_or_else(|| self.error_at(token.start, "number out of range for int32"))
    }

    /// `int53`: a plain JSON number.
    #[inline]
    pub fn int53(&mut self) -> Result<i64, JsonError> {
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

    pub fn double(&mut self) -> Result<f64, JsonError> {
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
