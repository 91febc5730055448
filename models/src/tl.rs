//! Binary TL (MTProto serialization) primitives: the writer and reader the generated impls call.
//!
//! Every object is written as its constructor id (int32, little-endian) and its fields in
//! declaration order. TDLib itself has no binary null: a null object pointer is written as
//! Telegram's `null#56730bcc = Null`, the choice of Telegram's official scheme.
//!
//! Past 1,000 lines with its tests: the code is about 750 lines, the writer's room accounting
//! included, and the tests of every primitive's bounds (lengths, padding, truncation, room)
//! stay beside the primitives they check.
//!
//! ```
//! use tdbench_models::tl::TlWriter;
//! let mut w = TlWriter::new(Vec::new());
//! w.write_bool(true);
//! w.write_string("hi");
//! assert_eq!(w.finish().unwrap(), [0xb5, 0x75, 0x72, 0x99, 2, b'h', b'i', 0]);
//! ```

use std::fmt;

/// `boolTrue = Bool`.
pub const BOOL_TRUE: u32 = 0x997275b5;
/// `boolFalse = Bool`.
pub const BOOL_FALSE: u32 = 0xbc799737;
/// `vector {t:Type} # [ t ] = Vector t`.
pub const VECTOR: u32 = 0x1cb5c415;
/// `null = Null`: a null object pointer.
pub const NULL: u32 = 0x56730bcc;
/// TL strings carry a 3-byte length.
pub const MAX_STRING_LEN: usize = (1 << 24) - 1;
/// Objects nest at most this deep; deeper input is refused rather than recursed into.
pub const MAX_DEPTH: u32 = 64;

/// `Bool` as written: the boxed `boolTrue` or `boolFalse`, little-endian.
#[inline]
pub fn bool_bytes(value: bool) -> [u8; 4] {
    (if value { BOOL_TRUE } else { BOOL_FALSE }).to_le_bytes()
}

/// The `W` bytes at byte `at` of a run ([`TlReader::read_run`]), for a fixed-width field's
/// `from_le_bytes`: the run was bounds-checked once, so this check folds away.
#[inline(always)]
pub fn bytes_in<const W: usize, const N: usize>(run: &[u8; N], at: usize) -> [u8; W] {
    run[at..at + W].try_into().expect("W bytes")
}

/// The `Bool` at byte `at` of a run that [`TlReader::check_bools`] passed.
#[inline(always)]
pub fn bool_at<const N: usize>(run: &[u8; N], at: usize) -> bool {
    u32::from_le_bytes(bytes_in(run, at)) == BOOL_TRUE
}

/// A TL object that can be written with its constructor id and read back given one.
pub trait TlObject: Sized {
    fn write_boxed(&self, w: &mut TlWriter);
    /// Writes the value where its parent's stretch stands. A value that only puts is put into
    /// the stretch, which is returned still open; any other closes the stretch and is written
    /// by [`TlWriter::write_child`], and `None` is returned. `tl-gen` generates it for a
    /// constructor of fixed-width fields, or of fixed-width fields then one object field whose
    /// type has it (`textEntity`), and for an abstract type with at least one such
    /// constructor: a `textEntityTypeBold` inside its `textEntity` is then one put in the
    /// entity's stretch, not a call with a capacity check and a close of its own, and an
    /// abstract type's other constructors are called directly.
    ///
    /// # Safety
    ///
    /// As for [`TlWriter::close`] of `stretch`, and the stretch must have room for the largest
    /// value this type puts, which `tl-gen` counts from the schema (debug builds check every
    /// put against the stretch's room).
    #[inline(always)]
    unsafe fn write_in(&self, w: &mut TlWriter, stretch: Stretch) -> Option<Stretch> {
        // SAFETY: the caller's promise.
        unsafe { w.close(stretch) };
        w.write_child(self);
        None
    }
    /// Reads the fields of the constructor `id` (already consumed) into `Self`.
    fn read_with_id(id: u32, r: &mut TlReader<'_>) -> Result<Self, TlError>;
}

impl<T: TlObject> TlObject for Box<T> {
    fn write_boxed(&self, w: &mut TlWriter) {
        (**self).write_boxed(w)
    }

    #[inline(always)]
    unsafe fn write_in(&self, w: &mut TlWriter, stretch: Stretch) -> Option<Stretch> {
        // SAFETY: the caller's promise is the same for the boxed value.
        unsafe { (**self).write_in(w, stretch) }
    }

