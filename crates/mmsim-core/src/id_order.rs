//! Test mode: folio ids in another order (issue #18, Stage B blocker 5).
//!
//! Stage B makes a folio's id its head PFN, so the page allocator, not
//! the arena's LIFO free list, will decide which id a folio gets. No
//! result may depend on that: the kernel walks folios in LRU or PFN order
//! and keys nothing by the address of a `struct folio` in a way a result
//! shows. [`Sim::permute_folio_ids`] hands ids out in an order drawn from
//! a seed, and [`Sim::shuffle_free_folio_ids`] (called between batches of
//! events) makes the next ids reused random draws from the free list;
//! `mmsim` does both when `MMSIM_PERMUTE_FOLIO_IDS` is set
//! (`mmsim_workloads::run_scenario`), and the CLI test
//! `id_order.rs` checks that a set of digest-like runs give the same
//! results, every counter, with and without it.
//!
//! Where ids meet results, and why none depends on their order (the
//! survey of blocker 5):
//!
//! * walks over every id (`FolioArena::for_each_live`: the swap-cache
//!   count, `check_invariants`' counts, `thp_report`'s `nr_anon`,
//!   `anon_large_pages`, `live_pages`; `build_mem_map`, `framed_pages`,
//!   `check_page_alloc`, `check_frames_disjoint`, which sorts by PFN):
//!   sums, counts or checks, commutative;
//! * the lazy queues (`mem::queue::FolioQueue`: the flusher's dirty FIFO,
//!   the deferred split queue) are in push order; a mark is looked up by
//!   id, and a freed folio's entries are stale whatever folio takes its id
//!   next (blocker 2);
//! * the device writeback queues are in submission order; a completion
//!   names its folio by id, and a folio is never freed under writeback;
//! * the TLB model (`tlb.rs`) tags an entry with its folio's id and drops
//!   an entry of another id at lookup: a reclaimed or migrated folio's id
//!   may be freed (and reused by a split's tails) before its batch's
//!   `try_to_unmap_flush` at the end of `shrink_folio_list` or
//!   `migrate_pages`, and a zap frees before `tlb_finish_mmu`'s flush, but
//!   no access runs between the free and the flush, so no lookup meets
//!   an entry of a freed folio and a reused id cannot make a hit;
//! * compaction's scanners and DAMON's physical-address operations go
//!   from PFNs to folios through `mem_map` (`pfn_folio`), in PFN order;
//!   MGLRU's page-table walk and look-around, DAMON's virtual-address
//!   operations and the rmap go through PTEs in address order; the
//!   explainer keys pages by file or VMA and index; tracepoints print
//!   PFNs, never ids;
//! * no `HashMap` or sort is keyed by folio id.

use crate::sim::Sim;

/// Free ids made by [`Sim::permute_folio_ids`] beyond the machine's pages
/// (the zero folio, tests' extra folios).
const SPARE_IDS: u64 = 64;
/// The most ids [`Sim::permute_folio_ids`] makes free up front (a 16 GiB
/// machine's pages; 128 MiB of slots): a larger machine's later ids come
/// in order.
const MAX_PERMUTED_IDS: u64 = 1 << 22;
/// Free ids [`Sim::shuffle_free_folio_ids`] redraws.
const SHUFFLED_PER_CALL: usize = 256;

impl Sim {
    /// Test mode: the folio ids this machine can need (one per page, and
    /// a few) are handed out in an order drawn from `seed`, not 0, 1, 2, ….
    /// Call it before the first event; results must not change (see the
    /// module documentation). Adds nothing to the per-access path.
    pub fn permute_folio_ids(&mut self, seed: u64) {
        let ids = (self.node.managed + SPARE_IDS).min(MAX_PERMUTED_IDS);
        self.folios.permute_ids(ids as usize, seed);
    }

    /// Test mode ([`Sim::permute_folio_ids`] called): the next folios
    /// allocated take random free ids, not the last ones freed. No-op
    /// otherwise.
    pub fn shuffle_free_folio_ids(&mut self) {
        self.folios.shuffle_free(SHUFFLED_PER_CALL);
    }
}
