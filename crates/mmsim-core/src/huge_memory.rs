//! Anonymous large folios: multi-size THP (mm/huge_memory.c, the
//! `alloc_anon_folio` fault path of mm/memory.c and its helpers in
//! include/linux/huge_mm.h, v6.12; the v6.8 variant as an option).
//!
//! Off by default: every per-size `enabled` is `never` and the top-level
//! `enabled` is `never` (the kernel's build default is `always` or
//! `madvise`; mmsim's is `never` so that every existing scenario keeps its
//! order-0 results). With a size switched on (`[machine.thp]`, or
//! `--set thp.hugepages-64kB.enabled=always`):
//!
//! * **Which orders** (`__thp_vma_allowable_orders`, huge_mm.h v6.12): the
//!   per-size `always` orders, plus the `madvise` orders in a VMA with
//!   MADV_HUGEPAGE, plus the `inherit` orders when the top-level `enabled`
//!   is `always` (or `madvise` in a MADV_HUGEPAGE VMA); none in a
//!   MADV_NOHUGEPAGE VMA.
//! * **Where** (`thp_vma_suitable_orders`): the naturally aligned block of
//!   the order around the faulting page must lie inside the VMA. A VMA's
//!   first page is taken as PMD-aligned (v6.7+ aligns anonymous mappings of
//!   at least 2 MiB to the PMD, `thp_get_unmapped_area`; smaller ones are
//!   assumed aligned too).
//! * **PMD first** (`__handle_mm_fault` → `create_huge_pmd` →
//!   `do_huge_pmd_anonymous_page`): when order 9 is allowed and suitable and
//!   the PMD's 512 PTEs are all none (the model has no PMD of its own: an
//!   empty range stands for `pmd_none`), a 2 MiB folio is tried;
//!   failure counts `thp_fault_fallback` (and `thp_fault_fallback_charge`
//!   for the charge) and falls back to the PTE path.
//! * **PTE path** (`alloc_anon_folio`, mm/memory.c v6.12): the allowed
//!   suitable orders below PMD_ORDER, highest first; orders whose aligned
//!   block has a PTE that is not none are dropped (the lockless
//!   `pte_range_none` scan); then each remaining order is tried in turn: a
//!   buddy failure counts `anon_fault_fallback`, a memcg charge failure
//!   `anon_fault_fallback_charge` and `anon_fault_fallback`; after the
//!   last, order 0 as before.
//! * **gfp** (`vma_thp_gfp_mask`, mm/huge_memory.c v6.12) from `defrag`:
//!   direct reclaim for `always`, and for `madvise`/`defer+madvise` in a
//!   MADV_HUGEPAGE VMA; a kswapd wakeup for `defer`/`defer+madvise`;
//!   otherwise neither (`GFP_TRANSHUGE_LIGHT`): the allocation takes a free
//!   block above the low watermark or fails, and the charge fails at once
//!   at `memory.max` (`gfpflags_allow_blocking` false). A charge that may
//!   reclaim does so as `try_charge_memcg` does, without the OOM killer
//!   above order 3 (`mem_cgroup_oom`, PAGE_ALLOC_COSTLY_ORDER). Without
//!   `[machine.compaction]`: min mark, one direct reclaim, then only after
//!   progress min mark, drain, min mark; with it, `crate::compaction`'s.
//! * **Zeroing**: the whole folio is cleared at the fault
//!   (`folio_zero_user`): `minor_fault_ns` plus `clear_page_ns` per extra page.
//! * **Mapping** (`set_ptes` of `do_anonymous_page`): every PTE of the block
//!   maps the folio, dirty (VM_WRITE), young only where the access was.
//!
//! Seed 003's RFC v2 (`thp.kernel = "rfc-v2"`, no per-size controls, one
//! arch-preferred order) is `crate::huge_memory_rfc`.
//!
//! Through reclaim (mm/vmscan.c `shrink_folio_list`, v6.8 and v6.12): a
//! large anonymous folio not yet in the swap cache is, in v6.8, split at
//! once unless PMD-mapped ("Split folios without a PMD map right away"),
//! while v6.10+ keeps it whole unless partially mapped (then split in every
//! version, [`Sim::add_to_swap_large`]); `add_to_swap` then needs
//! `folio_nr_pages` contiguous, aligned swap slots (the kernel's per-order
//! cluster; here fresh space of the device, see
//! `crate::mem::swap::SwapDevice::alloc_contig`). When that fails the folio
//! is split and counted `swpout_fallback` (`thp_swpout_fallback` for PMD
//! size) and its head retried at order 0; a whole swap-out counts `swpout`
//! (`thp_swpout`). In v6.8 only PMD size can get slots (`get_swap_pages`
//! supported order 0 and SWAPFILE_CLUSTER only). A split
//! (`split_huge_page_to_list_to_order` to order 0) gives each page its own
//! folio with the head's flags, group, generation and swap slot, the PTEs
//! pointing at them, and the tails on the caller's list.
//!
//! **Swap-in** (6.12/6.13; mm/memory.c `alloc_swap_folio`, added in v6.12
//! by 242d12c98174 for SWP_SYNCHRONOUS_IO devices): on zram a swap fault whose
//! folio left the swap cache reads a large folio back whole when its block
//! is all swap entries of consecutive, equally aligned slots (see
//! [`Sim::do_swap_page_large`]); 6.8 reads one page (plus readahead on
//! other devices), and so does every kernel on a device that is not zram. A fault that finds a large folio still in the swap
//! cache maps it whole under 6.12 and 6.13, a page per fault under 6.8
//! (`crate::fault_swapcache`).
//!
//! **The huge zero page** (`machine.zero_page` with `use_zero_page`, the
//! kernel's default): a read fault where a PMD-size folio could go maps it
//! (`do_huge_pmd_anonymous_page`); a write splits the PMD
//! (`do_huge_pmd_wp_page` falls back in 6.12, `thp_split_pmd`) and copies
//! one page (`wp_page_copy`, `crate::fault`). 6.13 later allocates a PMD
//! folio on that write instead (`do_huge_zero_wp_pmd`); not modelled.
//!
//! **Partial unmap** (`Event::Discard`, `crate::madvise`): a large folio
//! left partly mapped is marked PG_partially_mapped and put on its group's
//! deferred split queue; under 6.12/6.13 each PMD-size THP is queued whole
//! at its fault too (`shrink_underused`), and the shrinker splits it only
//! when `thp_underused`: `crate::deferred_split`. Split tails go to the
//! head of their list.
//!
//! **Zero-filled pages at a split** (6.12/6.13, every caller: reclaim, the
//! shrinker): each zero-filled page a PTE maps is mapped to the zero page
//! instead and freed (`try_to_map_unused_to_zeropage`), from a content bit
//! per page: `crate::split_zeropage`. 6.8 and the RFC v2 model keep every
//! page mapped.

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
pub use crate::huge_memory_rfc::ThpKernel;
use crate::mem::filemap::{slot_folio, SLOT_FOLIO};
use crate::mem::folio::{flags, FolioId, NO_LIST};
use crate::mem::pagetable::{pte_present, VmaId, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::sim::{Policy, Sim};
use crate::stats::item::*;

/// `HPAGE_PMD_ORDER` with 4 KiB pages.
pub(crate) const PMD_ORDER: u8 = 9;
/// The smallest anonymous THP order (order 1 is not supported for anon).
pub(crate) const MIN_THP_ORDER: u8 = 2;
/// Orders that have a `hugepages-<size>kB` directory: 2..=9.
pub(crate) const THP_ORDERS: std::ops::RangeInclusive<u8> = MIN_THP_ORDER..=PMD_ORDER;

/// Top-level `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThpEnabled {
    /// Every anonymous VMA.
    Always,
    /// VMAs with MADV_HUGEPAGE.
    Madvise,
    /// None (mmsim's default; see the module overview).
    #[default]
    Never,
}