    fn read_with_id(id: u32, r: &mut TlReader<'_>) -> Result<Self, TlError> {
        T::read_with_id(id, r).map(Box::new)
    }
}

/// Why TL bytes could not be written or read; `offset` is the byte where reading failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for TlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for TlError {}

/// Appends TL to a buffer. A string too long for TL's 3-byte length is remembered and reported
/// by [`TlWriter::finish`], so the hot path carries no `Result` per field.
///
/// # Room, stretches, and the one `unsafe` the generated writers use
///
/// The generated `write_boxed` makes one capacity check, [`TlWriter::open`], before a stretch of
/// fixed-width writes (the constructor id, runs of fixed fields, `null`s, empty strings), and
/// then writes them with [`Stretch::put`], which checks nothing in release builds, and sets the
/// buffer's length once, at [`TlWriter::close`]. The stretch keeps where the next put lands in
/// a local, so a register: kept in the `Vec`, every put reloaded the buffer's pointer and stored
/// its length, since LLVM cannot tell a write into the buffer from one into the `Vec` itself.
/// (With no capacity check at all, `tl` encode ran 21-30% fewer instructions: an unsound
/// experiment that measured the ceiling; one check per stretch reached 10-14%.) `tl-gen` counts,
/// on every path through the function, the bytes put since the stretch was opened, and opens
/// another before they could exceed its room. It closes the stretch before any call that can
/// write (a sub-object, a vector, a non-empty string) and opens a new one after it, except that
/// a string's write leaves [`ROOM`] bytes spare, which [`TlWriter::resume`] uses without a
/// check. The room is counted within each function, with two promises across calls: a
/// string's write leaves [`ROOM`] spare (a test pins it), and a parent hands its open stretch
/// to a sub-object's [`TlObject::write_in`], inlined, with room for the largest constructor
/// that puts itself there, which `tl-gen` takes from the same schema it generates both from.
///
/// Debug builds keep that count in the writer and the stretch, and check it: a put past the
/// room, or a write between a stretch's open and close, fails the tests that write every
/// constructor, whatever the buffer's real capacity happens to be.
pub struct TlWriter {
    out: Vec<u8>,
    too_long: Option<usize>,
    /// Debug builds: the bytes spare under the generated code's own accounting, as the last
    /// write left them (what [`TlWriter::resume`] may use).
    #[cfg(debug_assertions)]
    room: usize,
}

/// A stretch of unchecked puts: the buffer's start and the length its puts have reached, and in
/// debug builds the room left and the length when the stretch was opened. Opened by
/// [`TlWriter::open`] or [`TlWriter::resume`]; its bytes count once [`TlWriter::close`] stores
/// its length as the buffer's (one store: a position kept as a pointer cost two more
/// instructions per close, to turn it back into a length).
#[must_use = "a stretch's puts are part of the buffer only once it is closed"]
pub struct Stretch {
    start: *mut u8,
    len: usize,
    #[cfg(debug_assertions)]
    room: usize,
    #[cfg(debug_assertions)]
    opened_at: usize,
}

/// The room one [`TlWriter::open`] makes for a stretch of puts, and what a string's write
/// leaves spare after itself. Larger than any run of fixed-width fields in this schema (the
/// longest, with its constructor id, is 76 bytes); a longer stretch would be opened with room
/// of its own length.
pub const ROOM: usize = 256;

#[cold]
#[inline(never)]
fn string_too_long(len: usize) -> TlError {
    TlError { offset: 0, message: format!("a string of {len} bytes exceeds TL's {MAX_STRING_LEN}") }
}

impl TlWriter {
    /// Writes after whatever `out` already holds; pass a cleared, reused buffer to avoid growth.
    pub fn new(out: Vec<u8>) -> Self {
        TlWriter {
            out,
            too_long: None,
            #[cfg(debug_assertions)]
            room: 0,
        }
    }

    /// The bytes written, or the error of a string past TL's limit.
    pub fn finish(self) -> Result<Vec<u8>, TlError> {
        let mut out = Vec::new();
        self.finish_into(&mut out).map(|()| out)
    }

    /// Hands the buffer back into `out`, the error or not: the caller keeps its allocation, and
    /// a refused encode leaves what was written before the refusal.
    ///
    /// Inline, with the error out of line: it ends every encode, short payloads included. Handing
    /// the buffer back before the check, rather than returning it in the `Ok`, left `tl` encode's
    /// wrapper four registers fewer to save and 7 instructions per encode fewer (of 104 on
    /// `status`).
    #[inline]
    pub fn finish_into(self, out: &mut Vec<u8>) -> Result<(), TlError> {
        *out = self.out;
        match self.too_long {
            None => Ok(()),
            Some(len) => Err(string_too_long(len)),
        }
    }

    /// Makes at least `n` bytes spare: the one capacity check behind a stretch and a string.
    #[inline(always)]
    fn ensure(&mut self, n: usize) {
        if self.out.capacity() - self.out.len() < n {
            self.grow(n);
        }
        self.set_room(n);
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        self.out.reserve(n);
    }

    /// Debug builds: what the generated code may still put. Nothing in release builds.
    #[inline(always)]
    fn set_room(&mut self, _n: usize) {
        #[cfg(debug_assertions)]
        {
            self.room = _n;
        }
    }

    /// Makes at least `n` bytes spare and starts a stretch of puts worth `n` bytes at most.
    #[inline(always)]
    pub fn open(&mut self, n: usize) -> Stretch {
        self.ensure(n);
        self.stretch(n)
    }

    /// Starts a stretch in the room a string's write left ([`ROOM`] bytes), with no check.
    ///
    /// # Safety
    ///
    /// The last write on this writer must be a string's ([`TlWriter::write_bytes`] or
    /// [`TlWriter::write_string`]), which leaves [`ROOM`] bytes spare.
    #[inline(always)]
    pub unsafe fn resume(&mut self) -> Stretch {
        // Debug builds: the room the last write left, which is `ROOM` only after a string's.
        #[cfg(debug_assertions)]
        let room = self.room;
        #[cfg(not(debug_assertions))]
        let room = ROOM;
        self.stretch(room)
    }

    #[inline(always)]
    fn stretch(&mut self, _room: usize) -> Stretch {
        let len = self.out.len();
        Stretch {
            start: self.out.as_mut_ptr(),
            len,
            #[cfg(debug_assertions)]
            room: _room,
            #[cfg(debug_assertions)]
            opened_at: len,
        }
    }

