//! The pull reader: tokens are read where they lie in the input; numbers are parsed in place,
//! strings are copied (unescaped) once into the `String` the model keeps, base64 is decoded
//! straight into the model's `Vec<u8>`, and vectors are allocated at their final length.

use std::borrow::Cow;

use base64::Engine;

use super::JsonError;

/// Objects and arrays nest at most this deep (serde_json's limit too); deeper input is refused
/// rather than recursed into.
pub const MAX_DEPTH: u32 = 128;

/// [`JsonReader::next_field`]'s answer after the object's last member.
pub const FIELD_END: usize = usize::MAX - 2;
/// [`JsonReader::next_field`]'s answer for an `@type` member.
pub const FIELD_TYPE: usize = usize::MAX - 1;
/// [`JsonReader::next_field`]'s answer for a member that is not a field of the object.
pub const FIELD_UNKNOWN: usize = usize::MAX;

/// Array elements read onto the stack per recursive call of [`JsonReader::vector`].
const CHUNK: usize = 8;

/// Stack the reader may use before arrays stop being read in chunks on the stack and the rest
/// of an array is counted ahead instead; `tests/json_td.rs` reads a 200,000-element array on a
/// 512 KB thread stack. Nesting is bounded separately by [`MAX_DEPTH`].
const CHUNK_STACK_BUDGET: usize = 256 * 1024;

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

/// The `@type` of an object: the name, and its [`tl_parser::name_hash`] for the dispatch.
pub struct TypeName<'a> {
    pub text: Cow<'a, [u8]>,
    pub hash: u32,
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
    /// Where the key of the member being read starts, for errors about it.
    key_at: usize,
    /// The address of a local in [`JsonReader::new`]: where the reader's stack use starts.
    stack_base: usize,
}

