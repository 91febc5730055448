//! Objects: `{`, `@type` read first (or found by a rescan), members matched against the
//! fields expected next, and the names the generated dispatch hashes.

use std::borrow::Cow;

use crate::td_json::plain::plain_ascii_stops;

use super::{FIELD_END, FIELD_TYPE, FIELD_UNKNOWN, JsonError, JsonReader, TypeKey, TypeName};

impl<'a> JsonReader<'a> {
    /// Consumes `{`.
    #[inline]
    pub fn begin_object(&mut self) -> Result<(), JsonError> {
        self.expect(b'{', "an object")?;
        self.enter()
    }

    /// Consumes `{` of an object of a concrete type, and its `@type` member if that comes first
    /// (as TDLib writes it). `@type` is ignored there, as TDLib and serde's derived structs
    /// ignore it: the field's type says what the object is.
    ///
    /// `typed_open` is how TDLib opens this type's objects, `{"@type":"name"` (the generated
    /// reader passes its own): when the input starts so, it is taken in one compare of constant
    /// bytes, where the compact open and the scan of the name that follows it took about 40
    /// instructions for each of `message`'s concrete objects. The depth is checked once the `{`
    /// is consumed, as on every other path, so errors name the same offset.
    #[inline(always)]
    pub fn begin_concrete_object(&mut self, typed_open: &[u8]) -> Result<(), JsonError> {
        if self.open_exactly(typed_open, typed_open.len())? {
            return Ok(());
        }
        self.begin_other_concrete_object()
    }

    /// [`Self::begin_concrete_object`] for any other opening: another name, whitespace, or
    /// `@type` later or not at all.
    #[inline(never)]
    fn begin_other_concrete_object(&mut self) -> Result<(), JsonError> {
        if self.compact_typed_open()? {
            return self.skip_type_name();
        }
        self.begin_object()?;
        if self.leading_type_key()? {
            self.skip_whitespace();
            if self.peek() == Some(b'"') {
                self.skip_type_name()?;
            } else {
                self.skip_value()?;
            }
        }
        Ok(())
    }

