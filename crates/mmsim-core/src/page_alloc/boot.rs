//! The pageblocks a real boot leaves unmovable or reclaimable
//! (`machine.boot_pageblocks`, opt-in), modelled on Linux v6.12's boot.
//!
//! `memmap_init_range` (mm/mm_init.c) marks every pageblock
//! `MIGRATE_MOVABLE` (`init_pageblock_migratetype` at each pageblock-aligned
//! PFN), and `memblock_free_all` → `__free_pages_core` hands the memory to
//! the buddy allocator in `MAX_PAGE_ORDER` blocks, lowest PFN first at the
//! tail (`FPI_TO_TAIL`): [`Zone::new`]. Everything the kernel allocates
//! from then on with a non-movable mask (slab caches, page tables,
//! per-CPU areas, the trace ring buffer, init's own tasks) finds no free
//! page of its type, falls back (`__rmqueue_fallback`) to the head of the
//! movable order-10 list, the zone's lowest free block, and claims it whole
//! (`steal_suitable_fallback` with `current_order >= pageblock_order`:
//! `change_pageblock_range`), then takes its pages one after another
//! (`expand` leaves the upper halves on the lists, so order-0 allocations
//! fill a claimed block from its first page up). The same boot's
//! reclaimable slab (`__GFP_RECLAIMABLE`: dentries, inodes) claims its own
//! blocks the same way. So a booted zone starts with a few pageblocks of
//! each kernel type at its low end, mostly allocated, their free pages at
//! the blocks' ends: `/proc/pagetypeinfo`'s "Number of blocks type" and its
//! free counts per type show them.
//!
//! mmsim's zone boots with none (every pageblock movable, all free). This
//! setting starts the run from such a booted zone: the first `unmovable`
//! pageblocks of the zone are `MIGRATE_UNMOVABLE`, the next `reclaimable`
//! `MIGRATE_RECLAIMABLE`; a type's `*_free` pages are spread evenly over its
//! blocks (the first blocks take one more when they do not divide), each
//! block's free pages are its last ones (as buddy blocks of the largest
//! aligned orders, at the head of their lists, where `expand` puts them),
//! and the rest of the block is allocated to the kernel: never freed,
//! never on an LRU, no folio's (compaction's migrate scanner skips such a
//! page, as it skips a slab page). A type's blocks are taken in
//! `MAX_PAGE_ORDER` pairs from the zone's lowest order-10 blocks; an odd
//! count leaves the pair's last pageblock free and movable (an order-9
//! block, as `expand` would leave it).
//!
//! What is not modelled: which kernel objects the pages are (no slab or
//! task is created; `slab_frames` and `pagetable_frames` start empty
//! beside them), free holes inside the allocated part (a real block's
//! free pages are where its objects were freed), and the boot's movable
//! allocations (the initramfs' page cache, freed before the run). The
//! allocated pages count in `managed` and are not free: `machine.memory`
//! stays the zone's managed pages, as in the kernel's `MemTotal`, so the
//! run starts with that many pages fewer free.

use serde::{Deserialize, Serialize};

use super::{MigrateType, Zone, MAX_PAGE_ORDER, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::config::ConfigError;

/// `[machine.boot_pageblocks]`: the boot's unmovable and reclaimable
/// pageblocks and their free pages (module `page_alloc::boot`). All 0 by
/// default: a zone of movable pageblocks only, as mmsim has always booted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BootPageblocks {
    /// Pageblocks (512 pages each) of `MIGRATE_UNMOVABLE` at the zone's
    /// start: `/proc/pagetypeinfo`'s "Number of blocks type" Unmovable.
    #[serde(default)]
    pub unmovable: u64,
    /// Free pages in the unmovable pageblocks (the sum of the Unmovable row
    /// of "Free pages count per migrate type", each count times 2^order);
    /// the blocks' other pages are the kernel's. At most 512 per block.
    #[serde(default)]
    pub unmovable_free: u64,
    /// Pageblocks of `MIGRATE_RECLAIMABLE`, after the unmovable ones.
    #[serde(default)]
    pub reclaimable: u64,
    /// Free pages in the reclaimable pageblocks. At most 512 per block.
    #[serde(default)]
    pub reclaimable_free: u64,
}

impl BootPageblocks {
    /// All zero (serialized only when something is set).
    pub fn is_default(&self) -> bool {
        *self == BootPageblocks::default()
    }

    /// Pages the boot's blocks hold allocated (never freed).
    pub fn allocated_pages(&self) -> u64 {
        (self.unmovable + self.reclaimable) * PAGEBLOCK_NR_PAGES
            - self.unmovable_free
            - self.reclaimable_free
    }

