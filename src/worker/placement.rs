//! Where a kernel's bytes lie in memory: the same offset within a page in every process.
//!
//! Why: how fast a large copy runs depends on where its source and destination lie relative to
//! each other (4K aliasing between loads and stores, page and cache-line splits), and with the
//! corpus's own allocations that was a fresh draw in every process and for each tree's side of
//! an in-process pair. Measured here (AMD EPYC, A/A in-process pairs of `memcpy` on the
//! messages lane): the pairs spread by 2.1–3.4% across processes although each process's own
//! batches agreed to 0.4–0.6%; with inputs placed as below, 1.2–1.6%.
//! Placement that is a draw per process is noise no number of batches removes; fixed, it is the
//! same for both trees and every process, and the gate compares code, not luck of the heap.

use std::ops::Deref;

/// Offset within a 4 KiB page at which every placed input starts: half a page away from where
/// outputs start (see [`output_buffer`]), so copies never alias their source.
const INPUT_PAGE_OFFSET: usize = 2048;
const PAGE: usize = 4096;

/// Room in every kernel's output buffer: more than any lane's largest encoding, so the buffer
/// never moves.
pub const OUTPUT_CAPACITY: usize = 256 * 1024;

/// An output buffer for a kernel: a reused `Vec` that arrives holding a prefix of zeros, so
/// that what a kernel appends starts at the beginning of a page. Kernels keep the prefix and
/// drop only what they appended ([`crate::worker::measured_loop`] truncates to the length it
/// was given); a codec appends to its buffer, so it cannot tell. (Allocations this large are
/// not reliably page-aligned: glibc raises its mmap threshold once the corpus's buffers are
/// freed, and the buffers were seen at page offsets 1568 to 2832.)
pub fn output_buffer() -> Vec<u8> {
    let mut buffer = Vec::with_capacity(OUTPUT_CAPACITY + PAGE);
    let prefix = (PAGE - buffer.as_ptr() as usize % PAGE) % PAGE;
    buffer.resize(prefix, 0);
    buffer
}

/// A copy of some bytes starting at [`INPUT_PAGE_OFFSET`] within a page.
pub struct Placed {
    storage: Vec<u8>,
    start: usize,
}

impl Placed {
    pub fn new(bytes: &[u8]) -> Placed {
        let mut storage = Vec::with_capacity(bytes.len() + PAGE);
        let start = (INPUT_PAGE_OFFSET + PAGE - storage.as_ptr() as usize % PAGE) % PAGE;
        storage.resize(start, 0);
        storage.extend_from_slice(bytes);
        Placed { storage, start }
    }
}

impl Deref for Placed {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.storage[self.start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_buffers_end_at_a_page_start() {
        // Other allocations between them move where each buffer lands.
        let mut others = Vec::new();
        for size in [1, 100, 5000, 70_000] {
            others.push(Vec::<u8>::with_capacity(size));
            let buffer = output_buffer();
            assert_eq!((buffer.as_ptr() as usize + buffer.len()) % PAGE, 0);
            assert!(buffer.capacity() - buffer.len() >= OUTPUT_CAPACITY);
        }
    }

    #[test]
    fn placed_bytes_start_at_the_same_page_offset_and_are_the_same_bytes() {
        for len in [0, 1, 100, 5000, 70_000] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let placed = Placed::new(&bytes);
            assert_eq!(&*placed, &bytes[..]);
            assert_eq!(placed.as_ptr() as usize % PAGE, INPUT_PAGE_OFFSET, "{len} bytes");
        }
    }
}