/// A per-size `hugepages-<size>kB/enabled`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThpSizeEnabled {
    /// Every anonymous VMA.
    Always,
    /// Follows the top-level `enabled`.
    Inherit,
    /// VMAs with MADV_HUGEPAGE.
    Madvise,
    /// Off (the kernel's default for every size but PMD).
    #[default]
    Never,
}

/// `/sys/kernel/mm/transparent_hugepage/defrag`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThpDefrag {
    /// Direct reclaim for every THP allocation.
    #[serde(rename = "always")]
    Always,
    /// Wake kswapd only.
    #[serde(rename = "defer")]
    Defer,
    /// Direct reclaim in MADV_HUGEPAGE VMAs, kswapd wakeup elsewhere.
    #[serde(rename = "defer+madvise")]
    DeferMadvise,
    /// Direct reclaim in MADV_HUGEPAGE VMAs, nothing elsewhere (the kernel's default).
    #[default]
    #[serde(rename = "madvise")]
    Madvise,
    /// No reclaim.
    #[serde(rename = "never")]
    Never,
}

/// The `madvise` advice every anonymous VMA of the scenario gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VmaThpAdvice {
    /// No advice.
    #[default]
    None,
    /// MADV_HUGEPAGE (VM_HUGEPAGE).
    Hugepage,
    /// MADV_NOHUGEPAGE (VM_NOHUGEPAGE): no THP at all.
    Nohugepage,
}

/// One `hugepages-<size>kB` directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThpSizeConfig {
    /// `hugepages-<size>kB/enabled`.
    #[serde(default)]
    pub enabled: ThpSizeEnabled,
}

fn yes() -> bool {
    true
}

fn is_true(v: &bool) -> bool {
    *v
}

fn inherit() -> ThpSizeConfig {
    ThpSizeConfig {
        enabled: ThpSizeEnabled::Inherit,
    }
}

/// `[machine.thp]`: /sys/kernel/mm/transparent_hugepage with the sysfs names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThpConfig {
    /// Top-level `enabled` (default `never`, see the module overview).
    #[serde(default)]
    pub enabled: ThpEnabled,
    /// `defrag` (default `madvise`, the kernel's).
    #[serde(default)]
    pub defrag: ThpDefrag,
    /// Kernel version of the reclaim and swap-in rules: `"6.8"`, `"6.12"`
    /// (default) or `"6.13"`; or `"rfc-v2"`, seed 003's RFC
    /// (`crate::huge_memory_rfc`).
    #[serde(default)]
    pub kernel: ThpKernel,
    /// The RFC variant's `arch_wants_pte_order` (default 4, 64 KiB; 0 or
    /// 2..=4; only with `kernel = "rfc-v2"`).
    #[serde(
        default = "crate::huge_memory_rfc::arch_order_default",
        skip_serializing_if = "crate::huge_memory_rfc::is_arch_order_default"
    )]
    pub arch_order: u8,
    /// The advice of every anonymous VMA (`madvise(MADV_HUGEPAGE)`).
    #[serde(default)]
    pub vma_advice: VmaThpAdvice,
    /// `use_zero_page` (default true, the kernel's): with `machine.zero_page`,
    /// a read fault where a PMD-size folio could go maps the huge zero page.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub use_zero_page: bool,
    /// 16 KiB (order 2).
    #[serde(rename = "hugepages-16kB", default)]
    pub hugepages_16kb: ThpSizeConfig,
    /// 32 KiB (order 3).
    #[serde(rename = "hugepages-32kB", default)]
    pub hugepages_32kb: ThpSizeConfig,
    /// 64 KiB (order 4).
    #[serde(rename = "hugepages-64kB", default)]
    pub hugepages_64kb: ThpSizeConfig,
    /// 128 KiB (order 5).
    #[serde(rename = "hugepages-128kB", default)]
    pub hugepages_128kb: ThpSizeConfig,
    /// 256 KiB (order 6).
    #[serde(rename = "hugepages-256kB", default)]
    pub hugepages_256kb: ThpSizeConfig,
    /// 512 KiB (order 7).
    #[serde(rename = "hugepages-512kB", default)]
    pub hugepages_512kb: ThpSizeConfig,
    /// 1 MiB (order 8).
    #[serde(rename = "hugepages-1024kB", default)]
    pub hugepages_1024kb: ThpSizeConfig,
    /// 2 MiB (order 9, PMD size; default `inherit`, the kernel's).
    #[serde(rename = "hugepages-2048kB", default = "inherit")]
    pub hugepages_2048kb: ThpSizeConfig,
    /// `shrink_underused` (default true, the kernel's; `thp.kernel` 6.12
    /// and 6.13 only): each PMD-size THP is queued for the deferred split
    /// shrinker at its fault, which splits it when more than
    /// `khugepaged.max_ptes_none` of its pages are zero-filled
    /// (`crate::deferred_split`).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub shrink_underused: bool,
    /// `khugepaged/` (`[machine.thp.khugepaged]`; off by default, see
    /// `crate::khugepaged`).
    #[serde(
        default,
        skip_serializing_if = "crate::khugepaged::KhugepagedConfig::is_default"
    )]
    pub khugepaged: crate::khugepaged::KhugepagedConfig,
}

