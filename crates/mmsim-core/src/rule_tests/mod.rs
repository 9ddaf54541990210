//! Unit tests of kernel rules: scripted event sequences with the exact
//! outcome the kernel's code dictates (one test per rule).
//!
//! One file per topic: `classic.rs` the classic LRU (activation,
//! refault distance, the anon/file balance), `swap.rs` swap-in and swap
//! writes, `readahead.rs` readahead and read-around, `memcg.rs` the memory
//! cgroup hierarchy, `memcg_swap.rs` swap limits and charges of groups,
//! `memcg_stats.rs` the memcg statistics flush that reclaim reads (6.12's
//! ratelimited flush), `kmem.rs` kernel memory charged to groups (xarray
//! nodes, the shadow-node shrinker, page tables), `buffer_heads.rs` ext4's
//! buffer heads charged with written folios, `rmap.rs` the reverse-map walk and the idle-page bits,
//! `thp.rs` multi-size THP (orders at a fault, fallbacks, swap-out), and
//! `zero_page.rs` the zero page and huge zero page of read faults, and
//! `discard.rs` MADV_DONTNEED and the deferred split queue; `cow.rs` private
//! file mappings (copy-on-write from the page cache), `remap.rs` munmap and mmap
//! of a whole VMA (`Event::Remap`); `compaction.rs`
//! memory compaction and kcompactd, `kswapd_nap.rs` kswapd's HZ/10 nap, `kswapd_sleep.rs` its length (`kswapd_nap_ms`); `khugepaged.rs`
//! MADV_COLLAPSE and khugepaged; and
//! `zero_pages.rs` zero-filled anonymous pages at swap-out and swap-in;
//! `shadow.rs` shadow entries on big machines and with many groups;
//! `filefolio.rs` large page-cache folios of readahead and `filewrite.rs`
//! those of `write()`, `filepmd.rs` their PMD mappings and `filepmd_zap.rs`
//! the zap, split and unmap of those, `filepmd_flush.rs` the zap's flush
//! stride and ceiling and `file_pmds` cleared by Remap and exit; `tlb.rs` the data
//! TLB (entries per mapping size, eviction, flushes); `fork.rs` fork and
//! copy-on-write of anonymous memory; `swapcache.rs` large folios mapped
//! back from the swap cache, `swapzap.rs` the zap of a swap PTE whose slot
//! a swap-cache folio holds, `swapsplit.rs` the slots of a large folio
//! unmapped in part before its swap-out; `dirty_ratelimit.rs` the ratelimit of
//! `balance_dirty_pages()`'s calls; `dirty_throttle.rs` the writer's
//! `balance_dirty_pages()` pause, `dirty_throttle_wb.rs` its per-wb
//! `wb_thresh` and `wb_dirty` and per-task writer state, `wb_bg_thresh.rs`
//! background writeback per wb with its share of `bg_thresh`; `mkclean.rs` `folio_mkclean()` at
//! writeback and the periodic flusher's global background check,
//! `mkclean_pmd.rs` that of a PMD-mapped folio, the store that splits the
//! PMD, and whose flushes count local; `lru_charge.rs` the `lru` policy's charge walk;
//! `rmqueue_claim.rs` v6.12.0's `__rmqueue_fallback()` against v6.15's claim/steal split
//! (where each boosts), `extfrag_tp.rs` where each emits `kmem:mm_page_alloc_extfrag`;
//! `boost_setup.rs` the machine and file
//! setup that `boost.rs` and `boost_rules.rs` (watermark boosting) share;
//! `direct_reclaim.rs` direct reclaim in a large folio's slow path
//! (`__alloc_pages_direct_reclaim`, MGLRU's `compact_gap(sc->order)` goal);
//! `pcp_order.rs` the per-CPU lists of orders 1–3 and the PMD order (`policy.pcp_lists`);
//! `pcp_high.rs` the per-CPU lists' auto-tuned `high` under `pcp_lists = "6.12"`;
//! `pcp.rs` the per-CPU lists per migrate type (page-table pages through the
//! unmovable list, frees by pageblock type, the shared count);
//! `should_continue_reclaim.rs` classic `shrink_node`'s reclaim/compaction
//! passes (`should_continue_reclaim`); `split_zeropage.rs` v6.12's zero-filled
//! subpages at a THP split and the underused THP shrinker; `split_pmd.rs`
//! `thp_split_pmd` at `split_huge_page` (`unmap_folio`); `slowpath_noretry.rs`
//! `__GFP_NORETRY` in the order-0 allocator's slow path, `readahead_skip.rs` a
//! readahead page whose charge fails (skipped in v4.9, the batch's end in v6.12). This file
//! holds the helpers they share.

