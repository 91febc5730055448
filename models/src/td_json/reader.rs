//! The pull reader: tokens are read where they lie in the input; numbers are parsed in place,
//! strings are copied (unescaped) once into the `String` the model keeps, base64 is decoded
//! straight into the model's `Vec<u8>`, and vectors are allocated at their final length.

use std::borrow::Cow;

use base64::Engine;

use super::JsonError;

/// Objects and arrays nest at most this deep (serde_json's limit too); deeper input is refused
/// rather than recursed into.
pub const MAX_DEPTH: u32 = 128;

/// Unescaped keys and type names longer than this cannot be names of the schema; they are kept
/// in their escaped form, which contains a `\` and so matches nothing.
const SCRATCH_LEN: usize = 128;

/// How the generated field loop treats an `@type` member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKey {
    /// Already read as the first member: another one is a duplicate.
    Consumed,
    /// Found by the slow path at this byte (the start of its key): skip that one, refuse others.
    At(usize),
    /// A field of a concrete type: TDLib (and serde's derived structs) ignore `@type` there.
    Ignore,
}

/// Room for a key or type name that had escapes in it, on the caller's stack.
pub struct KeyScratch {
    bytes: [u8; SCRATCH_LEN],
}

impl KeyScratch {
    #[inline]
    pub fn new() -> Self {
        KeyScratch { bytes: [0; SCRATCH_LEN] }
    }
}

impl Default for KeyScratch {
    fn default() -> Self {
        Self::new()
    }
}

/// A string token: where its content lies and what reading it will need.
struct StringToken {
    start: usize,
    end: usize,
    /// Length after unescaping, so the destination is allocated once at its final size.
    unescaped_len: usize,
    has_escapes: bool,
}

/// A number token; `magnitude` is `None` when the number has a fraction or exponent or does
/// not fit a u64.
struct NumberToken {
    start: usize,
    end: usize,
    negative: bool,
    is_integer: bool,
    magnitude: Option<u64>,
}

pub struct JsonReader<'a> {
    input: &'a [u8],
    pos: usize,
    depth: u32,
    /// Right after `{` or `[`: the next member comes without a comma.
    after_open: bool,
}

