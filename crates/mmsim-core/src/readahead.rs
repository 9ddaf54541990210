//! File readahead (mm/readahead.c), as of v6.6 (v6.18 with large folios).
//!
//! A buffered read or a fault on a file mapping that misses the page cache
//! does not read just the missing page: the kernel guesses what comes next.
//! This module models that guess, which decides how many pages a sequential
//! scan brings in, how much a random reader pollutes the cache, and how much
//! IO a streaming reader overlaps with its own work.
//!
//! ## State
//!
//! [`FileRaState`] is `struct file_ra_state`: the window of the most recent
//! readahead (`start`, `size`, and `async_size`, the tail of the window
//! whose first page carries `PG_readahead`), the limit `ra_pages`
//! (`read_ahead_kb` / 4, doubled by `FADV_SEQUENTIAL`), `prev_pos` (where
//! the previous read ended) and `mmap_miss`. mmsim keeps one per file for
//! `read()` (every file is opened once, as by threads sharing a descriptor)
//! and one per open file of the mappings for faults (`vma->vm_file->f_ra`,
//! [`RaSlots`]).
//!
//! **Per open file (`crate::open`):** v6.12 keeps one `file_ra_state` per
//! `struct file` (`file_ra_state_init` at each `open`), so two tasks that
//! open a file each and read it sequentially at different offsets have
//! independent windows. `Sim::open_file` models that: each open has its own
//! state (a [`RaSlots`] slot, [`RaOwner::Open`]), read through by
//! `Event::FdRead`, advised by `Sim::fadvise_fd`, and mapped by
//! `Sim::mmap_fd` (the VMA shares the open's slot). `Event::FileRead`, which
//! carries the file and not an open file, keeps one state per file
//! ([`RaOwner::Fd`], `File::ra`: every file opened once, as by threads
//! sharing a descriptor; a file has one reader, `Sim::open`'s last caller,
//! whose group every miss of it is charged to), so two streams of it
//! interleave in that state (`ondemand_readahead` sees a jump, not a
//! stream), which is what fio's `shared_file` jobs do here, where fio opens
//! the file once per job.
//! The mapping side has the kernel's open-file descriptions
//! ([`RaSlots`]): each `mmap` (`Sim::mmap_file`, `Sim::mmap_file_private`)
//! is of a fresh `open`, as mmsim's workloads map files, and gets its own
//! `f_ra` slot; a forked child's VMA holds the parent's (`dup_mmap()` →
//! `get_file()`, `crate::fork`), so parent and child read ahead in one
//! state, as v6.12's do; a slot is freed when the last VMA holding it goes
//! (exit, `Event::Remap`; an OOM kill keeps them, [`RaSlots`]), counted
//! per slot. The `madvise`
//! advice is the VMA's (`vm_flags`, `Vma::ra_advice`), not the slot's.
//! Two mappings of one descriptor share its slot (`Sim::mmap_fd`); a
//! `Sim::mmap_file` is of a fresh open. Departure left: `munmap` + `mmap`
//! of the same descriptor, which keeps its `f_ra` in the kernel
//! (`Event::Remap` does not say whether the descriptor is the same, and
//! starts a fresh one, `crate::mmap`).
//!
//! ## The rules
//!
//! * `Sim::page_cache_sync_ra` (`page_cache_sync_ra`): on a miss. Under
//!   `FADV_RANDOM` (`FMODE_RANDOM`), or with readahead off, read exactly the
//!   request (`force_page_cache_ra`, at most `max(io_pages, ra_pages)`);
//!   otherwise the on-demand algorithm.
//! * `Sim::page_cache_async_ra` (`page_cache_async_ra`): on reaching a
//!   page marked `PG_readahead`: clear the mark and push the window on,
//!   unless the page is under writeback.
//! * `ondemand_readahead`: at offset 0 or right after the previous read
//!   (`index - prev_index <= 1`) or for an oversize request, an initial
//!   window of `get_init_ra_size` (4× a small request, 2× a medium one, the
//!   maximum beyond); at the expected marker, the next window of
//!   `get_next_ra_size` (4× while small, then 2×, capped) with
//!   `async_size = size`; at a marker without matching state (interleaved
//!   streams), a window sized from the cached run after it; a random read
//!   with at least `req_size + 1` cached pages right before it starts a
//!   context readahead (`try_context_readahead`, removed as a separate
//!   function in 6.10 but kept in substance); any other small random read
//!   reads just the request and leaves the state alone.
//! * `page_cache_ra_unbounded`: skip pages already cached, allocate and
//!   insert the others (refault detection runs on their shadows, as
//!   `filemap_add_folio` does), mark the page at `nr - lookahead` with
//!   `PG_readahead`, and submit one read per contiguous run; a folio whose
//!   allocation or charge fails ends the batch (what was added is read;
//!   under v4.9's rules a failed charge skips the page instead:
//!   [`read_pages`]).
//!   The mask is `readahead_gfp_mask` (`Sim::readahead_gfp`): its
//!   `__GFP_NORETRY` charge gives up after one reclaim pass and the stock
//!   drain (`Sim::try_charge_memcg`), so a group at its limit with nothing
//!   reclaimable reads no readahead and OOM-kills nothing for it; the page
//!   the reader waits for is then added by `filemap_create_folio` /
//!   `__filemap_get_folio(FGP_CREAT)` with the mapping's gfp, which retries.
//!   Readahead never reads past the end of the file. Without large folios this is
//!   all of it (`page_cache_ra_order`'s fallback path).
//! * Faults: `Sim::do_sync_mmap_readahead` (`VM_RAND_READ` reads nothing
//!   extra; `VM_SEQ_READ` does sync readahead of `ra_pages`; otherwise, while
//!   `mmap_miss` ≤ `MMAP_LOTSAMISS` (100), a read-around window of `ra_pages`
//!   centred on the fault with a quarter of it asynchronous) and
//!   `Sim::do_async_mmap_readahead` (a hit decrements `mmap_miss` and a
//!   marked page triggers async readahead) from mm/filemap.c.
//!
//! ## Large folios (`machine.fs.large_folios`, v6.18)
//!
//! A filesystem with large folios (ext4 since 6.16, xfs) gets v6.18's
//! windows and folio orders instead (`page_cache_sync_ra`,
//! `page_cache_async_ra` and `page_cache_ra_order` of mm/readahead.c, read
//! in the 6.18 source): a synchronous window sets `ra->order` to 0 and has
//! no merged next window (an initial window no larger than the request
//! keeps half of itself asynchronous); an asynchronous one matches its
//! marker rounded down to the marked folio, never shrinks, raises
//! `ra->order` by 2 and rounds its end down to `1 << min(order, ffs(max) -
//! 1)` pages. `Sim::page_cache_ra_order` then fills the window with folios
//! of that order (capped by `MAX_PAGECACHE_ORDER` 9 and `ilog2(size)`),
//! smaller where the index is less aligned or the window or file ends; the
//! folio holding the marker is marked; a cached page in a folio's range or
//! a failed allocation/charge (`__GFP_NORETRY`: one reclaim pass) ends the
//! large folios and the rest goes through the order-0 path. Read-around
//! sets `ra->order = 0` (v6.16+; the VM_EXEC order is arm64's) and so
//! reads order-0 folios; its marker's async readahead ramps the order as a
//! `read()` stream's does. Page-cache folios are then whole everywhere:
//! one LRU entry counted in pages, `folio_mark_accessed` once per folio
//! per read (`pos_same_folio` over the folio), every slot of the range
//! pointing at the folio, eviction storing one shadow over the range (a
//! refault anywhere in it finds it), writeback and refault counts in
//! pages, fault-around mapping a PTE per page, the rmap visiting each.
//! `write()` creates large folios too (`crate::filemap_write`, v6.18's
//! `write_begin` orders); PMD-size folios are mapped by PMDs and
//! MADV_HUGEPAGE reads around in PMD-size folios (`crate::filemap_pmd`).
//!
//! ## Checked against a real kernel
//!
//! `tools/raprobe.c` drops one file's page cache (`FADV_DONTNEED`), replays
//! a list of reads and faults and prints the cached pages (`mincore`);
//! `examples/readahead_probe.rs` does the same on the model. On the host
//! (6.18, ext4 on virtio, `read_ahead_kb` 8192) the cached page sets are
//! identical for: the first read at offset 0 (0..4), `FADV_RANDOM` reads, a
//! small random read without history (one page), context readahead (five
//! cached pages before the read give 95..106), an oversize 256-page read at
//! 0 (0..512), and `MADV_RANDOM` faults. They differ where 6.18 allocates
//! large page-cache folios (ext4 has had them since 6.16, and 6.10–6.18
//! reworked `page_cache_ra_order`): twelve sequential reads from 0 leave
//! 0..80 cached there and 0..84 here, and later windows stay smaller. With
//! `machine.fs.large_folios` the model gives the host's sets (0..20 after
//! two reads, 0..80 after five to twelve, 0..320 after 21, with a sleep
//! after each read so that `mincore`, which counts only uptodate folios,
//! sees the asynchronous windows; `tools/raprobe.c`'s `s`). A read-around
//! fault at page 100 reads 0..2048 on both once its IO completes.
//!
//! ## Time
//!
//! Synchronous readahead makes the reader wait for the whole IO. An
//! asynchronous readahead is submitted and not waited for; its window and
//! completion time are remembered in the state, and a later read of one of
//! its pages before completion waits for the rest (the kernel waits on the
//! locked, not yet uptodate folio). A file has only its latest asynchronous
//! window in flight, which is exact for one stream per file.