impl Default for ThpConfig {
    fn default() -> Self {
        ThpConfig {
            enabled: ThpEnabled::Never,
            defrag: ThpDefrag::Madvise,
            kernel: ThpKernel::V6_12,
            arch_order: crate::huge_memory_rfc::RFC_MAX_ORDER,
            vma_advice: VmaThpAdvice::None,
            use_zero_page: true,
            shrink_underused: true,
            hugepages_16kb: ThpSizeConfig::default(),
            hugepages_32kb: ThpSizeConfig::default(),
            hugepages_64kb: ThpSizeConfig::default(),
            hugepages_128kb: ThpSizeConfig::default(),
            hugepages_256kb: ThpSizeConfig::default(),
            hugepages_512kb: ThpSizeConfig::default(),
            hugepages_1024kb: ThpSizeConfig::default(),
            hugepages_2048kb: inherit(),
            khugepaged: Default::default(),
        }
    }
}

impl ThpConfig {
    /// True when nothing differs from the defaults (the table is then not written).
    pub fn is_default(&self) -> bool {
        *self == ThpConfig::default()
    }

    /// The per-size settings by order, 2..=9.
    pub fn size(&self, order: u8) -> ThpSizeEnabled {
        match order {
            2 => self.hugepages_16kb.enabled,
            3 => self.hugepages_32kb.enabled,
            4 => self.hugepages_64kb.enabled,
            5 => self.hugepages_128kb.enabled,
            6 => self.hugepages_256kb.enabled,
            7 => self.hugepages_512kb.enabled,
            8 => self.hugepages_1024kb.enabled,
            9 => self.hugepages_2048kb.enabled,
            _ => ThpSizeEnabled::Never,
        }
    }

    /// Whether any size may be allocated in some anonymous VMA (else every
    /// anonymous fault is the order-0 one, as before multi-size THP).
    pub fn allows_large_folios(&self) -> bool {
        (self.orders_for(true) | self.orders_for(false)) != 0
            || crate::huge_memory_rfc::rfc_order(self) != 0
    }

    /// Settings that need the kernel's LRU lists; the khugepaged knobs' ranges.
    pub(crate) fn validate(&self, policy_is_lru: bool) -> Result<(), ConfigError> {
        self.khugepaged.validate(policy_is_lru)?;
        crate::huge_memory_rfc::validate_rfc(self)?;
        if !self.shrink_underused && !crate::deferred_split::queues_whole(self.kernel) {
            return Err(ConfigError::new(
                "machine.thp.shrink_underused",
                "a v6.12+ sysfs setting (transparent_hugepage/shrink_underused); needs machine.thp.kernel = \"6.12\" or \"6.13\"",
            ));
        }
        if policy_is_lru && self.allows_large_folios() {
            return Err(ConfigError::new(
                "machine.thp",
                "large folios need the kernel's LRU lists (policy cost, scanned-rotated or \
                 mglru); the textbook `lru` policy handles 4 KiB pages only",
            ));
        }
        Ok(())
    }

    /// `__thp_vma_allowable_orders` with TVA_ENFORCE_SYSFS (huge_mm.h,
    /// v6.12): the order mask of an anonymous VMA with (`madv`) or without
    /// MADV_HUGEPAGE.
    pub(crate) fn orders_for(&self, madv: bool) -> u16 {
        let top_inherits = match self.enabled {
            ThpEnabled::Always => true,
            ThpEnabled::Madvise => madv,
            ThpEnabled::Never => false,
        };
        let mut mask = 0u16;
        for o in THP_ORDERS {
            let on = match self.size(o) {
                ThpSizeEnabled::Always => true,
                ThpSizeEnabled::Madvise => madv,
                ThpSizeEnabled::Inherit => top_inherits,
                ThpSizeEnabled::Never => false,
            };
            if on {
                mask |= 1 << o;
            }
        }
        mask
    }

    /// `vma_thp_gfp_mask` (mm/huge_memory.c, v6.12): may the allocation
    /// (and the charge) reclaim directly, and does it wake kswapd?
    pub(crate) fn gfp_for(&self, madv: bool) -> ThpGfp {
        let (direct, kswapd) = match self.defrag {
            ThpDefrag::Always => (true, false),
            ThpDefrag::Defer => (false, true),
            ThpDefrag::DeferMadvise => (madv, !madv),
            ThpDefrag::Madvise => (madv, false),
            ThpDefrag::Never => (false, false),
        };
        let noretry = self.defrag == ThpDefrag::Always && !madv;
        // v6.12 vma_thp_gfp_mask: GFP_TRANSHUGE (| __GFP_NORETRY outside
        // MADV_HUGEPAGE) for defrag=always, else GFP_TRANSHUGE_LIGHT with
        // the reclaim bits above.
        use crate::gfp::*;
        let mut mask = GFP_TRANSHUGE_LIGHT;
        if direct {
            mask |= __GFP_DIRECT_RECLAIM;
        }
        if kswapd {
            mask |= __GFP_KSWAPD_RECLAIM;
        }
        if noretry {
            mask |= __GFP_NORETRY;
        }
        ThpGfp {
            direct,
            kswapd,
            noretry,
            mask,
        }
    }
}

/// What a THP allocation may do to find memory (from `vma_thp_gfp_mask`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ThpGfp {
    /// `__GFP_DIRECT_RECLAIM`: direct reclaim, and a blocking memcg charge.
    pub direct: bool,
    /// `__GFP_KSWAPD_RECLAIM`: wake kswapd.
    pub kswapd: bool,
    /// `__GFP_NORETRY` (`crate::compaction`'s slow path only).
    pub noretry: bool,
    /// The allocation site's whole `gfp_t` (`crate::gfp`), which the three
    /// flags above are bits of; the tracepoints print it and its
    /// `gfp_zone` is the allocation's `highest_zoneidx`.
    pub mask: crate::gfp::Gfp,
}

