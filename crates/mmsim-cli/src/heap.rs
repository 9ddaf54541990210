//! The process's heap, counted: a global allocator that wraps the system's and keeps
//! the bytes currently allocated and their peak.
//!
//! The run report's `sim memory` line and the run-time memory guard read it: the
//! simulator's own estimate (`sim_heap_bytes`) covers the machine's structures, this
//! covers everything (trace key maps, generators, buffers). The per-access path does
//! not allocate, so counting costs nothing there; an allocation pays two relaxed
//! atomic operations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counted.
pub struct CountingAlloc;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl CountingAlloc {
    fn add(bytes: usize) {
        let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }

    fn sub(bytes: usize) {
        CURRENT.fetch_sub(bytes, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is System's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Self::add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Self::add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        Self::sub(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                Self::add(new_size - layout.size());
            } else {
                Self::sub(layout.size() - new_size);
            }
        }
        p
    }
}

/// Bytes allocated now.
pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// The most bytes allocated at once since the process started.
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}