use crate::mem::filemap::{slot_folio, SLOT_FOLIO};
use crate::mem::folio::{flags, FolioId};
use crate::sim::Sim;
use crate::stats::item::*;
use crate::FileId;

/// `MAX_PAGECACHE_ORDER` on x86-64 with 4 KiB pages: `min(MAX_XAS_ORDER,
/// PREFERRED_MAX_PAGECACHE_ORDER)` = the PMD order, 9 (include/linux/pagemap.h,
/// v6.10+), which is `mapping_max_folio_order()` of a filesystem that sets
/// large folios without a maximum (ext4, xfs).
pub(crate) const MAX_PAGECACHE_ORDER: u8 = 9;

/// `MMAP_LOTSAMISS`: beyond this many more misses than hits on a file
/// mapping, fault read-around stops.
pub(crate) const MMAP_LOTSAMISS: u32 = 100;

/// How a reader told the kernel it will access a file (`posix_fadvise`) or a
/// mapping (`madvise`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Advice {
    /// `FADV_NORMAL` / `MADV_NORMAL`: on-demand readahead.
    #[default]
    Normal,
    /// `FADV_RANDOM` (`FMODE_RANDOM`) / `MADV_RANDOM` (`VM_RAND_READ`): read
    /// exactly what is asked for.
    Random,
    /// `FADV_SEQUENTIAL` (window limit doubled) / `MADV_SEQUENTIAL`
    /// (`VM_SEQ_READ`: sync readahead on every fault miss).
    Sequential,
}

impl Advice {
    /// The name used in scenarios: `normal`, `random`, `sequential`.
    pub fn name(self) -> &'static str {
        match self {
            Advice::Normal => "normal",
            Advice::Random => "random",
            Advice::Sequential => "sequential",
        }
    }
}

