//! The buddy page allocator of one zone, modelled on mm/page_alloc.c and
//! include/linux/mmzone.h of Linux v6.12.
//!
//! A [`Zone`] owns a PFN range, free lists per order (`0..=MAX_PAGE_ORDER`)
//! and per migrate type, and one migrate type per pageblock
//! (`pageblock_order` = 9). Allocation takes the smallest fitting block of
//! the wanted type (`__rmqueue_smallest`) and splits it (`expand`); when
//! that type has nothing, it falls back along the kernel's `fallbacks[]`
//! table and may claim a whole pageblock (`__rmqueue_fallback`,
//! `steal_suitable_fallback`). Freeing merges with the buddy
//! (`__free_one_page`). Per-CPU page lists, HIGHATOMIC, CMA and isolation
//! are not modelled.
//!
//! In `Sim` the node's memory is one ZONE_NORMAL starting at 4 GiB (PFN
//! 0x100000, where x86-64's ZONE_NORMAL begins above DMA32), every managed
//! page in it; `machine.dma_zone_pages` adds ZONE_DMA (`crate::mmzone`). Each
//! folio allocation takes its page frames here (`MIGRATE_MOVABLE`, user
//! pages and page cache) and each free returns them; `mem_map` maps a PFN
//! to its folio (4 bytes per page frame), kept only when something reads it
//! (DAMON's paddr operations: see [`PhysMem::mem_map`]). Reclaim and allocation decisions
//! still read `Node::free`, which `Sim::check_invariants` holds equal to
//! the zone's free pages: which PFN a folio gets decides nothing.
//!
//! Free lists are intrusive doubly-linked lists over the 29-bit links of
//! each page frame's `Frame` (58 of its 64 bits), added at the head or the
//! tail exactly where the kernel does, so list contents are comparable to
//! the kernel's.

use serde::{Deserialize, Serialize};

use crate::mem::folio::{FolioId, NIL, NO_PFN};
use crate::sim::Sim;
use frame::{Frame, NOT_FREE};

/// Page frames per chunk of a [`PageArray`]: 128 MiB of memory, the x86-64
/// `SECTION_SIZE_BITS` of SPARSEMEM.
const CHUNK_PAGES: usize = 1 << 15;

/// Per-page-frame state stored the way SPARSEMEM stores `struct page`s:
/// in chunks of [`CHUNK_PAGES`] allocated when a page in them is first
/// written; unwritten chunks read as the default. A 2 TiB zone whose
/// workload touches 1 GiB holds 8 chunks, not 4,096.
#[derive(Debug, Clone)]
pub(crate) struct PageArray<T: Copy> {
    default: T,
    chunks: Vec<Option<Box<[T; CHUNK_PAGES]>>>,
}

impl<T: Copy> PageArray<T> {
    /// `pages` entries, all `default`, none allocated.
    pub(crate) fn new(pages: u64, default: T) -> Self {
        PageArray {
            default,
            chunks: vec![None; (pages as usize).div_ceil(CHUNK_PAGES)],
        }
    }

    /// Host bytes of the allocated chunks and the chunk table.
    pub(crate) fn heap_bytes(&self) -> usize {
        let live = self.chunks.iter().filter(|c| c.is_some()).count();
        live * CHUNK_PAGES * std::mem::size_of::<T>() + self.chunks.capacity() * 8
    }

    /// Calls `f(index, value)` for every entry of the allocated chunks.
    pub(crate) fn for_each_allocated(&self, mut f: impl FnMut(usize, T)) {
        for (c, chunk) in self.chunks.iter().enumerate() {
            if let Some(chunk) = chunk {
                for (k, &v) in chunk.iter().enumerate() {
                    f(c * CHUNK_PAGES + k, v);
                }
            }
        }
    }

    /// Allocates chunk `c`, all `default` (the first write to one of its pages).
    #[cold]
    #[inline(never)]
    fn populate(&mut self, c: usize) -> &mut [T; CHUNK_PAGES] {
        let chunk: Box<[T; CHUNK_PAGES]> = vec![self.default; CHUNK_PAGES]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("the vector has CHUNK_PAGES entries"));
        self.chunks[c].insert(chunk)
    }
}

impl<T: Copy> std::ops::Index<usize> for PageArray<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        match &self.chunks[i / CHUNK_PAGES] {
            Some(chunk) => &chunk[i % CHUNK_PAGES],
            None => &self.default,
        }
    }
}

impl<T: Copy> std::ops::IndexMut<usize> for PageArray<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let c = i / CHUNK_PAGES;
        if self.chunks[c].is_none() {
            return &mut self.populate(c)[i % CHUNK_PAGES];
        }
        match &mut self.chunks[c] {
            Some(chunk) => &mut chunk[i % CHUNK_PAGES],
            None => unreachable!("populated above"),
        }
    }
}

/// `MAX_PAGE_ORDER` (include/linux/mmzone.h, v6.12): the largest buddy order.
pub(crate) const MAX_PAGE_ORDER: usize = 10;
/// `NR_PAGE_ORDERS`: orders `0..=MAX_PAGE_ORDER`.
pub(crate) const NR_PAGE_ORDERS: usize = MAX_PAGE_ORDER + 1;
/// `PAGE_ALLOC_COSTLY_ORDER` (include/linux/mmzone.h, v6.12): above this
/// order an allocation or a memcg charge is "costly" and retries less.
pub(crate) const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;
/// `pageblock_order` on x86-64 with 4 KiB pages (`HUGETLB_PAGE_ORDER`).
pub(crate) const PAGEBLOCK_ORDER: usize = 9;
/// Pages per pageblock (`pageblock_nr_pages`).
pub(crate) const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;

/// The end of a free list in `Zone::heads`/`tails` and in what
/// [`Frame::next`]/[`Frame::prev`] return (a frame stores a self-link).
const NONE: u32 = u32::MAX;
/// `Zone::capture_order` when no capture is armed.
const NO_CAPTURE: u8 = u8::MAX;