impl<'a> JsonReader<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        JsonReader { input, pos: 0, depth: 0, after_open: false }
    }

    /// The byte where reading stands.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Succeeds when only whitespace is left.
    pub fn finish(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error_here("trailing characters after the object")),
        }
    }

    pub fn error_at(&self, offset: usize, message: impl Into<Cow<'static, str>>) -> JsonError {
        JsonError { offset, message: message.into() }
    }

    fn error_here(&self, message: impl Into<Cow<'static, str>>) -> JsonError {
        self.error_at(self.pos.min(self.input.len()), message)
    }

    fn unexpected(&self, expected: &str) -> JsonError {
        match self.peek() {
            None => self.error_here(format!("unexpected end of input, expected {expected}")),
            Some(byte) => self.error_here(format!("expected {expected}, found {}", describe(byte))),
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    /// Skips whitespace and consumes `byte`, or fails naming what was expected.
    #[inline]
    fn expect(&mut self, byte: u8, expected: &str) -> Result<(), JsonError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn enter(&mut self) -> Result<(), JsonError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_here(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        self.after_open = true;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
        self.after_open = false;
    }

    // ---- objects ------------------------------------------------------------------------------

    /// Consumes `{`.
    #[inline]
    pub fn begin_object(&mut self) -> Result<(), JsonError> {
        self.expect(b'{', "an object")?;
        self.enter()
    }

    /// The next member's key (with the byte where it starts), its `:` consumed; `None` when the
    /// object ends (its `}` consumed). A key with escapes is unescaped into `scratch`.
    #[inline]
    pub fn next_key<'k>(&mut self, scratch: &'k mut KeyScratch) -> Result<Option<(usize, &'k [u8])>, JsonError>
    where
        'a: 'k,
    {
        self.skip_whitespace();
        let closes = self.peek() == Some(b'}');
        if !self.after_open && !closes {
            // Between members: a comma, then a key (a `}` after the comma is refused below).
            if self.peek() != Some(b',') {
                return Err(self.unexpected("`,` or `}`"));
            }
            self.pos += 1;
            self.skip_whitespace();
        } else if closes {
            self.pos += 1;
            self.leave();
            return Ok(None);
        }
        self.after_open = false;
        let key_at = self.pos;
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a key"));
        }
        let key = self.read_name(scratch)?;
        self.expect(b':', "`:`")?;
        Ok(Some((key_at, key)))
    }

    /// Reads the `@type` of an object of an abstract type: consumes `{`, then reads `@type` if it
    /// is the first member (TDLib always writes it first). Otherwise scans the members for it and
    /// rewinds, so the fields are read from the start with the `@type` member's position noted.
    /// `None` when the object has no `@type`.
    pub fn begin_typed_object<'k>(&mut self, scratch: &'k mut KeyScratch) -> Result<(Option<&'k [u8]>, TypeKey), JsonError>
    where
        'a: 'k,
    {
        self.begin_object()?;
        let members_start = self.pos;
        self.skip_whitespace();
        if self.input[self.pos..].starts_with(b"\"@type\"") {
            self.pos += b"\"@type\"".len();
            self.expect(b':', "`:`")?;
            self.after_open = false;
            let name = self.read_type_name(scratch)?;
            return Ok((Some(name), TypeKey::Consumed));
        }
        self.find_type_name(members_start, scratch)
    }

    /// The slow path of [`Self::begin_typed_object`]: `@type` is not the first member, or the
    /// first key is written with escapes.
    #[cold]
    fn find_type_name<'k>(&mut self, members_start: usize, scratch: &'k mut KeyScratch) -> Result<(Option<&'k [u8]>, TypeKey), JsonError>
    where
        'a: 'k,
    {
        let depth = self.depth;
        let mut key_scratch = KeyScratch::new();
        loop {
            let Some((key_at, key)) = self.next_key(&mut key_scratch)? else {
                return Ok((None, TypeKey::Consumed));
            };
            if key == b"@type" {
                let name = self.read_type_name(scratch)?;
                self.pos = members_start;
                self.depth = depth;
                self.after_open = true;
                return Ok((Some(name), TypeKey::At(key_at)));
            }
            self.skip_value()?;
        }
    }

    fn read_type_name<'k>(&mut self, scratch: &'k mut KeyScratch) -> Result<&'k [u8], JsonError>
    where
        'a: 'k,
    {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("the `@type` name as a string"));
        }
        self.read_name(scratch)
    }

    /// A string used as a name (key or `@type`): borrowed from the input when it has no escapes.
    #[inline]
    fn read_name<'k>(&mut self, scratch: &'k mut KeyScratch) -> Result<&'k [u8], JsonError>
    where
        'a: 'k,
    {
        let token = self.scan_string()?;
        let input: &'a [u8] = self.input;
        let raw = &input[token.start..token.end];
        if !token.has_escapes {
            if !raw.is_ascii() {
                self.check_utf8(raw, token.start)?;
            }
            return Ok(raw);
        }
        let text = self.unescape(&token)?;
        if text.len() > SCRATCH_LEN {
            return Ok(raw);
        }
        scratch.bytes[..text.len()].copy_from_slice(text.as_bytes());
        Ok(&scratch.bytes[..text.len()])
    }

    /// Handles an `@type` member met in the field loop, as `type_key` says.
    pub fn type_member(&mut self, key_at: usize, type_key: TypeKey) -> Result<(), JsonError> {
        match type_key {
            TypeKey::At(at) if at == key_at => self.skip_value(),
            TypeKey::Ignore => self.skip_value(),
            _ => Err(self.error_at(key_at, "duplicate field `@type`")),
        }
    }

    /// Reads a field's value into its slot; a second occurrence of the field is an error.
    #[inline]
    pub fn field<T>(
        &mut self,
        slot: &mut Option<T>,
        key_at: usize,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, JsonError>,
    ) -> Result<(), JsonError> {
        if slot.is_some() {
            return Err(self.error_at(key_at, format!("duplicate field `{name}`")));
        }
        *slot = Some(read(self)?);
        Ok(())
    }

    /// The error for an `@type` that is not a constructor of `expected`.
    #[cold]
    pub fn unknown_constructor(&self, name: &[u8], expected: &str) -> JsonError {
        let name = String::from_utf8_lossy(name);
        let message = if crate::ABSENT_TYPES.contains(&name.as_ref()) {
            crate::absent::absent_message(&name)
        } else if crate::CONSTRUCTORS.iter().any(|(known, _)| *known == name) {
            format!("`{name}` is not a constructor of `{expected}`")
        } else {
            format!("unknown @type `{name}` (not in the schema)")
        };
        self.error_here(message)
    }

    #[cold]
    pub fn missing_type(&self, expected: &str) -> JsonError {
        self.error_here(format!("missing `@type` in an object of type `{expected}`"))
    }

    #[cold]
    pub fn absent(&self, tl_name: &str) -> JsonError {
        self.error_here(crate::absent::absent_message(tl_name))
    }

    // ---- arrays -------------------------------------------------------------------------------

    /// Reads `[ element, ... ]` into a vector allocated once at its final length.
    pub fn vector<T>(&mut self, mut element: impl FnMut(&mut Self) -> Result<T, JsonError>) -> Result<Vec<T>, JsonError> {
        self.expect(b'[', "an array")?;
        self.enter()?;
        let mut items = Vec::with_capacity(self.count_elements::<T>());
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.leave();
            return Ok(items);
        }
        loop {
            items.push(element(self)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.leave();
                    return Ok(items);
                }
                _ => return Err(self.unexpected("`,` or `]`")),
            }
        }
    }

    /// How many elements the array starting here holds, by a quick scan that only tracks
    /// strings and brackets (the real parse validates). Capped so that malformed input cannot
    /// make the reservation grow beyond 64 times the array's bytes.
    fn count_elements<T>(&self) -> usize {
        let bytes = &self.input[self.pos..];
        let (mut depth, mut commas, mut any) = (0u32, 0usize, false);
        let mut i = 0;
        let mut end = bytes.len();
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    any = true;
                }
                b'[' | b'{' => {
                    depth += 1;
                    any = true;
                }
                b']' | b'}' if depth == 0 => {
                    end = i;
                    break;
                }
                b']' | b'}' => depth -= 1,
                b',' if depth == 0 => commas += 1,
                b' ' | b'\n' | b'\r' | b'\t' => {}
                _ => any = true,
            }
            i += 1;
        }
        let count = if any { commas + 1 } else { 0 };
        let limit = 64 * (end + 1) / std::mem::size_of::<T>().max(1);
        count.min(limit)
    }

    // ---- scalars ------------------------------------------------------------------------------

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

    fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
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
        let input: &'a [u8] = self.input;
        let text: Cow<'a, [u8]> = if token.has_escapes {
            Cow::Owned(self.unescape(&token)?.into_bytes())
        } else {
            Cow::Borrowed(&input[token.start..token.end])
        };
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

    fn parse_float(&self, token: &NumberToken) -> Result<f64, JsonError> {
        // The token is ASCII by construction.
        let text = std::str::from_utf8(&self.input[token.start..token.end]).map_err(|_| self.error_at(token.start, "invalid number"))?;
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(self.error_at(token.start, "number out of range")),
        }
    }

    fn integer_token(&mut self, expected: &'static str) -> Result<NumberToken, JsonError> {
        self.skip_whitespace();
        let token = self.number_token(expected)?;
        if !token.is_integer {
            return Err(self.error_at(token.start, format!("expected {expected}, found a floating-point number")));
        }
        Ok(token)
    }

    /// Scans a number by JSON's grammar (no leading zeros, digits after `.` and `e`).
    fn number_token(&mut self, expected: &str) -> Result<NumberToken, JsonError> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let mut magnitude = Some(0u64);
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.error_here("invalid number: leading zero"));
                }
            }
            Some(b'1'..=b'9') => {
                while let Some(digit @ b'0'..=b'9') = self.peek() {
                    magnitude = magnitude.and_then(|m| m.checked_mul(10)).and_then(|m| m.checked_add(u64::from(digit - b'0')));
                    self.pos += 1;
                }
            }
            _ if negative => return Err(self.error_here("invalid number")),
            _ => return Err(self.unexpected(expected)),
        }
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
        Ok(NumberToken { start, end: self.pos, negative, is_integer, magnitude: if is_integer { magnitude } else { None } })
    }

    fn digits(&mut self) -> Result<(), JsonError> {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error_here("invalid number: expected a digit"));
        }
        Ok(())
    }

    pub fn string(&mut self) -> Result<String, JsonError> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a string"));
        }
        let token = self.scan_string()?;
        if token.has_escapes {
            return self.unescape(&token);
        }
        let raw = &self.input[token.start..token.end];
        match std::str::from_utf8(raw) {
            Ok(text) => Ok(text.to_owned()),
            Err(e) => Err(self.error_at(token.start + e.valid_up_to(), "invalid UTF-8 in a string")),
        }
    }

    /// `bytes`: standard padded base64 decoded straight into a vector of the exact length. An
    /// array of byte values is accepted too, as the `json` codec does.
    pub fn bytes(&mut self) -> Result<Vec<u8>, JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => {}
            Some(b'[') => return self.vector(|r| r.int53().and_then(|v| u8::try_from(v).map_err(|_| r.error_here("a byte value above 255")))),
            _ => return Err(self.unexpected("bytes as a base64 string")),
        }
        let token = self.scan_string()?;
        let input: &'a [u8] = self.input;
        let text: Cow<'a, [u8]> = if token.has_escapes {
            Cow::Owned(self.unescape(&token)?.into_bytes())
        } else {
            let raw = &input[token.start..token.end];
            if !raw.is_ascii() {
                self.check_utf8(raw, token.start)?;
            }
            Cow::Borrowed(raw)
        };
        let padding = text.iter().rev().take(2).filter(|&&b| b == b'=').count();
        let len = (text.len() / 4 * 3).saturating_sub(padding);
        let mut out = vec![0u8; len];
        match BASE64.decode_slice(&*text, &mut out) {
            Ok(written) if written == len => Ok(out),
            Ok(_) => Err(self.error_at(token.start, "invalid base64: wrong length")),
            Err(e) => Err(self.error_at(token.start, format!("invalid base64: {e}"))),
        }
    }

    // ---- strings ------------------------------------------------------------------------------

    /// Scans the string starting at `"`: finds its end, checks its escapes, and computes its
    /// unescaped length. Rejects what serde_json rejects in a string it reads: control
    /// characters, unknown escapes, lone surrogates.
    #[inline]
    fn scan_string(&mut self) -> Result<StringToken, JsonError> {
        let start = self.pos + 1;
        let mut i = start;
        let mut removed = 0usize;
        let bytes = self.input;
        loop {
            // The common case: a run of bytes that need no attention.
            while i < bytes.len() && !NEEDS_ATTENTION[bytes[i] as usize] {
                i += 1;
            }
            match bytes.get(i) {
                None => {
                    self.pos = i;
                    return Err(self.error_here("unexpected end of input in a string"));
                }
                Some(b'"') => {
                    self.pos = i + 1;
                    let len = i - start;
                    return Ok(StringToken { start, end: i, unescaped_len: len - removed, has_escapes: removed > 0 });
                }
                Some(b'\\') => {
                    let (consumed, produced) = self.scan_escape(i)?;
                    // Every escape is longer than what it stands for, so `removed > 0`
                    // exactly when the string has escapes.
                    removed += consumed - produced;
                    i += consumed;
                }
                Some(_) => {
                    self.pos = i;
                    return Err(self.error_here("control character in a string"));
                }
            }
        }
    }

    /// Checks the escape at `at` (a `\`): returns (bytes consumed, UTF-8 bytes produced).
    fn scan_escape(&mut self, at: usize) -> Result<(usize, usize), JsonError> {
        match self.input.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok((2, 1)),
            Some(b'u') => {
                let unit = self.hex4(at + 2)?;
                match unit {
                    0xDC00..=0xDFFF => Err(self.error_at(at, "lone trailing surrogate in a \\u escape")),
                    0xD800..=0xDBFF => {
                        if self.input.get(at + 6) != Some(&b'\\') || self.input.get(at + 7) != Some(&b'u') {
                            return Err(self.error_at(at, "lone leading surrogate in a \\u escape"));
                        }
                        match self.hex4(at + 8)? {
                            0xDC00..=0xDFFF => Ok((12, 4)),
                            _ => Err(self.error_at(at, "lone leading surrogate in a \\u escape")),
                        }
                    }
                    0..=0x7F => Ok((6, 1)),
                    0x80..=0x7FF => Ok((6, 2)),
                    _ => Ok((6, 3)),
                }
            }
            None => Err(self.error_at(at, "unexpected end of input in an escape")),
            Some(_) => Err(self.error_at(at, "invalid escape")),
        }
    }

    fn hex4(&self, at: usize) -> Result<u16, JsonError> {
        let digits = self.input.get(at..at + 4).ok_or_else(|| self.error_at(at, "unexpected end of input in a \\u escape"))?;
        let mut unit = 0u16;
        for &digit in digits {
            let value = match digit {
                b'0'..=b'9' => digit - b'0',
                b'a'..=b'f' => digit - b'a' + 10,
                b'A'..=b'F' => digit - b'A' + 10,
                _ => return Err(self.error_at(at, "invalid hex digit in a \\u escape")),
            };
            unit = unit << 4 | u16::from(value);
        }
        Ok(unit)
    }

    /// The content of a scanned string with escapes, unescaped into a `String` of its exact size.
    fn unescape(&self, token: &StringToken) -> Result<String, JsonError> {
        let raw = &self.input[token.start..token.end];
        let text = std::str::from_utf8(raw).map_err(|e| self.error_at(token.start + e.valid_up_to(), "invalid UTF-8 in a string"))?;
        let mut out = String::with_capacity(token.unescaped_len);
        let mut rest = text;
        while let Some(backslash) = rest.find('\\') {
            out.push_str(&rest[..backslash]);
            let escape = &rest.as_bytes()[backslash + 1..];
            let (c, len) = match escape[0] {
                b'b' => ('\u{8}', 2),
                b'f' => ('\u{c}', 2),
                b'n' => ('\n', 2),
                b'r' => ('\r', 2),
                b't' => ('\t', 2),
                b'u' => {
                    let unit = u32::from(hex_value(&escape[1..5]));
                    if (0xD800..0xDC00).contains(&unit) {
                        let low = u32::from(hex_value(&escape[7..11]));
                        (char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)).unwrap_or('\u{fffd}'), 12)
                    } else {
                        (char::from_u32(unit).unwrap_or('\u{fffd}'), 6)
                    }
                }
                other => (char::from(other), 2),
            };
            out.push(c);
            rest = &rest[backslash + len..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn check_utf8(&self, raw: &[u8], start: usize) -> Result<(), JsonError> {
        std::str::from_utf8(raw).map(|_| ()).map_err(|e| self.error_at(start + e.valid_up_to(), "invalid UTF-8 in a string"))
    }

    // ---- skipping -----------------------------------------------------------------------------

    /// Skips one value of any shape (an unknown field), checking it as strictly as a read would:
    /// an unknown array or object is skipped to its own end, never to the enclosing one's.
    pub fn skip_value(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => {
                let token = self.scan_string()?;
                let raw = &self.input[token.start..token.end];
                if !raw.is_ascii() {
                    self.check_utf8(raw, token.start)?;
                }
                Ok(())
            }
            Some(b'{') => {
                self.begin_object()?;
                let mut scratch = KeyScratch::new();
                while self.next_key(&mut scratch)?.is_some() {
                    self.skip_value()?;
                }
                Ok(())
            }
            Some(b'[') => {
                self.pos += 1;
                self.enter()?;
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    self.leave();
                    return Ok(());
                }
                loop {
                    self.skip_value()?;
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            self.leave();
                            return Ok(());
                        }
                        _ => return Err(self.unexpected("`,` or `]`")),
                    }
                }
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                let token = self.number_token("a value")?;
                // serde_json refuses a number it cannot hold as a finite double.
                if token.magnitude.is_none() {
                    self.parse_float(&token)?;
                }
                Ok(())
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Bytes that end a plain run inside a string: the quote, the backslash, control characters.
static NEEDS_ATTENTION: [bool; 256] = {
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

fn hex_value(digits: &[u8]) -> u16 {
    digits.iter().fold(0u16, |unit, &d| {
        let value = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => d - b'A' + 10,
        };
        unit << 4 | u16::from(value)
    })
}