    /// Ends a stretch: the buffer's length now covers its puts.
    ///
    /// # Safety
    ///
    /// `stretch` must come from this writer's [`TlWriter::open`] or [`TlWriter::resume`], with
    /// no other write on the writer since (another write may have moved the buffer), and its
    /// puts within its room.
    #[inline(always)]
    pub unsafe fn close(&mut self, stretch: Stretch) {
        #[cfg(debug_assertions)]
        {
            assert_eq!(self.out.len(), stretch.opened_at, "tl-gen wrote between a stretch's open and close");
            self.room = stretch.room;
        }
        debug_assert!(std::ptr::eq(stretch.start, self.out.as_ptr()) && stretch.len <= self.out.capacity());
        // SAFETY: the stretch started at the buffer's length (no write since, so in the same
        // allocation), and its puts, within the room the capacity had, initialized every byte
        // up to its length.
        unsafe { self.out.set_len(stretch.len) }
    }

    /// A checked append, for writes outside the generated code's counted stretches: afterwards
    /// the count has no room left to spend.
    #[inline(always)]
    fn append(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.set_room(0);
    }

    /// A sub-object, from generated code that counts its room: afterwards it has none. The same
    /// code as `value.write_boxed(self)` in release builds.
    #[inline(always)]
    pub fn write_child<T: TlObject>(&mut self, value: &T) {
        value.write_boxed(self);
        self.set_room(0);
    }

    /// `int32`, and constructor ids: 4 bytes little-endian.
    #[inline]
    pub fn write_u32(&mut self, value: u32) {
        self.append(&value.to_le_bytes());
    }

    #[inline]
    pub fn write_i32(&mut self, value: i32) {
        self.append(&value.to_le_bytes());
    }

    /// `int53` and `int64`: 8 bytes little-endian.
    #[inline]
    pub fn write_i64(&mut self, value: i64) {
        self.append(&value.to_le_bytes());
    }

    /// `double`: IEEE 754, 8 bytes little-endian.
    #[inline]
    pub fn write_f64(&mut self, value: f64) {
        self.append(&value.to_le_bytes());
    }

    /// `Bool`: the boxed `boolTrue` or `boolFalse`.
    #[inline]
    pub fn write_bool(&mut self, value: bool) {
        self.append(&bool_bytes(value));
    }

    /// `string`: UTF-8 bytes as a TL string. Leaves [`ROOM`] bytes spare, as
    /// [`TlWriter::write_bytes`] does.
    #[inline]
    pub fn write_string(&mut self, value: &str) {
        self.write_bytes(value.as_bytes())
    }

    /// `bytes`: length below 254 in one byte, else 0xFE and 3 bytes little-endian; then the data
    /// and zero padding to a multiple of 4. One capacity check for all of it and for [`ROOM`]
    /// bytes more, which the caller's next stretch of puts may use without a check of its own.
    ///
    /// Inlined into the generated writers, and the length set once at the end: out of line, a
    /// third of its instructions were saving and restoring registers around the copy.
    #[inline(always)]
    pub fn write_bytes(&mut self, value: &[u8]) {
        let len = value.len();
        if len > MAX_STRING_LEN {
            return self.refuse_too_long(len);
        }
        // The header, the data, three bytes of padding (of which the length keeps what it
        // needs), and the room after.
        self.ensure(4 + len + 3 + ROOM);
        let start = self.out.len();
        let header = if len < 254 { 1 } else { 4 };
        debug_assert!(self.out.capacity() - start >= header + len + 3);
        // SAFETY: `ensure` made room for the header (at most 4 bytes), the data and 3 bytes of
        // padding, so every write lands inside the allocation; `set_len` then covers only bytes
        // written here: the header, the data and the padding that the length keeps.
        unsafe {
            let at = self.out.as_mut_ptr().add(start);
            if len < 254 {
                at.write(len as u8);
            } else {
                let [a, b, c, _] = (len as u32).to_le_bytes();
                at.cast::<[u8; 4]>().write_unaligned([0xfe, a, b, c]);
            }
            std::ptr::copy_nonoverlapping(value.as_ptr(), at.add(header), len);
            // Three zero bytes at once: a copy of a length known only at run time is a call to
            // memset, which cost more.
            at.add(header + len).cast::<[u8; 3]>().write_unaligned([0; 3]);
            self.out.set_len(start + (header + len).next_multiple_of(4));
        }
        self.set_room(ROOM);
    }

    /// A string past TL's limit: nothing written, the error kept for [`TlWriter::finish`], and
    /// the room a string's write promises made all the same.
    #[cold]
    #[inline(never)]
    fn refuse_too_long(&mut self, len: usize) {
        self.too_long = Some(len);
        self.ensure(ROOM);
    }

    /// A vector element: never null.
    #[inline]
    pub fn write_object<T: TlObject>(&mut self, value: &T) {
        self.write_child(value)
    }

    /// A vector of `N`-byte little-endian scalars: the header, then room for every element made
    /// once and filled (a loop LLVM vectorizes; element by element, each paid a capacity check).
    pub fn write_scalar_vector<const N: usize, T: Copy>(&mut self, values: &[T], bytes: impl Fn(T) -> [u8; N]) {
        self.write_vector_header(values.len());
        let start = self.out.len();
        self.out.resize(start + values.len() * N, 0);
        for (place, &value) in self.out[start..].chunks_exact_mut(N).zip(values) {
            place.copy_from_slice(&bytes(value));
        }
        self.set_room(0);
    }

