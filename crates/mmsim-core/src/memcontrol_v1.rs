//! cgroup v1 soft limits (mm/memcontrol-v1.c of v6.x, which keeps the
//! algorithm of 2.6.32–3.11 in mm/memcontrol.c), and seed 004's rework.
//!
//! A group's soft-limit *excess* is its usage above `memory.soft_limit_in_bytes`.
//! Only global reclaim (kswapd, direct) honours soft limits, in one of two
//! designs selected by `machine.soft_limit_reclaim`:
//!
//! * `tree` — groups in excess sit in a per-node tree keyed by their excess
//!   as last updated; the keys are refreshed for a group and all its
//!   ancestors every SOFTLIMIT_EVENTS_TARGET (1024) page charge/uncharge
//!   events of the group (`memcg1_check_events` → `memcg1_update_tree`).
//!   Before each global reclaim pass `memcg1_soft_limit_reclaim` pops the
//!   biggest offender and reclaims its subtree group by group at priority 0
//!   (`mem_cgroup_soft_reclaim` → `mem_cgroup_shrink_node`: the whole LRU of
//!   one group eligible, stopping after SWAP_CLUSTER_MAX pages), for rounds
//!   until the excess is gone or a quarter of it was reclaimed, moves on to
//!   the next offender if nothing came back, and gives up after
//!   MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS fruitless tries. Normal reclaim
//!   then runs anyway. The walks start at the offender each time (the
//!   kernel resumes a shared cursor). kswapd runs the pass in one step of
//!   its clock, or, under `policy.kswapd_soft_limit_rounds`, one
//!   `mem_cgroup_shrink_node()` per step, as the kernel's frees come (the
//!   offender out of the tree during its round and until its next
//!   `memcg1_update_tree()`, after 1,024 page events, re-keys it).
//!   Departure of the default path: unless `memcg_stats_flush = "reclaim"`,
//!   the pass runs inside `shrink_node()` after `prepare_scan_control()`, so
//!   `file_is_tiny`, `cache_trim_mode` and `may_deactivate` are decided
//!   before its pages come free, and its pages count in `shrink_node()`'s
//!   progress (resetting `kswapd_failures`); v6.12 runs it before
//!   `shrink_node()` (`balance_pgdat()`, `shrink_zones()`, mm/vmscan.c) and
//!   `shrink_node()`'s `reclaimable` excludes it. kswapd under the option
//!   runs it in the kernel's order, so the option changes order as well as
//!   timing.
//! * `seed-004` — 3.12-rc1's "memcg: integrate soft reclaim tighter with
//!   zone shrinking code" (reverted before 3.12): each `shrink_node` pass
//!   first visits only the groups that are, or have an ancestor, over their
//!   soft limit (`mem_cgroup_soft_reclaim_eligible`), at the normal
//!   priority; if that scanned nothing, it visits all groups.
//! * `off` — soft limits are ignored (MGLRU kernels).

use crate::config::SoftLimitReclaim;
use crate::memcg::MemcgId;
use crate::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use crate::sim::Sim;
use crate::tracepoint::TpEvent;

/// `SOFTLIMIT_EVENTS_TARGET`: page events between soft-limit tree updates.
pub(crate) const SOFTLIMIT_EVENTS_TARGET: u64 = 1024;
/// `MEM_CGROUP_MAX_RECLAIM_LOOPS`: rounds over one offender's subtree.
pub(crate) const MEM_CGROUP_MAX_RECLAIM_LOOPS: u32 = 100;
/// `MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS`: fruitless offenders tried.
pub(crate) const MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS: u32 = 2;

/// Checks `policy.kswapd_soft_limit_rounds`: kswapd's pass round by round
/// exists only where kswapd runs the tree's `memcg1_soft_limit_reclaim()`,
/// i.e. `soft_limit_reclaim = "tree"` on the classic LRU lists (v6.12
/// `memcg1_soft_limit_reclaim()` returns at once when `lru_gen_enabled()`,
/// since the v6.3 memcg LRU; v6.1 still ran the tree under MGLRU, which
/// mmsim's MGLRU v6.1 does not model: a departure; seed 004 and `off` have
/// no such pass). Set anywhere else it would be
/// ignored, so it is refused, naming the field.
pub(crate) fn validate_kswapd_soft_limit_rounds(
    cfg: &crate::config::MachineConfig,
) -> Result<(), crate::config::ConfigError> {
    if !cfg.policy.kswapd_soft_limit_rounds {
        return Ok(());
    }
    let why = if cfg.policy.name == crate::config::PolicyName::Mglru {
        "policy.name = \"mglru\" models no soft-limit pass in kswapd (v6.3+ skip the soft-limit \
         tree under lru_gen; mmsim's MGLRU has none for any version: use a classic LRU \
         policy, or leave it out)"
            .to_string()
    } else if cfg.soft_limit_reclaim != SoftLimitReclaim::Tree {
        format!(
            "soft_limit_reclaim = \"{}\" models no soft-limit pass in kswapd (only the v1 tree \
             does: set soft_limit_reclaim = \"tree\", or leave it out)",
            cfg.soft_limit_reclaim.name()
        )
    } else {
        return Ok(());
    };
    Err(crate::config::ConfigError::new(
        "machine.policy.kswapd_soft_limit_rounds",
        format!("true is set, but mmsim's {why}"),
    ))
}