/// Per-size counters of `hugepages-<size>kB/stats/` (`enum mthp_stat_item`, v6.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MthpStats {
    /// Faults that allocated a folio of this size.
    pub anon_fault_alloc: u64,
    /// Faults that tried this size and fell back to a smaller one.
    pub anon_fault_fallback: u64,
    /// Of those, the ones whose memcg charge failed.
    pub anon_fault_fallback_charge: u64,
    /// Folios of this size swapped out whole.
    pub swpout: u64,
    /// Folios of this size split because they could not be swapped out whole.
    pub swpout_fallback: u64,
    /// Folios of this size split.
    pub split: u64,
    /// Folios of this size resident at the end (`nr_anon`, v6.12+).
    pub nr_anon: u64,
    /// Folios of this size queued for a deferred split once partially
    /// unmapped (`split_deferred`; in JSON only when non-zero).
    #[serde(default, skip_serializing_if = "crate::stats::is_zero")]
    pub split_deferred: u64,
    /// Partially mapped folios of this size at the end, still on a deferred
    /// split queue (`nr_anon_partially_mapped`, v6.12; in JSON only when
    /// non-zero).
    #[serde(default, skip_serializing_if = "crate::stats::is_zero")]
    pub nr_anon_partially_mapped: u64,
    /// Folios of this size read back from swap whole (`swpin`, 6.12+ on
    /// zram; in JSON only when non-zero).
    #[serde(default, skip_serializing_if = "crate::stats::is_zero")]
    pub swpin: u64,
    /// Swap faults that tried this size and fell back (`swpin_fallback`).
    #[serde(default, skip_serializing_if = "crate::stats::is_zero")]
    pub swpin_fallback: u64,
    /// Of those, the ones whose memcg charge failed (`swpin_fallback_charge`).
    #[serde(default, skip_serializing_if = "crate::stats::is_zero")]
    pub swpin_fallback_charge: u64,
}

/// `hugepages-<size>kB/stats` of one size, in a run's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MthpSizeReport {
    /// The directory's size, e.g. `64kB`.
    pub size: String,
    /// Its counters.
    #[serde(flatten)]
    pub stats: MthpStats,
}

/// The multi-size THP state of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Thp {
    /// Allowed orders in a VMA without advice.
    pub orders_plain: u16,
    /// Allowed orders in a MADV_HUGEPAGE VMA.
    pub orders_madv: u16,
    /// The gfp of a VMA without advice / with MADV_HUGEPAGE.
    pub gfp: [ThpGfp; 2],
    /// Reclaim rules.
    pub kernel: ThpKernel,
    /// The RFC v2's order (`thp.kernel = "rfc-v2"`), else 0.
    pub rfc_order: u8,
    /// Counters by order (index = order).
    pub stats: [MthpStats; PMD_ORDER as usize + 1],
    /// A PMD read fault maps the huge zero page (`machine.zero_page` and
    /// `use_zero_page`).
    pub huge_zero: bool,
    /// The huge zero page has been allocated (`get_huge_zero_page`).
    pub huge_zero_allocated: bool,
    /// The deferred split queues by group (`memcg->deferred_split_queue`,
    /// v6.12), grown on first use.
    pub split_queues: Vec<DeferredSplit>,
    /// A swap fault may read a large folio whole: `kernel` 6.12/6.13, some order
    /// allowed, swap on zram (one test on the swap-fault path).
    pub swapin_large: bool,
    /// `do_swap_page` maps a large swap-cache folio whole when its PTEs
    /// allow (v6.11+: `kernel` 6.12 or 6.13; `crate::fault_swapcache`).
    pub swapcache_batch: bool,
    /// `do_swap_page` maps an exclusive folio writable on a read fault too
    /// (v6.11+, "mm: swap: reuse exclusive folio directly instead of wp
    /// page faults": `kernel` 6.12 or 6.13; `crate::fault_swapcache`).
    pub swapin_mkwrite: bool,
    /// khugepaged and MADV_COLLAPSE (`crate::khugepaged`).
    pub khuge: crate::khugepaged::Khugepaged,
    /// Per-page content under 6.12/6.13 (`crate::split_zeropage`).
    pub content: crate::split_zeropage::PageContent,
    /// PMD-size folios are queued whole at their fault and collapse
    /// (`shrink_underused` under 6.12/6.13: `crate::deferred_split`).
    pub shrink_underused: bool,
}

/// One group's `struct deferred_split`: its queue of partially mapped large
/// folios, oldest first, and the shrinker's deferred work for it.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeferredSplit {
    /// `split_queue`. A folio split or freed leaves it at once
    /// (`folio_unqueue_deferred_split`; [`crate::mem::queue`]).
    pub queue: crate::mem::queue::FolioQueue<()>,
    /// `split_queue_len`: the folios really queued.
    pub len: u64,
    /// The shrinker's `nr_deferred` for the group.
    pub nr_deferred: u64,
}

impl Thp {
    /// The state for `cfg`.
    pub(crate) fn new(cfg: &ThpConfig, zero_page: bool, zram: bool) -> Thp {
        let any = cfg.allows_large_folios();
        Thp {
            swapin_large: matches!(cfg.kernel, ThpKernel::V6_12 | ThpKernel::V6_13) && any && zram,
            swapcache_batch: matches!(cfg.kernel, ThpKernel::V6_12 | ThpKernel::V6_13),
            swapin_mkwrite: matches!(cfg.kernel, ThpKernel::V6_12 | ThpKernel::V6_13),
            orders_plain: cfg.orders_for(false),
            orders_madv: cfg.orders_for(true),
            gfp: [cfg.gfp_for(false), cfg.gfp_for(true)],
            kernel: cfg.kernel,
            rfc_order: crate::huge_memory_rfc::rfc_order(cfg),
            stats: Default::default(),
            huge_zero: zero_page && cfg.use_zero_page,
            huge_zero_allocated: false,
            split_queues: Vec::new(),
            khuge: crate::khugepaged::Khugepaged::new(&cfg.khugepaged, cfg.pmd_enabled()),
            content: crate::split_zeropage::PageContent::new(cfg.kernel, any || cfg.khugepaged.run),
            shrink_underused: cfg.shrink_underused
                && crate::deferred_split::queues_whole(cfg.kernel),
        }
    }

    /// Whether any order may be allocated in some VMA (else the fault path
    /// is the order-0 one, untouched).
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.orders_plain | self.orders_madv != 0 || self.rfc_order != 0
    }
}

/// `thp_vma_suitable_order` for a VMA of `len` pages starting PMD-aligned:
/// the aligned block of `order` around `index` lies inside the VMA.
#[inline]
pub(crate) fn suitable(len: u32, index: u32, order: u8) -> bool {
    let start = index & !((1u32 << order) - 1);
    u64::from(start) + (1u64 << order) <= u64::from(len)
}

/// The highest set order of `orders` (`highest_order`).
#[inline]
fn highest_order(orders: u16) -> u8 {
    15 - orders.leading_zeros() as u8
}

/// The kB name of an order's directory (`hugepages-64kB`).
pub(crate) fn size_name(order: u8) -> String {
    format!("{}kB", 4u64 << order)
}

/// The large-folio fault path and splitting: mm/memory.c, mm/huge_memory.c (v6.12).
impl Sim {
    /// The orders `__thp_vma_allowable_orders` leaves for anonymous VMA `vma`.
    #[inline]
    pub(crate) fn thp_vma_allowable_orders(&self, vma: VmaId) -> (u16, ThpGfp) {
        match self.vmas[vma as usize].thp_advice {
            VmaThpAdvice::None => (self.thp.orders_plain, self.thp.gfp[0]),
            VmaThpAdvice::Hugepage => (self.thp.orders_madv, self.thp.gfp[1]),
            VmaThpAdvice::Nohugepage => (0, ThpGfp::default()),
        }
    }