/// An integer token as i64, if it fits.
#[inline]
fn signed(token: &NumberToken) -> Option<i64> {
    let magnitude = token.magnitude?;
    if token.negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// What `str::parse::<i64>` accepts (an optional sign, then at least one digit), without
/// building a `str`.
fn parse_i64(text: &[u8]) -> Option<i64> {
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

fn describe(byte: u8) -> String {
    match byte {
        b'{' => "`{`".into(),
        b'[' => "an array".into(),
        b'"' => "a string".into(),
        b'-' | b'0'..=b'9' => "a number".into(),
        b't' | b'f' => "a boolean".into(),
        b'n' => "null".into(),
        0x20..=0x7e => format!("`{}`", char::from(byte)),
        _ => format!("byte 0x{byte:02x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int64_text_follows_str_parse() {
        for text in ["0", "-0", "+5", "007", "-9223372036854775808", "9223372036854775807", "", "-", "+", "1 ", "9223372036854775808", "-9223372036854775809", "1_0"] {
            assert_eq!(parse_i64(text.as_bytes()), text.parse::<i64>().ok(), "{text:?}");
        }
    }

    #[test]
    fn strings_unescape_to_their_exact_length() {
        let input = br#""a\n\u00e9\u65e5\ud83d\ude00\/""#;
        let mut r = JsonReader::new(input);
        let s = r.string().unwrap();
        assert_eq!(s, "a\n\u{e9}\u{65e5}\u{1f600}/");
        assert_eq!(s.capacity(), s.len());
    }

    #[test]
    fn lone_surrogates_are_refused() {
        for input in [&br#""\ud83d""#[..], br#""\ude00""#, br#""\ud83dx""#, br#""\ud83d\u0041""#] {
            assert!(JsonReader::new(input).string().is_err(), "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn skipping_an_unknown_array_or_object_stops_at_its_own_end() {
        let input = br#"{"x":[1,{"y":[2,"]}"]}],"z":{"a":{}}, "w": 3}"#;
        let mut r = JsonReader::new(input);
        r.begin_object().unwrap();
        let mut scratch = KeyScratch::new();
        let mut keys = Vec::new();
        while let Some((_, key)) = r.next_key(&mut scratch).unwrap() {
            keys.push(String::from_utf8(key.to_vec()).unwrap());
            r.skip_value().unwrap();
        }
        assert_eq!(keys, ["x", "z", "w"]);
        r.finish().unwrap();
    }

    #[test]
    fn elements_are_counted_before_the_vector_is_allocated() {
        let input = br#"[ "a,]", "b\"]", "c" ]"#;
        let v = JsonReader::new(input).vector(|r| r.string()).unwrap();
        assert_eq!(v, ["a,]", "b\"]", "c"]);
        assert_eq!(v.capacity(), 3);
    }
}
