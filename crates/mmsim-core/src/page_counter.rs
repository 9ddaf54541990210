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
    /// `page_counter_try_charge()`: `nr` pages for `m` and every ancestor,
    /// or nothing and the first group (from `m` up) that would exceed its
    /// `memory.max`.
    pub(crate) fn page_counter_try_charge(&mut self, m: MemcgId, nr: u64) -> Result<(), MemcgId> {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &self.memcgs[c as usize];
            if g.usage + nr > g.max {
                return Err(c);
            }
            cur = g.parent;
        }
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.usage += nr;
            cur = g.parent;
        }
        Ok(())
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