    /// The boxed `vector` id and the int32 count, appended at once.
    #[inline]
    fn write_vector_header(&mut self, count: usize) {
        let [a, b, c, d] = VECTOR.to_le_bytes();
        let [e, f, g, h] = (count as i32).to_le_bytes();
        self.append(&[a, b, c, d, e, f, g, h]);
    }

    /// A `vector` of objects whose type has a generated [`TlObject::write_in`]: each element
    /// written in a stretch of its own, opened with `room`, so that an element that only puts
    /// is no call (a `textEntity` with a `textEntityTypeBold`).
    ///
    /// # Safety
    ///
    /// `room` must cover the largest value `T::write_in` puts, as `tl-gen` counts it.
    #[inline(always)]
    pub unsafe fn write_vector_in<T: TlObject>(&mut self, values: &[T], room: usize) {
        self.write_vector(values, |w, value| {
            let stretch = w.open(room);
            // SAFETY: the stretch was just opened with the room the caller promises covers
            // the value, and nothing else writes before `write_in` takes it.
            if let Some(open) = unsafe { value.write_in(w, stretch) } {
                // SAFETY: `write_in` hands back a stretch it left open, with no write since.
                unsafe { w.close(open) };
            }
        });
    }

    /// `vector`: the boxed vector id, the int32 count, the elements.
    pub fn write_vector<T>(&mut self, values: &[T], mut write: impl FnMut(&mut Self, &T)) {
        self.write_vector_header(values.len());
        for value in values {
            write(self, value);
        }
        self.set_room(0);
    }
}

impl Stretch {
    /// Appends `bytes` without a capacity check.
    ///
    /// # Safety
    ///
    /// At least `N` bytes must be spare. The generated code knows this by counting: since the
    /// stretch was opened with room `n`, the bytes put plus `N` are at most `n`.
    #[inline(always)]
    pub unsafe fn put<const N: usize>(&mut self, bytes: [u8; N]) {
        #[cfg(debug_assertions)]
        {
            assert!(self.room >= N, "tl-gen's room count is wrong: a put of {N} bytes with {} left", self.room);
            self.room -= N;
        }
        // SAFETY: the caller guarantees `N` spare bytes after the stretch's length, inside the
        // allocation; the bytes written here are what `close` then counts as initialized.
        unsafe { self.start.add(self.len).cast::<[u8; N]>().write_unaligned(bytes) };
        self.len += N;
    }
}

/// Reads TL from a byte slice; every read is bounds-checked and every length is checked against
/// what is left before anything is allocated.
pub struct TlReader<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: u32,
}