impl<'a> JsonReader<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        let base = 0u8;
        let stack_base = std::ptr::addr_of!(base) as usize;
        JsonReader { input, pos: 0, depth: 0, after_open: false, key_at: 0, stack_base }
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
        JsonError::new(offset, message)
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

    /// Consumes `{` of an object of a concrete type, and its `@type` member if that comes first
    /// (as TDLib writes it). `@type` is ignored there, as TDLib and serde's derived structs
    /// ignore it: the field's type says what the object is.
    #[inline]
    pub fn begin_concrete_object(&mut self) -> Result<(), JsonError> {
        self.begin_object()?;
        if self.leading_type_key()? {
            self.skip_whitespace();
            if self.peek() == Some(b'"') { self.type_name()?; } else { self.skip_value()?; }
        }
        Ok(())
    }

    /// Right after `{`: consumes `"@type":` when the object starts with it, as TDLib writes.
    #[inline]
    fn leading_type_key(&mut self) -> Result<bool, JsonError> {
        self.skip_whitespace();
        if self.input.get(self.pos..self.pos + 7) != Some(b"\"@type\"") {
            return Ok(false);
        }
        self.pos += 7;
        self.expect(b':', "`:`")?;
        self.after_open = false;
        Ok(true)
    }

    /// Moves to the next member of the object being read: consumes the `,` before it, or the
    /// `}` that ends the object (then `None`). Returns where the member's key starts.
    #[inline]
    fn next_member(&mut self) -> Result<Option<usize>, JsonError> {
        self.skip_whitespace();
        let closes = self.peek() == Some(b'}');
        if closes {
            self.pos += 1;
            self.leave();
            return Ok(None);
        }
        if !self.after_open {
            // Between members: a comma, then a key (a `}` after the comma is refused below).
            if self.peek() != Some(b',') {
                return Err(self.unexpected("`,` or `}`"));
            }
            self.pos += 1;
            self.skip_whitespace();
        }
        self.after_open = false;
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a key"));
        }
        Ok(Some(self.pos))
    }

    /// The next member of an object whose field keys are `fields` (in declaration order, each
    /// written as TDLib writes it: `name":`): which field it is — an index into `fields`,
    /// [`FIELD_TYPE`] for `@type`, [`FIELD_UNKNOWN`] — or [`FIELD_END`] after the object's `}`.
    /// The key and its `:` are consumed; where the key started is kept for errors about it.
    ///
    /// TDLib writes fields in declaration order, compactly, leaving out null objects, so the
    /// key is first compared with the fields from the one after the field read last
    /// (`expected`) on, as bytes up to and including the `:`; only when none matches is the key
    /// read and looked up. Both comparisons are exact: an unknown key is never taken for a
    /// known one.
    #[inline]
    pub fn next_field(&mut self, fields: &[&[u8]], expected: &mut usize) -> Result<usize, JsonError> {
        let input = self.input;
        let mut at = self.pos;
        if input.get(at) == Some(&b'}') {
            self.pos = at + 1;
            self.leave();
            return Ok(FIELD_END);
        }
        let separator = if self.after_open { b'"' } else { b',' };
        if input.get(at) == Some(&separator) {
            at += usize::from(!self.after_open);
            if input.get(at) == Some(&b'"') {
                let rest = &input[at + 1..];
                let start = (*expected).min(fields.len());
                if let Some(offset) = fields[start..].iter().position(|key| starts_with(rest, key)) {
                    let field = start + offset;
                    self.key_at = at;
                    self.pos = at + 1 + fields[field].len();
                    self.after_open = false;
                    *expected = field + 1;
                    return Ok(field);
                }
            }
        }
        self.next_field_slow(fields, expected)
    }

    /// [`Self::next_field`] for anything but a compact, expected key: whitespace, `}`, a key
    /// out of order, unknown or written with escapes.
    #[inline(never)]
    fn next_field_slow(&mut self, fields: &[&[u8]], expected: &mut usize) -> Result<usize, JsonError> {
        let Some(key_at) = self.next_member()? else {
            return Ok(FIELD_END);
        };
        self.key_at = key_at;
        let field = self.look_up_key(fields)?;
        if field < fields.len() {
            *expected = field + 1;
        }
        self.expect(b':', "`:`")?;
        Ok(field)
    }

    /// Reads a key that is not the expected one and finds it among `fields` (which end in `":`).
    fn look_up_key(&mut self, fields: &[&[u8]]) -> Result<usize, JsonError> {
        let key = self.name()?;
        Ok(if &*key == b"@type" {
            FIELD_TYPE
        } else {
            fields.iter().position(|name| name.len() == key.len() + 2 && name.starts_with(&key)).unwrap_or(FIELD_UNKNOWN)
        })
    }

    /// Reads the `@type` of an object of an abstract type: consumes `{`, then reads `@type` if it
    /// is the first member (TDLib always writes it first). Otherwise scans the members for it and
    /// rewinds, so the fields are read from the start with the `@type` member's position noted.
    /// `None` when the object has no `@type`.
    #[inline]
    pub fn begin_typed_object(&mut self) -> Result<(Option<TypeName<'a>>, TypeKey), JsonError> {
        self.begin_object()?;
        let members_start = self.pos;
        if self.leading_type_key()? {
            return Ok((Some(self.type_name()?), TypeKey::Consumed));
        }
        self.find_type_name(members_start)
    }

    /// The slow path of [`Self::begin_typed_object`]: `@type` is not the first member, or its
    /// key is written with escapes.
    #[cold]
    fn find_type_name(&mut self, members_start: usize) -> Result<(Option<TypeName<'a>>, TypeKey), JsonError> {
        let depth = self.depth;
        while let Some(key_at) = self.next_member()? {
            let key = self.name()?;
            self.expect(b':', "`:`")?;
            if &*key == b"@type" {
                let name = self.type_name()?;
                self.pos = members_start;
                self.depth = depth;
                self.after_open = true;
                return Ok((Some(name), TypeKey::At(key_at)));
            }
            self.skip_value()?;
        }
        Ok((None, TypeKey::Consumed))
    }

    /// The `@type` name, hashed while it is scanned.
    #[inline]
    fn type_name(&mut self) -> Result<TypeName<'a>, JsonError> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("the `@type` name as a string"));
        }
        let start = self.pos + 1;
        let input: &'a [u8] = self.input;
        let mut hash = tl_parser::NAME_HASH_SEED;
        let mut i = start;
        while let Some(&byte) = input.get(i) {
            if !NAME_BYTE[byte as usize] {
                break;
            }
            hash = tl_parser::name_hash_step(hash, byte);
            i += 1;
        }
        if input.get(i) == Some(&b'"') {
            self.pos = i + 1;
            return Ok(TypeName { text: Cow::Borrowed(&input[start..i]), hash });
        }
        // Escapes or characters no schema name has: read it in full, then hash it.
        let text = self.name()?;
        let hash = tl_parser::name_hash(&text);
        Ok(TypeName { text, hash })
    }

    /// A string used as a name (key or `@type`): borrowed from the input unless it has escapes.
    #[inline]
    fn name(&mut self) -> Result<Cow<'a, [u8]>, JsonError> {
        let start = self.pos + 1;
        let input: &'a [u8] = self.input;
        // Names of the schema are plain ASCII identifiers: find the closing quote directly.
        let mut i = start;
        while input.get(i).is_some_and(|&byte| NAME_BYTE[byte as usize] || byte == b'@') {
            i += 1;
        }
        if input.get(i) == Some(&b'"') {
            self.pos = i + 1;
            return Ok(Cow::Borrowed(&input[start..i]));
        }
        let token = self.scan_string()?;
        self.content(&token)
    }

    /// Handles an `@type` member met in the field loop, as `type_key` says.
    pub fn type_member(&mut self, type_key: TypeKey) -> Result<(), JsonError> {
        match type_key {
            TypeKey::At(at) if at == self.key_at => self.skip_value(),
            TypeKey::Ignore => self.skip_value(),
            _ => Err(self.error_at(self.key_at, "duplicate field `@type`")),
        }
    }

    /// Reads a field's value into its slot; a second occurrence of the field is an error.
    #[inline]
    pub fn field<T>(
        &mut self,
        slot: &mut Option<T>,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, JsonError>,
    ) -> Result<(), JsonError> {
        if slot.is_some() {
            return Err(self.error_at(self.key_at, format!("duplicate field `{name}`")));
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

    /// Reads `[ element, ... ]` into a vector allocated once at its final length, without a
    /// pass to count the elements first: they are read in chunks onto the stack, one chunk per
    /// recursive call, and the vector is allocated at the closing `]` when the count is known,
    /// then filled on the way back. See [`Self::rest_of_vector`].
    pub fn vector<T>(&mut self, mut element: impl FnMut(&mut Self) -> Result<T, JsonError>) -> Result<Vec<T>, JsonError> {
        if self.begin_array()? {
            return Ok(Vec::new());
        }
        let mut items = self.rest_of_vector(&mut element, 0)?;
        // Chunks were appended last chunk first, each in reverse: the whole is reversed.
        items.reverse();
        Ok(items)
    }

    /// Reads up to [`CHUNK`] elements onto the stack, then the rest of the array (recursively),
    /// and returns all elements from `before` on in reverse order in a vector with room for
    /// `before` more. Once the reader has used [`CHUNK_STACK_BUDGET`] of stack, the rest of the
    /// array is counted by a quick scan instead.
    fn rest_of_vector<T>(
        &mut self,
        element: &mut impl FnMut(&mut Self) -> Result<T, JsonError>,
        before: usize,
    ) -> Result<Vec<T>, JsonError> {
        if self.stack_used() > CHUNK_STACK_BUDGET {
            return self.counted_rest_of_vector(element, before);
        }
        self.chunk_of_vector(element, before)
    }

    /// How much stack lies between the reader's creation and here: the address of a local,
    /// compared, never dereferenced.
    #[inline]
    fn stack_used(&self) -> usize {
        let here = 0u8;
        self.stack_base.abs_diff(std::ptr::addr_of!(here) as usize)
    }

    fn chunk_of_vector<T>(
        &mut self,
        element: &mut impl FnMut(&mut Self) -> Result<T, JsonError>,
        before: usize,
    ) -> Result<Vec<T>, JsonError> {
        let mut chunk: [Option<T>; CHUNK] = [const { None }; CHUNK];
        let mut read = 0;
        let mut items = loop {
            chunk[read] = Some(element(self)?);
            read += 1;
            if self.end_of_element()? {
                break Vec::with_capacity(before + read);
            }
            if read == CHUNK {
                break self.rest_of_vector(element, before + CHUNK)?;
            }
        };
        items.extend(chunk.into_iter().take(read).rev().flatten());
        Ok(items)
    }

    /// The rest of an array when the stack budget is spent: counted ahead, read in order, then
    /// reversed to match what [`Self::rest_of_vector`] returns.
    #[cold]
    fn counted_rest_of_vector<T>(
        &mut self,
        element: &mut impl FnMut(&mut Self) -> Result<T, JsonError>,
        before: usize,
    ) -> Result<Vec<T>, JsonError> {
        let mut items = Vec::with_capacity(before + self.count_elements::<T>());
        loop {
            items.push(element(self)?);
            if self.end_of_element()? {
                items.reverse();
                return Ok(items);
            }
        }
    }

    /// Consumes `[`; `true` when the array is empty (its `]` consumed too).
    #[inline]
    fn begin_array(&mut self) -> Result<bool, JsonError> {
        self.expect(b'[', "an array")?;
        self.enter()?;
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.leave();
            return Ok(true);
        }
        Ok(false)
    }

    /// After an array element: `true` at the closing `]` (consumed), `false` after a `,`.
    #[inline]
    fn end_of_element(&mut self) -> Result<bool, JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(b']') => {
                self.pos += 1;
                self.leave();
                Ok(true)
            }
            _ => Err(self.unexpected("`,` or `]`")),
        }
    }

    /// How many more elements the array holds from here, by a quick scan that only tracks
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
                    // To the closing quote: one not preceded by an odd run of backslashes.
                    loop {
                        match bytes[i + 1..].iter().position(|&b| b == b'"') {
                            None => return 0,
                            Some(at) => i += 1 + at,
                        }
                        let backslashes = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
                        if backslashes % 2 == 0 {
                            break;
                        }
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
    #[inline]
    fn number_token(&mut self, expected: &str) -> Result<NumberToken, JsonError> {
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
        let text = self.content(&token)?;
        let padding = text.iter().rev().take(2).filter(|&&b| b == b'=').count();
        let len = (text.len() / 4 * 3).saturating_sub(padding);
        let mut out = vec![0u8; len];
        match crate::TDLIB_BASE64.decode_slice(&*text, &mut out) {
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
            // The common case: a run of bytes that need no attention, eight at a time.
            while let Some(chunk) = bytes.get(i..i + 8) {
                if needs_attention(u64::from_le_bytes(chunk.try_into().expect("8 bytes"))) {
                    break;
                }
                i += 8;
            }
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
    #[inline]
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

    #[inline]
    fn hex4(&self, at: usize) -> Result<u16, JsonError> {
        match self.input.get(at..at + 4) {
            Some(&[a, b, c, d]) => {
                let value = [a, b, c, d].iter().fold(0u32, |unit, &digit| unit << 4 | HEX_VALUE[digit as usize]);
                // A digit that is not hex sets bits above the 16 of a unit.
                u16::try_from(value).map_err(|_| self.error_at(at, "invalid hex digit in a \\u escape"))
            }
            _ => Err(self.error_at(at, "unexpected end of input in a \\u escape")),
        }
    }

    /// The content of a scanned string with escapes, unescaped into a `String` of its exact size.
    fn unescape(&self, token: &StringToken) -> Result<String, JsonError> {
        let raw = &self.input[token.start..token.end];
        let mut out = Vec::with_capacity(token.unescaped_len);
        let mut i = 0;
        loop {
            // A run up to the next escape, byte by byte: runs between escapes are short.
            let run = raw[i..].iter().position(|&b| b == b'\\').unwrap_or(raw.len() - i);
            out.extend_from_slice(&raw[i..i + run]);
            i += run;
            let Some(&kind) = raw.get(i + 1) else { break };
            // Escapes were checked by `scan_string`: digits are hex, surrogates come in pairs.
            let (code, len) = match kind {
                b'u' => match hex_value(&raw[i + 2..i + 6]) {
                    high @ 0xD800..=0xDBFF => (0x10000 + ((high - 0xD800) << 10) + (hex_value(&raw[i + 8..i + 12]) - 0xDC00), 12),
                    unit => (unit, 6),
                },
                b'b' => (0x08, 2),
                b'f' => (0x0c, 2),
                b'n' => (u32::from(b'\n'), 2),
                b'r' => (u32::from(b'\r'), 2),
                b't' => (u32::from(b'\t'), 2),
                other => (u32::from(other), 2),
            };
            push_utf8(&mut out, code);
            i += len;
        }
        // The literal runs are the input's bytes: UTF-8 is checked once, here, on the result.
        String::from_utf8(out).map_err(|e| self.error_at(token.start, format!("invalid UTF-8 in a string ({e})")))
    }

    /// A scanned string's content as bytes: unescaped when it has escapes, else borrowed from
    /// the input (checked for UTF-8).
    fn content(&self, token: &StringToken) -> Result<Cow<'a, [u8]>, JsonError> {
        if token.has_escapes {
            return Ok(Cow::Owned(self.unescape(token)?.into_bytes()));
        }
        self.checked_raw(token).map(Cow::Borrowed)
    }

    /// A scanned string's bytes as they stand in the input, checked for UTF-8.
    fn checked_raw(&self, token: &StringToken) -> Result<&'a [u8], JsonError> {
        let input: &'a [u8] = self.input;
        let raw = &input[token.start..token.end];
        if !raw.is_ascii() {
            std::str::from_utf8(raw).map_err(|e| self.error_at(token.start + e.valid_up_to(), "invalid UTF-8 in a string"))?;
        }
        Ok(raw)
    }

    // ---- skipping -----------------------------------------------------------------------------

    /// Skips one value of any shape (an unknown field), checking it as strictly as a read would:
    /// an unknown array or object is skipped to its own end, never to the enclosing one's.
    pub fn skip_value(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => {
                let token = self.scan_string()?;
                // Its escapes were checked by the scan: only the literal bytes are left.
                self.checked_raw(&token).map(|_| ())
            }
            Some(b'{') => {
                self.begin_object()?;
                while self.next_member()?.is_some() {
                    self.name()?;
                    self.expect(b':', "`:`")?;
                    self.skip_value()?;
                }
                Ok(())
            }
            Some(b'[') => {
                if !self.begin_array()? {
                    loop {
                        self.skip_value()?;
                        if self.end_of_element()? {
                            break;
                        }
                    }
                }
                Ok(())
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

/// Bytes of TL identifiers: letters, digits, `_`.
static NAME_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_');
        b += 1;
    }
    table
};

/// Whether any of the eight bytes in `word` is a quote, a backslash or a control character
/// (the classic "has a zero byte" and "has a byte below n" tests: exact about whether there
/// is one, which is all the caller asks before going byte by byte).
#[inline(always)]
fn needs_attention(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control != 0
}

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

/// Hex digit values; 0x10000 for a byte that is not one, so that four digits folded into a u32
/// exceed u16 whenever any of them is invalid.
static HEX_VALUE: [u32; 256] = {
    let mut table = [0x10000u32; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            d @ b'0'..=b'9' => (d - b'0') as u32,
            d @ b'a'..=b'f' => (d - b'a' + 10) as u32,
            d @ b'A'..=b'F' => (d - b'A' + 10) as u32,
            _ => 0x10000,
        };
        b += 1;
    }
    table
};

