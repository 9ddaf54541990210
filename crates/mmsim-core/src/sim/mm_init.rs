//! Building the machine, as the kernel's boot sets up memory management: the node
//! and its zone (`free_area_init`, mm/mm_init.c since v6.4), the watermarks
//! (`init_per_zone_wmark_min` and `__setup_per_zone_wmarks`, mm/page_alloc.c) and
//! the subsystems' init calls ([`Sim::new`]).

use super::{ClassicRules, Policy, Sim, SimError};
use crate::config::{DeviceKind, MachineConfig, PolicyName};
use crate::mem::blockdev::BlockDev;
use crate::mem::folio::FolioArena;
use crate::mem::swap::SwapDevice;
use crate::memcg::Memcg;
use crate::mmzone::Node;
use crate::psi::Psi;
use crate::reclaim::Kswapd;
use crate::result::AccessStats;
use crate::stats::Vmstat;

impl Sim {
    /// Builds a machine from a validated configuration.
    pub fn new(cfg: MachineConfig) -> Result<Sim, SimError> {
        cfg.validate()?;
        let managed = cfg.memory.pages();
        let (min, low, high) = match cfg.sample_rate {
            None => watermarks(managed, cfg.min_free_kbytes, cfg.watermark_scale_factor),
            Some(r) => {
                sampled_watermarks(managed, r, cfg.min_free_kbytes, cfg.watermark_scale_factor)
            }
        };
        let policy = match cfg.policy.name {
            PolicyName::Lru => Policy::Lru,
            PolicyName::ScannedRotated => Policy::Classic(ClassicRules::v4_9()),
            PolicyName::Cost => Policy::Classic(ClassicRules::current(cfg.policy.cost_variant)),
            // lru_gen/enabled without the core bit: the classic lists.
            PolicyName::Mglru
                if cfg.policy.lru_gen_enabled & crate::reclaim::lru_gen::LRU_GEN_CORE == 0 =>
            {
                Policy::Classic(ClassicRules::current(cfg.policy.cost_variant))
            }
            PolicyName::Mglru => Policy::Mglru(cfg.policy.mglru_version),
        };
        let lru_gen = crate::reclaim::lru_gen::LruGenState::new(&cfg.policy);
        let swap = match (cfg.swap.device, cfg.swap.size) {
            (DeviceKind::None, _) | (_, None) => None,
            (_, Some(size)) => Some(SwapDevice::new(&cfg.swap, size.pages())),
        };
        let mut memcg = Memcg::new(1, "/", None);
        if let Some(m) = cfg.memcg_max {
            memcg.max = m.pages();
        }
        let mut sim = Sim {
            smp: crate::smp::Smp::new(cfg.cpus, &cfg.cost),
            direct_profile: Default::default(),
            cost: cfg.cost.clone(),
            policy,
            folios: FolioArena::with_capacity(1024),
            phys: crate::page_alloc::PhysMem::new(managed, low, cfg.cpus, cfg.damon.is_some()),
            vmas: Vec::new(),
            ra_slots: Default::default(),
            fds: Vec::new(),
            tasks: Vec::new(),
            files: Vec::new(),
            swap,
            fs: BlockDev::new(&cfg.fs),
            memcgs: vec![memcg],
            cur_memcg: crate::memcg::ROOT,
            stock: (crate::memcg::ROOT, 0),
            pages_over_high: 0,
            fork: None,
            fault_retry: Default::default(),
            knob_events: Vec::new(),
            soft_tree_seq: 0,
            node: Node {
                managed,
                free: managed,
                wmark_min: min,
                wmark_low: low,
                wmark_high: high,
                fast_low: low,
                dirty: false,
            },
            kswapd: Kswapd::default(),
            vm: Vmstat::default(),
            psi: Psi::default(),
            acc: AccessStats::default(),
            clock: 0,
            timers: crate::timer::TimerList::new(),
            stats_samples: Vec::new(),
            series_markers: Vec::new(),
            tp: cfg
                .tracepoints
                .as_ref()
                .and_then(crate::tracepoint::Tracer::new),
            tp_task: crate::tracepoint::TpTask::Task(0),
            xp: crate::explain::Explainer::new(cfg.explain.as_ref()),
            kmem: cfg
                .kmem_accounting
                .then(|| Box::new(crate::kmem::Kmem::new(cfg.slab_frames, cfg.cpus))),
            stats_interval_ns: 0,
            writeback: Default::default(),
            writeback_queued: [0; 2],
            dirty_fifo: Default::default(),
            scratch: Vec::with_capacity(64),
            shadow_layout: crate::reclaim::workingset::ShadowLayout::new(
                1,
                managed,
                cfg.exact_shadows,
            ),
            reclaim_stall_ns: 0,
            io_wait_ns: 0,
            bdp: Default::default(),
            ra_workingset: false,
            ra_locked_batch: Vec::new(),
            ra_reads: Default::default(),
            nr_dirty: 0,
            nr_swapcache_folios: 0,
            measure_start: 0,
            nr_writeback: 0,
            lru_gen,
            damon: None,
            thp: crate::huge_memory::Thp::new(
                &cfg.thp,
                cfg.zero_page,
                cfg.swap.device == crate::config::DeviceKind::Zram,
            ),
            compact: crate::compaction::Compaction::new(&cfg.compaction),
            zero_folio: crate::mem::folio::NIL,
            memcg_stats: crate::memcg_stats::MemcgStats::new(
                cfg.policy.memcg_stats_flush,
                cfg.policy.memcg_stats_flush_ms,
            )
            .with_reader(&cfg.policy, cfg.cpus),
            tlb: crate::tlb::Tlb::new(&cfg.tlb, cfg.cpus),
            cfg,
        };
        sim.setup_dma_zone();
        sim.setup_boot_pageblocks();
        sim.setup_watermark_boost();
        sim.setup_trace_extfrag();
        sim.setup_trace_pcpu_drain();
        sim.page_writeback_init();
        sim.arm_stats_sampler();
        sim.arm_memcg_stats_flush();
        sim.compaction_init();
        if sim.cfg.zero_page {
            // ZERO_PAGE(0): never on a list, never freed.
            sim.zero_folio = sim.alloc_zero_folio();
        }
        if let Some(d) = sim.cfg.damon.clone() {
            // Configured but with nothing running (a module's `enabled = false`),
            // DAMON still reports: no kdamond, no CPU.
            let damon = crate::damon::Damon::new(&d, sim.damon_pfn_range());
            if !damon.ctxs.is_empty() {
                // Each kdamond starts on the first event (after setup).
                sim.timers.add_timer(crate::timer::TimerKind::Kdamond, 0);
            }
            sim.damon = Some(Box::new(damon));
        }
        Ok(sim)
    }
}

