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

use crate::memcg::MemcgId;
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