    /// `pte_range_none`: the `1 << order` PTEs from `start` are all none.
    pub(crate) fn pte_range_none(&self, vma: VmaId, start: u32, order: u8) -> bool {
        let v = &self.vmas[vma as usize];
        let end = (start as usize + (1 << order)).min(v.ptes.len());
        v.ptes
            .get(start as usize..end)
            .is_none_or(|r| r.iter().all(|&p| p == 0))
    }

    /// The large-folio part of an anonymous fault on the none PTE `index`:
    /// the PMD path, then `alloc_anon_folio`'s orders (see the module
    /// overview). Returns false when the fault is left to the order-0 path
    /// (`folio_prealloc`), true when a large folio was mapped or the task
    /// died in the attempt.
    pub(crate) fn do_anonymous_large(&mut self, vma: VmaId, index: u32) -> bool {
        let (mut orders, gfp) = self.thp_vma_allowable_orders(vma);
        if orders == 0 && self.thp.rfc_order == 0 {
            return false;
        }
        let len = self.vmas[vma as usize].len;
        for o in THP_ORDERS {
            if orders & (1 << o) != 0 && !suitable(len, index, o) {
                orders &= !(1 << o);
            }
        }
        // do_huge_pmd_anonymous_page(): the PMD is none.
        if orders & (1 << PMD_ORDER) != 0 {
            orders &= !(1 << PMD_ORDER);
            let start = index & !((1 << PMD_ORDER) - 1);
            if self.pte_range_none(vma, start, PMD_ORDER) {
                match self.alloc_anon_order(PMD_ORDER, gfp) {
                    Ok(f) => return self.map_anon_large(vma, index, f),
                    // count_vm_event() only: memory.stat has no fallback counters.
                    Err(charge) => {
                        self.count_vm_events(THP_FAULT_FALLBACK, 1);
                        if charge {
                            self.count_vm_events(THP_FAULT_FALLBACK_CHARGE, 1);
                        }
                    }
                }
            }
        }
        if self.thp.rfc_order != 0 {
            return self.do_anonymous_rfc(vma, index, false);
        }
        // alloc_anon_folio(): drop orders whose block is not all none.
        while orders != 0 {
            let o = highest_order(orders);
            if self.pte_range_none(vma, index & !((1 << o) - 1), o) {
                break;
            }
            orders &= !(1 << o);
        }
        while orders != 0 {
            let o = highest_order(orders);
            orders &= !(1 << o);
            if let Ok(f) = self.alloc_anon_order(o, gfp) {
                return self.map_anon_large(vma, index, f);
            }
        }
        false
    }

    /// `vma_alloc_folio` + `mem_cgroup_charge` of one order: the folio, or
    /// Err(true) when the charge failed, Err(false) when the buddy
    /// allocator did; counts the per-size fallbacks.
    fn alloc_anon_order(&mut self, order: u8, gfp: ThpGfp) -> Result<FolioId, bool> {
        let got = self.alloc_charge_anon_folio(order, gfp, gfp.mask);
        if let Err(charge) = got {
            let s = &mut self.thp.stats[order as usize];
            s.anon_fault_fallback += 1;
            if charge {
                s.anon_fault_fallback_charge += 1;
            }
        }
        got
    }

    /// `vma_alloc_folio` + `mem_cgroup_charge` (to `cur_memcg`) of a new
    /// anonymous folio of `order`, counting nothing but `pgalloc_normal`:
    /// Err(false) when the buddy allocator failed, Err(true) when the charge
    /// did (the block freed again). Shared by the fault path and collapse
    /// (`crate::khugepaged`); `charge_gfp` is the charge's mask (the
    /// allocation's, but `GFP_KERNEL` in seed 003's RFC).
    pub(crate) fn alloc_charge_anon_folio(
        &mut self,
        order: u8,
        gfp: ThpGfp,
        charge_gfp: crate::gfp::Gfp,
    ) -> Result<FolioId, bool> {
        let n = 1u64 << order;
        let Some(pfn) = self.rmqueue_large(order, gfp) else {
            return Err(false);
        };
        if !self.try_charge_memcg(n, charge_gfp) {
            self.free_frames(pfn as u32, order as usize);
            self.node.free += n;
            return Err(true);
        }
        self.count_vm_events(PGALLOC_NORMAL, n);
        self.memcg1_check_events(self.cur_memcg, n);
        let mut fl = flags::SWAPBACKED | flags::DIRTY;
        if let Policy::Classic(r) = self.policy {
            if r.new_anon_active {
                fl |= flags::ACTIVE;
            }
        }
        let f = self.folios.alloc(0, 0, fl, self.cur_memcg);
        self.folios[f].set_order(order);
        self.phys.set_frames_folio(pfn, order as usize, f);
        self.folios.set_head_pfn(f, pfn as u32);
        self.page_content_new(f);
        Ok(f)
    }

    /// `do_anonymous_page` / `__do_huge_pmd_anonymous_page` for large folio `f`:
    /// zeroes it (cost), maps every PTE of its aligned block (all young:
    /// v6.12 `do_anonymous_page` builds one `mk_pte(page, vm_page_prot)`
    /// and `set_ptes` it over `nr_pages`, and `__do_huge_pmd_anonymous_page` one
    /// `mk_huge_pmd`; `pte_sw_mkyoung` is a no-op on x86, whose
    /// `protection_map` entries (`PAGE_COPY`, `PAGE_SHARED`, … in
    /// arch/x86/include/asm/pgtable_types.h) carry `_PAGE_ACCESSED`, as
    /// arm64's `PROT_DEFAULT` carries `PTE_AF`; dirty, but clean under the
    /// 6.12 content bits, `crate::split_zeropage`), counts `anon_fault_alloc` (and
    /// `thp_fault_alloc` at PMD size, queued whole for the deferred split
    /// shrinker under 6.12/6.13) and adds it to the LRU.
    pub(crate) fn map_anon_large(&mut self, vma: VmaId, index: u32, f: FolioId) -> bool {
        let order = self.folios[f].order();
        let n = 1u32 << order;
        let start = index & !(n - 1);
        {
            let fo = &mut self.folios[f];
            fo.space = vma;
            fo.index = start;
            fo.mapcount = n.min(255) as u8;
        }
        self.advance(self.cost.minor_fault_ns + u64::from(n - 1) * self.cost.clear_page_ns);
        if self.tasks[self.vmas[vma as usize].task as usize].dead {
            self.folios[f].mapcount = 0;
            self.free_folio(f);
            return true;
        }
        let dirty = !self.thp.content.on;
        let v = &mut self.vmas[vma as usize];
        v.pte_mut(start + n - 1);
        for i in start..start + n {
            v.ptes[i as usize] = pte_present(f, true, dirty);
        }
        self.thp.stats[order as usize].anon_fault_alloc += 1;
        if order == PMD_ORDER {
            self.count_events(self.cur_memcg, THP_FAULT_ALLOC, 1);
            self.deferred_split_folio_whole(f);
        }
        self.folio_add_lru(f);
        true
    }