mod boost;
mod boost_rules;
mod boost_setup;
mod boot_pageblocks;
mod buffer_heads;
mod cgwb;
mod classic;
mod compaction;
mod compaction_tp;
mod cow;
mod direct_reclaim;
pub(crate) mod dirty_balance;
mod dirty_ratelimit;
mod dirty_throttle;
mod dirty_throttle_wb;
mod discard;
mod dma_compact;
mod dma_zone;
mod exit;
mod explain;
mod extfrag_tp;
mod filefolio;
mod filepmd;
mod filepmd_flush;
mod filepmd_zap;
mod filesync;
mod filewrite;
mod fork;
mod fork_fail;
mod fork_zap;
mod gfp_order0_tp;
mod gfp_tp;
mod khugepaged;
mod kmem;
mod kmem_multi_index;
mod kswapd_nap;
mod kswapd_sleep;
mod lru_charge;
mod memcg;
mod memcg_stats;
mod memcg_swap;
mod migrate;
mod mkclean;
mod mkclean_pmd;
mod noretry;
mod oom;
mod open;
mod open_fd_numbers;
mod open_file;
mod page_alloc_tp;
mod pcp;
mod pcp_high;
mod pcp_order;
mod pgdat_dirty;
mod readahead;
mod readahead_lock;
mod readahead_skip;
mod reclaim_mark;
mod reclaim_throttle;
mod remap;
mod rfc;
mod rmap;
mod rmqueue_claim;
mod rotate;
mod run_loop;
mod shadow;
mod should_continue_reclaim;
mod slowpath_noretry;
mod slub;
mod slub_gfp_tp;
mod split_pmd;
mod split_zeropage;
mod swap;
mod swap_owner;
mod swapcache;
mod swapin_mkwrite;
mod swapsplit;
mod swapzap;
mod thp;
mod tlb;
mod wakeup_kswapd_tp;
mod wb_bg_thresh;
mod wp_swap;
mod zero_page;
mod zero_pages;
mod zone_reclaim;

use crate::config::{
    CgroupVersion, CostVariant, DeviceConfig, DeviceKind, MachineConfig, PolicyConfig, PolicyName,
    Size,
};
use crate::event::Event;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::readahead::Advice;
use crate::reclaim::vmscan::{
    cost_fractions, inactive_is_low, scanned_rotated_fractions, ReclaimStat,
};
use crate::reclaim::workingset::Shadow;
use crate::reclaim::{Reclaimer, ScanControl};
use crate::sim::{ClassicRules, Sim};