/// Page mobility types (`enum migratetype`, v6.12), in the kernel's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum MigrateType {
    /// `MIGRATE_UNMOVABLE`: kernel allocations that cannot move.
    Unmovable = 0,
    /// `MIGRATE_MOVABLE`: user pages and page cache.
    Movable = 1,
    /// `MIGRATE_RECLAIMABLE`: slab caches that a shrinker can free.
    Reclaimable = 2,
}

/// `MIGRATE_PCPTYPES`: the types with free lists here.
pub(crate) const MIGRATE_TYPES: usize = 3;

impl MigrateType {
    /// All modelled types in index order.
    pub(crate) const ALL: [MigrateType; MIGRATE_TYPES] = [
        MigrateType::Unmovable,
        MigrateType::Movable,
        MigrateType::Reclaimable,
    ];

    /// The kernel's name, as `/proc/pagetypeinfo` prints it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            MigrateType::Unmovable => "Unmovable",
            MigrateType::Movable => "Movable",
            MigrateType::Reclaimable => "Reclaimable",
        }
    }

    /// The types to try, in order, when this type's lists are empty:
    /// `fallbacks[]` of mm/page_alloc.c (v6.12).
    pub(crate) fn fallbacks(self) -> [MigrateType; 2] {
        match self {
            MigrateType::Unmovable => [MigrateType::Reclaimable, MigrateType::Movable],
            MigrateType::Movable => [MigrateType::Reclaimable, MigrateType::Unmovable],
            MigrateType::Reclaimable => [MigrateType::Unmovable, MigrateType::Movable],
        }
    }
}

/// `__find_buddy_pfn` (mm/internal.h): the buddy of a block differs in bit `order`.
#[inline]
pub(crate) fn find_buddy_pfn(pfn: u64, order: usize) -> u64 {
    pfn ^ (1 << order)
}

/// `can_steal_fallback` (mm/page_alloc.c, v6.12, with mobility grouping on):
/// may an allocation of `order` for `start` claim the pageblock it falls back to?
pub(crate) fn can_steal_fallback(order: usize, start: MigrateType) -> bool {
    order >= PAGEBLOCK_ORDER / 2 || start != MigrateType::Movable
}

/// One zone (`struct zone`): its PFN span, free areas and pageblock types.
#[derive(Debug, Clone)]
pub(crate) struct Zone {
    /// The kernel's zone name (`Normal`, `DMA32`, ...).
    pub name: &'static str,
    /// First PFN (`zone_start_pfn`); must be `MAX_PAGE_ORDER`-aligned.
    pub start_pfn: u64,
    /// Pages spanned (`spanned_pages`).
    pub spanned_pages: u64,
    /// Pages handed to the buddy allocator (`managed_pages`).
    #[allow(dead_code)] // `managed_pages`, shown in /proc/zoneinfo (not yet printed)
    pub managed_pages: u64,
    free_pages: u64,
    nr_free: [u64; NR_PAGE_ORDERS],
    heads: [[u32; MIGRATE_TYPES]; NR_PAGE_ORDERS],
    /// Last entry of each list, so tail adds (boot, merges) are O(1).
    tails: [[u32; MIGRATE_TYPES]; NR_PAGE_ORDERS],
    /// Per-frame state, `struct page` by `struct page`.
    frames: PageArray<Frame>,
    /// `mem_map`'s folio of each frame (`page_folio`), or `NIL`: written
    /// only while [`PhysMem::mem_map`] is on, so its chunks exist only
    /// then (4 bytes per page frame; none on a machine without DAMON, or
    /// before its first compaction, which builds it).
    mem_map: PageArray<FolioId>,
    /// Migrate type per pageblock (`pageblock_flags`).
    block_type: Vec<MigrateType>,
    /// The untouched part of the zone: the `MAX_PAGE_ORDER` blocks from this
    /// index to `pristine_end` are free, `MIGRATE_MOVABLE`, and the tail of
    /// the order-10 movable list in ascending order, as boot left them; they
    /// are counted in `nr_free` and `free_pages` but written nowhere until
    /// one reaches the head of its list ([`Zone::materialize_pristine`]).
    pristine_next: u64,
    /// End (zone-relative index) of the pristine blocks: the zone's pages
    /// rounded down to whole `MAX_PAGE_ORDER` blocks.
    pristine_end: u64,
    /// `capture_control` of direct compaction (`crate::compaction`): a
    /// block freed or merged to this order is captured, or `NO_CAPTURE`.
    pub(crate) capture_order: u8,
    /// The captured block (`capc->page`).
    pub(crate) captured: Option<u64>,
    /// `watermark_boost` (`crate::page_alloc_boost`).
    pub(crate) boost: crate::page_alloc_boost::ZoneBoost,
    /// `machine.policy.rmqueue_fallback` (`rmqueue_claim.rs`).
    pub(crate) fallback: RmqueueFallback,
    /// The `kmem:mm_page_alloc_extfrag` events of the allocation in progress
    /// (`crate::tracepoint::kmem`); `None` unless that tracepoint is on.
    pub(crate) extfrag: Option<Vec<crate::tracepoint::ExtfragEvent>>,
}

/// Free blocks per order per migrate type, and pageblocks per type:
/// the two tables of `/proc/pagetypeinfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageTypeInfo {
    /// Type names, in row order.
    pub types: Vec<String>,
    /// `free_blocks[type][order]`.
    pub free_blocks: Vec<[u64; NR_PAGE_ORDERS]>,
    /// Pageblocks of each type.
    pub pageblocks: Vec<u64>,
}