impl<'a> TlReader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        TlReader { buf, pos: 0, depth: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> TlError {
        TlError { offset: self.pos, message: message.into() }
    }

    pub fn unexpected_constructor(&self, id: u32, expected: &str) -> TlError {
        self.error(format!("constructor {id:#010x} is not a {expected}"))
    }

    #[inline]
    pub fn expect_constructor(&self, id: u32, expected_id: u32, expected: &str) -> Result<(), TlError> {
        if id == expected_id { Ok(()) } else { Err(self.unexpected_constructor(id, expected)) }
    }

    /// Every fixed-width read comes here: always inline (in a large generated reader LLVM
    /// otherwise makes it a call, seen on `message` once absent fields were tested inline),
    /// the error, which formats, out of line.
    #[inline(always)]
    fn take<const N: usize>(&mut self) -> Result<[u8; N], TlError> {
        match self.buf.get(self.pos..self.pos + N) {
            Some(bytes) => {
                self.pos += N;
                Ok(bytes.try_into().expect("slice of length N"))
            }
            None => Err(self.too_short(N)),
        }
    }

    #[cold]
    #[inline(never)]
    fn too_short(&self, needed: usize) -> TlError {
        self.error(format!("{needed} bytes needed, {} left", self.remaining()))
    }

    #[inline]
    pub fn read_u32(&mut self) -> Result<u32, TlError> {
        self.take::<4>().map(u32::from_le_bytes)
    }

    #[inline]
    pub fn read_i32(&mut self) -> Result<i32, TlError> {
        self.take::<4>().map(i32::from_le_bytes)
    }

    #[inline]
    pub fn read_i64(&mut self) -> Result<i64, TlError> {
        self.take::<8>().map(i64::from_le_bytes)
    }

    #[inline]
    pub fn read_f64(&mut self) -> Result<f64, TlError> {
        self.take::<8>().map(f64::from_le_bytes)
    }

    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, TlError> {
        match self.read_u32()? {
            BOOL_TRUE => Ok(true),
            BOOL_FALSE => Ok(false),
            other => {
                self.pos -= 4;
                Err(self.unexpected_constructor(other, "Bool"))
            }
        }
    }

    /// A run of fixed-width fields as one array: one bounds check for all of them. Read its
    /// fields with [`bytes_in`], and its `Bool`s with [`TlReader::check_bools`] and [`bool_at`].
    #[inline]
    pub fn read_run<const N: usize>(&mut self) -> Result<[u8; N], TlError> {
        self.take::<N>()
    }

    /// Checks every `Bool` of a run just read (at the byte offsets `bools`) without a branch per
    /// field, then reads none: [`bool_at`] does, once this passed. An error names the first bad
    /// field's own offset.
    #[inline]
    pub fn check_bools<const N: usize>(&self, run: &[u8; N], bools: &[usize]) -> Result<(), TlError> {
        let all_bools = bools.iter().fold(true, |ok, &at| {
            let word = u32::from_le_bytes(bytes_in(run, at));
            ok & ((word == BOOL_TRUE) | (word == BOOL_FALSE))
        });
        if all_bools { Ok(()) } else { Err(self.first_bad_bool(run, bools)) }
    }

    #[cold]
    #[inline(never)]
    fn first_bad_bool<const N: usize>(&self, run: &[u8; N], bools: &[usize]) -> TlError {
        for &at in bools {
            let word = u32::from_le_bytes(bytes_in(run, at));
            if word != BOOL_TRUE && word != BOOL_FALSE {
                return TlError { offset: self.pos - N + at, ..self.unexpected_constructor(word, "Bool") };
            }
        }
        unreachable!("check_bools found a bad Bool")
    }

    /// The data of a TL string, borrowed from the input; the padding is skipped, not checked.
    /// Inline in `read_string` and `read_bytes`, its errors (which format) out of line.
    #[inline(always)]
    fn read_byte_slice(&mut self) -> Result<&'a [u8], TlError> {
        let start = self.pos;
        let (header, len) = match self.buf.get(start..start + 4) {
            Some(&[first, ..]) if first < 254 => (1, first as usize),
            Some(&[254, a, b, c]) => (4, a as usize | (b as usize) << 8 | (c as usize) << 16),
            _ => return Err(self.bad_string_header()),
        };
        let padded = (header + len).div_ceil(4) * 4;
        if padded > self.remaining() {
            return Err(self.string_too_short(len));
        }
        self.pos += padded;
        Ok(&self.buf[start + header..start + header + len])
    }

    /// Why the 4 bytes at a string's start are no string header.
    #[cold]
    #[inline(never)]
    fn bad_string_header(&self) -> TlError {
        match self.buf.get(self.pos..) {
            Some([]) | None => self.error("string length needed, 0 bytes left"),
            Some([255, ..]) => self.error("string length byte 0xff is invalid"),
            Some([254, ..]) => self.error("truncated string length"),
            // Shorter than 4 bytes: a string takes at least 4 with its padding.
            Some(rest) => self.string_too_short(usize::from(rest[0])),
        }
    }

    #[cold]
    #[inline(never)]
    fn string_too_short(&self, len: usize) -> TlError {
        self.error(format!("string of {len} bytes, {} left", self.remaining()))
    }

    pub fn read_bytes(&mut self) -> Result<Vec<u8>, TlError> {
        self.read_byte_slice().map(<[u8]>::to_vec)
    }

    pub fn read_string(&mut self) -> Result<String, TlError> {
        let start = self.pos;
        let bytes = self.read_byte_slice()?;
        // Most optional text in TDLib objects is empty (`message`: signature, tag, language
        // code): nothing to check or copy.
        if bytes.is_empty() {
            return Ok(String::new());
        }
        match crate::utf8::check(bytes) {
            Ok(text) => Ok(text.to_owned()),
            Err(e) => Err(TlError { offset: start, message: format!("string is not UTF-8: {e}") }),
        }
    }

    /// One level deeper; the check is on every object's path, so it stays inline and the
    /// error, which formats, does not.
    #[inline]
    fn enter(&mut self) -> Result<(), TlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.too_deep());
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> TlError {
        self.error(format!("objects nested deeper than {MAX_DEPTH}"))
    }

    /// A vector element or a whole payload: any constructor of `T`, never null.
    pub fn read_object<T: TlObject>(&mut self) -> Result<T, TlError> {
        let id = self.read_u32()?;
        self.nested(id)
    }

    /// The object of a whole payload, whose constructor `id` was just read: nothing may follow
    /// it. The generated `Object::from_tl` calls it for each constructor before it wraps the
    /// value, so the end is checked before the (large) `Object` is built, and built once.
    #[inline(always)]
    pub fn read_whole<T: TlObject>(&mut self, id: u32) -> Result<T, TlError> {
        let value = self.nested(id)?;
        self.finish()?;
        Ok(value)
    }

    /// An object field: `None` for `null`. The `null` test is inline where the field is read:
    /// most object fields of TDLib objects are absent, and as a call of its own each paid the
    /// prologue of a frame sized for the object it did not read (callgrind: most of
    /// `read_optional`'s own instructions on `messages`).
    #[inline(always)]
    pub fn read_optional<T: TlObject>(&mut self) -> Result<Option<T>, TlError> {
        let id = self.read_u32()?;
        if id == NULL {
            return Ok(None);
        }
        self.read_present(id).map(Some)
    }

    /// A present object field, out of line (above).
    #[inline(never)]
    fn read_present<T: TlObject>(&mut self, id: u32) -> Result<T, TlError> {
        self.nested(id)
    }

    /// The object whose constructor `id` was just read, one level deeper.
    #[inline(always)]
    fn nested<T: TlObject>(&mut self, id: u32) -> Result<T, TlError> {
        self.enter()?;
        let value = T::read_with_id(id, self);
        self.depth -= 1;
        value
    }

    /// A vector's `vector` id and count, checked: every element takes at least `min_width`
    /// bytes, so a count the input cannot hold is refused before it sizes an allocation.
    #[inline(always)]
    fn vector_header(&mut self, min_width: usize) -> Result<usize, TlError> {
        let id = self.read_u32()?;
        if id != VECTOR {
            self.pos -= 4;
            return Err(self.unexpected_constructor(id, "vector"));
        }
        let count = self.read_i32()?;
        if count < 0 || count as usize > self.remaining() / min_width {
            return Err(self.error(format!("vector of {count} elements, {} bytes left", self.remaining())));
        }
        Ok(count as usize)
    }

    /// A vector of `N`-byte little-endian scalars (`int32`, `int53`, `int64`, `double`), read in
    /// one pass over its bytes: the length checked once, every element converted where it lies
    /// (a loop LLVM vectorizes), one allocation of the exact length. Element by element it was
    /// 17 times a clone of the result on the `vector-int` lane.
    pub fn read_scalar_vector<const N: usize, T>(&mut self, convert: impl Fn([u8; N]) -> T) -> Result<Vec<T>, TlError> {
        let count = self.vector_header(N)?;
        let bytes = &self.buf[self.pos..self.pos + count * N];
        self.pos += count * N;
        Ok(bytes.chunks_exact(N).map(|element| convert(element.try_into().expect("N bytes"))).collect())
    }

    pub fn read_vector<T>(&mut self, mut read: impl FnMut(&mut Self) -> Result<T, TlError>) -> Result<Vec<T>, TlError> {
        let count = self.vector_header(4)?;
        let mut values = Vec::with_capacity(count);
        for _ in 0..count {
            values.push(read(self)?);
        }
        Ok(values)
    }

    /// Fails unless every byte was consumed.
    #[inline]
    pub fn finish(&self) -> Result<(), TlError> {
        if self.remaining() == 0 { Ok(()) } else { Err(self.trailing_bytes()) }
    }

    #[cold]
    #[inline(never)]
    fn trailing_bytes(&self) -> TlError {
        self.error(format!("{} bytes left after the object", self.remaining()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(f: impl FnOnce(&mut TlWriter)) -> Vec<u8> {
        let mut w = TlWriter::new(Vec::new());
        f(&mut w);
        w.finish().unwrap()
    }

    #[test]
    fn int32_is_four_bytes_little_endian() {
        assert_eq!(written(|w| w.write_i32(-2)), [0xfe, 0xff, 0xff, 0xff]);
        assert_eq!(TlReader::new(&[0xfe, 0xff, 0xff, 0xff]).read_i32().unwrap(), -2);
    }

    #[test]
    fn int64_and_double_are_eight_bytes_little_endian() {
        assert_eq!(written(|w| w.write_i64(0x0102030405060708)), [8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(written(|w| w.write_f64(1.5)), [0, 0, 0, 0, 0, 0, 0xf8, 0x3f]);
        assert_eq!(TlReader::new(&[0, 0, 0, 0, 0, 0, 0xf8, 0x3f]).read_f64().unwrap(), 1.5);
    }

    #[test]
    fn bools_are_boxed_constructors() {
        assert_eq!(written(|w| w.write_bool(true)), [0xb5, 0x75, 0x72, 0x99]);
        assert_eq!(written(|w| w.write_bool(false)), [0x37, 0x97, 0x79, 0xbc]);
        assert!(TlReader::new(&[0, 0, 0, 0]).read_bool().is_err());
    }

    #[test]
    fn short_strings_have_a_length_byte_and_padding() {
        assert_eq!(written(|w| w.write_string("")), [0, 0, 0, 0]);
        assert_eq!(written(|w| w.write_string("abc")), [3, b'a', b'b', b'c']);
        assert_eq!(written(|w| w.write_string("abcd")), [4, b'a', b'b', b'c', b'd', 0, 0, 0]);
        let s = "x".repeat(253);
        let bytes = written(|w| w.write_string(&s));
        assert_eq!(bytes.len(), 256);
        assert_eq!(bytes[0], 253);
        assert_eq!(bytes[254..], [0, 0]);
    }

    #[test]
    fn long_strings_have_0xfe_and_a_three_byte_length() {
        let s = vec![7u8; 254];
        let bytes = written(|w| w.write_bytes(&s));
        assert_eq!(bytes[..4], [0xfe, 254, 0, 0]);
        assert_eq!(bytes.len(), 260);
        let s = vec![7u8; 70_000];
        let bytes = written(|w| w.write_bytes(&s));
        assert_eq!(bytes[..4], [0xfe, 0x70, 0x11, 0x01]);
        assert_eq!(bytes.len(), 70_004);
        assert_eq!(TlReader::new(&bytes).read_bytes().unwrap(), s);
    }

    #[test]
    fn every_length_gets_its_header_and_padding_after_any_prefix() {
        for prefix in 0..4 {
            for len in (0..600).chain([65_535, 70_001]) {
                let value: Vec<u8> = (0..len).map(|i| (i % 94) as u8 + 33).collect();
                let mut expected = vec![9u8; prefix];
                if len < 254 {
                    expected.push(len as u8);
                } else {
                    expected.extend([0xfe, len as u8, (len >> 8) as u8, (len >> 16) as u8]);
                }
                expected.extend(&value);
                while (expected.len() - prefix) % 4 != 0 {
                    expected.push(0);
                }
                let mut w = TlWriter::new(vec![9u8; prefix]);
                w.write_bytes(&value);
                assert_eq!(w.finish().unwrap(), expected, "{len} bytes after {prefix}");
                let text = String::from_utf8(value).unwrap();
                let mut w = TlWriter::new(vec![9u8; prefix]);
                w.write_string(&text);
                assert_eq!(w.finish().unwrap(), expected, "a string of {len} bytes after {prefix}");
            }
        }
    }

    #[test]
    fn a_run_is_its_fields_written_one_by_one() {
        let one_by_one = written(|w| {
            w.write_u32(0x1234_5678);
            w.write_bool(true);
            w.write_i64(-3);
            w.write_bool(false);
            w.write_f64(2.5);
            w.write_i32(7);
        });
        let mut run = [0u8; 32];
        run[0..4].copy_from_slice(&0x1234_5678u32.to_le_bytes());
        run[4..8].copy_from_slice(&bool_bytes(true));
        run[8..16].copy_from_slice(&(-3i64).to_le_bytes());
        run[16..20].copy_from_slice(&bool_bytes(false));
        run[20..28].copy_from_slice(&2.5f64.to_le_bytes());
        run[28..32].copy_from_slice(&7i32.to_le_bytes());
        // SAFETY: the stretch was opened with room for the 32 bytes put, and closed with no
        // other write in between.
        assert_eq!(
            written(|w| unsafe {
                let mut s = w.open(32);
                s.put(run);
                w.close(s);
            }),
            one_by_one
        );
    }

    /// Writes a `null` with the room a generated `write_boxed` would count, none before it.
    struct Null;

    impl TlObject for Null {
        fn write_boxed(&self, w: &mut TlWriter) {
            let mut s = w.open(4);
            // SAFETY: the stretch has room for these 4 bytes, and nothing else writes before
            // it closes.
            unsafe {
                s.put(NULL.to_le_bytes());
                w.close(s);
            }
        }

        fn read_with_id(id: u32, r: &mut TlReader<'_>) -> Result<Self, TlError> {
            r.expect_constructor(id, NULL, "null").map(|()| Null)
        }
    }

    /// A type without a `write_in` of its own is written by the default: the parent's stretch
    /// closed with what it put, then the sub-object as a call.
    #[test]
    fn write_in_by_default_closes_the_stretch_and_writes_the_sub_object() {
        let mut w = TlWriter::new(Vec::new());
        // SAFETY: the stretch has room for its 4 bytes, and is handed to `write_in`, which
        // closes it, with no write in between.
        let open = unsafe {
            let mut s = w.open(4);
            s.put([1u8; 4]);
            Null.write_in(&mut w, s)
        };
        assert!(open.is_none());
        let mut expected = vec![1u8; 4];
        expected.extend(NULL.to_le_bytes());
        assert_eq!(w.finish().unwrap(), expected);
    }

    // The tests of every constructor (the random objects of tests/json_td.rs, the corpus) rely on
    // these: with a count of room that tl-gen got wrong, a put fails in debug builds even when
    // the buffer has the capacity, so the error cannot hide behind a lucky allocation.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "room count is wrong")]
    fn a_put_past_the_counted_room_fails_in_debug_builds() {
        let mut w = TlWriter::new(Vec::with_capacity(1024));
        let mut s = w.open(4);
        // SAFETY: not sound as written, and never run: the first put used the room, and the
        // room check stops the second before it writes.
        unsafe {
            s.put([1u8; 4]);
            s.put([2u8; 4]);
            w.close(s);
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "room count is wrong")]
    fn a_sub_object_leaves_no_room_to_its_parent() {
        let mut w = TlWriter::new(Vec::with_capacity(1024));
        w.write_child(&Null);
        put_in_resumed_stretch(&mut w);
    }

    /// Resumes a stretch and puts 4 bytes in it: only a string's write leaves room to resume in.
    #[cfg(debug_assertions)]
    fn put_in_resumed_stretch(w: &mut TlWriter) {
        // SAFETY: not sound after anything but a string's write, and never run past the room
        // check then, which stops the put before it writes.
        unsafe {
            let mut s = w.resume();
            s.put([0u8; 4]);
            w.close(s);
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "room count is wrong")]
    fn a_checked_write_leaves_no_room() {
        let mut w = TlWriter::new(Vec::with_capacity(1024));
        w.write_u32(1);
        put_in_resumed_stretch(&mut w);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "wrote between a stretch's open and close")]
    fn a_write_inside_an_open_stretch_fails_at_its_close_in_debug_builds() {
        let mut w = TlWriter::new(Vec::with_capacity(1024));
        let mut s = w.open(ROOM);
        // SAFETY: not sound as written, and never run past the check: the write below moves the
        // length, and `close` stops before it sets a length from the stale stretch.
        unsafe {
            s.put([1u8; 4]);
            w.write_u32(2);
            w.close(s);
        }
    }

    #[test]
    fn a_string_leaves_room_spare_for_the_next_stretch() {
        for len in [0, 1, 3, 4, 253, 254, 255, 70_000] {
            let mut w = TlWriter::new(Vec::new());
            w.write_bytes(&vec![7u8; len]);
            let written = w.out.len();
            assert!(w.out.capacity() - written >= ROOM, "{len}-byte string");
            // SAFETY: what is checked here: a string's write leaves ROOM bytes spare.
            unsafe {
                let mut s = w.resume();
                s.put([1u8; ROOM]);
                w.close(s);
            }
            let bytes = w.finish().unwrap();
            assert_eq!(bytes.len(), written + ROOM);
            assert_eq!(TlReader::new(&bytes[..written]).read_bytes().unwrap().len(), len);
        }
    }

    #[test]
    fn strings_over_the_limit_fail_at_finish() {
        let mut w = TlWriter::new(Vec::new());
        w.write_bytes(&vec![0; MAX_STRING_LEN + 1]);
        assert!(w.finish().is_err());
    }

    #[test]
    fn a_refused_encode_hands_back_the_buffer_and_what_came_before() {
        let mut w = TlWriter::new(Vec::new());
        w.write_i32(7);
        w.write_bytes(&vec![0; MAX_STRING_LEN + 1]);
        let mut out = Vec::new();
        assert!(w.finish_into(&mut out).is_err());
        assert_eq!(out, [7, 0, 0, 0]);
        assert!(out.capacity() >= 4 + ROOM, "the buffer itself, with the room the refusal made");
    }

    #[test]
    fn vectors_are_boxed_with_a_count() {
        let bytes = written(|w| w.write_vector(&[1, 2], |w, x| w.write_i32(*x)));
        assert_eq!(bytes, [0x15, 0xc4, 0xb5, 0x1c, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
        let mut r = TlReader::new(&bytes);
        assert_eq!(r.read_vector(|r| r.read_i32()).unwrap(), [1, 2]);
        r.finish().unwrap();
    }

    #[test]
    fn scalar_vectors_are_the_same_bytes_read_at_once() {
        let values = [1i32, -2, i32::MAX, i32::MIN, 0];
        let one_by_one = written(|w| w.write_vector(&values, |w, x| w.write_i32(*x)));
        assert_eq!(written(|w| w.write_scalar_vector(&values, i32::to_le_bytes)), one_by_one);
        let mut r = TlReader::new(&one_by_one);
        let read = r.read_scalar_vector(i32::from_le_bytes).unwrap();
        assert_eq!((read.as_slice(), read.capacity()), (&values[..], values.len()));
        r.finish().unwrap();
        let doubles = [1.5f64, -0.0, f64::MAX];
        let bytes = written(|w| w.write_scalar_vector(&doubles, f64::to_le_bytes));
        assert_eq!(TlReader::new(&bytes).read_scalar_vector(f64::from_le_bytes).unwrap(), doubles);
        // Eight-byte elements: a count four-byte ones would fit is still refused.
        let short = [0x15, 0xc4, 0xb5, 0x1c, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0];
        assert!(TlReader::new(&short).read_scalar_vector(i64::from_le_bytes).is_err());
    }

    #[test]
    fn a_count_the_input_cannot_hold_is_refused_before_allocating() {
        let bytes = [0x15, 0xc4, 0xb5, 0x1c, 0, 0, 0, 0x40, 1, 0, 0, 0];
        let err = TlReader::new(&bytes).read_vector(|r| r.read_i32()).unwrap_err();
        assert!(err.message.contains("1073741824 elements"), "{err}");
        let huge_string = [0xfe, 0xff, 0xff, 0xff, 0];
        assert!(TlReader::new(&huge_string).read_bytes().is_err());
    }

    #[test]
    fn a_bad_bool_in_a_run_names_its_own_offset_and_a_short_run_the_runs_start() {
        // Two bytes of something else, then a 12-byte run: an int32, a Bool, a bad Bool.
        let mut bytes = vec![0xaa, 0xbb];
        bytes.extend(7i32.to_le_bytes());
        bytes.extend(bool_bytes(true));
        bytes.extend(5u32.to_le_bytes());
        let mut r = TlReader::new(&bytes);
        r.pos = 2;
        let run = r.read_run::<12>().unwrap();
        assert_eq!(i32::from_le_bytes(bytes_in(&run, 0)), 7);
        r.check_bools(&run, &[4]).unwrap();
        assert!(bool_at(&run, 4));
        let err = r.check_bools(&run, &[4, 8]).unwrap_err();
        assert_eq!(err.offset, 10, "{err}");
        assert!(err.message.contains("0x00000005 is not a Bool"), "{err}");
        let mut r = TlReader::new(&bytes);
        r.pos = 2;
        let err = r.read_run::<16>().unwrap_err();
        assert_eq!(err.offset, 2, "{err}");
    }

    #[test]
    fn trailing_bytes_and_deep_nesting_are_errors_with_their_offsets() {
        let bytes = [0u8; 8];
        let mut r = TlReader::new(&bytes);
        r.read_i32().unwrap();
        let err = r.finish().unwrap_err();
        assert_eq!((err.offset, err.message.as_str()), (4, "4 bytes left after the object"));
        let mut r = TlReader::new(&bytes);
        for _ in 0..MAX_DEPTH {
            r.enter().unwrap();
        }
        let err = r.enter().unwrap_err();
        assert_eq!(err.message, format!("objects nested deeper than {MAX_DEPTH}"));
    }

    #[test]
    fn a_string_that_does_not_fit_says_why_at_its_start() {
        let cases: [(&[u8], &str); 6] = [
            (&[9, 9], "string length needed, 0 bytes left"),
            (&[9, 9, 0xff, 0, 0, 0], "string length byte 0xff is invalid"),
            (&[9, 9, 0xfe, 1, 0], "truncated string length"),
            (&[9, 9, 1, b'a'], "string of 1 bytes, 2 left"),
            (&[9, 9, 5, b'a', b'b', b'c', b'd'], "string of 5 bytes, 5 left"),
            (&[9, 9, 0xfe, 0, 1, 0, 0, 0], "string of 256 bytes, 6 left"),
        ];
        for (bytes, message) in cases {
            let mut r = TlReader::new(bytes);
            r.pos = 2;
            let err = r.read_bytes().unwrap_err();
            assert_eq!((err.offset, err.message.as_str()), (2, message), "{bytes:?}");
        }
    }

    #[test]
    fn strings_must_be_utf8() {
        let err = TlReader::new(&[2, 0xc3, 0x28, 0]).read_string().unwrap_err();
        assert_eq!(err.offset, 0);
    }
}