fn machine(policy: PolicyName, memory_pages: u64, swap_pages: Option<u64>) -> Sim {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(memory_pages),
        policy: PolicyConfig {
            name: policy,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(s) = swap_pages {
        cfg.swap = DeviceConfig {
            size: Some(Size::from_pages(s)),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
    }
    Sim::new(cfg).unwrap()
}

/// A group `name` under `parent` limited to `max` pages, with a task in it reading
/// a file of `pages` pages under FADV_RANDOM (one page a read), so that the group's
/// own limit reclaim evicts what it read.
fn limited_reader(
    s: &mut Sim,
    parent: crate::memcg::MemcgId,
    name: &str,
    max: u64,
    pages: u64,
) -> (crate::memcg::MemcgId, u32) {
    let m = s.add_memcg(parent, name).unwrap();
    let t = s.add_task(&format!("{name}-task"));
    s.attach_task(t, m).unwrap();
    s.set_memcg_max(m, max).unwrap();
    let file = s.add_file(&format!("{name}-file"), pages).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    (m, file)
}

/// Drains the per-CPU lists and takes every free frame of the zone as memory
/// the kernel holds (frames of no folio, off `node.free`); returns how many.
/// The tests that script the buddy lists frame by frame start from it.
pub(crate) fn take_all_free(s: &mut Sim) -> u64 {
    s.phys.drain_pages();
    let mut n = 0;
    while s
        .phys
        .zone
        .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
        .is_some()
    {
        n += 1;
    }
    s.node.free -= n;
    n
}

/// Opens a new file of `size` pages as `task` under FADV_RANDOM (no
/// readahead) and reads its pages `0..pages`, one page a read: `pages`
/// clean page-cache folios, charged to `task`'s group. Returns the file.
fn read_random(s: &mut Sim, task: u32, size: u64, pages: u32) -> u32 {
    let file = s.add_file("f", size).unwrap();
    s.open(file, task).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    for index in 0..pages {
        s.step(&Event::FileRead {
            file,
            index,
            pages: 1,
        });
    }
    file
}

fn file_folio(sim: &Sim, file: u32, index: u32) -> FolioId {
    slot_folio(sim.files[file as usize].slot(index)).expect("resident")
}

fn list_of(sim: &Sim, f: FolioId) -> LruList {
    LruList::from_index(sim.folios.lru(f))
}

/// Takes folio `f` off its LRU list, as `isolate_lru_folios` does;
/// returns the list.
fn isolate(s: &mut Sim, f: FolioId) -> LruList {
    let lru = list_of(s, f);
    s.memcgs[0].lruvec.lists[lru as usize].unlink(&mut s.folios, f);
    s.folios[f].clear(flags::LRU);
    lru
}

/// Runs isolated folio `f` alone through `shrink_folio_list` (direct
/// reclaim, references ignored); returns (pages reclaimed, pages scanned,
/// folios left in the batch, `struct reclaim_stat`).
fn shrink_isolated(s: &mut Sim, f: FolioId) -> (u64, u64, usize, ReclaimStat) {
    let mut batch = vec![f];
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, s.clock);
    sc.ignore_references = true;
    let rules = s.rules();
    let (reclaimed, stat) = s.shrink_folio_list(&mut batch, &mut sc, rules);
    (reclaimed, sc.nr_scanned, batch.len(), stat)
}

/// Puts `sizes[i]` dummy folios on list i (flags matching the list), each
/// with a free page and a frame of the zone (not charged to a group).
fn fill_lists(s: &mut Sim, sizes: [u64; 4]) {
    for (i, &n) in sizes.iter().enumerate() {
        let lru = LruList::from_index(i as u8);
        let mut fl = flags::LRU;
        if !lru.is_file() {
            fl |= flags::SWAPBACKED;
        }
        if lru.is_active() {
            fl |= flags::ACTIVE;
        }
        for _ in 0..n {
            // Each takes a free page and its frame, as a fault's folio does.
            s.node.free -= 1;
            let f = s.alloc_order0_folio(u32::MAX - 1, 0, fl);
            s.memcgs[0].lruvec.lists[i].push_head(&mut s.folios, f, i as u8);
        }
    }
}

/// Writes page `index` of anonymous `vma` (faulting it in) and returns its folio.
fn fault_anon(s: &mut Sim, vma: u32, index: u32) -> FolioId {
    s.step(&Event::Access {
        vma,
        index,
        write: true,
    });
    s.vmas[vma as usize].pte(index) & crate::mem::pagetable::PTE_FOLIO_MASK
}

/// Writes pages `0..pages` of anonymous `vma`, faulting them in.
fn touch(s: &mut Sim, vma: u32, pages: u32) {
    for i in 0..pages {
        s.step(&Event::Access {
            vma,
            index: i,
            write: true,
        });
    }
}

/// `mem_map` is written only when something reads it (`PhysMem::mem_map`):
/// on a machine without DAMON it stays empty while folios come and go
/// through reclaim, and built on first use it names each framed folio's
/// PFNs as the skipped writes would have; from then on it is kept.
#[test]
fn mem_map_is_built_on_first_use_as_the_writes_would_have_left_it() {
    let mut s = machine(PolicyName::Cost, 4096, Some(8192));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 6144).unwrap();
    touch(&mut s, vma, 6144);
    assert!(s.vm.pgfree > 0, "reclaim freed frames");
    assert!(!s.phys.mem_map);
    s.check_invariants().unwrap();
    s.ensure_mem_map();
    assert!(s.phys.mem_map);
    // check_page_alloc now holds every mapped PFN to its folio and counts them.
    s.check_invariants().unwrap();
    touch(&mut s, vma, 6144);
    s.check_invariants().unwrap();
    let f = fault_anon(&mut s, vma, 3);
    assert_eq!(s.phys.pfn_folio(s.folios.head_pfn(f)), f);
}