impl Zone {
    /// A zone of `nr_pages` pages from `start_pfn`, all freed to the buddy
    /// allocator with every pageblock `MIGRATE_MOVABLE`, as
    /// `memmap_init_range` and `memblock_free_pages` → `__free_pages_core`
    /// (FPI_TO_TAIL) leave it (mm/mm_init.c, v6.12).
    pub(crate) fn new(name: &'static str, start_pfn: u64, nr_pages: u64) -> Zone {
        assert_eq!(
            start_pfn % (1 << MAX_PAGE_ORDER),
            0,
            "zone start must be MAX_PAGE_ORDER-aligned"
        );
        assert!(
            nr_pages <= crate::config::MAX_MEMORY_PAGES,
            "a zone's frame links are 29-bit indices"
        );
        let blocks = nr_pages.div_ceil(PAGEBLOCK_NR_PAGES) as usize;
        let max_block = 1u64 << MAX_PAGE_ORDER;
        let whole = nr_pages / max_block;
        let mut zone = Zone {
            name,
            start_pfn,
            spanned_pages: nr_pages,
            managed_pages: nr_pages,
            free_pages: whole * max_block,
            nr_free: [0; NR_PAGE_ORDERS],
            heads: [[NONE; MIGRATE_TYPES]; NR_PAGE_ORDERS],
            tails: [[NONE; MIGRATE_TYPES]; NR_PAGE_ORDERS],
            frames: PageArray::new(nr_pages, Frame::BLANK),
            mem_map: PageArray::new(nr_pages, NIL),
            block_type: vec![MigrateType::Movable; blocks],
            pristine_next: 0,
            pristine_end: whole * max_block,
            capture_order: NO_CAPTURE,
            captured: None,
            boost: Default::default(),
            fallback: RmqueueFallback::V6_12,
            extfrag: None,
        };
        // The whole MAX_PAGE_ORDER blocks are freed in ascending order to the
        // tail: they stay pristine, counted but not written. The rest, in the
        // largest naturally aligned chunks that fit, is freed as boot does.
        zone.nr_free[MAX_PAGE_ORDER] = whole;
        let mut pfn = start_pfn + whole * max_block;
        let end = start_pfn + nr_pages;
        while pfn < end {
            let mut order = MAX_PAGE_ORDER;
            while !pfn.is_multiple_of(1 << order) || pfn + (1 << order) > end {
                order -= 1;
            }
            zone.free_one_page(pfn, order, true);
            pfn += 1 << order;
        }
        zone
    }

    /// Free pages in the zone (`NR_FREE_PAGES`).
    pub(crate) fn free_pages(&self) -> u64 {
        self.free_pages
    }

    /// Pristine blocks left (see the field).
    fn pristine_blocks(&self) -> u64 {
        (self.pristine_end - self.pristine_next) >> MAX_PAGE_ORDER
    }

    /// Writes the first pristine block onto the tail of the order-10 movable
    /// list when that list has nothing else, so that its head is the block
    /// boot put there: list order is the kernel's, only the writing is late.
    fn materialize_pristine(&mut self, order: usize, mt: MigrateType) {
        if order != MAX_PAGE_ORDER
            || mt != MigrateType::Movable
            || self.heads[order][mt as usize] != NONE
            || self.pristine_blocks() == 0
        {
            return;
        }
        let pfn = self.start_pfn + self.pristine_next;
        self.pristine_next += 1 << MAX_PAGE_ORDER;
        self.nr_free[MAX_PAGE_ORDER] -= 1;
        self.free_pages -= 1 << MAX_PAGE_ORDER;
        self.add_to_free_list(pfn, MAX_PAGE_ORDER, MigrateType::Movable, true);
    }

    /// Whether the `order` list of `mt` holds a block, pristine ones included.
    pub(crate) fn has_free(&self, order: usize, mt: MigrateType) -> bool {
        self.heads[order][mt as usize] != NONE
            || (order == MAX_PAGE_ORDER && mt == MigrateType::Movable && self.pristine_blocks() > 0)
    }

    /// The migrate type of the pageblock holding `pfn` (`get_pfnblock_migratetype`).
    pub(crate) fn pageblock_type(&self, pfn: u64) -> MigrateType {
        self.block_type[self.block_index(pfn)]
    }

    fn idx(&self, pfn: u64) -> usize {
        (pfn - self.start_pfn) as usize
    }

    fn block_index(&self, pfn: u64) -> usize {
        ((pfn - self.start_pfn) >> PAGEBLOCK_ORDER) as usize
    }

    fn in_zone(&self, pfn: u64) -> bool {
        pfn >= self.start_pfn && pfn < self.start_pfn + self.spanned_pages
    }

    fn set_range_type(&mut self, pfn: u64, order: usize, mt: MigrateType) {
        let first = self.block_index(pfn);
        let count = (1usize << order.saturating_sub(PAGEBLOCK_ORDER)).max(1);
        for block in first..(first + count).min(self.block_type.len()) {
            self.block_type[block] = mt;
        }
    }

    /// `__add_to_free_list`: at the head, or the tail when a merge is likely.
    fn add_to_free_list(&mut self, pfn: u64, order: usize, mt: MigrateType, tail: bool) {
        let i = self.idx(pfn);
        let me = i as u32;
        let head = self.heads[order][mt as usize];
        self.frames[i].set_free_order(order as u8);
        if head == NONE {
            self.frames[i].set_next(me, NONE);
            self.frames[i].set_prev(me, NONE);
            self.heads[order][mt as usize] = me;
            self.tails[order][mt as usize] = me;
        } else if tail {
            let last = self.tails[order][mt as usize];
            self.frames[last as usize].set_next(last, me);
            self.frames[i].set_prev(me, last);
            self.frames[i].set_next(me, NONE);
            self.tails[order][mt as usize] = me;
        } else {
            self.frames[i].set_next(me, head);
            self.frames[i].set_prev(me, NONE);
            self.frames[head as usize].set_prev(head, me);
            self.heads[order][mt as usize] = me;
        }
        self.nr_free[order] += 1;
        self.free_pages += 1 << order;
    }

    /// `__del_page_from_free_list`.
    fn del_from_free_list(&mut self, pfn: u64, order: usize, mt: MigrateType) {
        let i = self.idx(pfn);
        let f = self.frames[i];
        let (p, n) = (f.prev(i as u32), f.next(i as u32));
        if p == NONE {
            self.heads[order][mt as usize] = n;
        } else {
            self.frames[p as usize].set_next(p, n);
        }
        if n != NONE {
            self.frames[n as usize].set_prev(n, p);
        } else {
            self.tails[order][mt as usize] = p;
        }
        self.frames[i].set_free_order(NOT_FREE);
        self.nr_free[order] -= 1;
        self.free_pages -= 1 << order;
    }

