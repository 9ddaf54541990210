//! Folios: the arena of resident memory and its page flags.
//!
//! A folio is the kernel's unit of memory management (`struct folio`,
//! include/linux/mm_types.h). Here every resident folio is a 20-byte slot in
//! one arena, addressed by a dense [`FolioId`], with an 8-byte link pair and
//! a 1-byte list tag in dense arrays beside it; list links are intrusive
//! (`prev`/`next` ids), so moving a folio between LRU lists never allocates.
//! The data model carries an `order` (0 for a 4 KiB page); anonymous faults
//! make larger ones when multi-size THP is on (`crate::huge_memory`). Each
//! folio's head page frame (`folio_pfn`) is in its slot, in one word with
//! the order (the frame is aligned to the order), read where the slot is
//! read anyway (a free reads it beside the group and the order); the memory
//! cgroup (`folio_memcg`) is in a side array allocated only when a folio is
//! first charged to a group other than the root. A resident folio costs
//! 20 + 8 + 1 = 29 host bytes, 31 on machines with groups (a writeback
//! completion names its folio by id alone: see `Sim::queue_writeback`); the
//! PFN → folio map (`mem_map`) is in `crate::page_alloc`.

/// Dense index of a folio in the arena.
pub(crate) type FolioId = u32;
/// "No page frame": the head PFN of a freed slot (every live folio has a
/// frame: the zone's, or the zero page's `ZERO_PAGE_PFN` below it).
pub(crate) const NO_PFN: u32 = u32::MAX;
/// "No folio": end of a list, or an empty link.
pub(crate) const NIL: FolioId = u32::MAX;

/// Page flags that reclaim looks at (include/linux/page-flags.h names).
pub(crate) mod flags {
    /// PG_lru: on an LRU list (cleared while isolated).
    pub(crate) const LRU: u16 = 1 << 0;
    /// PG_active.
    pub(crate) const ACTIVE: u16 = 1 << 1;
    /// PG_referenced: seen once recently through a file descriptor or a young PTE.
    pub(crate) const REFERENCED: u16 = 1 << 2;
    /// PG_workingset: was deactivated from an active list, or restored on refault.
    pub(crate) const WORKINGSET: u16 = 1 << 3;
    /// PG_dirty: contents differ from the backing store.
    pub(crate) const DIRTY: u16 = 1 << 4;
    /// PG_writeback: IO to the backing store in flight.
    pub(crate) const WRITEBACK: u16 = 1 << 5;
    /// PG_swapbacked: anonymous (or shmem) memory; lives on the anon LRU.
    pub(crate) const SWAPBACKED: u16 = 1 << 6;
    /// PG_swapcache: has a swap slot (`Folio::swap`).
    pub(crate) const SWAPCACHE: u16 = 1 << 7;
    /// PG_unevictable.
    pub(crate) const UNEVICTABLE: u16 = 1 << 8;
    /// PG_reclaim: reclaim wants it freed as soon as writeback completes.
    pub(crate) const RECLAIM: u16 = 1 << 9;
    /// Mapped executable (VM_EXEC) by at least one VMA: cached union of vm_flags.
    pub(crate) const EXEC_MAPPED: u16 = 1 << 10;
    /// PG_readahead: brought in by readahead and not yet used. The same bit
    /// as PG_reclaim (`PG_readahead = PG_reclaim` in `enum pageflags`,
    /// include/linux/page-flags.h, through v6.18): a dirty or writeback
    /// folio reclaim marked is a readahead marker to the next read
    /// (`filemap_get_pages` → `page_cache_async_ra`, which clears it and so
    /// cancels the rotation at writeback completion), and a readahead marker
    /// under writeback is rotated when its write completes
    /// (`folio_end_writeback`).
    pub(crate) const READAHEAD: u16 = RECLAIM;
    /// On its group's deferred split queue (`!list_empty(&folio->_deferred_list)`,
    /// v6.12): every PG_partially_mapped folio, and under `thp.kernel`
    /// 6.12/6.13 with `shrink_underused` a PMD-size folio queued whole at
    /// its fault or collapse (`deferred_split_folio(folio, false)`,
    /// `crate::deferred_split`). Never copied to split-off folios.
    /// (Bit 11 was mmsim's PMD_MAPPED, which went for `Vma::file_pmds`.)
    pub(crate) const DEFERRED_QUEUED: u16 = 1 << 11;
    /// PG_young: an accessed bit of the folio was cleared by someone other
    /// than reclaim (idle page tracking, DAMON); `folio_referenced` counts it.
    pub(crate) const YOUNG: u16 = 1 << 12;
    /// PG_idle: not accessed since the idle tracker marked it.
    pub(crate) const IDLE: u16 = 1 << 13;
    /// PG_partially_mapped (v6.12): a large anonymous folio some of whose
    /// pages were unmapped, on its group's deferred split queue
    /// (`crate::huge_memory`). Never copied to split-off folios.
    pub(crate) const PARTIALLY_MAPPED: u16 = 1 << 14;
    /// Not a kernel flag: the anonymous folio's content is not all zeros
    /// (the workload stored to it, or it came back from a slot that held
    /// data). mmsim's stand-in for `is_folio_zero_filled()` of
    /// mm/page_io.c, kept only under `machine.swap_zero_pages` (see
    /// `crate::swapfile`).
    pub(crate) const NONZERO: u16 = 1 << 15;
}