    /// Checks the counts against a zone of `zone_pages` pages (the node's
    /// memory less ZONE_DMA's); the error names the field and its range.
    pub(crate) fn validate(&self, zone_pages: u64) -> Result<(), ConfigError> {
        // A machine without boot blocks has nothing to check here, and its
        // too-small `memory` must be reported as `memory`'s error, not ours.
        if self.is_default() {
            return Ok(());
        }
        let field = "machine.boot_pageblocks";
        // The blocks are taken in pairs from the zone's whole order-10 blocks.
        let room = zone_pages >> MAX_PAGE_ORDER << (MAX_PAGE_ORDER - PAGEBLOCK_ORDER);
        let blocks = self.unmovable.saturating_add(self.reclaimable);
        if blocks > room {
            return Err(ConfigError::new(
                field,
                format!(
                    "{} unmovable + {} reclaimable pageblocks are more than the zone's {room} \
                     (its pages in whole 4 MiB blocks, 2 pageblocks each)",
                    self.unmovable, self.reclaimable
                ),
            ));
        }
        for (name, free, n) in [
            ("unmovable_free", self.unmovable_free, self.unmovable),
            ("reclaimable_free", self.reclaimable_free, self.reclaimable),
        ] {
            let max = n * PAGEBLOCK_NR_PAGES;
            if free > max {
                return Err(ConfigError::new(
                    format!("{field}.{name}"),
                    format!("{free} is out of range [0, {max}] (512 pages per pageblock)"),
                ));
            }
        }
        let left = zone_pages - self.allocated_pages();
        if left < crate::config::MIN_MEMORY_PAGES {
            return Err(ConfigError::new(
                field,
                format!(
                    "the boot's {} allocated pages leave {left} of the zone's {zone_pages} \
                     pages, fewer than 16M (4096 pages)",
                    self.allocated_pages()
                ),
            ));
        }
        Ok(())
    }
}

impl Zone {
    /// Leaves the zone as the boot's early allocations do (module
    /// `page_alloc::boot`): `cfg`'s pageblocks typed and allocated from the
    /// zone's start, their free pages on their type's lists. Called on a
    /// zone fresh from [`Zone::new`]. Returns the pages allocated.
    pub(crate) fn boot_pageblocks(&mut self, cfg: &BootPageblocks) -> u64 {
        let blocks = cfg.unmovable + cfg.reclaimable;
        if blocks == 0 {
            return 0;
        }
        assert_eq!(self.pristine_next, 0, "boot_pageblocks on a used zone");
        let pairs = blocks.div_ceil(2);
        assert!(pairs <= self.pristine_blocks(), "validated");
        // The lowest order-10 blocks leave the free lists whole.
        self.pristine_next = pairs << MAX_PAGE_ORDER;
        self.nr_free[MAX_PAGE_ORDER] -= pairs;
        self.free_pages -= pairs << MAX_PAGE_ORDER;
        let runs = [
            (MigrateType::Unmovable, cfg.unmovable, cfg.unmovable_free),
            (
                MigrateType::Reclaimable,
                cfg.reclaimable,
                cfg.reclaimable_free,
            ),
        ];
        let mut block = 0u64;
        let mut allocated = 0;
        for (mt, n, free) in runs {
            for i in 0..n {
                let f = free / n + u64::from(i < free % n);
                allocated += self.boot_block(block, mt, f);
                block += 1;
            }
        }
        if block < pairs * 2 {
            // The pair's upper pageblock: free and movable (order 9).
            let pfn = self.start_pfn + (block << PAGEBLOCK_ORDER);
            self.add_to_free_list(pfn, PAGEBLOCK_ORDER, MigrateType::Movable, false);
        }
        allocated
    }

    /// Pageblock `block` (zone-relative index) typed `mt`, its first
    /// `512 - free` pages allocated as `mt`, the rest freed in the largest
    /// aligned blocks, lowest first, each to the head of its list.
    fn boot_block(&mut self, block: u64, mt: MigrateType, free: u64) -> u64 {
        self.block_type[block as usize] = mt;
        let first = self.start_pfn + (block << PAGEBLOCK_ORDER);
        let end = first + PAGEBLOCK_NR_PAGES;
        let used = PAGEBLOCK_NR_PAGES - free;
        for pfn in first..first + used {
            let i = self.idx(pfn);
            self.frames[i].set_alloc_type(mt as u8);
        }
        let mut pfn = first + used;
        while pfn < end {
            let mut order = PAGEBLOCK_ORDER;
            while !pfn.is_multiple_of(1 << order) || pfn + (1 << order) > end {
                order -= 1;
            }
            self.add_to_free_list(pfn, order, mt, false);
            pfn += 1 << order;
        }
        used
    }
}

impl crate::sim::Sim {
    /// `machine.boot_pageblocks` on the node's zone (the upper one with
    /// ZONE_DMA): the boot's allocated pages leave the node's free pages.
    pub(crate) fn setup_boot_pageblocks(&mut self) {
        let allocated = self.phys.zone.boot_pageblocks(&self.cfg.boot_pageblocks);
        self.node.free -= allocated;
    }
}