    /// The type of the list a free block is on: its head's pageblock type
    /// (the v6.10+ invariant that free lists match pageblock types).
    fn free_block_type(&self, pfn: u64) -> MigrateType {
        self.pageblock_type(pfn)
    }

    /// `page_is_buddy` + `find_buddy_page_pfn`: the buddy PFN if it is a free block of `order`.
    fn free_buddy(&self, pfn: u64, order: usize) -> Option<u64> {
        let buddy = find_buddy_pfn(pfn, order);
        (self.in_zone(buddy) && self.frames[self.idx(buddy)].free_order() == order as u8)
            .then_some(buddy)
    }

    /// `__free_one_page` (mm/page_alloc.c, v6.12): merge with free buddies up
    /// to `MAX_PAGE_ORDER`; a buddy of another type has its (first) pageblock
    /// set to the freed block's type (`set_pageblock_migratetype(buddy)`, so
    /// an order-10 merge retypes the buddy's one pageblock); the result goes to the tail when `to_tail` (FPI_TO_TAIL) or when
    /// `buddy_merge_likely`, else to the head.
    fn free_one_page(&mut self, mut pfn: u64, mut order: usize, to_tail: bool) {
        let mt = self.pageblock_type(pfn);
        while order < MAX_PAGE_ORDER {
            // compaction_capture (v6.12): one block of the wanted order.
            if order == self.capture_order as usize && self.captured.is_none() {
                self.captured = Some(pfn);
                let i = self.idx(pfn);
                for k in i..i + (1 << order) {
                    self.frames[k].set_alloc_type(MigrateType::Movable as u8);
                }
                return;
            }
            let Some(buddy) = self.free_buddy(pfn, order) else {
                break;
            };
            let buddy_mt = self.free_block_type(buddy);
            self.del_from_free_list(buddy, order, buddy_mt);
            if buddy_mt != mt {
                let block = self.block_index(buddy);
                self.block_type[block] = mt;
            }
            pfn &= buddy;
            order += 1;
        }
        let tail = to_tail || self.buddy_merge_likely(pfn, order);
        self.add_to_free_list(pfn, order, mt, tail);
    }

    /// `buddy_merge_likely`: is the buddy of the next-higher block free?
    fn buddy_merge_likely(&self, pfn: u64, order: usize) -> bool {
        if order >= MAX_PAGE_ORDER - 1 {
            return false;
        }
        let higher = find_buddy_pfn(pfn, order) & pfn;
        self.free_buddy(higher, order + 1).is_some()
    }

    /// `expand` (v6.12): split a block of `high` down to `low`, putting each
    /// upper half on the `mt` list at the head.
    fn expand(&mut self, pfn: u64, low: usize, mut high: usize, mt: MigrateType) {
        while high > low {
            high -= 1;
            self.add_to_free_list(pfn + (1 << high), high, mt, false);
        }
    }

    /// `__rmqueue_smallest` (v6.12): the first block of `mt` from `order` up, split down.
    fn rmqueue_smallest(&mut self, order: usize, mt: MigrateType) -> Option<u64> {
        for current in order..NR_PAGE_ORDERS {
            self.materialize_pristine(current, mt);
            let head = self.heads[current][mt as usize];
            if head == NONE {
                continue;
            }
            let pfn = self.start_pfn + head as u64;
            self.del_from_free_list(pfn, current, mt);
            self.expand(pfn, order, current, mt);
            return Some(pfn);
        }
        None
    }

    /// `find_suitable_fallback` (v6.12, `only_stealable` false): the first
    /// fallback type with a free block at `order`, and whether it may be claimed.
    fn find_suitable_fallback(
        &self,
        order: usize,
        start: MigrateType,
    ) -> Option<(MigrateType, bool)> {
        if self.nr_free[order] == 0 {
            return None;
        }
        start
            .fallbacks()
            .into_iter()
            .find(|&mt| self.has_free(order, mt))
            .map(|mt| (mt, can_steal_fallback(order, start)))
    }

    /// `__rmqueue_fallback` (v6.12, without ALLOC_NOFRAGMENT): search from
    /// the largest order down; a movable allocation that may not claim the
    /// block takes the smallest block instead (`find_smallest`).
    fn rmqueue_fallback(&mut self, order: usize, start: MigrateType) -> Option<u64> {
        let mut found = None;
        for current in (order..NR_PAGE_ORDERS).rev() {
            if let Some((mt, can_steal)) = self.find_suitable_fallback(current, start) {
                if !can_steal && start == MigrateType::Movable && current > order {
                    found = (order..NR_PAGE_ORDERS).find_map(|o| {
                        self.find_suitable_fallback(o, start)
                            .map(|(mt, s)| (o, mt, s))
                    });
                } else {
                    found = Some((current, mt, can_steal));
                }
                break;
            }
        }
        let (current, block_mt, can_steal) = found?;
        self.materialize_pristine(current, block_mt);
        let pfn = self.start_pfn + self.heads[current][block_mt as usize] as u64;
        let page = self.steal_suitable_fallback(pfn, current, order, start, block_mt, can_steal);
        self.trace_extfrag(page, order, current, start, block_mt);
        Some(page)
    }

    /// `trace_mm_page_alloc_extfrag(page, order, current_order, start, fallback)`
    /// (v6.12 `__rmqueue_fallback`; v6.15 `__rmqueue_claim`/`__rmqueue_steal`):
    /// logged for `Sim::trace_extfrag_flush` when the tracepoint is on, with
    /// `change_ownership` read from the page's pageblock now.
    #[inline]
    pub(super) fn trace_extfrag(
        &mut self,
        page: u64,
        order: usize,
        current: usize,
        start: MigrateType,
        fallback: MigrateType,
    ) {
        if self.extfrag.is_none() {
            return;
        }
        let e = crate::tracepoint::ExtfragEvent {
            pfn: page,
            alloc_order: order as u8,
            fallback_order: current as u8,
            alloc_migratetype: start as u8,
            fallback_migratetype: fallback as u8,
            change_ownership: self.pageblock_type(page) == start,
        };
        if let Some(v) = self.extfrag.as_mut() {
            v.push(e);
        }
    }