    /// `split_huge_page_to_list_to_order(…, 0)` (mm/huge_memory.c, v6.12)
    /// of an isolated large folio `f`: each tail page becomes an order-0
    /// folio with the head's flags, group, MGLRU generation and refs, its
    /// page frame, its PTE (keeping the young and dirty bits; under
    /// 6.12/6.13 a zero-filled page's PTE maps the zero page instead,
    /// [`Sim::split_map_unused_to_zeropage`]) and, in the
    /// swap cache, its own slot; the tails are appended to `list` (the
    /// caller's `folio_list`). Counts `split` (and `thp_split_page` at PMD
    /// size), and `thp_split_pmd` once per VMA that maps an anonymous
    /// PMD-size folio by a PMD ([`Sim::split_unmap_folio_pmds`]).
    pub(crate) fn split_folio_to_list(&mut self, f: FolioId, list: &mut Vec<FolioId>) {
        // Its tails would inherit PG_writeback with no completion event.
        debug_assert!(!self.folios[f].test(flags::WRITEBACK));
        if self.folios[f].test(flags::DEFERRED_QUEUED) {
            self.deferred_split_unqueue(f);
        }
        let fo = self.folios[f];
        let fo_memcg = self.folios.memcg(f);
        debug_assert!(fo.order() > 0 && self.folios.lru(f) == NO_LIST);
        let n = 1u32 << fo.order();
        let pfn = self.folios.head_pfn(f);
        self.thp.stats[fo.order() as usize].split += 1;
        if fo.order() == PMD_ORDER {
            self.count_vm_events(THP_SPLIT_PAGE, 1);
        }
        let anon = !fo.is_file();
        if anon && fo.order() == PMD_ORDER {
            self.split_unmap_folio_pmds(f);
        }
        self.tlb_unmap_folio(&fo);
        let mut mapped_head = 0u8;
        for i in 0..n {
            let t = if i == 0 {
                f
            } else {
                let t = self
                    .folios
                    .alloc(fo.space, fo.index + i, fo.flags, fo_memcg);
                self.folios[t].gen_refs = fo.gen_refs;
                self.folios.set_head_pfn(t, pfn + i);
                self.phys.set_frames_folio(u64::from(pfn + i), 0, t);
                // Each split-off folio keeps PG_swapcache with its own slot.
                self.nr_swapcache_folios += fo.test(flags::SWAPCACHE) as u64;
                if fo.swap != 0 {
                    self.folios[t].swap = fo.swap + i;
                    self.swap.as_mut().unwrap().slots[(fo.swap - 1 + i) as usize] = SLOT_FOLIO | t;
                }
                list.push(t);
                t
            };
            if anon && self.fork.is_some() && self.anon_forked(fo.space) {
                // Remapped in every VMA of its anon_vma tree (`crate::fork`).
                let m = self.split_remap_forked(f, i, t);
                if i == 0 {
                    mapped_head = m;
                } else {
                    self.folios[t].mapcount = m;
                }
            } else if anon && self.split_map_unused_to_zeropage(f, &fo, i, t) {
                // Mapped to the zero page: the page is left unmapped.
            } else if anon {
                let v = &mut self.vmas[fo.space as usize];
                let pte = v.pte_mut(fo.index + i);
                if *pte & PTE_PRESENT != 0 && *pte & PTE_FOLIO_MASK == f {
                    *pte = (*pte & !PTE_FOLIO_MASK) | t;
                    if i == 0 {
                        mapped_head = 1;
                    } else {
                        self.folios[t].mapcount = 1;
                    }
                }
            }
        }
        let head = &mut self.folios[f];
        head.set_order(0);
        head.mapcount = mapped_head;
    }

    /// Swap-out of a large anonymous folio not yet in the swap cache, as
    /// `shrink_folio_list` does it before `add_to_swap` (see the module
    /// overview): may split `f` (tails onto `list`) and returns whether `f`
    /// now has slots. False means the order-0 `add_to_swap` of the (now
    /// split) head is still to be tried by the caller.
    ///
    /// A partially mapped folio (PG_partially_mapped, on its deferred split
    /// queue) is split first under every `thp.kernel`, so that only its
    /// mapped pages keep slots (mm/vmscan.c `shrink_folio_list`): v6.12
    /// "Split partially mapped folios right away" tests
    /// `folio_test_partially_mapped` (commit 8422acdc97ed); v6.10 and v6.11
    /// split any folio on a deferred split list (commit 5ed890ce5147), the
    /// same folios as 6.12's test (before 6.12 only partially mapped folios
    /// were queued; whole ones are queued from 6.12, `crate::deferred_split`); v6.8
    /// splits every folio without a PMD mapping (`!folio_entire_mapcount`),
    /// every mTHP and a PMD-size folio whose PMD the partial unmap split.
    /// The split unqueues it (`split`, not `swpout_fallback`, is counted);
    /// its unmapped pages go through reclaim as order-0 folios nothing maps:
    /// each gets a slot, and `swap_writepage` frees it instead of writing
    /// (no swap PTE holds it) and the folio is freed at putback
    /// ([`Sim::swap_writepage_free_swap`]).
    ///
    /// A folio shared by fork (mapped in several VMAs of its anon_vma tree,
    /// its pages not PageAnonExclusive) is not split for that: v6.12
    /// `shrink_folio_list` (mm/vmscan.c) tests no mapcount before
    /// `add_to_swap`, so it gets its slots whole (`swpout`, `thp_swpout`;
    /// no `thp_split_page`), and `try_to_unmap`'s rmap walk turns every PTE
    /// of every VMA into its page's entry, each slot counted once per swap
    /// PTE (mm/rmap.c `try_to_unmap_one` → `swap_duplicate`;
    /// `Sim::try_to_unmap_forked`). The kernel's PMD mapping of a PMD-size
    /// folio (shared at fork by `copy_huge_pmd`) is split to PTEs first
    /// (`TTU_SPLIT_HUGE_PMD`): one `thp_split_pmd` per VMA whose PTEs map it
    /// whole, with or without fork (`Sim::split_anon_pmd_at_unmap`).
    pub(crate) fn add_to_swap_large(&mut self, f: FolioId, list: &mut Vec<FolioId>) -> bool {
        let order = self.folios[f].order();
        if self.folios[f].test(flags::PARTIALLY_MAPPED)
            || (matches!(self.thp.kernel, ThpKernel::V6_8 | ThpKernel::RfcV2) && order != PMD_ORDER)
        {
            // "Split folios without a PMD map right away" (v6.8), "Split
            // partially mapped folios right away" (v6.10+).
            self.split_folio_to_list(f, list);
            return false;
        }
        let n = 1u32 << order;
        let m = self.folios.memcg(f);
        if let Some(first) = self.folio_alloc_swap_nr(m, n) {
            let swap = self.swap.as_mut().unwrap();
            for i in 0..n {
                swap.slots[(first + i) as usize] = SLOT_FOLIO | f;
            }
            let fo = &mut self.folios[f];
            fo.swap = first + 1;
            fo.set(flags::SWAPCACHE | flags::DIRTY);
            self.nr_swapcache_folios += 1;
            return true;
        }
        // Fallback to swap normal pages.
        self.thp.stats[order as usize].swpout_fallback += 1;
        if order == PMD_ORDER {
            self.count_vm_events(THP_SWPOUT_FALLBACK, 1);
        }
        self.split_folio_to_list(f, list);
        false
    }

