//! Swap readahead (mm/swap_state.c, v6.12): the VMA-based window that a
//! swap-in fault reads around itself (`swap_vma_readahead`, sized by
//! `__swapin_nr_pages` from the hits since the previous fault), and the hit
//! a swap-cache fault records (`swap_update_readahead`). Split out of
//! `crate::fault`, whose `do_swap_page` calls both.

use crate::fault::SwapRead;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::VmaId;
use crate::sim::Sim;
use crate::stats::item::{SWAP_RA, SWAP_RA_HIT};

/// `SWAP_RA_HITS_MAX` (mm/swap_state.c): hits saturate at the field's mask.
pub(crate) const SWAP_RA_HITS_MAX: u32 = 0xff;

/// `__swapin_nr_pages()` (mm/swap_state.c): the readahead window from the
/// previous fault's page, the hits since, the maximum and the previous
/// window. "Please don't ask what the + 2 means, it just happens to work well."
pub(crate) fn swapin_nr_pages(
    prev: u32,
    index: u32,
    hits: u32,
    max_pages: u32,
    prev_win: u32,
) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        // No hits to judge by: read ahead only for an adjacent fault.
        if index != prev.wrapping_add(1) && index != prev.wrapping_sub(1) {
            pages = 1;
        }
    } else {
        let mut roundup = 4;
        while roundup < pages {
            roundup <<= 1;
        }
        pages = roundup;
    }
    pages = pages.min(max_pages);
    // Don't shrink readahead too fast.
    pages.max(prev_win / 2)
}

impl Sim {
    /// `swap_update_readahead()`: a swap-cache hit records the fault address
    /// and, for a page brought in by readahead, a hit. A large folio is
    /// passed over (v6.12 `swap_cache_get_folio()`: no PG_readahead for anon
    /// THP), so the bit, which is PG_reclaim, stays for its writeback's end.
    pub(crate) fn swap_update_readahead(&mut self, vma: VmaId, index: u32, f: FolioId) {
        if self.folios[f].order() > 0 {
            return;
        }
        let readahead = self.folios[f].test_and_clear(flags::READAHEAD);
        let ra = &mut self.vmas[vma as usize].swap_ra;
        if readahead {
            self.vm.count(SWAP_RA_HIT, 1);
            ra.hits = (ra.hits + 1).min(SWAP_RA_HITS_MAX);
        }
        ra.prev = index;
    }

    /// `swap_ra_info()` + `swap_vma_readahead()`: choose the readahead window
    /// around the faulting page (`__swapin_nr_pages`, clamped to the VMA and
    /// to the fault's PMD), and read into the swap cache every swapped-out
    /// page in it that is not there yet, as unmapped inactive folios marked
    /// PG_readahead. Returns how many pages it read.
    pub(crate) fn swap_vma_readahead(&mut self, vma: VmaId, index: u32) -> u64 {
        let max_win = 1u32 << self.cfg.page_cluster;
        let v = &mut self.vmas[vma as usize];
        let prev = v.swap_ra;
        let win = if max_win == 1 {
            1
        } else {
            swapin_nr_pages(prev.prev, index, prev.hits, max_win, prev.win)
        };
        v.swap_ra = crate::mem::pagetable::SwapRaInfo {
            prev: index,
            win,
            hits: 0,
        };
        if win == 1 {
            return 0;
        }
        let (lo, hi) = if index == prev.prev.wrapping_add(1) {
            (index as u64, index as u64 + win as u64)
        } else if prev.prev == index.wrapping_add(1) {
            (
                (index as u64 + 1).saturating_sub(win as u64),
                index as u64 + 1,
            )
        } else {
            let left = (win as u64 - 1) / 2;
            (
                index as u64 - left.min(index as u64),
                index as u64 + win as u64 - left,
            )
        };
        let pmd = (index as u64) & !511;
        let (start, end) = (lo.max(pmd), hi.min(v.len as u64).min(pmd + 512));
        let mut read = 0;
        for i in start..end {
            let i = i as u32;
            if i == index {
                continue;
            }
            match self.read_swap_cache_async(vma, i, flags::READAHEAD) {
                None => break,
                Some(SwapRead::Nothing) => {}
                Some(r) => {
                    self.count_vm_events(SWAP_RA, 1);
                    read += u64::from(r == SwapRead::Io);
                }
            }
        }
        read
    }
}