    /// `steal_suitable_fallback` (v6.12): claim the whole range when the
    /// block is at least a pageblock; else claim the pageblock when its free
    /// plus alike pages reach half of it (`move_freepages_block`), then
    /// allocate from the claimed type; otherwise take just this block.
    fn steal_suitable_fallback(
        &mut self,
        pfn: u64,
        current: usize,
        order: usize,
        start: MigrateType,
        block_mt: MigrateType,
        whole_block: bool,
    ) -> u64 {
        if current >= PAGEBLOCK_ORDER {
            self.del_from_free_list(pfn, current, block_mt);
            self.set_range_type(pfn, current, start);
            self.expand(pfn, order, current, start);
            return pfn;
        }
        self.boost_watermark();
        let counts = if whole_block {
            self.count_block(pfn, start, block_mt)
        } else {
            None
        };
        if counts.is_some_and(|(free, alike)| free + alike >= PAGEBLOCK_NR_PAGES / 2) {
            self.move_freepages_block(pfn, block_mt, start);
            return self
                .rmqueue_smallest(order, start)
                .expect("claimed block has free pages");
        }
        self.del_from_free_list(pfn, current, block_mt);
        self.expand(pfn, order, current, block_mt);
        pfn
    }

    /// `move_freepages_block` (v6.12 `__move_freepages_block`): move every
    /// free block of the pageblock, in PFN order, to the tail of `to`'s
    /// lists. Deleting from `from` never touches `to`'s lists, so each block
    /// moves as it is found, without a buffer.
    fn move_freepages_block(&mut self, pfn: u64, from: MigrateType, to: MigrateType) {
        let first = self.start_pfn + ((self.block_index(pfn) as u64) << PAGEBLOCK_ORDER);
        let end = (first + PAGEBLOCK_NR_PAGES).min(self.start_pfn + self.spanned_pages);
        let mut p = first;
        while p < end {
            let o = self.frames[self.idx(p)].free_order();
            if o == NOT_FREE {
                p += 1;
            } else {
                self.del_from_free_list(p, o as usize, from);
                self.add_to_free_list(p, o as usize, to, true);
                p += 1 << o;
            }
        }
        self.set_range_type(first, PAGEBLOCK_ORDER, to);
    }

    /// `__rmqueue` (no CMA) of the zone's `fallback` variant (v6.12.0 or v6.15):
    /// `1 << order` pages of `mt`, the head PFN, or `None` when no block fits.
    pub(crate) fn alloc_pages(&mut self, order: usize, mt: MigrateType) -> Option<u64> {
        self.alloc_pages_mode(order, mt, &mut RmqueueMode::Normal)
    }

    /// [`Zone::alloc_pages`] as one of `rmqueue_bulk`'s, `mode` kept across
    /// the batch (read only by `rmqueue_fallback = "6.15"`).
    pub(crate) fn alloc_pages_mode(
        &mut self,
        order: usize,
        mt: MigrateType,
        m: &mut RmqueueMode,
    ) -> Option<u64> {
        assert!(order <= MAX_PAGE_ORDER);
        let pfn = self.rmqueue(order, mt, m)?;
        let i = self.idx(pfn);
        for k in i..i + (1 << order) {
            self.frames[k].set_alloc_type(mt as u8);
        }
        Some(pfn)
    }

    /// `__free_pages` → `__free_one_page`: return a block allocated by
    /// [`Zone::alloc_pages`] with the same order.
    pub(crate) fn free_pages_block(&mut self, pfn: u64, order: usize) {
        debug_assert!(self.in_zone(pfn) && pfn.is_multiple_of(1 << order));
        self.free_one_page(pfn, order, false);
    }

    /// `__zone_watermark_ok` (mm/page_alloc.c, v6.12, no reserves, CMA or
    /// highatomic): free pages minus the `(1 << order) - 1` unusable for this
    /// order must exceed `mark`, and for order > 0 some list of at least
    /// `order` must hold a free block.
    pub(crate) fn watermark_ok(&self, order: usize, mark: u64) -> bool {
        let free = self.free_pages as i64 - ((1i64 << order) - 1);
        if free <= mark as i64 {
            return false;
        }
        order == 0 || self.has_free_order(order)
    }

    /// `__zone_watermark_ok`'s free-area test for `order` > 0: some list of
    /// at least `order` holds a free block (any type of `MIGRATE_PCPTYPES`).
    pub(crate) fn has_free_order(&self, order: usize) -> bool {
        (order..NR_PAGE_ORDERS)
            .any(|o| self.nr_free[o] > 0 && MigrateType::ALL.iter().any(|&mt| self.has_free(o, mt)))
    }

    /// Hooks of `crate::compaction`'s scanners (they read `struct page`s as
    /// the kernel's do): the order of the free block headed at `pfn`
    /// (`PageBuddy` + `buddy_order`), or None.
    pub(crate) fn buddy_order_at(&self, pfn: u64) -> Option<usize> {
        let o = self.frames[self.idx(pfn)].free_order();
        (o != NOT_FREE).then_some(o as usize)
    }

    /// `page_folio` of an allocated frame (NIL for a frame no folio holds:
    /// a kernel page, or one on the per-CPU list). Needs `mem_map`.
    pub(crate) fn frame_folio(&self, pfn: u64) -> FolioId {
        self.mem_map[self.idx(pfn)]
    }

    /// `__isolate_free_page`'s list removal: takes the free block at `pfn`
    /// off its list (the pageblock's type) and marks its frames allocated
    /// movable (`mark_allocated`), as a migration target.
    pub(crate) fn isolate_free_block(&mut self, pfn: u64, order: usize) {
        let mt = self.free_block_type(pfn);
        self.del_from_free_list(pfn, order, mt);
        let i = self.idx(pfn);
        for k in i..i + (1 << order) {
            self.frames[k].set_alloc_type(MigrateType::Movable as u8);
        }
    }

