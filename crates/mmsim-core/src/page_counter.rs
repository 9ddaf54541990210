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