/// `struct file_ra_state`, plus the asynchronous window still in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileRaState {
    /// First page of the most recent readahead window.
    pub start: u32,
    /// Its size in pages.
    pub size: u32,
    /// Pages at its end that are read asynchronously; the first of them is
    /// marked `PG_readahead`.
    pub async_size: u32,
    /// The window limit (`ra_pages`), 0 when readahead is off.
    pub ra_pages: u32,
    /// `prev_pos >> PAGE_SHIFT`: the page right after the previous read, or
    /// [`FileRaState::NO_PREV`] before the first (`prev_pos = -1`).
    pub prev_index: u32,
    /// Fault misses minus hits on a mapping (`mmap_miss`).
    pub mmap_miss: u32,
    /// The advice in force.
    pub advice: Advice,
    /// The last asynchronous readahead: its pages `[inflight_start,
    /// inflight_end)` are readable at `inflight_done` (ns).
    pub inflight_start: u32,
    /// End (exclusive) of the in-flight window.
    pub inflight_end: u32,
    /// Completion time of the in-flight window.
    pub inflight_done: u64,
    /// `ra->order` (v6.16+): the folio order the last readahead asked for,
    /// raised by 2 at each asynchronous readahead. Used only when the
    /// filesystem has large folios (`machine.fs.large_folios`).
    pub order: u8,
}

impl FileRaState {
    /// `prev_pos == -1`: nothing read yet.
    pub(crate) const NO_PREV: u32 = u32::MAX;

    /// `file_ra_state_init()`: limit `ra_pages`, no history.
    pub(crate) fn new(ra_pages: u32) -> Self {
        FileRaState {
            start: 0,
            size: 0,
            async_size: 0,
            ra_pages,
            prev_index: Self::NO_PREV,
            mmap_miss: 0,
            advice: Advice::Normal,
            inflight_start: 0,
            inflight_end: 0,
            inflight_done: 0,
            order: 0,
        }
    }

    /// `generic_fadvise()` / `madvise_behavior()`: set `advice`, with
    /// `FADV_SEQUENTIAL` doubling the limit and the others restoring it.
    pub(crate) fn advise(&mut self, advice: Advice, bdi_ra_pages: u32) {
        self.advice = advice;
        self.ra_pages = match advice {
            Advice::Sequential => bdi_ra_pages * 2,
            _ => bdi_ra_pages,
        };
    }

    /// Whether `index - prev_index <= 1` in the kernel's unsigned arithmetic
    /// (the read starts where the previous one ended, or in its last page).
    fn follows_previous(&self, index: u32) -> bool {
        self.prev_index != Self::NO_PREV && (index as u64).wrapping_sub(self.prev_index as u64) <= 1
    }
}