    /// Hooks of `crate::compaction`'s free-list searches: the head (or,
    /// `tail`, the last) block of one free list (orders below
    /// `MAX_PAGE_ORDER`: no pristine blocks).
    pub(crate) fn free_list_end(&self, order: usize, mt: MigrateType, tail: bool) -> Option<u64> {
        let i = if tail { self.tails } else { self.heads }[order][mt as usize];
        (i != NONE).then(|| self.start_pfn + u64::from(i))
    }

    /// The block after (or, `back`, before) the free block at `pfn` on its list.
    pub(crate) fn free_list_step(&self, pfn: u64, back: bool) -> Option<u64> {
        let me = self.idx(pfn) as u32;
        let f = self.frames[me as usize];
        let i = if back { f.prev(me) } else { f.next(me) };
        (i != NONE).then(|| self.start_pfn + u64::from(i))
    }

    /// Rotates one free list so that the block at `pfn` is its head (the
    /// blocks before it go to the tail, in order): `move_freelist_head` /
    /// `move_freelist_tail` of mm/compaction.c.
    pub(crate) fn rotate_free_list(&mut self, order: usize, mt: MigrateType, pfn: u64) {
        let (m, i) = (mt as usize, self.idx(pfn) as u32);
        let (head, tail) = (self.heads[order][m], self.tails[order][m]);
        if head == i || head == NONE {
            return;
        }
        let prev = self.frames[i as usize].prev(i);
        self.frames[tail as usize].set_next(tail, head);
        self.frames[head as usize].set_prev(head, tail);
        self.frames[i as usize].set_prev(i, NONE);
        self.frames[prev as usize].set_next(prev, NONE);
        self.heads[order][m] = i;
        self.tails[order][m] = prev;
    }

    /// Writes every pristine block onto the tail of the order-10 movable
    /// list, in order (where boot put them), so that the scanners can read
    /// their frames: list contents and order do not change.
    pub(crate) fn materialize_all_pristine(&mut self) {
        while self.pristine_blocks() > 0 {
            let pfn = self.start_pfn + self.pristine_next;
            self.pristine_next += 1 << MAX_PAGE_ORDER;
            self.nr_free[MAX_PAGE_ORDER] -= 1;
            self.free_pages -= 1 << MAX_PAGE_ORDER;
            self.add_to_free_list(pfn, MAX_PAGE_ORDER, MigrateType::Movable, true);
        }
    }

    /// Free blocks per order (`/proc/buddyinfo`'s numbers).
    pub(crate) fn buddyinfo(&self) -> [u64; NR_PAGE_ORDERS] {
        self.nr_free
    }

    /// The `/proc/buddyinfo` line: `Node 0, zone   Normal  n0 ... n10`.
    pub(crate) fn buddyinfo_line(&self, node: usize) -> String {
        let mut line = format!("Node {node}, zone {:>8}", self.name);
        for n in self.nr_free {
            line.push_str(&format!(" {n:6}"));
        }
        line
    }

    /// Blocks on one free list, pristine ones included.
    pub(crate) fn free_list_len(&self, order: usize, mt: MigrateType) -> u64 {
        let mut n = 0;
        let mut i = self.heads[order][mt as usize];
        while i != NONE {
            n += 1;
            i = self.frames[i as usize].next(i);
        }
        if order == MAX_PAGE_ORDER && mt == MigrateType::Movable {
            n += self.pristine_blocks();
        }
        n
    }

    /// The PFNs on one free list, head first.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn free_list(&self, order: usize, mt: MigrateType) -> Vec<u64> {
        let mut out = Vec::new();
        let mut i = self.heads[order][mt as usize];
        while i != NONE {
            out.push(self.start_pfn + i as u64);
            i = self.frames[i as usize].next(i);
        }
        if order == MAX_PAGE_ORDER && mt == MigrateType::Movable {
            out.extend(
                (self.pristine_next..self.pristine_end)
                    .step_by(1 << MAX_PAGE_ORDER)
                    .map(|i| self.start_pfn + i),
            );
        }
        out
    }

    /// The `/proc/pagetypeinfo` tables.
    pub(crate) fn pagetypeinfo(&self) -> PageTypeInfo {
        let mut pageblocks = vec![0; MIGRATE_TYPES];
        for &mt in &self.block_type {
            pageblocks[mt as usize] += 1;
        }
        PageTypeInfo {
            types: MigrateType::ALL
                .iter()
                .map(|m| m.name().to_string())
                .collect(),
            free_blocks: MigrateType::ALL
                .iter()
                .map(|&mt| std::array::from_fn(|o| self.free_list_len(o, mt)))
                .collect(),
            pageblocks,
        }
    }

    /// Host bytes of this zone's arrays.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.frames.heap_bytes() + self.mem_map.heap_bytes() + self.block_type.capacity()
    }
}

/// First PFN of the simulated ZONE_NORMAL: 4 GiB, above x86-64's DMA32.
pub(crate) const NORMAL_START_PFN: u64 = 1 << 20;

/// The page frame of the zero page (`ZERO_PAGE(0)`, `Sim::zero_folio`):
/// the last below ZONE_NORMAL. The kernel's `empty_zero_page` is in the
/// kernel image's `.bss` (arch/x86/kernel/head_64.S), in ZONE_DMA32 on
/// x86-64, never in the buddy allocator; here too it is outside the zone's
/// span, so it takes no free page, and `mem_map` and the zone's checks
/// leave it out ([`PhysMem::in_zone`]).
pub(crate) const ZERO_PAGE_PFN: u32 = (NORMAL_START_PFN - 1) as u32;