/// Which LRU list a folio is on (`enum lru_list`, include/linux/mmzone.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum LruList {
    /// LRU_INACTIVE_ANON
    InactiveAnon = 0,
    /// LRU_ACTIVE_ANON
    ActiveAnon = 1,
    /// LRU_INACTIVE_FILE
    InactiveFile = 2,
    /// LRU_ACTIVE_FILE
    ActiveFile = 3,
    /// LRU_UNEVICTABLE
    Unevictable = 4,
}

/// Marker in [`FolioArena::lru`] for "on no list" (isolated or free).
pub(crate) const NO_LIST: u8 = 0xff;

impl LruList {
    /// The four evictable lists in the kernel's `for_each_evictable_lru` order.
    pub(crate) const EVICTABLE: [LruList; 4] = [
        LruList::InactiveAnon,
        LruList::ActiveAnon,
        LruList::InactiveFile,
        LruList::ActiveFile,
    ];

    /// `folio_lru_list()`: the list a folio belongs on, from its flags.
    #[inline]
    pub(crate) fn of_flags(f: u16) -> LruList {
        if f & flags::UNEVICTABLE != 0 {
            return LruList::Unevictable;
        }
        let base = if f & flags::SWAPBACKED != 0 { 0 } else { 2 };
        let active = (f & flags::ACTIVE != 0) as u8;
        LruList::from_index(base + active)
    }
    /// Inverse of `as usize`.
    #[inline]
    pub(crate) fn from_index(i: u8) -> LruList {
        match i {
            0 => LruList::InactiveAnon,
            1 => LruList::ActiveAnon,
            2 => LruList::InactiveFile,
            3 => LruList::ActiveFile,
            _ => LruList::Unevictable,
        }
    }
    /// True for the file lists (`is_file_lru`).
    #[inline]
    pub(crate) fn is_file(self) -> bool {
        matches!(self, LruList::InactiveFile | LruList::ActiveFile)
    }
    /// True for the active lists (`is_active_lru`).
    #[inline]
    pub(crate) fn is_active(self) -> bool {
        matches!(self, LruList::ActiveAnon | LruList::ActiveFile)
    }
    /// The inactive list of a type: 0 anon, 1 file.
    #[inline]
    pub(crate) fn inactive(file: bool) -> LruList {
        if file {
            LruList::InactiveFile
        } else {
            LruList::InactiveAnon
        }
    }
    /// The active list of a type: 0 anon, 1 file.
    #[inline]
    pub(crate) fn active(file: bool) -> LruList {
        if file {
            LruList::ActiveFile
        } else {
            LruList::ActiveAnon
        }
    }
}

/// One resident folio: 20 bytes. Its LRU links and list tag live apart,
/// in [`FolioArena`]'s dense link and tag arrays, so that walking a list
/// from its tail touches 8 bytes per folio and the folios themselves can be
/// prefetched; its memory cgroup lives in the arena's side array, allocated
/// only at the first charge to a group other than the root
/// ([`FolioArena::memcg`]). Its order is folded into its head PFN's word
/// ([`Folio::order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Folio {
    /// Owner space: the VMA id for anonymous folios, the file id for file folios.
    pub space: u32,
    /// Page index within the owner space.
    pub index: u32,
    /// Swap slot + 1 while in the swap cache, else 0.
    pub swap: u32,
    /// Head page frame (`folio_pfn`) and order in one word: see
    /// [`Folio::order`] and [`FolioArena::head_pfn`].
    pfn_order: u32,
    /// Page flags ([`flags`]).
    pub flags: u16,
    /// Number of PTEs mapping the folio (saturating at 255).
    pub mapcount: u8,
    /// Multi-gen LRU fields of `folio->flags` (`LRU_GEN_MASK`,
    /// `LRU_REFS_MASK`): bits 0–2 the generation + 1 (0: not on an MGLRU
    /// list), bits 3–4 the refs counter. See `crate::reclaim::lru_gen`.
    /// Bit 7 is not MGLRU's: [`GEN_REFS_MAYWRITE`] (a spare bit of the
    /// folio; the MGLRU code keeps bits 5–7 as they are).
    pub gen_refs: u8,
}