    /// Consumes an `@type` name that is not needed: scanned as [`Self::type_name`] scans it, a
    /// word at a time, but not hashed.
    #[inline]
    fn skip_type_name(&mut self) -> Result<(), JsonError> {
        let input = self.input;
        let mut i = self.pos + 1;
        while let Some(chunk) = input.get(i..i + 8) {
            let stops = plain_ascii_stops(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
            if stops == 0 {
                i += 8;
                continue;
            }
            i += stops.trailing_zeros() as usize / 8;
            if input[i] == b'"' {
                self.pos = i + 1;
                return Ok(());
            }
            break;
        }
        self.name().map(drop)
    }

    /// Consumes `{"@type":` when the object starts exactly so, as TDLib writes every object,
    /// and leaves the reader at the name's opening quote. One compare of ten constant bytes,
    /// where the general path reads `{`, the key and `:` a token at a time, skipping whitespace
    /// before each: on `message` that took 45 instructions per abstract object's open (the name
    /// aside), this takes 26, and a concrete object's open went from 67 to 43. The depth is
    /// checked once the `{` is consumed, as [`Self::begin_object`] checks it, so errors name the
    /// same offset on both paths.
    #[inline(always)]
    fn compact_typed_open(&mut self) -> Result<bool, JsonError> {
        const TYPED_OPEN: &[u8] = b"{\"@type\":\"";
        // The name's opening quote is left for the name's reader.
        self.open_exactly(TYPED_OPEN, TYPED_OPEN.len() - 1)
    }

    /// When the input starts with all of `open` (a `{` and what TDLib writes after it), consumes
    /// its first `take` bytes and returns `true`; otherwise consumes nothing. The one body behind
    /// both exact opens, [`Self::compact_typed_open`] and [`Self::begin_concrete_object`]: the
    /// depth is checked right after the `{`, as [`Self::begin_object`] checks it, so an error
    /// names the same offset on every path.
    #[inline(always)]
    fn open_exactly(&mut self, open: &[u8], take: usize) -> Result<bool, JsonError> {
        if !self.input.get(self.pos..).is_some_and(|rest| starts_with(rest, open)) {
            return Ok(false);
        }
        self.pos += 1;
        self.enter()?;
        self.pos += take - 1;
        self.after_open = false;
        Ok(true)
    }

    /// Right after `{`: consumes `"@type":` when the object starts with it, as TDLib writes.
    #[inline]
    pub(super) fn leading_type_key(&mut self) -> Result<bool, JsonError> {
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
    pub(super) fn next_member(&mut self) -> Result<Option<usize>, JsonError> {
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

    /// Consumes the object's `}` when it comes next, as after a compact object read in
    /// declaration order: inline, where [`Self::next_field`] (which finds it too) is a call.
    #[inline(always)]
    pub fn end_object(&mut self) -> bool {
        if self.input.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            self.leave();
            return true;
        }
        false
    }

    /// Consumes `member` — the separator and key of a field as TDLib writes them, `,"name":` —
    /// when it comes next: the generated field readers try each field in declaration order with
    /// it before they fall back to [`Self::next_field`]. `member` is a constant there, so the
    /// separator, the quotes and the name are one run of immediate compares. Where the error
    /// paths need the key's position, [`Self::next_field`] has read the key and noted it.
    #[inline(always)]
    pub fn expect_key(&mut self, member: &[u8]) -> bool {
        if self.after_open {
            return self.expect_first_key(member);
        }
        if self.input.get(self.pos..).is_some_and(|rest| starts_with(rest, member)) {
            self.pos += member.len();
            return true;
        }
        false
    }

    /// [`Self::expect_key`] right after `{`, where no comma comes first: an object whose
    /// `@type` is not its first member (TDLib always writes it first).
    #[inline(never)]
    fn expect_first_key(&mut self, member: &[u8]) -> bool {
        let key = &member[1..];
        if self.input.get(self.pos..).is_some_and(|rest| starts_with(rest, key)) {
            self.pos += key.len();
            self.after_open = false;
            return true;
        }
        false
    }

    /// [`Self::next_field`] for anything but a compact, expected key: whitespace, `}`, a key
    /// out of order, unknown or written with escapes.
    #[inline(never)]
    pub(super) fn next_field_slow(&mut self, fields: &[&[u8]], expected: &mut usize) -> Result<usize, JsonError> {
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
    pub(super) fn look_up_key(&mut self, fields: &[&[u8]]) -> Result<usize, JsonError> {
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
        if self.compact_typed_open()? {
            return Ok((Some(self.quoted_type_name()?), TypeKey::Consumed));
        }
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
    pub(super) fn find_type_name(&mut self, members_start: usize) -> Result<(Option<TypeName<'a>>, TypeKey), JsonError> {
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

    /// The `@type` name, hashed while it is scanned: [`Self::quoted_type_name`] after any
    /// whitespace.
    #[inline]
    pub(super) fn type_name(&mut self) -> Result<TypeName<'a>, JsonError> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("the `@type` name as a string"));
        }
        self.quoted_type_name()
    }

    /// The `@type` name at its opening quote, hashed while it is scanned, a word at a time: the
    /// words before the one with the closing quote whole, that one cut at the quote. Inline into
    /// [`Self::begin_typed_object`]'s compact path, where the call cost 15 of the scan's ~97
    /// instructions on `message` (it saved six registers, and the name and hash came back
    /// through memory); every other caller goes through [`Self::type_name`], one copy.
    #[inline(always)]
    fn quoted_type_name(&mut self) -> Result<TypeName<'a>, JsonError> {
        let start = self.pos + 1;
        let input: &'a [u8] = self.input;
        let mut hash = tl_parser::NAME_HASH_SEED;
        let mut i = start;
        while let Some(chunk) = input.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            let stops = plain_ascii_stops(word);
            if stops == 0 {
                hash = tl_parser::name_hash_word(hash, word);
                i += 8;
                continue;
            }
            let plain = stops.trailing_zeros() as usize / 8;
            if plain > 0 {
                hash = tl_parser::name_hash_word(hash, word & (u64::MAX >> (64 - 8 * plain)));
            }
            i += plain;
            if input[i] == b'"' {
                self.pos = i + 1;
                return Ok(TypeName { text: &input[start..i], hash: tl_parser::name_hash_finish(hash, i - start) });
            }
            break;
        }
        self.unusual_type_name()
    }

    /// Escapes, bytes no schema name has, or the input's last 8 bytes: the name read in full,
    /// then hashed. Out of line, so the inline scan above carries none of it.
    #[inline(never)]
    fn unusual_type_name(&mut self) -> Result<TypeName<'a>, JsonError> {
        let text: &'a [u8] = match self.name()? {
            Cow::Borrowed(text) => text,
            // Written with escapes: the schema's own spelling of the same name, so that the name
            // is borrowed however it was written (and `TypeName` stays small). No schema name
            // needs escaping, so one that is not the schema's is unknown.
            Cow::Owned(text) => {
                match crate::CONSTRUCTORS.iter().map(|(known, _)| known).chain(crate::ABSENT_TYPES).find(|known| known.as_bytes() == text) {
                    Some(known) => known.as_bytes(),
                    None => return Err(self.not_in_schema(&String::from_utf8_lossy(&text))),
                }
            }
        };
        Ok(TypeName { text, hash: tl_parser::name_hash(text) })
    }

    /// A string used as a name (key or `@type`): borrowed from the input unless it has escapes.
    #[inline]
    pub(super) fn name(&mut self) -> Result<Cow<'a, [u8]>, JsonError> {
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

    /// Notes in `seen` (a bit per field, by declaration index) that field `index` is about to be
    /// read; a second occurrence of the field is an error at its key.
    #[inline(always)]
    pub fn first_time(&self, seen: &mut u64, index: u32, name: &'static str) -> Result<(), JsonError> {
        let bit = 1 << index;
        if *seen & bit != 0 {
            return Err(self.duplicate_field(name));
        }
        *seen |= bit;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn duplicate_field(&self, name: &'static str) -> JsonError {
        self.error_at(self.key_at, format!("duplicate field `{name}`"))
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
            return self.not_in_schema(&name);
        };
        self.error_here(message)
    }

    /// The error for an `@type` that names nothing in the schema.
    #[cold]
    fn not_in_schema(&self, name: &str) -> JsonError {
        self.error_here(format!("unknown @type `{name}` (not in the schema)"))
    }

    #[cold]
    pub fn missing_type(&self, expected: &str) -> JsonError {
        self.error_here(format!("missing `@type` in an object of type `{expected}`"))
    }

    #[cold]
    pub fn absent(&self, tl_name: &str) -> JsonError {
        self.error_here(crate::absent::absent_message(tl_name))
    }
}

/// Bytes of TL identifiers: letters, digits, `_`.
pub(super) static NAME_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_');
        b += 1;
    }
    table
};

/// Stores `value`, a field just read, in `slot`, which still holds the field's default: a
/// generated reader starts from `Self::default()` and fills each field at most once (`seen`
/// refuses a repeated key before it is read). The default owns no memory (`None`, an empty
/// `String` or `Vec`, zero: every object field is an `Option`), so it is forgotten, not dropped.
/// A plain assignment drops the old value first, and LLVM could not tell it was the default:
/// each object field paid a test and a call to `drop_in_place` (`textEntity`'s `type`, five
/// times per `message`), each string and vector a test. Debug builds check the invariant.
#[inline(always)]
pub fn fill<T: Default + PartialEq>(slot: &mut T, value: T) {
    let old = std::mem::replace(slot, value);
    debug_assert!(old == T::default(), "a field was filled twice");
    std::mem::forget(old);
}

/// `haystack.starts_with(needle)` for the short keys of the schema, without a call to `memcmp`:
/// whole 8-byte words, then the tail as one overlapping word (4-byte words, or byte by byte,
/// when shorter).
#[inline(always)]
pub(super) fn starts_with(haystack: &[u8], needle: &[u8]) -> bool {
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