/// The node's physical memory: its zone and the per-CPU lists. The zone
/// carries, beside its frames, the PFN → folio map that stands in for
/// `mem_map` (`pfn_folio`), both stored in chunks like SPARSEMEM's sections
/// so that host memory follows what was touched.
#[derive(Debug, Clone)]
pub(crate) struct PhysMem {
    /// ZONE_NORMAL, holding every managed page.
    pub zone: Zone,
    /// Free blocks held per CPU, a list per migrate type and order (`page_alloc/pcp.rs`).
    pub pcp: PerCpuPages,
    /// Whether `mem_map`'s folio entries are kept ([`PhysMem::set_frames_folio`]).
    /// Its one reader on the simulated machine is DAMON's physical-address
    /// operations (`damon_get_folio` → `pfn_folio`), so it is kept from boot
    /// when the machine has `machine.damon`, and otherwise built from the
    /// folios' head PFNs the first time a paddr operation runs
    /// ([`Sim::ensure_mem_map`]; rule tests call them on machines without
    /// DAMON). Until then no lookup can observe the entries, and skipping
    /// their writes spares each allocation and free a store to a `struct
    /// page` picked by PFN (a cache miss per reclaimed folio on the bench).
    /// The kernel always writes them; nothing else here differs.
    pub mem_map: bool,
    /// ZONE_DMA (`machine.dma_zone_pages`, `crate::mmzone`); None: one zone.
    pub dma: Option<Box<crate::mmzone::DmaZone>>,
}

impl PhysMem {
    /// `managed` pages in one ZONE_NORMAL from [`NORMAL_START_PFN`], all
    /// free; `mem_map` kept from boot when `damon` (see [`PhysMem::mem_map`]).
    pub(crate) fn new(managed: u64, low_wmark: u64, cpus: u32, damon: bool) -> PhysMem {
        assert!(
            NORMAL_START_PFN + managed <= u64::from(NO_PFN),
            "PFNs must fit in 32 bits"
        );
        PhysMem {
            zone: Zone::new("Normal", NORMAL_START_PFN, managed),
            pcp: PerCpuPages::new(managed, low_wmark, cpus),
            mem_map: damon,
            dma: None,
        }
    }

    /// `pfn_folio`: the folio holding `pfn`, or `NIL` (`pfn` inside
    /// [`PhysMem::pfn_range`]). Only with [`PhysMem::mem_map`] on.
    pub(crate) fn pfn_folio(&self, pfn: u32) -> FolioId {
        debug_assert!(self.mem_map, "pfn_folio without mem_map");
        if let (Some(d), true) = (&self.dma, u64::from(pfn) < self.zone.start_pfn) {
            return d.zone.mem_map[pfn as usize];
        }
        self.zone.mem_map[(u64::from(pfn) - self.zone.start_pfn) as usize]
    }

    /// Whether `pfn` is a frame of the zone (every folio's head but the
    /// zero page's, [`ZERO_PAGE_PFN`]; not a freed slot's [`NO_PFN`]).
    #[inline]
    pub(crate) fn in_zone(&self, pfn: u32) -> bool {
        let (first, end) = self.pfn_range();
        (first..end).contains(&u64::from(pfn)) || self.dma_in_zone(u64::from(pfn))
    }

    /// The zone's PFNs `[first, end)`: the one "System RAM" resource
    /// (DAMON's paddr operations cover it).
    pub(crate) fn pfn_range(&self) -> (u64, u64) {
        let z = &self.zone;
        (z.start_pfn, z.start_pfn + z.spanned_pages)
    }

    /// Free pages: the zone's and the per-CPU lists'.
    pub(crate) fn free_pages(&self) -> u64 {
        let dma = self.dma.as_ref().map_or(0, |d| d.zone.free_pages());
        self.zone.free_pages() + self.pcp.count() + dma
    }

    /// Points `mem_map` at folio `f` (or `NIL`) for the `1 << order` frames
    /// from `pfn`; nothing when no one reads `mem_map` ([`PhysMem::mem_map`]).
    #[inline(always)]
    pub(crate) fn set_frames_folio(&mut self, pfn: u64, order: usize, f: FolioId) {
        if !self.mem_map {
            return;
        }
        if let (Some(d), true) = (self.dma.as_mut(), pfn < self.zone.start_pfn) {
            return (0..1 << order).for_each(|i| d.zone.mem_map[pfn as usize + i] = f);
        }
        let first = (pfn - self.zone.start_pfn) as usize;
        if order == 0 {
            self.zone.mem_map[first] = f;
            return;
        }
        for i in first..first + (1 << order) {
            self.zone.mem_map[i] = f;
        }
    }

    /// Returns the `1 << order` frames from `pfn` (`free_unref_folios`),
    /// `mem_map` cleared first; nothing for [`NO_PFN`] (no folio is
    /// without a frame; a guard). Order 0 inline: the path of every
    /// reclaimed page.
    #[inline(always)]
    pub(crate) fn free_frames(&mut self, pfn: u32, order: usize) {
        if pfn == NO_PFN {
            return;
        }
        self.set_frames_folio(u64::from(pfn), order, NIL);
        if u64::from(pfn) < self.zone.start_pfn {
            self.free_block(u64::from(pfn), order);
        } else if order == 0 {
            self.free_order0(u64::from(pfn));
        } else {
            self.free_unref_page(u64::from(pfn), order);
        }
    }

    /// Host bytes of the zones, the lists and the map.
    pub(crate) fn heap_bytes(&self) -> usize {
        let dma = self.dma.as_ref().map_or(0, |d| d.zone.heap_bytes());
        self.zone.heap_bytes() + self.pcp.heap_bytes() + dma
    }
}

impl Sim {
    /// `folio_nr_pages` (include/linux/mm.h): base pages in folio `f`.
    #[inline]
    pub(crate) fn folio_nr_pages(&self, f: FolioId) -> u64 {
        self.folios[f].nr_pages()
    }

