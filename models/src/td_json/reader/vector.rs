//! Arrays: read in chunks on the stack so each vector is allocated once at its final length;
//! past a stack budget the rest of an array is counted ahead instead.

use super::{CHUNK, CHUNK_STACK_BUDGET, JsonError, JsonReader};

impl<'a> JsonReader<'a> {
    /// Reads `[ element, ... ]` into a vector allocated once at its final length, without a
    /// pass to count the elements first: they are read in chunks onto the stack, one chunk per
    /// recursive call, and the vector is allocated at the closing `]` when the count is known,
    /// then filled in order from the first chunk on. See `rest_of_vector` below.
    pub fn vector<T>(&mut self, mut element: impl FnMut(&mut Self) -> Result<T, JsonError>) -> Result<Vec<T>, JsonError> {
        if self.begin_array()? {
            return Ok(Vec::new());
        }
        self.rest_of_vector(&mut element, 0, &mut |_| {})
    }

    /// Reads up to [`CHUNK`] elements onto the stack, then the rest of the array (recursively),
    /// and returns the whole array's elements in order: `earlier` moves the `before` elements
    /// of the chunks read by the calls above into the vector, first to last, before this call's
    /// own. Once the reader has used [`CHUNK_STACK_BUDGET`] of stack, the rest of the array is
    /// counted by a quick scan instead.
    ///
    /// Why in order: appending the chunks on the way back, last chunk first and each reversed,
    /// then reversing the whole, moved every element twice more (`messages`: 50 of 680 bytes);
    /// filled in order, `messages` decoded 3.8% fewer instructions and 3.9% faster.
    pub(super) fn rest_of_vector<T>(
        &mut self,
        element: &mut impl FnMut(&mut Self) -> Result<T, JsonError>,
        before: usize,
        earlier: &mut dyn FnMut(&mut Vec<T>),
    ) -> Result<Vec<T>, JsonError> {
        if self.stack_used() > CHUNK_STACK_BUDGET {
            return self.counted_rest_of_vector(element, before, earlier);
        }
        self.chunk_of_vector(element, before, earlier)
    }

    /// How much stack lies between the reader's creation and here: the address of a local,
    /// compared, never dereferenced.
    #[inline]
    pub(super) fn stack_used(&self) -> usize {
        let here = 0u8;
        self.stack_base.abs_diff(std::ptr::addr_of!(here) as usize)
    }

    pub(super) fn chunk_of_vector<T>(
        &mut self,
        element: &mut impl FnMut(&mut Self) -> Result<T, JsonError>,
        before: usize,
        earlier: &mut dyn FnMut(&mut Vec<T>),
    ) -> Result<Vec<T>, JsonError> {
        let mut chunk: [Option<T>; CHUNK] = [const { None }; CHUNK];
        let mut read = 0;
        loop {
            chunk[read] = Some(element(self)?);
            read += 1;
            if self.end_of_element()? {
                let mut items = Vec::with_capacity(before + read);
                earlier(&mut items);
                items.extend(chunk[..read].iter_mut().map(take_read));
                return Ok(items);
            }
            if read == CHUNK {
                return self.rest_of_vector(element, before + CHUNK, &mut |items: &mut Vec<T>| {
                    earlier(items);
                    items.extend(chunk.iter_mut().map(take_read));
                });
            }
        }
    }

    /// The rest of an array when the stack budget is spent: counted ahead, then read in order
    /// after the elements `earlier` moves in.
    #[cold]
    pub(super) fn counted_rest_of_vector<T>(
        &mut self,
        element: &mut impl FnMut(&mut Self) -> Result<T, JsonError>,
        before: usize,
        earlier: &mut dyn FnMut(&mut Vec<T>),
    ) -> Result<Vec<T>, JsonError> {
        let mut items = Vec::with_capacity(before + self.count_elements::<T>());
        earlier(&mut items);
        loop {
            items.push(element(self)?);
            if self.end_of_element()? {
                return Ok(items);
            }
        }
    }

    /// Consumes `[`; `true` when the array is empty (its `]` consumed too).
    #[inline]
    pub(super) fn begin_array(&mut self) -> Result<bool, JsonError> {
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
    pub(super) fn end_of_element(&mut self) -> Result<bool, JsonError> {
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
    pub(super) fn count_elements<T>(&self) -> usize {
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
}

/// An element out of its slot in a chunk, where every slot up to the count read is filled.
/// Mapped over a slice, the elements go into the vector as a slice iterator of known length
/// does: one reservation, then stores without a capacity test each (through `flatten` or
/// `filter_map` the length was unknown, so each element was pushed, tested and counted).
#[inline(always)]
fn take_read<T>(slot: &mut Option<T>) -> T {
    slot.take().expect("a chunk's slots are filled up to the count read")
}