/// Appends the UTF-8 encoding of a code point (a scalar value: `scan_string` refuses lone
/// surrogates). By hand rather than `char::encode_utf8`: that path (a checked conversion, a
/// temporary, a copy) cost the escape-dense option lane 14% more instructions per decode.
#[inline]
fn push_utf8(out: &mut Vec<u8>, code: u32) {
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (code >> 6) as u8, 0x80 | (code & 0x3F) as u8]),
        0x800..=0xFFFF => out.extend_from_slice(&[0xE0 | (code >> 12) as u8, 0x80 | ((code >> 6) & 0x3F) as u8, 0x80 | (code & 0x3F) as u8]),
        _ => out.extend_from_slice(&[
            0xF0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3F) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
    }
}

/// The value of four hex digits already checked by [`JsonReader::hex4`].
fn hex_value(digits: &[u8]) -> u32 {
    digits.iter().fold(0u32, |unit, &d| unit << 4 | HEX_VALUE[d as usize])
}

/// `haystack.starts_with(needle)` for the short keys of the schema, without a call to `memcmp`:
/// whole 8-byte words, then the tail as one overlapping word (4-byte words, or byte by byte,
/// when shorter).
#[inline(always)]
fn starts_with(haystack: &[u8], needle: &[u8]) -> bool {
    let n = needle.len();
    let Some(hay) = haystack.get(..n) else {
        return false;
    };
    if n < 8 {
        if n >= 4 {
            let word = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
            return word(hay, 0) == word(needle, 0) && word(hay, n - 4) == word(needle, n - 4);
        }
        return hay.iter().zip(needle).all(|(a, b)| a == b);
    }
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let mut i = 0;
    while i + 8 <= n {
        if word(hay, i) != word(needle, i) {
            return false;
        }
        i += 8;
    }
    i == n || word(hay, n - 8) == word(needle, n - 8)
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

/// Decimal digits as a u64, if they fit.
fn parse_u64(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |m, &d| m.checked_mul(10)?.checked_add(u64::from(d - b'0')))
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
    fn words_that_need_attention() {
        for byte in 0..=255u8 {
            for at in 0..8 {
                let mut word = [b'a'; 8];
                word[at] = byte;
                assert_eq!(needs_attention(u64::from_le_bytes(word)), NEEDS_ATTENTION[byte as usize], "byte {byte:#x} at {at}");
            }
        }
    }

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
        let fields: &[&[u8]] = &[b"w\":", b"z\":"];
        let mut expected = 0;
        let mut seen = Vec::new();
        loop {
            match r.next_field(fields, &mut expected).unwrap() {
                FIELD_END => break,
                field => seen.push(field),
            }
            r.skip_value().unwrap();
        }
        assert_eq!(seen, [FIELD_UNKNOWN, 1, 0]);
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