    /// A new order-0 folio with its page frame (`folio_alloc` of order 0:
    /// `__rmqueue` through the per-CPU movable list, then the
    /// folio's fields), after `alloc_page` has taken the page from
    /// `Node::free`, which stays the count reclaim and the watermarks read:
    /// which frame a folio gets decides nothing yet. The frame is taken
    /// first, so that the folio's slot is written once, head PFN included
    /// (which frame a page gets does not depend on the folio id, nor the
    /// id on the frame).
    #[inline(always)]
    pub(crate) fn alloc_order0_folio(&mut self, space: u32, index: u32, fl: u16) -> FolioId {
        debug_assert!(!self.phys.zone.boost.pending, "a boost left pending");
        let pfn = match self.phys.alloc_order0_pcp() {
            Some(pfn) => pfn,
            None => self.alloc_order0_refill(),
        };
        let f = self
            .folios
            .alloc_framed(space, index, fl, self.cur_memcg, pfn as u32);
        self.phys.set_frames_folio(pfn, 0, f);
        f
    }

    /// Turns `mem_map` on ([`PhysMem::mem_map`]) if it is off, pointing
    /// every framed folio's PFNs at it: what the skipped writes would have
    /// left, so that `pfn_folio` reads the same from here on.
    #[inline]
    pub(crate) fn ensure_mem_map(&mut self) {
        if !self.phys.mem_map {
            self.build_mem_map();
        }
    }

    #[cold]
    #[inline(never)]
    fn build_mem_map(&mut self) {
        self.phys.mem_map = true;
        for f in 0..self.folios.id_end() {
            let pfn = self.folios.head_pfn(f);
            if self.phys.in_zone(pfn) && self.folios.is_live(f) {
                let order = self.folios[f].order() as usize;
                self.phys.set_frames_folio(u64::from(pfn), order, f);
            }
        }
    }

    /// The page allocator's invariants: the zone's and the per-CPU lists'
    /// free pages equal `Node::free`, every folio with frames is what
    /// `mem_map` says of each of its PFNs, and `mem_map` names no other folio.
    pub(crate) fn check_page_alloc(&self) -> Result<(), String> {
        self.phys.pcp.check()?;
        if self.phys.free_pages() != self.node.free {
            return Err(format!(
                "zone free {} + per-CPU {} != node free {}",
                self.phys.zone.free_pages(),
                self.phys.pcp.count(),
                self.node.free
            ));
        }
        if !self.phys.mem_map {
            return self.check_frames_disjoint();
        }
        let mut mapped = 0u64;
        let mut err = None;
        let dma = self.phys.dma.as_ref().map(|d| &d.zone);
        for z in std::iter::once(&self.phys.zone).chain(dma) {
            z.mem_map.for_each_allocated(|i, f| {
                if f == NIL || err.is_some() {
                    return;
                }
                let pfn = z.start_pfn + i as u64;
                if !self.folios.is_live(f) {
                    err = Some(format!("pfn {pfn:#x} maps freed folio {f}"));
                    return;
                }
                let head = u64::from(self.folios.head_pfn(f));
                if pfn < head || pfn >= head + self.folio_nr_pages(f) {
                    err = Some(format!("pfn {pfn:#x} maps folio {f} with head {head:#x}"));
                }
                mapped += 1;
            })
        }
        if let Some(e) = err {
            return Err(e);
        }
        let framed = self.framed_pages();
        if mapped != framed {
            return Err(format!(
                "mem_map has {mapped} pages but {framed} folios have frames"
            ));
        }
        Ok(())
    }

    /// Without `mem_map` ([`PhysMem::mem_map`] off): no frame names a folio,
    /// and the folios' frame ranges lie in the zone without overlapping.
    fn check_frames_disjoint(&self) -> Result<(), String> {
        let mut named = None;
        self.phys.zone.mem_map.for_each_allocated(|i, f| {
            if f != NIL && named.is_none() {
                named = Some(i);
            }
        });
        if let Some(i) = named {
            return Err(format!("mem_map off but frame {i} names a folio"));
        }
        let (first, end) = self.phys.pfn_range();
        let dma_end = self.phys.dma.as_ref().map_or(0, |d| d.zone.spanned_pages);
        let mut ranges = Vec::new();
        for f in 0..self.folios.id_end() {
            let pfn = self.folios.head_pfn(f);
            if self.phys.in_zone(pfn) && self.folios.is_live(f) {
                ranges.push((u64::from(pfn), self.folio_nr_pages(f), f));
            }
        }
        ranges.sort_unstable();
        let mut next = if dma_end > 0 { 0 } else { first };
        for (pfn, n, f) in ranges {
            if pfn < next || pfn + n > end || (pfn + n > dma_end && pfn < first) {
                return Err(format!(
                    "folio {f} at pfn {pfn:#x} overlaps or leaves the zone"
                ));
            }
            next = pfn + n;
        }
        Ok(())
    }

    /// `ZERO_PAGE(0)` (`machine.zero_page`): a folio on no list, never
    /// freed, whose frame is [`ZERO_PAGE_PFN`] below the zone, so that it
    /// takes no free page.
    pub(crate) fn alloc_zero_folio(&mut self) -> FolioId {
        (self.folios).alloc_framed(u32::MAX - 1, 0, 0, 0, ZERO_PAGE_PFN)
    }

    /// Base pages of the live folios whose frames are the zone's (all but
    /// the zero page).
    pub(crate) fn framed_pages(&self) -> u64 {
        let mut n = 0;
        for f in 0..self.folios.id_end() {
            if self.folios.is_live(f) && self.phys.in_zone(self.folios.head_pfn(f)) {
                n += self.folio_nr_pages(f);
            }
        }
        n
    }

    /// `/proc/buddyinfo`'s line of the zone.
    pub fn buddyinfo_line(&self) -> String {
        self.phys.zone.buddyinfo_line(0)
    }
}

pub(crate) mod alloc_pages_slowpath;
mod boot;
pub use boot::BootPageblocks;
mod claim;
mod frame;
mod pcp;
mod pcp_high;
pub(crate) use pcp::PerCpuPages;
pub(crate) use pcp_high::VMSTAT_INTERVAL_NS;
mod pcp_order;
pub(crate) use pcp_order::pcp_allowed_order;
pub use pcp_order::PcpLists;
mod rmqueue;
mod rmqueue_claim;
pub use rmqueue_claim::RmqueueFallback;
pub(crate) use rmqueue_claim::RmqueueMode;

#[cfg(test)]
#[path = "page_alloc_tests.rs"]
mod tests;