/// Watermarks of a single-zone node (`__setup_per_zone_wmarks`, v4.6+ formula,
/// with `min_free_kbytes` from `init_per_zone_wmark_min` when not given).
pub(crate) fn watermarks(managed: u64, min_free_kbytes: Option<u64>, wsf: u32) -> (u64, u64, u64) {
    let kb = min_free_kbytes.unwrap_or_else(|| {
        let lowmem_kb = managed * 4;
        int_sqrt(lowmem_kb * 16).clamp(128, 262_144)
    });
    let min = kb / 4;
    let gap = (min / 4).max(managed * wsf as u64 / 10_000);
    (min, min + gap, min + 2 * gap)
}

/// Watermarks of a SHARDS-sampled node of `managed` pages sampled at `rate`: the
/// whole node's (`managed / rate` pages, [`watermarks`]) times `rate`, so that the
/// reserve is the same fraction of memory as on the whole machine (the kernel's
/// `init_per_zone_wmark_min` grows with the square root of memory, which on the
/// sampled node alone would make it √(1/rate) times too large). At least one page
/// each, strictly increasing as the kernel's are.
pub(crate) fn sampled_watermarks(
    managed: u64,
    rate: f64,
    min_free_kbytes: Option<u64>,
    wsf: u32,
) -> (u64, u64, u64) {
    let whole = (managed as f64 / rate).round() as u64;
    let (min, low, high) = watermarks(whole, min_free_kbytes, wsf);
    let scale = |p: u64| ((p as f64 * rate).round() as u64).max(1);
    let min = scale(min);
    let low = scale(low).max(min + 1);
    let high = scale(high).max(low + 1);
    (min, low, high)
}

/// Integer square root (`int_sqrt`).
pub(crate) fn int_sqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}