/// Where `memcg1_soft_limit_reclaim()`'s loop is (kswapd's, resumed step
/// by step under `policy.kswapd_soft_limit_rounds`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SoftPass {
    /// `nr_reclaimed` so far.
    pub reclaimed: u64,
    /// `*total_scanned` so far.
    pub scanned: u64,
    /// `next_mz`: the offender to try after a fruitless one.
    next: Option<MemcgId>,
    /// `loop`: offenders finished.
    loops: u32,
    /// The `mem_cgroup_soft_reclaim()` under way.
    round: Option<SoftRound>,
}

/// Where one `mem_cgroup_soft_reclaim()` is.
#[derive(Clone, Copy, Debug)]
struct SoftRound {
    /// The offender (`root_memcg`).
    root: MemcgId,
    /// Its excess when the call started.
    excess: u64,
    /// Pages reclaimed so far (`total`).
    total: u64,
    /// Pages scanned so far.
    scanned: u64,
    /// Walks of the subtree finished (`loop`).
    loops: u32,
    /// The last group shrunk (`victim`).
    victim: Option<MemcgId>,
}

impl Sim {
    /// `soft_limit_excess()`: pages over the soft limit.
    pub(crate) fn soft_limit_excess(&self, m: MemcgId) -> u64 {
        let g = &self.memcgs[m as usize];
        g.usage.saturating_sub(g.soft_limit)
    }

    /// `memcg1_check_events()`: `nr` page events of group `m`; every
    /// SOFTLIMIT_EVENTS_TARGET of them refresh the tree.
    #[inline]
    pub(crate) fn memcg1_check_events(&mut self, m: MemcgId, nr: u64) {
        if self.cfg.soft_limit_reclaim != SoftLimitReclaim::Tree {
            return;
        }
        let g = &mut self.memcgs[m as usize];
        g.soft_events += nr;
        if g.soft_events >= SOFTLIMIT_EVENTS_TARGET {
            g.soft_events = 0;
            self.memcg1_update_tree(m);
        }
    }

