//! Files and their page cache (`struct address_space`, mm/filemap.c).
//!
//! Each file has a dense array of 32-bit slots, one per page, grown on first
//! touch. A slot is empty (0), holds a resident folio (`SLOT_FOLIO | id`), or
//! holds a shadow entry left by eviction (any other value; see
//! [`crate::reclaim::workingset`]), exactly as the kernel's xarray holds either
//! a folio pointer or an xa_value shadow.

use super::folio::FolioId;
use super::pagetable::VmaId;
use crate::readahead::FileRaState;

/// Slot bit: the slot holds a resident folio.
pub(crate) const SLOT_FOLIO: u32 = 1 << 31;

/// Decodes a slot: Some(folio) if resident.
#[inline]
pub(crate) fn slot_folio(slot: u32) -> Option<FolioId> {
    if slot & SLOT_FOLIO != 0 {
        Some(slot & !SLOT_FOLIO)
    } else {
        None
    }
}

/// A file with its page cache.
#[derive(Clone, Debug)]
pub(crate) struct File {
    /// Name for reports.
    pub name: String,
    /// Size in pages (accesses beyond it are an error).
    pub pages: u32,
    /// Page cache slots, grown on first touch.
    pub slots: Vec<u32>,
    /// VMAs mapping this file (`i_mmap`), for the reverse map.
    pub mappings: Vec<VmaId>,
    /// Readahead state of the file opened for `read()` (`file->f_ra`).
    pub ra: FileRaState,
    /// The task reading and writing it through its descriptor
    /// ([`crate::Sim::open`]): its page-cache misses are charged to that
    /// task's memory cgroup (the top group if none).
    pub task: Option<crate::mem::pagetable::TaskId>,
    /// Pages `dirty_lo..dirty_hi` hold every dirty folio of the file (the
    /// range may hold clean ones too; empty when `dirty_lo >= dirty_hi`):
    /// widened by `Sim::folio_mark_dirty`, narrowed by a sync that covers
    /// it (`crate::filemap_sync`), which walks only this range instead of
    /// every page of the file (the kernel walks `PAGECACHE_TAG_DIRTY`).
    pub(crate) dirty_lo: u32,
    pub(crate) dirty_hi: u32,
}

impl File {
    /// A file of `pages` pages with an empty page cache and readahead limit `ra_pages`.
    pub(crate) fn new(name: String, pages: u32, ra_pages: u32) -> Self {
        File {
            name,
            pages,
            slots: Vec::new(),
            mappings: Vec::new(),
            ra: FileRaState::new(ra_pages),
            task: None,
            dirty_lo: u32::MAX,
            dirty_hi: 0,
        }
    }

    /// The slot of page `index`, growing the array if needed.
    #[inline]
    pub(crate) fn slot_mut(&mut self, index: u32) -> &mut u32 {
        let i = index as usize;
        if i >= self.slots.len() {
            self.grow(i);
        }
        &mut self.slots[i]
    }

    /// Grows the array to cover `i`: by a quarter at a time (never past the
    /// end of the region), so a partly touched region costs at most ~5 bytes
    /// per touched page while the copies stay amortised O(1).
    #[cold]
    fn grow(&mut self, i: usize) {
        let cur = self.slots.len();
        let want = (i + 1)
            .max(cur + cur / 4 + 1024)
            .min(self.pages as usize)
            .max(i + 1);
        self.slots.reserve_exact(want - cur);
        self.slots.resize(want, 0);
    }

    /// Pages `index..index + nr` now hold a dirty folio: widens the dirty
    /// range.
    #[inline]
    pub(crate) fn note_dirty(&mut self, index: u32, nr: u32) {
        self.dirty_lo = self.dirty_lo.min(index);
        self.dirty_hi = self.dirty_hi.max(index + nr);
    }

    /// The slot of page `index`, 0 if never touched.
    #[inline]
    pub(crate) fn slot(&self, index: u32) -> u32 {
        self.slots.get(index as usize).copied().unwrap_or(0)
    }
}