/// The head PFN and the order in one 32-bit word, as the buddy allocator's
/// alignment allows (a folio's head frame is aligned to its order,
/// `folio_pfn(folio)` a multiple of `folio_nr_pages(folio)`, mm/page_alloc.c
/// `__rmqueue_smallest` and `expand`, v6.12): `pfn << 1 | 1 << order`, so
/// the order is the word's trailing zeros, `1 << order` its lowest set bit
/// and the PFN the rest shifted down. Frames are below
/// `NORMAL_START_PFN + MAX_MEMORY_PAGES` < 2^30, so valid words are below
/// 2^31; "no frame" ([`NO_PFN`]) is `u32::MAX << order`, bit 31 set.
#[inline(always)]
const fn encode_pfn_order(pfn: u32, order: u8) -> u32 {
    if pfn == NO_PFN {
        u32::MAX << order
    } else {
        pfn << 1 | 1 << order
    }
}

const _: () = assert!(
    crate::page_alloc::NORMAL_START_PFN + crate::config::MAX_MEMORY_PAGES <= 1 << 30,
    "head PFNs must fit the folio's 31-bit PFN/order word"
);

impl Folio {
    const FREE: Folio = Folio {
        space: u32::MAX,
        index: 0,
        swap: 0,
        pfn_order: encode_pfn_order(NO_PFN, 0),
        flags: 0,
        mapcount: 0,
        gen_refs: 0,
    };

