//! The one counting allocator: the worker's allocation pass and the tests that bound or compare
//! allocations all install it (`#[global_allocator]`) and read it through [`measure`]; the
//! in-app binary installs [`HeapTracking`], which counts the same way over any allocator.
//!
//! Counting is per thread and off except inside [`measure`], so the timed loop pays one
//! thread-local load per allocation, the same for every implementation, and tests running in
//! parallel threads do not count each other's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct CountingAllocator;

/// What one thread allocated while counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Allocations and reallocations.
    pub allocations: u64,
    /// Bytes they asked for.
    pub bytes: u64,
    /// The largest single request.
    pub largest: usize,
}

#[derive(Clone, Copy)]
struct State {
    on: bool,
    counts: Counts,
}

thread_local! {
    static STATE: Cell<State> = const { Cell::new(State { on: false, counts: Counts { allocations: 0, bytes: 0, largest: 0 } }) };
}

#[inline]
fn record(size: usize) {
    // `try_with`: allocations during the thread's own teardown are not counted, never a panic.
    let _ = STATE.try_with(|state| {
        let mut s = state.get();
        if s.on {
            s.counts.allocations += 1;
            s.counts.bytes += size as u64;
            s.counts.largest = s.counts.largest.max(size);
            state.set(s);
        }
    });
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` with counting on for this thread; what it allocated. Only meaningful in a binary
/// whose global allocator is [`CountingAllocator`] (otherwise every count is zero).
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Counts) {
    let before = STATE.with(|s| s.replace(State { on: true, counts: Counts::default() }));
    let value = f();
    let after = STATE.with(|s| s.replace(before));
    (value, after.counts)
}

/// The live heap of the whole process, kept only by [`HeapTracking`].
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static PEAK_BYTES: AtomicUsize = AtomicUsize::new(0);

/// An allocator (`System`, mimalloc, jemalloc) counted like [`CountingAllocator`] counts the
/// system one, that also keeps the process's live heap and its peak across threads: what the
/// in-app measurement reports as peak and retained heap. Two atomic updates per allocation, so
/// it stays out of the worker whose loops are timed against a baseline; the in-app binary
/// compares formats with one another under one allocator at a time.
pub struct HeapTracking<A>(pub A);

/// The live heap now and the highest it reached since [`reset_peak`], in bytes requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heap {
    pub live: usize,
    pub peak: usize,
}

pub fn heap() -> Heap {
    Heap { live: LIVE_BYTES.load(Ordering::Relaxed), peak: PEAK_BYTES.load(Ordering::Relaxed) }
}

/// Starts a new peak from the live heap now.
pub fn reset_peak() {
    PEAK_BYTES.store(LIVE_BYTES.load(Ordering::Relaxed), Ordering::Relaxed);
}

#[inline]
fn grow(size: usize) {
    let live = LIVE_BYTES.fetch_add(size, Ordering::Relaxed) + size;
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
}

#[inline]
fn shrink(size: usize) {
    LIVE_BYTES.fetch_sub(size, Ordering::Relaxed);
}

unsafe impl<A: GlobalAlloc> GlobalAlloc for HeapTracking<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        let ptr = unsafe { self.0.alloc(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        let ptr = unsafe { self.0.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        let moved = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            shrink(layout.size());
            grow(new_size);
        }
        moved
    }
}