    /// `folio_alloc_swap` of `n` contiguous aligned slots for group `m`,
    /// with their swap charge; None when the device has no such space.
    fn folio_alloc_swap_nr(&mut self, m: crate::memcg::MemcgId, n: u32) -> Option<u32> {
        let first = self.swap.as_mut()?.alloc_contig(m, n)?;
        for i in 0..n {
            if !self.mem_cgroup_try_charge_swap(m) {
                for j in 0..n {
                    if j < i {
                        self.mem_cgroup_uncharge_swap(m);
                    }
                    self.swap.as_mut().unwrap().release_owned(first + j);
                }
                return None;
            }
        }
        Some(first)
    }

    /// Counts a whole-folio swap-out (`swpout`, `thp_swpout`) at `pageout`.
    pub(crate) fn count_swpout_large(&mut self, order: u8) {
        self.thp.stats[order as usize].swpout += 1;
        if order == PMD_ORDER {
            self.count_vm_events(THP_SWPOUT, 1);
        }
    }

    /// `do_huge_pmd_anonymous_page`'s read-fault branch (mm/huge_memory.c,
    /// v6.12): when PMD size is allowed and suitable at `index` and the
    /// PMD is none, a read fault maps the huge zero page
    /// (`mm_get_huge_zero_folio` → `set_huge_zero_folio`). The model has no
    /// PMD entry: the 512 PTEs map the zero folio and the VMA's bit for the
    /// PMD says they stand for one huge zero PMD. The huge zero page is
    /// allocated once per run (`thp_zero_page_alloc`; the kernel's
    /// shrinker may free it when unused, which is not modelled). The PMD is
    /// young (v6.12 `mk_pmd(&zero_folio->page, vm_page_prot)`, mm/huge_memory.c 1280: the x86 and arm64
    /// protections carry the accessed bit), so all 512 PTEs are. Returns
    /// false when the fault goes on to the order-0 zero page.
    pub(crate) fn do_huge_zero_page(&mut self, vma: VmaId, index: u32) -> bool {
        let (orders, _) = self.thp_vma_allowable_orders(vma);
        let len = self.vmas[vma as usize].len;
        if orders & (1 << PMD_ORDER) == 0 || !suitable(len, index, PMD_ORDER) {
            return false;
        }
        let start = index & !((1 << PMD_ORDER) - 1);
        if !self.pte_range_none(vma, start, PMD_ORDER) {
            return false;
        }
        if !self.thp.huge_zero_allocated {
            self.thp.huge_zero_allocated = true;
            self.count_vm_events(THP_ZERO_PAGE_ALLOC, 1);
        }
        self.advance(self.cost.minor_fault_ns);
        let zero = self.zero_folio;
        let v = &mut self.vmas[vma as usize];
        v.pte_mut(start + (1 << PMD_ORDER) - 1);
        for i in start..start + (1 << PMD_ORDER) {
            v.ptes[i as usize] = pte_present(zero, true, false);
        }
        let pmd = (index >> PMD_ORDER) as usize;
        if v.huge_zero_pmds.len() <= pmd / 64 {
            v.huge_zero_pmds.resize(pmd / 64 + 1, 0);
        }
        v.huge_zero_pmds[pmd / 64] |= 1 << (pmd % 64);
        true
    }

    /// `__split_huge_pmd` of a huge zero PMD around `index`, if there is one
    /// (`__split_huge_zero_page_pmd`: 512 PTEs mapping the zero page, which
    /// the model already has): counts `thp_split_pmd`. A write fault on it
    /// (`do_huge_pmd_wp_page` → fallback, v6.12) and a zap of part of it
    /// split it.
    pub(crate) fn split_huge_zero_pmd(&mut self, vma: VmaId, index: u32) {
        let pmd = (index >> PMD_ORDER) as usize;
        let v = &mut self.vmas[vma as usize];
        let Some(w) = v.huge_zero_pmds.get_mut(pmd / 64) else {
            return;
        };
        if *w & (1 << (pmd % 64)) != 0 {
            *w &= !(1 << (pmd % 64));
            self.count_vm_events(THP_SPLIT_PMD, 1);
            // pmdp_huge_clear_flush(): the PMD's range (crate::tlb).
            let s = index & !((1 << PMD_ORDER) - 1);
            self.flush_tlb_range(vma, s, s + (1 << PMD_ORDER), false);
        }
    }