    /// Tests a flag.
    #[inline]
    pub(crate) fn test(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
    /// Sets a flag.
    #[inline]
    pub(crate) fn set(&mut self, flag: u16) {
        self.flags |= flag;
    }
    /// Clears a flag.
    #[inline]
    pub(crate) fn clear(&mut self, flag: u16) {
        self.flags &= !flag;
    }
    /// Clears a flag and returns whether it was set (`folio_test_clear_*`).
    #[inline]
    pub(crate) fn test_and_clear(&mut self, flag: u16) -> bool {
        let was = self.flags & flag != 0;
        self.flags &= !flag;
        was
    }
    /// File-backed (not swap-backed): belongs on the file LRU (`folio_is_file_lru`).
    #[inline]
    pub(crate) fn is_file(&self) -> bool {
        self.flags & flags::SWAPBACKED == 0
    }
    /// Base pages in the folio (`folio_nr_pages`): the lowest set bit of
    /// the PFN/order word.
    #[inline]
    pub(crate) fn nr_pages(&self) -> u64 {
        (self.pfn_order & self.pfn_order.wrapping_neg()) as u64
    }
    /// log2 of the number of base pages (`folio_order`; 0 = 4 KiB): the
    /// PFN/order word's trailing zeros.
    #[inline]
    pub(crate) fn order(&self) -> u8 {
        self.pfn_order.trailing_zeros() as u8
    }
    /// Sets the order, keeping the head PFN (which must be aligned to it:
    /// a split lowers the order of a folio whose frame stays).
    #[inline]
    pub(crate) fn set_order(&mut self, order: u8) {
        let pfn = self.pfn();
        debug_assert!(
            pfn == NO_PFN || pfn & ((1 << order) - 1) == 0,
            "pfn {pfn} order {order}"
        );
        self.pfn_order = encode_pfn_order(pfn, order);
    }
    /// The head PFN, or [`NO_PFN`]: the word without its order bit, shifted down.
    #[inline]
    fn pfn(&self) -> u32 {
        let v = self.pfn_order;
        if (v as i32) < 0 {
            NO_PFN
        } else {
            (v & (v - 1)) >> 1
        }
    }
    /// Whether the clean PTEs mapping this anonymous folio are writable
    /// ([`GEN_REFS_MAYWRITE`]).
    #[inline]
    pub(crate) fn maywrite(&self) -> bool {
        self.gen_refs & GEN_REFS_MAYWRITE != 0
    }
    /// Sets or clears [`GEN_REFS_MAYWRITE`].
    #[inline]
    pub(crate) fn set_maywrite(&mut self, on: bool) {
        if on {
            self.gen_refs |= GEN_REFS_MAYWRITE;
        } else {
            self.gen_refs &= !GEN_REFS_MAYWRITE;
        }
    }
}

/// [`Folio::gen_refs`] bit 7: the kernel maps this exclusive anonymous
/// folio **writable** where mmsim's PTE is clean. mmsim's PTE has no write
/// bit (a clean PTE is a write-protected one, `crate::mem::pagetable`);
/// the one case where v6.12 maps an anonymous page writable and clean is a
/// read fault on an exclusive swap entry (`do_swap_page`'s `pte_mkwrite`,
/// v6.11+, `crate::fault_swapcache`), so the bit is per folio: set by such
/// a fault, cleared by fork's write-protection (`copy_present_ptes`) and
/// by reclaim's `try_to_unmap` (no PTE left), assigned by each read
/// swap-in, gone with the folio (a freed folio's fields are reset), kept
/// by migration and a split (both copy `gen_refs`). A store through a
/// clean PTE of a folio with the bit is the hardware setting the dirty
/// bit, not a fault ([`crate::sim::Sim::store_to_writable_clean`]).
///
/// Departure: the kernel's write bit is per PTE, this bit per folio. A
/// large folio whose PTEs were mapped by different faults (fork's
/// `map_swapcache_ptes`, with `set_shared(f, !exclusive)` for the whole
/// folio) takes the answer of the last fault for all its clean PTEs: a
/// page mapped read-only by an earlier fault counts as writable after a
/// later exclusive mapping of another page (and the other way round). The
/// folio-wide shared mark fork keeps is per folio already, so the two agree.
pub(crate) const GEN_REFS_MAYWRITE: u8 = 1 << 7;

/// [`Folio::gen_refs`] bit 6: PG_locked of a readahead folio whose read
/// has not completed (`crate::readahead::read_lock`). Not MGLRU's (the
/// MGLRU code keeps bits 5–7 as they are); cleared with the folio's other
/// fields when it is freed, moved with `gen_refs` by a migration.
pub(crate) const GEN_REFS_RA_LOCKED: u8 = 1 << 6;

/// The links of a folio on its LRU list: [prev (towards the head), next (towards the tail)].
pub(crate) type Links = [FolioId; 2];

/// The arena of folios with a free list; ids are reused LIFO. Each folio
/// has a 20-byte slot (with its head PFN and order), an 8-byte link pair
/// and a 1-byte list tag: 29 bytes per resident folio, and 2 more for its
/// memory cgroup once any folio has been charged to a group other than the
/// root.
#[derive(Clone, Debug, Default)]
pub(crate) struct FolioArena {
    slots: Vec<Folio>,
    links: Vec<Links>,
    /// Each folio's list tag ([`LruList`] as u8, an MGLRU list's tag, or
    /// [`NO_LIST`]): beside the links, which every list operation writes
    /// anyway. The kernel has no such field (`folio_lru_list` derives the
    /// list from the flags, `folio_lru_gen` the generation); mmsim's tag
    /// also tells reclaim's callers which list of a group to unlink from.
    lru: Vec<u8>,
    /// Each folio's memory cgroup (`folio_memcg`, `folio->memcg_data`);
    /// empty — every folio the root's — until the first folio is charged to
    /// another group, then as long as `slots` (as the swap owner map,
    /// `crate::swapfile`, is allocated only for groups).
    memcg: Vec<crate::memcg::MemcgId>,
    free: Vec<FolioId>,
    /// The test mode's generator state ([`FolioArena::permute_ids`]);
    /// `None`: off (ids handed out in order, reused LIFO).
    id_rng: Option<u64>,
}

impl FolioArena {
    /// An empty arena that can hold `capacity` folios without reallocating.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        FolioArena {
            slots: Vec::with_capacity(capacity),
            links: Vec::with_capacity(capacity),
            lru: Vec::with_capacity(capacity),
            memcg: Vec::new(),
            free: Vec::new(),
            id_rng: None,
        }
    }

    /// Test mode (issue #18, Stage B blocker 5: results must not depend on
    /// which id a folio gets): makes the ids below `ids` that no folio
    /// holds free slots and puts them on the free list in an order drawn
    /// from `seed`, so that new folios take them in that order instead of
    /// 0, 1, 2, …. Changes only the free list's contents: `alloc` and
    /// `free` run the same code (nothing is added to the hot path). Ids
    /// past `ids` are still handed out in order if the run needs them.
    pub(crate) fn permute_ids(&mut self, ids: usize, seed: u64) {
        self.id_rng = Some(seed);
        let start = self.slots.len();
        if ids > start {
            self.slots.reserve_exact(ids - start);
            self.links.reserve_exact(ids - start);
            self.lru.reserve_exact(ids - start);
            if !self.memcg.is_empty() {
                self.memcg.reserve_exact(ids - start);
            }
            for id in start..ids {
                self.slots.push(Folio::FREE);
                self.links.push([NIL, NIL]);
                self.lru.push(NO_LIST);
                if !self.memcg.is_empty() {
                    self.memcg.push(0);
                }
                self.free.push(id as FolioId);
            }
        }
        self.shuffle_free(usize::MAX);
    }

    /// Test mode ([`FolioArena::permute_ids`]): the next `k` ids the free
    /// list hands out are drawn at random from all of it (a partial
    /// Fisher–Yates shuffle of its top), so which id a new folio reuses is
    /// no longer the last one freed. No-op when the mode is off.
    pub(crate) fn shuffle_free(&mut self, k: usize) {
        let Some(mut rng) = self.id_rng else {
            return;
        };
        let n = self.free.len();
        for i in 0..k.min(n) {
            let top = n - 1 - i;
            // SplitMix64 (Steele, Lea, Flood 2014).
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let j = (z % (top as u64 + 1)) as usize;
            self.free.swap(top, j);
        }
        self.id_rng = Some(rng);
    }

    /// Allocates a folio slot, initialised for `space`/`index` with `flags`.
    #[inline]
    pub(crate) fn alloc(
        &mut self,
        space: u32,
        index: u32,
        flags: u16,
        memcg: crate::memcg::MemcgId,
    ) -> FolioId {
        self.alloc_framed(space, index, flags, memcg, NO_PFN)
    }

    /// [`FolioArena::alloc`] of a folio whose head page frame is already
    /// known: the slot written once, PFN included.
    #[inline(always)]
    pub(crate) fn alloc_framed(
        &mut self,
        space: u32,
        index: u32,
        flags: u16,
        memcg: crate::memcg::MemcgId,
        pfn: u32,
    ) -> FolioId {
        debug_assert!(pfn < 1 << 30 || pfn == NO_PFN, "pfn {pfn}");
        let f = Folio {
            space,
            index,
            flags,
            pfn_order: encode_pfn_order(pfn, 0),
            ..Folio::FREE
        };
        let id = match self.free.pop() {
            Some(id) => {
                *self.slot_mut(id) = f;
                id
            }
            None => self.grow(f),
        };
        if memcg != 0 || !self.memcg.is_empty() {
            self.set_memcg(id, memcg);
        }
        id
    }

    /// A new slot for `f` at the end of the arena (no freed id to reuse):
    /// out of line, as it happens once per folio the run ever holds at once.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, f: Folio) -> FolioId {
        if self.slots.len() == self.slots.capacity() {
            // Grow by a sixteenth: at most 6 % spare capacity.
            let more = (self.slots.len() / 16).max(1024);
            self.slots.reserve_exact(more);
            self.links.reserve_exact(more);
            self.lru.reserve_exact(more);
            if !self.memcg.is_empty() {
                self.memcg.reserve_exact(more);
            }
        }
        self.slots.push(f);
        self.links.push([NIL, NIL]);
        self.lru.push(NO_LIST);
        if !self.memcg.is_empty() {
            self.memcg.push(0);
        }
        (self.slots.len() - 1) as FolioId
    }

    /// Returns a folio slot to the free list.
    #[inline]
    pub(crate) fn free(&mut self, id: FolioId) {
        debug_assert_eq!(
            self.lru[id as usize], NO_LIST,
            "freeing a folio still on a list"
        );
        *self.slot_mut(id) = Folio::FREE;
        if let Some(m) = self.memcg.get_mut(id as usize) {
            *m = 0;
        }
        self.free.push(id);
    }

    /// `folio_pfn`: the folio's head page frame, or [`NO_PFN`].
    #[inline]
    pub(crate) fn head_pfn(&self, id: FolioId) -> u32 {
        self.slot(id).pfn()
    }

    /// Records the page frame the allocator gave folio `id` (aligned to
    /// the folio's order, as the buddy allocator's blocks are).
    #[inline]
    pub(crate) fn set_head_pfn(&mut self, id: FolioId, pfn: u32) {
        let f = self.slot_mut(id);
        let order = f.order();
        debug_assert!(
            pfn == NO_PFN || (pfn < 1 << 30 && pfn & ((1 << order) - 1) == 0),
            "pfn {pfn} order {order}"
        );
        f.pfn_order = encode_pfn_order(pfn, order);
    }

    /// The list tag of folio `id` ([`LruList`] as u8, an MGLRU list's
    /// tag, or [`NO_LIST`]); written by `crate::mem::list`'s operations.
    /// Unchecked as [`FolioArena::slot`]: `lru` grows with `slots`.
    #[inline(always)]
    pub(crate) fn lru(&self, id: FolioId) -> u8 {
        let i = self.checked_id(id);
        // SAFETY: `checked_id`: `i < self.slots.len() == self.lru.len()`.
        unsafe { *self.lru.get_unchecked(i) }
    }

    /// Sets the list tag of folio `id` (the list operations, and a
    /// migration's destination taking its source's place); unchecked as
    /// [`FolioArena::lru`].
    #[inline(always)]
    pub(crate) fn set_lru(&mut self, id: FolioId, tag: u8) {
        let i = self.checked_id(id);
        // SAFETY: `checked_id`: `i < self.slots.len() == self.lru.len()`.
        unsafe { *self.lru.get_unchecked_mut(i) = tag }
    }

    /// `folio_memcg`: the memory cgroup folio `id` is charged to (0, the
    /// root, for every folio until a folio is charged to another group).
    #[inline]
    pub(crate) fn memcg(&self, id: FolioId) -> crate::memcg::MemcgId {
        // Empty side array: every folio the root's (one compare, as a
        // bounds check; allocated, it is as long as `slots`).
        self.memcg.get(id as usize).copied().unwrap_or(0)
    }

    /// Charges folio `id` to group `m` (`commit_charge`'s
    /// `folio->memcg_data`): the first group other than the root allocates
    /// the side array, as long as the slots and with their capacity.
    #[inline]
    pub(crate) fn set_memcg(&mut self, id: FolioId, m: crate::memcg::MemcgId) {
        if self.memcg.is_empty() {
            if m == 0 {
                return;
            }
            self.alloc_memcg();
        }
        self.memcg[id as usize] = m;
    }

    /// The side array of groups, all the root's, the first time a folio is
    /// charged elsewhere: out of line, as it runs once per run.
    #[cold]
    #[inline(never)]
    fn alloc_memcg(&mut self) {
        let mut v = Vec::with_capacity(self.slots.capacity());
        v.resize(self.slots.len(), 0);
        self.memcg = v;
    }

    /// Calls `f` on every live folio with its id.
    pub(crate) fn for_each_live_id(&self, mut f: impl FnMut(FolioId, &Folio)) {
        for (id, fo) in self.slots.iter().enumerate() {
            if fo.space != u32::MAX {
                f(id as FolioId, fo);
            }
        }
    }

    /// Calls `f` on every live folio.
    pub(crate) fn for_each_live(&self, mut f: impl FnMut(&Folio)) {
        for fo in &self.slots {
            if fo.space != u32::MAX {
                f(fo);
            }
        }
    }

    /// Base pages of the live folios.
    pub(crate) fn live_pages(&self) -> u64 {
        let mut n = 0;
        self.for_each_live(|fo| n += fo.nr_pages());
        n
    }

    /// One past the highest folio id ever handed out (for invariant checks).
    pub(crate) fn id_end(&self) -> FolioId {
        self.slots.len() as FolioId
    }

    /// Number of live folios.
    pub(crate) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Bytes of simulator memory used by the arena.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Folio>()
            + self.links.capacity() * 8
            + self.lru.capacity()
            + self.memcg.capacity() * std::mem::size_of::<crate::memcg::MemcgId>()
            + self.free.capacity() * 4
    }

    /// The list links of folio `id` (unchecked as [`FolioArena::slot`]:
    /// `links` and `slots` grow together, so they have one length).
    #[inline(always)]
    pub(crate) fn links(&self, id: FolioId) -> Links {
        let i = self.checked_id(id);
        // SAFETY: `checked_id`: `i < self.slots.len() == self.links.len()`.
        unsafe { *self.links.get_unchecked(i) }
    }

    /// Mutable list links of folio `id` (unchecked as [`FolioArena::links`]).
    #[inline(always)]
    pub(crate) fn links_mut(&mut self, id: FolioId) -> &mut Links {
        let i = self.checked_id(id);
        // SAFETY: `checked_id`: `i < self.slots.len() == self.links.len()`.
        unsafe { self.links.get_unchecked_mut(i) }
    }

    /// `id` as an index of `slots`, `links` and `lru`, which it is below by the
    /// arena's invariant: ids come only from [`FolioArena::alloc`] (or a
    /// test's id it handed out), which returns an index of a slot that
    /// exists, and the arena never shrinks (no slot is ever removed: a
    /// freed id goes on the free list and its slot stays), so every id
    /// any part of the machine holds — in a PTE, a page-cache or swap
    /// slot, a list link, a batch — stays below `slots.len()`, and
    /// `links.len() == lru.len() == slots.len()` as the three grow together
    /// (`grow`, `permute_ids`). [`NIL`] is never an index: every link
    /// walk tests it first.
    ///
    /// The bounds check this skips was the most frequent instruction pair of
    /// a run (issue #18: every folio access of the hit, the fault and
    /// reclaim reads the arena). Debug builds and the crate's own tests
    /// (`cfg(test)`, release included) still check, so a broken invariant
    /// panics there instead of reading past the arena.
    #[inline(always)]
    fn checked_id(&self, id: FolioId) -> usize {
        let i = id as usize;
        #[cfg(any(test, debug_assertions))]
        assert!(
            i < self.slots.len()
                && self.links.len() == self.slots.len()
                && self.lru.len() == self.slots.len(),
            "folio id {id} outside the arena ({} slots)",
            self.slots.len()
        );
        i
    }

    /// The slot of folio `id` ([`FolioArena`]'s `Index`), without a
    /// bounds check outside tests: see [`FolioArena::checked_id`].
    #[inline(always)]
    pub(crate) fn slot(&self, id: FolioId) -> &Folio {
        let i = self.checked_id(id);
        // SAFETY: `checked_id`: every id the machine holds is below `slots.len()`.
        unsafe { self.slots.get_unchecked(i) }
    }

    /// Mutable slot of folio `id` (unchecked as [`FolioArena::slot`]).
    #[inline(always)]
    pub(crate) fn slot_mut(&mut self, id: FolioId) -> &mut Folio {
        let i = self.checked_id(id);
        // SAFETY: as [`FolioArena::slot`].
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    /// Lookahead step of a walk from a list's tail: prefetches folio `id`
    /// and returns its predecessor (towards the head); NIL stays NIL.
    #[inline]
    pub(crate) fn prefetch_and_step_towards_head(&self, id: FolioId) -> FolioId {
        if id == NIL {
            return NIL;
        }
        self.prefetch(id);
        self.links(id)[0]
    }

    /// Prefetches folio `id` (a hint; no effect on state). The slot's
    /// address is computed without a bounds check: a prefetch never faults,
    /// so an id past the arena ([`NIL`]) prefetches a line nothing reads.
    #[inline]
    pub(crate) fn prefetch(&self, id: FolioId) {
        crate::sim::prefetch(self.slots.as_ptr().wrapping_add(id as usize) as *const u8);
    }

    /// Whether `id` is a live folio (for invariant checks).
    pub(crate) fn is_live(&self, id: FolioId) -> bool {
        (id as usize) < self.slots.len() && self.slots[id as usize].space != u32::MAX
    }
}