/// `get_init_ra_size()`: the first window for a request of `size` pages.
pub(crate) fn get_init_ra_size(size: u32, max: u32) -> u32 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size()`: ramp the previous window `cur` up.
pub(crate) fn get_next_ra_size(cur: u32, max: u32) -> u32 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// `ractl_max_pages()` (mm/readahead.c, v6.10+): the window limit
/// `ra_pages`, raised to `min(req, io_pages)` for a larger request.
pub(crate) fn ractl_max_pages(ra_pages: u32, io_pages: u32, req: u32) -> u32 {
    if req > ra_pages && io_pages > ra_pages {
        req.min(io_pages)
    } else {
        ra_pages
    }
}

/// The open-file descriptions of file mappings and of `Sim::open_file`, as
/// far as readahead sees them: one `file_ra_state` (`file->f_ra`) per slot,
/// shared by every VMA whose `vm_file` is that `struct file` (v6.12:
/// `mmap_region()` takes the caller's file, `dup_mmap()` gives the child's
/// VMA the parent's with `get_file()`), with a count of those VMAs and of
/// the descriptor that holds it (`crate::open`, never closed); a slot is
/// freed when the last one goes (`fput()` at `remove_vma()`: exit, `Event::Remap`'s `munmap`)
/// and reused by the next `mmap`. An OOM kill puts nothing (the kernel's
/// `fput` is the victim's later `exit_mmap`, which mmsim does not model
/// after a kill): a killed task's VMAs hold their slots to the end. A fault reads the state through
/// the VMA's slot index ([`crate::mem::pagetable::Vma::ra_slot`]): no
/// lookup. The advice (`VM_SEQ_READ`, `VM_RAND_READ`) is the VMA's own
/// (`vm_flags`), not the file's: [`crate::mem::pagetable::Vma::ra_advice`].
#[derive(Clone, Debug, Default)]
pub(crate) struct RaSlots {
    states: Vec<FileRaState>,
    refs: Vec<u32>,
    free: Vec<u32>,
}

impl RaSlots {
    /// No slot: an anonymous VMA, or one whose task has exited.
    pub(crate) const NONE: u32 = u32::MAX;

    /// A new `struct file` (`file_ra_state_init()`, limit `ra_pages`) held
    /// by one VMA; a freed slot is reused first.
    pub(crate) fn open(&mut self, ra_pages: u32) -> u32 {
        let st = FileRaState::new(ra_pages);
        if let Some(slot) = self.free.pop() {
            self.states[slot as usize] = st;
            self.refs[slot as usize] = 1;
            return slot;
        }
        self.states.push(st);
        self.refs.push(1);
        (self.states.len() - 1) as u32
    }

    /// One VMA more holds `slot` (`get_file()`).
    pub(crate) fn share(&mut self, slot: u32) -> u32 {
        if slot != Self::NONE {
            self.refs[slot as usize] += 1;
        }
        slot
    }

    /// One VMA less holds `slot` (`fput()`); the last frees it.
    pub(crate) fn put(&mut self, slot: u32) {
        if slot == Self::NONE {
            return;
        }
        let r = &mut self.refs[slot as usize];
        *r -= 1;
        if *r == 0 {
            self.free.push(slot);
        }
    }

    /// The VMAs holding `slot` (its `struct file`'s count here).
    #[cfg(test)]
    pub(crate) fn refs(&self, slot: u32) -> u32 {
        self.refs[slot as usize]
    }

    /// The state of `slot`.
    #[inline]
    pub(crate) fn get(&self, slot: u32) -> &FileRaState {
        &self.states[slot as usize]
    }

    /// The state of `slot`, to change.
    #[inline]
    pub(crate) fn get_mut(&mut self, slot: u32) -> &mut FileRaState {
        &mut self.states[slot as usize]
    }

    /// Each slot's count is the number of holders in `slots` (the live
    /// VMAs' and the descriptors' slot indices) that hold it, and the free slots are those with none
    /// (`Sim::check_invariants`).
    pub(crate) fn check(&self, slots: impl Iterator<Item = u32>) -> Result<(), String> {
        let mut held = vec![0u32; self.refs.len()];
        for s in slots.filter(|&s| s != Self::NONE) {
            *held
                .get_mut(s as usize)
                .ok_or_else(|| format!("a VMA holds f_ra slot {s}, which does not exist"))? += 1;
        }
        let mut free = self.free.clone();
        free.sort_unstable();
        let unheld: Vec<u32> = (0..held.len() as u32)
            .filter(|&s| held[s as usize] == 0)
            .collect();
        if held != self.refs || free != unheld {
            return Err(format!(
                "f_ra slots: counts {:?}, VMAs holding {held:?}, free {free:?}",
                self.refs
            ));
        }
        Ok(())
    }
}

/// Which state a readahead works on: the file's `read()` state, an open
/// file's (`crate::open`) or a mapping's.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RaOwner {
    /// `file->f_ra` of the file opened for `read()` (`Event::FileRead`:
    /// one per file).
    Fd(FileId),
    /// `file->f_ra` of open file description `Fd` (`Sim::open_file`,
    /// `Event::FdRead`): a slot of [`RaSlots`].
    Open(crate::open::Fd),
    /// `vma->vm_file->f_ra` of a file mapping.
    Vma(crate::VmaId),
}

impl Sim {
    fn ra_state(&self, owner: RaOwner) -> FileRaState {
        match owner {
            RaOwner::Fd(file) => self.files[file as usize].ra,
            RaOwner::Open(fd) => *self.ra_slots.get(self.fds[fd as usize].ra_slot),
            RaOwner::Vma(vma) => self.vma_ra(vma),
        }
    }

    fn set_ra_state(&mut self, owner: RaOwner, ra: FileRaState) {
        match owner {
            RaOwner::Fd(file) => self.files[file as usize].ra = ra,
            RaOwner::Open(fd) => *self.ra_slots.get_mut(self.fds[fd as usize].ra_slot) = ra,
            RaOwner::Vma(vma) => {
                // The slot's `advice` is its file's `FMODE_RANDOM` (set by
                // `Sim::fadvise_fd`); `ra.advice` is the VMA's (`vma_ra`).
                let slot = self.vma_ra_mut(vma);
                let fmode = slot.advice;
                *slot = ra;
                slot.advice = fmode;
            }
        }
    }

    /// The `read()` state of `owner` (`Fd` or `Open`), to change in place.
    #[inline(always)]
    pub(crate) fn read_ra_mut(&mut self, owner: RaOwner, file: FileId) -> &mut FileRaState {
        match owner {
            RaOwner::Open(fd) => self.ra_slots.get_mut(self.fds[fd as usize].ra_slot),
            _ => &mut self.files[file as usize].ra,
        }
    }

    /// The stored `f_ra` of `owner`, read in place: a file's or an open
    /// file description's state, or a mapping's slot (the `struct file`'s
    /// `f_ra`, shared by its VMAs). The same fields as [`Sim::ra_state`]
    /// but `advice`, which is here the slot's (the file's `FMODE_RANDOM`)
    /// where `ra_state` gives a VMA's own. For the readers of one or two
    /// fields on every page-cache miss (`page_cache_sync_ra`'s forced
    /// test, `inflight_until`), which need no copy of the whole state.
    #[inline(always)]
    pub(crate) fn ra_ref(&self, owner: RaOwner) -> &FileRaState {
        match owner {
            RaOwner::Fd(file) => &self.files[file as usize].ra,
            RaOwner::Open(fd) => self.ra_slots.get(self.fds[fd as usize].ra_slot),
            RaOwner::Vma(vma) => self.ra_slots.get(self.vmas[vma as usize].ra_slot),
        }
    }

    /// The `vma->vm_file->f_ra` of file mapping `vma` (its slot's, shared
    /// with the other VMAs of its `struct file`), with the VMA's own
    /// advice.
    #[inline]
    pub(crate) fn vma_ra(&self, vma: crate::VmaId) -> FileRaState {
        let v = &self.vmas[vma as usize];
        let mut ra = *self.ra_slots.get(v.ra_slot);
        ra.advice = v.ra_advice;
        ra
    }

    /// The `vma->vm_file->f_ra` of file mapping `vma`, to change (its
    /// `advice` is not read: the VMA's is, [`Sim::vma_ra`]).
    #[inline]
    pub(crate) fn vma_ra_mut(&mut self, vma: crate::VmaId) -> &mut FileRaState {
        let slot = self.vmas[vma as usize].ra_slot;
        self.ra_slots.get_mut(slot)
    }

    /// VMA `vma` goes (`remove_vma()` → `fput()`): it no longer holds its
    /// `struct file`'s readahead state.
    pub(crate) fn vma_put_file(&mut self, vma: crate::VmaId) {
        let slot = std::mem::replace(&mut self.vmas[vma as usize].ra_slot, RaSlots::NONE);
        self.ra_slots.put(slot);
    }

    /// `page_cache_sync_ra()` (mm/readahead.c, v6.12): a miss at `index`
    /// for a request of `req` pages. Returns when the pages it read are
    /// uptodate (0 if it read nothing).
    ///
    /// Forced (`force_page_cache_ra` of the request, or of one page when
    /// readahead is off: `!ra->ra_pages`) when the file is opened
    /// `FMODE_RANDOM` (`ractl->file->f_mode`): a descriptor's `FADV_RANDOM`,
    /// or that of the open file a mapping was made from (never set for a
    /// mapping of its own open, [`Sim::mmap_file`]); both are the stored
    /// state's `advice` ([`Sim::ra_ref`]), not a VMA's `MADV_RANDOM`.
    /// That test inline (every page-cache miss of a random reader takes
    /// it), the on-demand rest out of line.
    #[inline(always)]
    pub(crate) fn page_cache_sync_ra(
        &mut self,
        owner: RaOwner,
        file: FileId,
        index: u32,
        req: u32,
    ) -> u64 {
        let ra = self.ra_ref(owner);
        let (ra_pages, forced) = (ra.ra_pages, ra.advice == Advice::Random);
        if ra_pages == 0 || forced {
            let req = if ra_pages == 0 { 1 } else { req };
            return self.force_page_cache_ra(file, index, req, ra_pages);
        }
        self.sync_ra_ondemand(owner, file, index, req)
    }

    /// [`Sim::page_cache_sync_ra`] past its forced test: the large-folio
    /// window or `ondemand_readahead`.
    #[inline(never)]
    fn sync_ra_ondemand(&mut self, owner: RaOwner, file: FileId, index: u32, req: u32) -> u64 {
        if self.cfg.fs.large_folios {
            return self.page_cache_sync_ra_large(owner, file, index, req);
        }
        self.ondemand_readahead(owner, file, index, req, false)
    }

    /// `page_cache_async_ra()`: the reader reached folio `f` at `index`,
    /// marked `PG_readahead`.
    pub(crate) fn page_cache_async_ra(
        &mut self,
        owner: RaOwner,
        file: FileId,
        f: FolioId,
        index: u32,
        req: u32,
    ) {
        if self.ra_state(owner).ra_pages == 0 || self.folios[f].test(flags::WRITEBACK) {
            return;
        }
        self.folios[f].clear(flags::READAHEAD);
        let done = if self.cfg.fs.large_folios {
            self.page_cache_async_ra_large(owner, file, f, index, req)
        } else {
            self.ondemand_readahead(owner, file, index, req, true)
        };
        if done > 0 {
            let mut ra = self.ra_state(owner);
            ra.inflight_start = ra.start;
            ra.inflight_end = ra.start.saturating_add(ra.size);
            ra.inflight_done = done;
            self.set_ra_state(owner, ra);
        }
    }

    /// `force_page_cache_ra()`: read exactly `req` pages (at most
    /// `max(io_pages, ra_pages)`), with no readahead mark.
    pub(crate) fn force_page_cache_ra(
        &mut self,
        file: FileId,
        index: u32,
        req: u32,
        ra_pages: u32,
    ) -> u64 {
        let max = self.cfg.io_pages().max(ra_pages);
        self.do_page_cache_ra(file, index, req.min(max), 0)
    }

    /// `ondemand_readahead()` of v6.6 for order-0 folios; `marker` is true
    /// when called for a folio marked `PG_readahead` (the `folio` argument).
    fn ondemand_readahead(
        &mut self,
        owner: RaOwner,
        file: FileId,
        index: u32,
        req: u32,
        marker: bool,
    ) -> u64 {
        let mut ra = self.ra_state(owner);
        let io_pages = self.cfg.io_pages();
        let mut max = ra.ra_pages;
        if req > max && io_pages > max {
            max = req.min(io_pages);
        }
        let initial = |ra: &mut FileRaState| {
            ra.start = index;
            ra.size = get_init_ra_size(req, max);
            ra.async_size = if ra.size > req {
                ra.size - req
            } else {
                ra.size
            };
        };
        let expected = ra.start.wrapping_add(ra.size).wrapping_sub(ra.async_size);
        if index == 0 {
            initial(&mut ra);
        } else if index == expected || index == ra.start.wrapping_add(ra.size) {
            ra.start = ra.start.wrapping_add(ra.size);
            ra.size = get_next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if marker {
            // Interleaved streams: size the window from the cached run.
            let start = self.page_cache_next_miss(file, index + 1, max);
            if start == 0 || start - index > max {
                return 0;
            }
            ra.start = start;
            ra.size = get_next_ra_size(start - index + req, max);
            ra.async_size = ra.size;
        } else if req > max || ra.follows_previous(index) {
            initial(&mut ra);
        } else if let Some(size) = self.context_readahead_size(file, index, req, max) {
            ra.start = index;
            ra.size = size;
            ra.async_size = 1;
        } else {
            // A standalone small random read: read as is, state untouched.
            return self.do_page_cache_ra(file, index, req, 0);
        }
        // Will this read hit the marker it is about to set? Then merge the
        // next window into this one now.
        if index == ra.start && ra.size == ra.async_size {
            let add = get_next_ra_size(ra.size, max);
            if ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        self.set_ra_state(owner, ra);
        self.do_page_cache_ra(file, ra.start, ra.size, ra.async_size)
    }

    /// `page_cache_sync_ra()` of v6.18 (mm/readahead.c) after the forced
    /// case, for a filesystem with large folios: the v6.6 windows without
    /// the merge of the next window into an initial one (an initial window
    /// no larger than the request keeps half of itself asynchronous), and
    /// `ra->order = 0` before [`Sim::page_cache_ra_order`].
    #[inline(never)]
    fn page_cache_sync_ra_large(
        &mut self,
        owner: RaOwner,
        file: FileId,
        index: u32,
        req: u32,
    ) -> u64 {
        let mut ra = self.ra_state(owner);
        let max = ractl_max_pages(ra.ra_pages, self.cfg.io_pages(), req);
        if index == 0 || req > max || ra.follows_previous(index) {
            ra.start = index;
            ra.size = get_init_ra_size(req, max);
            ra.async_size = if ra.size > req {
                ra.size - req
            } else {
                ra.size >> 1
            };
        } else if let Some(size) = self.context_readahead_size(file, index, req, max) {
            // The cached history before `index` (`page_cache_prev_miss`).
            ra.start = index;
            ra.size = size;
            ra.async_size = 1;
        } else {
            // A standalone small random read: read as is, state untouched.
            return self.do_page_cache_ra(file, index, req, 0);
        }
        ra.order = 0;
        self.set_ra_state(owner, ra);
        self.page_cache_ra_order(owner, file)
    }

    /// `page_cache_async_ra()` of v6.18 (mm/readahead.c) for a filesystem
    /// with large folios, at folio `f` marked `PG_readahead` (the flag is
    /// cleared by the caller): at the expected index (the marker rounded
    /// down to `f`'s size) the window moves on and ramps up (never
    /// shrinking); at another marker (interleaved streams) it is sized from
    /// the cached run after `index`. Then `ra->order += 2`, the window's
    /// end is rounded down to `1 << min(order, ffs(max) - 1)` pages if that
    /// leaves something, the whole window is asynchronous, and
    /// [`Sim::page_cache_ra_order`] reads it.
    #[inline(never)]
    fn page_cache_async_ra_large(
        &mut self,
        owner: RaOwner,
        file: FileId,
        f: FolioId,
        index: u32,
        req: u32,
    ) -> u64 {
        let mut ra = self.ra_state(owner);
        let max = ractl_max_pages(ra.ra_pages, self.cfg.io_pages(), req);
        let nr = 1u32 << self.folios[f].order();
        let expected = ra.start.wrapping_add(ra.size).wrapping_sub(ra.async_size) & !(nr - 1);
        if index == expected {
            ra.start = ra.start.wrapping_add(ra.size);
            ra.size = ra.size.max(get_next_ra_size(ra.size, max));
        } else {
            let start = self.page_cache_next_miss(file, index + 1, max);
            if start == 0 || start - index > max {
                return 0;
            }
            ra.start = start;
            ra.size = get_next_ra_size(start - index + req, max);
        }
        ra.order = ra.order.saturating_add(2);
        let align = 1u32 << u32::from(ra.order).min(max.trailing_zeros());
        let end = ra.start.wrapping_add(ra.size);
        let aligned_end = end & !(align - 1);
        if aligned_end > ra.start {
            ra.size -= end - aligned_end;
        }
        ra.async_size = ra.size;
        self.set_ra_state(owner, ra);
        self.page_cache_ra_order(owner, file)
    }

    /// `page_cache_ra_order()` of v6.18 (mm/readahead.c) for the window in
    /// the state of `owner` on a filesystem with large folios: the order
    /// is `ra->order` capped by [`MAX_PAGECACHE_ORDER`] and by
    /// `ilog2(size)` (and stored back); from the window's start, each folio
    /// takes that order, or the largest the index is aligned to, lowered
    /// until it ends inside the window and the file; the folio holding the
    /// marker (`start + size - async_size`, rounded down to the folio) gets
    /// `PG_readahead` (`ra_alloc_folio`). The first folio that cannot be
    /// allocated or charged, or whose range holds a cached page
    /// (`filemap_add_folio`'s -EEXIST), ends the loop; the folios added are
    /// read in one IO (`read_pages`), and the rest of the window goes to
    /// the order-0 path (`do_page_cache_ra`, which skips cached pages).
    /// Returns the last completion time (0 if nothing was read).
    #[inline(never)]
    pub(crate) fn page_cache_ra_order(&mut self, owner: RaOwner, file: FileId) -> u64 {
        let mut ra = self.ra_state(owner);
        let pages = self.files[file as usize].pages;
        let start = ra.start;
        if pages == 0 || start >= pages || ra.size == 0 {
            return 0;
        }
        let limit = (pages - 1).min(start + (ra.size - 1));
        let mark = start.wrapping_add(ra.size).wrapping_sub(ra.async_size);
        let new_order = ra
            .order
            .min(MAX_PAGECACHE_ORDER)
            .min((31 - ra.size.leading_zeros()) as u8);
        ra.order = new_order;
        self.set_ra_state(owner, ra);
        let mut index = start;
        let (mut run, mut workingset, mut err) = (0u64, false, false);
        while index <= limit {
            let mut order = new_order;
            if index & ((1u32 << order) - 1) != 0 {
                order = index.trailing_zeros() as u8;
            }
            while order > 0 && index + ((1u32 << order) - 1) > limit {
                order -= 1;
            }
            let Some(f) = self.ra_alloc_folio(file, index, mark, order) else {
                err = true;
                break;
            };
            workingset |= self.folios[f].test(flags::WORKINGSET);
            run += 1u64 << order;
            index += 1u32 << order;
        }
        let done = self.submit_ra_run(file, index, &mut run, &mut workingset);
        if !err {
            return done;
        }
        let ra = self.ra_state(owner);
        if ra.size > index - start {
            let rest = self.do_page_cache_ra(file, index, ra.size - (index - start), ra.async_size);
            return done.max(rest);
        }
        done
    }

    /// `ra_alloc_folio()` (mm/readahead.c, v6.18): a folio of `order` at
    /// `index`, marked `PG_readahead` if it holds `mark`, added to the page
    /// cache; None if a page of its range is cached (checked first here,
    /// after the allocation in the kernel, which then frees it) or the
    /// allocation or charge failed.
    #[inline(never)]
    fn ra_alloc_folio(
        &mut self,
        file: FileId,
        index: u32,
        mark: u32,
        order: u8,
    ) -> Option<FolioId> {
        let n = 1u32 << order;
        let fo = &self.files[file as usize];
        if (index..index + n).any(|i| fo.slot(i) & SLOT_FOLIO != 0) {
            return None;
        }
        let f = if order == 0 {
            let slot = fo.slot(index);
            self.filemap_add_folio(file, index, slot, false, self.readahead_gfp())?
        } else {
            self.filemap_add_large_folio(file, index, order, false)?
        };
        self.ra_lock_folio(f, false);
        if index == mark & !(n - 1) {
            self.folios[f].set(flags::READAHEAD);
        }
        Some(f)
    }

    /// The mask of an order-0 readahead folio's allocation and charge:
    /// [`crate::gfp::GFP_READAHEAD`] (`readahead_gfp_mask` in the nofs scope
    /// of v5.8+), with `__GFP_FS` under v4.9's rules
    /// ([`crate::sim::ClassicRules::readahead_nofs`]). Both have
    /// `__GFP_NORETRY`.
    #[inline]
    pub(crate) fn readahead_gfp(&self) -> crate::gfp::Gfp {
        match self.policy {
            crate::sim::Policy::Classic(r) if !r.readahead_nofs => {
                crate::gfp::GFP_READAHEAD | crate::gfp::__GFP_FS
            }
            _ => crate::gfp::GFP_READAHEAD,
        }
    }

    /// `try_context_readahead()`: count the contiguous cached pages before
    /// `index` (`count_history_pages`, at most `max`); more than `req` of
    /// them make a window of `min(history + req, max)`, with the history
    /// doubled if it reaches back to the start of the file.
    fn context_readahead_size(&self, file: FileId, index: u32, req: u32, max: u32) -> Option<u32> {
        let slots = &self.files[file as usize].slots;
        let mut history = 0u32;
        while history < max && history < index {
            let i = (index - 1 - history) as usize;
            if slots.get(i).is_none_or(|&s| slot_folio(s).is_none()) {
                break;
            }
            history += 1;
        }
        if history <= req {
            return None;
        }
        if history >= index {
            history *= 2;
        }
        Some((history + req).min(max))
    }

    /// `page_cache_next_miss()`: the first page in `[index, index + max)`
    /// not in the page cache, or 0 if all are (the kernel's "none found").
    fn page_cache_next_miss(&self, file: FileId, index: u32, max: u32) -> u32 {
        let slots = &self.files[file as usize].slots;
        for i in index..index.saturating_add(max) {
            if slots
                .get(i as usize)
                .is_none_or(|&s| slot_folio(s).is_none())
            {
                return i;
            }
        }
        0
    }

    /// `do_page_cache_ra()` + `page_cache_ra_unbounded()` (mm/readahead.c,
    /// v6.12): reads pages `[index, index + nr)` that are not cached,
    /// clamped to the file, and marks the one at `nr - lookahead`
    /// `PG_readahead`. One read per contiguous run of new pages; returns the
    /// last completion time (0 if nothing was read).
    ///
    /// A window of one page (`force_page_cache_ra` of a one-page request:
    /// every page-cache miss of a random reader, a trace replayed `--as
    /// file`) takes the loop's one pass without the loop: that page, if not
    /// cached, added and read alone, marked if `lookahead` is 1 (the pass's
    /// `0 == nr - lookahead`). The same outcome (rule test
    /// `a_one_page_window_reads_as_the_loop`).
    pub(crate) fn do_page_cache_ra(
        &mut self,
        file: FileId,
        index: u32,
        nr: u32,
        lookahead: u32,
    ) -> u64 {
        let size = self.files[file as usize].pages;
        if index >= size {
            return 0;
        }
        let nr = nr.min(size - index);
        if nr == 1 {
            let slot = self.files[file as usize].slot(index);
            if slot & SLOT_FOLIO != 0 {
                return 0;
            }
            let Some(f) = self.filemap_add_folio(file, index, slot, false, self.readahead_gfp())
            else {
                return 0;
            };
            self.ra_lock_folio(f, false);
            if lookahead == 1 {
                self.folios[f].set(flags::READAHEAD);
            }
            let mut workingset = self.folios[f].test(flags::WORKINGSET);
            return self.submit_ra_run(file, index + 1, &mut 1, &mut workingset);
        }
        self.ra_loop(file, index, nr, lookahead)
    }

    /// [`Sim::do_page_cache_ra`]'s loop over a window of `nr` pages (already
    /// clamped to the file).
    pub(crate) fn ra_loop(&mut self, file: FileId, index: u32, nr: u32, lookahead: u32) -> u64 {
        let mut done = 0;
        let mut run = 0u64;
        let mut workingset = false;
        let gfp = self.readahead_gfp();
        // The page after the last one added: the end of the run in progress.
        let mut next = index;
        for i in 0..nr {
            let page = index + i;
            let slot = self.files[file as usize].slot(page);
            if slot & SLOT_FOLIO != 0 {
                done = done.max(self.submit_ra_run(file, page, &mut run, &mut workingset));
                continue;
            }
            let f = match self.ra_add_order0(file, page, slot, gfp) {
                read_pages::RaAdd::Added(f) => f,
                read_pages::RaAdd::Skip => {
                    done = done.max(self.submit_ra_run(file, page, &mut run, &mut workingset));
                    continue;
                }
                read_pages::RaAdd::Stop => break,
            };
            // Unsigned in the kernel: a window clamped at EOF below its lookahead wraps and marks nothing.
            if lookahead > 0 && i == nr.wrapping_sub(lookahead) {
                self.folios[f].set(flags::READAHEAD);
            }
            workingset |= self.folios[f].test(flags::WORKINGSET);
            run += 1;
            next = page + 1;
        }
        let done = done.max(self.submit_ra_run(file, next, &mut run, &mut workingset));
        self.ra_batch_end();
        done
    }

    /// `read_pages()`: submits one read of `run` pages of `file`, the
    /// pages before `end`. A run containing a
    /// workingset page is a memstall while it is submitted, and the reader's
    /// wait for it is one too (`folio_wait_bit_common`); the caller decides
    /// whether it waits, so the flag is only reset here. Its folios stay
    /// locked until it completes ([`read_lock`], under
    /// `machine.fs.ra_lock_until_read`).
    #[inline]
    fn submit_ra_run(
        &mut self,
        file: FileId,
        end: u32,
        run: &mut u64,
        workingset: &mut bool,
    ) -> u64 {
        if *run == 0 {
            return 0;
        }
        self.acc.file_pages_read += *run;
        self.count_vm_events(PGPGIN, 4 * *run);
        self.advance(self.cost.major_fault_ns);
        let done = self.fs.read(self.clock, *run);
        self.ra_read_submitted(file, end - *run as u32, *run as u32, done);
        self.ra_workingset |= *workingset;
        *run = 0;
        *workingset = false;
        done
    }

    /// `do_sync_mmap_readahead()`: a fault on `vma` missed the page cache at
    /// file page `index`. Returns the completion time of what it read.
    pub(crate) fn do_sync_mmap_readahead(
        &mut self,
        vma: crate::VmaId,
        file: FileId,
        index: u32,
    ) -> u64 {
        if self.vmas[vma as usize].thp_advice == crate::huge_memory::VmaThpAdvice::Hugepage {
            // VM_HUGEPAGE: PMD-order read-around (`crate::filemap_pmd`).
            return self.do_sync_mmap_readahead_pmd(vma, file, index);
        }
        let owner = RaOwner::Vma(vma);
        let mut ra = self.ra_state(owner);
        if ra.advice == Advice::Random || ra.ra_pages == 0 {
            return 0;
        }
        if ra.advice == Advice::Sequential {
            return self.page_cache_sync_ra(owner, file, index, ra.ra_pages);
        }
        if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
            ra.mmap_miss += 1;
        }
        if ra.mmap_miss > MMAP_LOTSAMISS {
            self.set_ra_state(owner, ra);
            return 0;
        }
        // Read-around: a window centred on the fault, a quarter of it async.
        ra.start = index.saturating_sub(ra.ra_pages / 2);
        ra.size = ra.ra_pages;
        ra.async_size = ra.ra_pages / 4;
        if self.cfg.fs.large_folios {
            // v6.16+: `ra->order = 0; page_cache_ra_order()` (no VM_EXEC
            // folio order on x86-64): order-0 folios up to the first cached
            // page, the rest through the fallback.
            ra.order = 0;
            self.set_ra_state(owner, ra);
            return self.page_cache_ra_order(owner, file);
        }
        self.set_ra_state(owner, ra);
        self.do_page_cache_ra(file, ra.start, ra.size, ra.async_size)
    }

    /// Waits for a synchronous readahead read that completes at `done`; a
    /// memstall if it brought back workingset pages.
    pub(crate) fn wait_readahead(&mut self, done: u64) {
        let memstall = std::mem::take(&mut self.ra_workingset);
        if done > 0 {
            self.io_wait(done, memstall);
        }
    }

    /// When the asynchronous readahead covering `page` completes, if it is
    /// still in flight (0 otherwise). A reader that reached such a page
    /// waits for it (`folio_wait_locked` on a folio not uptodate yet).
    #[inline(always)]
    pub(crate) fn inflight_until(&self, owner: RaOwner, page: u32) -> u64 {
        let ra = self.ra_ref(owner);
        if (ra.inflight_start..ra.inflight_end).contains(&page) && self.clock < ra.inflight_done {
            ra.inflight_done
        } else {
            0
        }
    }

    /// `do_async_mmap_readahead()`: a fault found folio `f` (file page
    /// `index`) cached: one miss less, and async readahead if it is marked.
    pub(crate) fn do_async_mmap_readahead(
        &mut self,
        vma: crate::VmaId,
        file: FileId,
        f: FolioId,
        index: u32,
    ) {
        let owner = RaOwner::Vma(vma);
        let mut ra = self.ra_state(owner);
        if ra.advice == Advice::Random || ra.ra_pages == 0 {
            return;
        }
        ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
        self.set_ra_state(owner, ra);
        if self.folios[f].test(flags::READAHEAD) {
            self.page_cache_async_ra(owner, file, f, index, ra.ra_pages);
        }
    }
}

impl Sim {
    /// The cached pages of `file` as `start..end` ranges separated by spaces (as
    /// `mincore` shows them; `tools/raprobe.c` prints the kernel's the same way).
    pub fn cached_ranges(&self, file: FileId) -> String {
        let Some(f) = self.files.get(file as usize) else {
            return String::new();
        };
        let mut out = String::new();
        let mut start = None;
        for p in 0..=f.slots.len() {
            let cached = f
                .slots
                .get(p)
                .is_some_and(|&s| crate::mem::filemap::slot_folio(s).is_some());
            match (cached, start) {
                (true, None) => start = Some(p),
                (false, Some(s)) => {
                    out.push_str(&format!("{s}..{p} "));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }
}

impl crate::config::MachineConfig {
    /// `bdi->ra_pages`: the readahead limit in pages.
    pub fn ra_pages(&self) -> u32 {
        self.read_ahead_kb / 4
    }

    /// `bdi->io_pages`: the largest IO in pages (`max_sectors_kb` / 4).
    pub fn io_pages(&self) -> u32 {
        self.max_sectors_kb / 4
    }
}

pub(crate) mod read_lock;
pub(crate) mod read_pages;
