//! The hierarchical page counters of memory cgroups (mm/page_counter.c,
//! v6.12) and the per-CPU charge stock in front of them (mm/memcontrol.c).
//!
//! A group's `usage` counts its own pages and its descendants': a charge
//! goes up to the top group and fails, changing nothing, at the first group
//! (from the charged one up) that would exceed its `memory.max`. The
//! charge path of `try_charge_memcg` (in [`crate::memcg`]) charges a batch
//! of `MEMCG_CHARGE_BATCH` pages at a time and keeps the surplus in the
//! per-CPU stock (`memcg_stock_pcp`, one group's pages, `Sim::stock`),
//! which later charges of that group consume without touching the counters.
//! The textbook `lru` policy's charge at its limit (`Sim::lru_charge_counters`)
//! walks the groups once, charging on the way up as v6.12's
//! `page_counter_try_charge` does.

use crate::memcg::{MemcgId, MEMCG_CHARGE_BATCH};
use crate::sim::Sim;

/// mm/page_counter.c (v6.12).
impl Sim {
    /// `page_counter_try_charge()` as `try_charge_memcg()` calls it, of
    /// `batch` pages and, if that fails, of `nr` (≤ `batch`), in one walk
    /// up the groups: charges `batch` pages if every group has room for
    /// them, else `nr` if every group has room for those, and returns what
    /// it charged; or charges nothing and returns the first group (from
    /// `m` up) without room for `nr`, which is what the second call
    /// returns. The same outcome as the kernel's two calls, with one walk
    /// instead of two when the batch does not fit. A charge that fails
    /// changes nothing.
    #[inline]
    pub(crate) fn page_counter_try_charge_batch(
        &mut self,
        m: MemcgId,
        batch: u64,
        nr: u64,
    ) -> Result<u64, MemcgId> {
        debug_assert!(nr <= batch);
        let mut fits_batch = true;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &self.memcgs[c as usize];
            if g.usage + nr > g.max {
                return Err(c);
            }
            fits_batch &= g.usage + batch <= g.max;
            cur = g.parent;
        }
        let charge = if fits_batch { batch } else { nr };
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.usage += charge;
            cur = g.parent;
        }
        Ok(charge)
    }

    /// `page_counter_uncharge()`: `nr` pages less for `m` and every ancestor.
    pub(crate) fn page_counter_uncharge(&mut self, m: MemcgId, nr: u64) {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.usage -= nr;
            if g.usage <= g.max {
                g.over_max_after_write = false;
            }
            cur = g.parent;
        }
    }
}

/// The textbook `lru` policy's charge (mm/memcontrol.c `try_charge_memcg`
/// and mm/page_counter.c `page_counter_try_charge`, v6.12).
impl Sim {
    /// [`Sim::try_charge_memcg_counters`] (`try_charge_memcg()`,
    /// mm/memcontrol.c v6.12, past `consume_stock`) under the textbook
    /// `lru` policy, which meets it on every miss once its group is full: at the limit it
    /// evicts one page and retries (no reclaim, no stock drain, no retry
    /// count, so `noretry` changes nothing), and calls the OOM killer only
    /// when nothing can be evicted. A function of its own (the general
    /// loop asserts it never sees `lru`) so that its frame holds only what
    /// these steps need; the counters and the `memory.high` test in one walk
    /// ([`Sim::page_counter_try_charge_high`]).
    #[inline(never)]
    pub(crate) fn lru_charge_counters(
        &mut self,
        m: MemcgId,
        nr_pages: u64,
        blocking: bool,
    ) -> bool {
        let mut batch = MEMCG_CHARGE_BATCH.max(nr_pages);
        loop {
            match self.page_counter_try_charge_high(m, batch, nr_pages) {
                Ok((charged, maybe_high)) => {
                    // `done_restock`: the surplus to the stock, then the
                    // high check (`Sim::charged_counters`' steps).
                    if charged > nr_pages {
                        self.refill_stock(m, charged - nr_pages);
                    }
                    if maybe_high {
                        // Some group may be over its `memory.high` (the
                        // walk's test is looser, and the stock's refill
                        // may have drained another group's stock, lowering
                        // usages): the kernel's walk decides, after it.
                        self.note_over_high(m, charged);
                    }
                    if self.pages_over_high > MEMCG_CHARGE_BATCH {
                        self.mem_cgroup_handle_over_high();
                    }
                    return true;
                }
                Err(_) if !blocking => return false,
                Err(over) => {
                    batch = nr_pages;
                    // memcg_memory_event(MEMCG_MAX) on every pass.
                    self.memcgs[over as usize].max_events += 1;
                    if self.lru_evict_one() {
                        continue;
                    }
                    if !self.charge_oom(over, nr_pages) {
                        return false;
                    }
                }
            }
        }
    }