    /// `alloc_swap_folio` (mm/memory.c, v6.12) and the rest of
    /// `do_swap_page` for a large folio: on a SWP_SYNCHRONOUS_IO device
    /// (zram), with the faulting slot's folio not in the swap cache, the
    /// allowed orders below PMD size that are suitable in the VMA
    /// (`thp_swap_suitable_orders`: the slot aligned as the page is) and
    /// whose aligned block is all swap entries of consecutive slots none of
    /// which is in the swap cache (`can_swapin_thp`) are tried highest
    /// first: a buddy failure counts `swpin_fallback`, a charge failure (to
    /// the slot's group) `swpin_fallback_charge` too. The folio is read in
    /// one request (`swpin`, `pswpin` per page), or, when its slots are
    /// zero-filled under the zeromap, filled without IO (under `zram-same`
    /// zram decompresses only its pages that are not same-filled:
    /// [`Sim::swap_read_large_zero`]); every PTE of the block
    /// maps it (every PTE young: `set_ptes` of one `mk_pte(page, vm_page_prot)`,
    /// whose protection holds the accessed bit on x86 and arm64; dirty at a
    /// store), its slots are freed (the swap cache is skipped) and
    /// `workingset_refault` sees the faulting slot's shadow; no page is marked
    /// accessed (no `folio_mark_accessed`): `folio_add_lru` places it.
    /// False leaves the fault to the order-0 path.
    pub(crate) fn do_swap_page_large(
        &mut self,
        vma: VmaId,
        index: u32,
        slot: u32,
        write: bool,
    ) -> bool {
        // A private file mapping's swapped copy: the VMA is not anonymous
        // (`vma_is_anonymous`), so `thp_vma_allowable_orders` gives no order.
        if self.vmas[vma as usize].kind != crate::mem::pagetable::VmaKind::Anon {
            return false;
        }
        // `__swap_count(entry) > 1`, an entry fork shared: the swap cache's
        // order-0 path (`crate::fork`).
        if self.swap_count_above_one(slot) {
            return false;
        }
        let (mut orders, gfp) = self.thp_vma_allowable_orders(vma);
        orders &= (1 << PMD_ORDER) - 1;
        if orders == 0 {
            return false;
        }
        let len = self.vmas[vma as usize].len;
        for o in THP_ORDERS {
            let n = 1u32 << o;
            if orders & (1 << o) == 0 {
                continue;
            }
            if !suitable(len, index, o)
                || (slot ^ index) & (n - 1) != 0
                || !self.can_swapin_thp(vma, index, slot, o)
            {
                orders &= !(1 << o);
            }
        }
        while orders != 0 {
            let o = highest_order(orders);
            orders &= !(1 << o);
            let n = 1u32 << o;
            let first = slot & !(n - 1);
            let owner = self.swap.as_ref().unwrap().owner(slot);
            let faulting = std::mem::replace(&mut self.cur_memcg, owner);
            let got = self.alloc_anon_order(o, gfp);
            self.cur_memcg = faulting;
            // alloc_anon_order counted the anon_fault_* stats: move them.
            let st = &mut self.thp.stats[o as usize];
            match got {
                Ok(f) => return self.swapin_large_folio(vma, index, first, f, write),
                Err(charge) => {
                    st.anon_fault_fallback -= 1;
                    st.swpin_fallback += 1;
                    if charge {
                        st.anon_fault_fallback_charge -= 1;
                        st.swpin_fallback_charge += 1;
                    }
                }
            }
        }
        false
    }

    /// `can_swapin_thp`: the `1 << order` PTEs of the aligned block around
    /// `index` are swap entries of the slots of the same block around
    /// `slot`, none of those slots has a folio in the swap cache, and the
    /// entries are alike ([`Sim::swap_batch_uniform`]).
    fn can_swapin_thp(&self, vma: VmaId, index: u32, slot: u32, order: u8) -> bool {
        let n = 1u32 << order;
        let (start, first) = (index & !(n - 1), slot & !(n - 1));
        let v = &self.vmas[vma as usize];
        let swap = self.swap.as_ref().unwrap();
        (0..n).all(|i| {
            let s = first + i;
            v.pte(start + i) == s + 1 && slot_folio(swap.slots[s as usize]).is_none()
        }) && self.swap_batch_uniform(first, n)
    }

    /// Reads large folio `f` from the slots `first..` and maps it at the
    /// aligned block around `index` (see [`Sim::do_swap_page_large`]).
    fn swapin_large_folio(
        &mut self,
        vma: VmaId,
        index: u32,
        first: u32,
        f: FolioId,
        write: bool,
    ) -> bool {
        let order = self.folios[f].order();
        let n = 1u32 << order;
        let start = index & !(n - 1);
        let shadow = self.swap.as_ref().unwrap().slots[(first + (index - start)) as usize];
        {
            let fo = &mut self.folios[f];
            fo.clear(flags::ACTIVE);
            fo.space = vma;
            fo.index = start;
            fo.mapcount = n.min(255) as u8;
        }
        let task = self.vmas[vma as usize].task as usize;
        if self.tasks[task].dead {
            self.folios[f].mapcount = 0;
            self.free_folio(f);
            return true;
        }
        self.workingset_refault(f, shadow);
        self.folio_add_lru(f);
        if let Some(read) = self.swap_read_large_zero(f, first) {
            self.count_large_swap_read(order, n);
            if read > 0 {
                let now = self.clock;
                let done = self.swap_dev(|d| d.read(now, u64::from(read)));
                let ws = self.folios[f].test(flags::WORKINGSET);
                self.io_wait(done, ws);
            }
        }
        if self.thp.content.on && (!self.tracks_zero_pages() || self.folios[f].test(flags::NONZERO))
        {
            // Its slots' contents are not known page by page.
            for i in 0..n {
                self.page_content_mark(f, i);
            }
        }
        let v = &mut self.vmas[vma as usize];
        for i in 0..n {
            v.ptes[(start + i) as usize] = pte_present(f, true, write);
        }
        self.swap_free_nr(first, n);
        if !write && self.thp.swapin_mkwrite {
            // A fresh folio the swap cache never held: exclusive.
            self.swapin_pte_mkwrite(f, true);
        }
        true
    }

    /// The per-size stats of the run (sizes with any activity), and
    /// `nr_anon` counted over the live folios.
    pub(crate) fn thp_report(&self) -> Vec<MthpSizeReport> {
        if !self.thp.active() && !self.thp.khuge.collapsed_any {
            return Vec::new();
        }
        let mut stats = self.thp.stats;
        self.folios.for_each_live(|fo| {
            if fo.order() > 0 && !fo.is_file() {
                stats[fo.order() as usize].nr_anon += 1;
                if fo.test(flags::PARTIALLY_MAPPED) {
                    stats[fo.order() as usize].nr_anon_partially_mapped += 1;
                }
            }
        });
        THP_ORDERS
            .map(|o| MthpSizeReport {
                size: size_name(o),
                stats: stats[o as usize],
            })
            .collect()
    }

    /// `AnonHugePages`-like total: base pages held by large anonymous folios.
    pub(crate) fn anon_large_pages(&self) -> u64 {
        if !self.thp.active() && !self.thp.khuge.collapsed_any {
            return 0;
        }
        let mut n = 0;
        self.folios.for_each_live(|fo| {
            if fo.order() > 0 && !fo.is_file() {
                n += fo.nr_pages();
            }
        });
        n
    }
}