    /// `memcg1_update_tree()`: re-keys `m` and every ancestor by its current
    /// excess (out of the tree at 0).
    pub(crate) fn memcg1_update_tree(&mut self, m: MemcgId) {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let excess = self.soft_limit_excess(c);
            if excess > 0 || self.memcgs[c as usize].soft_tree_key.is_some() {
                self.soft_tree_insert(c, excess);
            }
            cur = self.memcgs[c as usize].parent;
        }
    }

    /// `__mem_cgroup_insert_exceeded()`: (re)inserts with key `excess`
    /// (removes at 0). Among equal keys the latest inserted is the largest.
    fn soft_tree_insert(&mut self, m: MemcgId, excess: u64) {
        self.soft_tree_seq += 1;
        let seq = self.soft_tree_seq;
        let g = &mut self.memcgs[m as usize];
        g.soft_tree_key = (excess > 0).then_some(excess);
        g.soft_tree_seq = seq;
    }

    /// `__mem_cgroup_largest_soft_limit_node()` + remove: the rightmost
    /// group of the tree, taken out; groups whose excess has dropped to 0
    /// are dropped on the way.
    fn soft_tree_pop_largest(&mut self) -> Option<MemcgId> {
        loop {
            let best = self
                .memcgs
                .iter()
                .enumerate()
                .filter_map(|(i, g)| g.soft_tree_key.map(|k| ((k, g.soft_tree_seq), i)))
                .max()?
                .1 as MemcgId;
            self.memcgs[best as usize].soft_tree_key = None;
            if self.soft_limit_excess(best) > 0 {
                return Some(best);
            }
        }
    }

    /// `memcg1_soft_limit_reclaim()`: reclaims from the biggest offenders
    /// before a global reclaim pass; returns (reclaimed, scanned) and adds
    /// its time to `outer`. As v6.12 `memcg1_soft_limit_reclaim()`
    /// (mm/memcontrol-v1.c), a reclaim for a higher-order allocation
    /// (`sc->order > 0`: direct reclaim for a large folio, kswapd's
    /// reclaim order) does no soft-limit reclaim.
    pub(crate) fn memcg1_soft_limit_reclaim(&mut self, outer: &mut ScanControl) -> (u64, u64) {
        let mut pass = SoftPass::default();
        while !self.soft_limit_reclaim_step(&mut pass, outer) {}
        // A group taken for a next try that did not happen stays out of the
        // tree until its next update, as in the kernel.
        (pass.reclaimed, pass.scanned)
    }

    /// One `mem_cgroup_shrink_node()` of `memcg1_soft_limit_reclaim()`'s
    /// loop (and the bookkeeping around it), resuming `pass`; true when the
    /// loop is over. [`Sim::memcg1_soft_limit_reclaim`] runs the steps back
    /// to back; kswapd under `policy.kswapd_soft_limit_rounds` runs one per
    /// step of its clock.
    pub(crate) fn soft_limit_reclaim_step(
        &mut self,
        pass: &mut SoftPass,
        outer: &mut ScanControl,
    ) -> bool {
        if outer.order > 0 {
            return true;
        }
        let mut round = match pass.round.take() {
            Some(r) => r,
            None => {
                let m = match pass.next.take() {
                    Some(m) => m,
                    None => match self.soft_tree_pop_largest() {
                        Some(m) => m,
                        None => return true,
                    },
                };
                SoftRound {
                    root: m,
                    excess: self.soft_limit_excess(m),
                    total: 0,
                    scanned: 0,
                    loops: 0,
                    victim: None,
                }
            }
        };
        if !self.mem_cgroup_soft_reclaim_step(&mut round, outer) {
            pass.round = Some(round);
            return false;
        }
        // mem_cgroup_soft_reclaim() returned `round.total`.
        let m = round.root;
        pass.reclaimed += round.total;
        pass.scanned += round.scanned;
        if round.total == 0 {
            pass.next = self.soft_tree_pop_largest();
        }
        let excess = self.soft_limit_excess(m);
        self.soft_tree_insert(m, excess);
        pass.loops += 1;
        if pass.reclaimed == 0
            && (pass.next.is_none() || pass.loops > MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS)
        {
            return true;
        }
        pass.reclaimed > 0
    }

    /// `mem_cgroup_soft_reclaim()` up to and including its next
    /// `mem_cgroup_shrink_node()`: rounds over `root`'s subtree, each group
    /// shrunk at priority 0, until its excess is gone, or after two rounds
    /// if nothing came back or a quarter of the excess did. True when it
    /// has returned.
    fn mem_cgroup_soft_reclaim_step(&mut self, r: &mut SoftRound, outer: &mut ScanControl) -> bool {
        loop {
            r.victim = match r.victim {
                None => Some(r.root),
                Some(v) => self.mem_cgroup_iter(r.root, v),
            };
            let Some(v) = r.victim else {
                r.loops += 1;
                if r.loops >= 2
                    && (r.total == 0
                        || r.total >= r.excess >> 2
                        || r.loops > MEM_CGROUP_MAX_RECLAIM_LOOPS)
                {
                    return true;
                }
                continue;
            };
            let (got, scanned) = self.mem_cgroup_shrink_node(v, outer);
            r.total += got;
            r.scanned += scanned;
            return self.soft_limit_excess(r.root) == 0;
        }
    }

    /// `mem_cgroup_shrink_node()`: `shrink_lruvec` of group `m` alone at
    /// priority 0 towards SWAP_CLUSTER_MAX pages, without
    /// `prepare_scan_control` (no cost snapshot, no deactivation: active
    /// lists are not aged). Counted as cgroup reclaim.
    fn mem_cgroup_shrink_node(&mut self, m: MemcgId, outer: &mut ScanControl) -> (u64, u64) {
        let rules = self.rules();
        let mut sc =
            ScanControl::new(Reclaimer::Memcg, SWAP_CLUSTER_MAX, outer.now()).on_cpus(outer.par);
        sc.priority = 0;
        sc.target = m;
        sc.memcg = m;
        sc.lock_owner = outer.lock_owner; // the same task
        if self.tp.is_some() {
            let e = TpEvent::MemcgSoftlimitReclaimBegin;
            self.trace_vmscan(sc.now(), Some(m), e);
        }
        self.shrink_lruvec(&mut sc, rules);
        if self.tp.is_some() {
            let e = TpEvent::MemcgSoftlimitReclaimEnd {
                nr_reclaimed: sc.nr_reclaimed,
            };
            self.trace_vmscan(sc.now(), Some(m), e);
        }
        outer.lock_owner = sc.lock_owner;
        outer.cpu_ns += sc.cpu_ns;
        outer.prof.add(&sc.prof);
        outer.io_wait_ns += sc.io_wait_ns;
        (sc.nr_reclaimed, sc.nr_scanned)
    }

    /// `mem_cgroup_soft_reclaim_eligible()` of seed 004: `m` or an ancestor
    /// is over its soft limit.
    pub(crate) fn soft_reclaim_eligible(&self, m: MemcgId) -> bool {
        let mut cur = Some(m);
        while let Some(c) = cur {
            if self.soft_limit_excess(c) > 0 {
                return true;
            }
            cur = self.memcgs[c as usize].parent;
        }
        false
    }
}