    /// [`Sim::page_counter_try_charge_batch`] as v6.12's
    /// `page_counter_try_charge()` walks (mm/page_counter.c): `nr` pages
    /// added to each group on the way up, and, at the first group without
    /// room for them, taken back from the groups below it (the kernel's
    /// `page_counter_cancel` loop) and that group returned. The same walk
    /// notes whether every group has room for `batch` (then the rest of the
    /// batch is added in a second walk, as the kernel's first call of
    /// `try_charge_memcg` would have charged it) and whether any group
    /// might be over its `memory.high` or `memory.swap.high` after the
    /// charge: returns what was charged and that loose test for it (true
    /// whenever `note_over_high`, mm/memcontrol.c `try_charge_memcg`, could
    /// find a group over its high; `note_over_high` then decides). The same outcome as `page_counter_try_charge_batch`
    /// and the high walk: the `lru` policy's one charge per miss at its
    /// limit walks the groups once instead of three times.
    #[inline(always)]
    pub(crate) fn page_counter_try_charge_high(
        &mut self,
        m: MemcgId,
        batch: u64,
        nr: u64,
    ) -> Result<(u64, bool), MemcgId> {
        debug_assert!(nr <= batch);
        let (mut fits_batch, mut maybe_high) = (true, false);
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            if g.usage + nr > g.max {
                let mut undo = Some(m);
                while let Some(u) = undo.filter(|&u| u != c) {
                    let g = &mut self.memcgs[u as usize];
                    g.usage -= nr;
                    undo = g.parent;
                }
                return Err(c);
            }
            fits_batch &= g.usage + batch <= g.max;
            // Over `memory.high` after a charge of the batch (so also
            // maybe after one of `nr`), or over `memory.swap.high`
            // (whatever the cgroup version): `note_over_high` decides.
            maybe_high |= g.usage + batch > g.high || g.swap_usage > g.swap_high;
            g.usage += nr;
            cur = g.parent;
        }
        if !fits_batch || batch == nr {
            return Ok((nr, maybe_high));
        }
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.usage += batch - nr;
            cur = g.parent;
        }
        Ok((batch, maybe_high))
    }
}

/// The per-CPU charge stock of mm/memcontrol.c (v6.12).
impl Sim {
    /// The order-0 `try_charge_memcg()` (mm/memcontrol.c, v6.12) after
    /// `consume_stock` failed, when it needs nothing but the counters:
    /// every group from `m` up has room for the page and none would be over
    /// `memory.high` (or, under v2, `memory.swap.high`) after the charge.
    /// Then it charges what `page_counter_try_charge_batch` would (the
    /// batch if every group has room for it, else the page), stocks the
    /// surplus and returns true; otherwise it changes nothing and returns
    /// false, and the caller takes the general path
    /// (`try_charge_memcg_counters`: limits, reclaim, the high overage).
    /// Inlined into the fault's allocation (one charge per fault at a
    /// group's limit, where the stock is empty). The same outcome as the
    /// general path: draining another group's stock (in `refill_stock`)
    /// only lowers usages, so a charge found under every `memory.high`
    /// here is under it there too.
    #[inline(always)]
    pub(crate) fn try_charge_one_quiet(&mut self, m: MemcgId) -> bool {
        let v2 = self.cfg.cgroup_version == crate::config::CgroupVersion::V2;
        // One walk for the limits and the high test of both outcomes.
        let (mut fits_batch, mut high_page, mut high_batch) = (true, false, false);
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &self.memcgs[c as usize];
            if g.usage + 1 > g.max {
                return false;
            }
            fits_batch &= g.usage + MEMCG_CHARGE_BATCH <= g.max;
            let swap_high = v2 && g.swap_usage > g.swap_high;
            high_page |= g.usage + 1 > g.high || swap_high;
            high_batch |= g.usage + MEMCG_CHARGE_BATCH > g.high || swap_high;
            cur = g.parent;
        }
        let (charge, high) = if fits_batch {
            (MEMCG_CHARGE_BATCH, high_batch)
        } else {
            (1, high_page)
        };
        if high {
            return false;
        }
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.usage += charge;
            cur = g.parent;
        }
        if charge > 1 {
            self.refill_stock(m, charge - 1);
        }
        // As after `note_over_high` (which added nothing here).
        if self.pages_over_high > MEMCG_CHARGE_BATCH {
            self.mem_cgroup_handle_over_high();
        }
        true
    }

    /// `refill_stock()`: the per-CPU stock now holds `nr` pages of `m`
    /// (a stock of another group is given back first).
    pub(crate) fn refill_stock(&mut self, m: MemcgId, nr: u64) {
        if self.stock.0 != m {
            self.drain_stock();
            self.stock.0 = m;
        }
        self.stock.1 += nr;
    }

    /// `drain_stock()`: uncharges the stocked pages.
    pub(crate) fn drain_stock(&mut self) {
        let (m, nr) = self.stock;
        if nr > 0 {
            self.page_counter_uncharge(m, nr);
            self.stock.1 = 0;
        }
    }
}