impl std::ops::Index<FolioId> for FolioArena {
    type Output = Folio;
    /// The slot of folio `id`, without a bounds check outside tests
    /// ([`FolioArena::slot`]).
    #[inline(always)]
    fn index(&self, id: FolioId) -> &Folio {
        self.slot(id)
    }
}

impl std::ops::IndexMut<FolioId> for FolioArena {
    /// The slot of folio `id`, without a bounds check outside tests
    /// ([`FolioArena::slot_mut`]).
    #[inline(always)]
    fn index_mut(&mut self, id: FolioId) -> &mut Folio {
        self.slot_mut(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folio_is_20_bytes_plus_8_of_links() {
        assert_eq!(std::mem::size_of::<Folio>(), 20);
        assert_eq!(std::mem::size_of::<Links>(), 8);
    }

    #[test]
    fn lru_list_follows_flags() {
        use flags::*;
        assert_eq!(LruList::of_flags(SWAPBACKED), LruList::InactiveAnon);
        assert_eq!(LruList::of_flags(SWAPBACKED | ACTIVE), LruList::ActiveAnon);
        assert_eq!(LruList::of_flags(0), LruList::InactiveFile);
        assert_eq!(LruList::of_flags(ACTIVE), LruList::ActiveFile);
        assert_eq!(
            LruList::of_flags(ACTIVE | UNEVICTABLE),
            LruList::Unevictable
        );
    }

    #[test]
    fn arena_reuses_freed_ids() {
        let mut a = FolioArena::default();
        let x = a.alloc(1, 2, 0, 0);
        let y = a.alloc(1, 3, 0, 0);
        a.free(x);
        assert_eq!(a.alloc(5, 6, 0, 0), x);
        assert_eq!(a[x].index, 6);
        assert_eq!(a.live(), 2);
        assert!(a.is_live(y));
    }

    /// The unchecked `Index` keeps its check in the crate's tests: an id
    /// the arena never handed out (here one past its end, inside the
    /// `Vec`'s spare capacity, where an unchecked read would return
    /// garbage instead of failing) panics, for the slot and the links.
    #[test]
    #[should_panic(expected = "folio id 1 outside the arena (1 slots)")]
    fn an_id_past_the_arena_panics_in_tests() {
        let mut a = FolioArena::with_capacity(16);
        let x = a.alloc(1, 2, 0, 0);
        assert_eq!((x, a[x].index, a.links(x)), (0, 2, [NIL, NIL]));
        let _ = a[x + 1].index;
    }

    #[test]
    #[should_panic(expected = "folio id 3 outside the arena (2 slots)")]
    fn links_past_the_arena_panic_in_tests() {
        let mut a = FolioArena::with_capacity(16);
        a.alloc(1, 2, 0, 0);
        a.alloc(1, 3, 0, 0);
        a.links_mut(3)[0] = 0;
    }

    /// The list tag reads and writes without a bounds check outside tests
    /// (speed18c) and keeps it in them: a tag set on an id the arena
    /// handed out reads back, one past the end panics.
    #[test]
    #[should_panic(expected = "folio id 2 outside the arena (2 slots)")]
    fn a_list_tag_past_the_arena_panics_in_tests() {
        let mut a = FolioArena::with_capacity(16);
        a.alloc(1, 2, 0, 0);
        let y = a.alloc(1, 3, 0, 0);
        a.set_lru(y, 3);
        assert_eq!((a.lru(0), a.lru(y)), (NO_LIST, 3));
        a.set_lru(y + 1, 3);
    }

    /// The test mode hands out every free id exactly once, not in order,
    /// the same order for the same seed, and keeps the live folios' ids.
    #[test]
    fn permuted_ids_are_a_permutation_of_the_free_ids() {
        let take = |seed| {
            let mut a = FolioArena::default();
            let z = a.alloc(7, 0, 0, 0);
            a.permute_ids(100, seed);
            assert_eq!(a.live(), 1);
            assert!(a.is_live(z));
            let ids: Vec<FolioId> = (0..99).map(|i| a.alloc(1, i, 0, 0)).collect();
            assert_eq!(a.alloc(1, 99, 0, 0), 100, "past `ids`: in order");
            ids
        };
        let ids = take(42);
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..100).collect::<Vec<_>>());
        assert_ne!(ids, sorted);
        assert_eq!(take(42), ids);
        assert_ne!(take(43), ids);
    }

    /// With the mode on, `shuffle_free` changes which freed id is reused
    /// next; with it off it does nothing (LIFO).
    #[test]
    fn shuffle_free_draws_the_next_ids_from_the_whole_free_list() {
        let mut off = FolioArena::default();
        let ids: Vec<FolioId> = (0..50).map(|i| off.alloc(1, i, 0, 0)).collect();
        for &f in &ids {
            off.free(f);
        }
        off.shuffle_free(8);
        let lifo: Vec<FolioId> = (0..8).map(|i| off.alloc(1, i, 0, 0)).collect();
        assert_eq!(lifo, (42..50).rev().collect::<Vec<_>>());
        let mut on = FolioArena::default();
        on.permute_ids(50, 7);
        let ids: Vec<FolioId> = (0..50).map(|i| on.alloc(1, i, 0, 0)).collect();
        for &f in &ids {
            on.free(f);
        }
        on.shuffle_free(8);
        let drawn: Vec<FolioId> = (0..8).map(|i| on.alloc(1, i, 0, 0)).collect();
        assert_ne!(drawn, ids[42..].iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(on.live(), 8);
    }
}
