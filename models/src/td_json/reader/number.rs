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

    pub(super) fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error_here(format!("invalid literal, expected `{}`", String::from_utf8_lossy(word))))
        }
    }

    pub fn bool(&mut self) -> Result<bool, JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|_| true),
            Some(b'f') => self.literal(b"false").map(|_| false),
            _ => Err(self.unexpected("a boolean")),
        }
    }

    pub fn int32(&mut self) -> Result<i32, JsonError> {
        let token = self.integer_token("an int32")?;
        signed(&token).and_then(|v| i32::try_from(v).ok()).ok_or_else(|| self.error_at(token.start, "number out of range for int32"))
    }

    /// `int53`: a plain JSON number.
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
        let token = self.scan_string()?;
        let text = self.content(&token)?;
        parse_i64(&text).ok_or_else(|| self.error_at(token.start, "invalid int64: expected a decimal string"))
    }

    pub fn double(&mut self) -> Result<f64, JsonError> {
        self.skip_whitespace();
        let token = self.number_token("a double")?;
        match (token.is_integer, token.magnitude) {
            (true, Some(m)) => Ok(if token.negative { -(m as f64) } else { m as f64 }),
            _ => self.parse_float(&token),
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

    pub(super) fn integer_token(&mut self, expected: &'static str) -> Result<NumberToken, JsonError> {
        self.skip_whitespace();
        let token = self.number_token(expected)?;
        if !token.is_integer {
            return Err(self.error_at(token.start, format!("expected {expected}, found a floating-point number")));
        }
        Ok(token)
    }

    /// Scans a number by JSON's grammar (no leading zeros, digits after `.` and `e`).
    #[inline]
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
