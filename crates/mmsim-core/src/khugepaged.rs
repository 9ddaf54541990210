//! Collapsing PTE-mapped anonymous memory into PMD-size folios: khugepaged
//! and `madvise(MADV_COLLAPSE)` (mm/khugepaged.c, v6.12; MADV_COLLAPSE
//! since 6.1).
//!
//! Off by default: khugepaged runs only with `[machine.thp.khugepaged]`
//! `run = true` (and PMD-size THP enabled, `hugepage_pmd_enabled`), and
//! MADV_COLLAPSE happens only when a workload asks for it
//! ([`crate::Event::Collapse`], [`Sim::madvise_collapse`]).
//!
//! * **One PMD range** (`hpage_collapse_scan_pmd`): a range mapped by a PMD
//!   already (a PMD-size folio all of whose 512 PTEs map it, or a huge zero
//!   PMD) is `SCAN_PMD_MAPPED`; a range of none PTEs only stands for a PMD
//!   with no page table (`SCAN_PMD_NONE`; the model keeps no page-table
//!   pages). Otherwise its 512 PTEs are counted: swap entries
//!   (`unmapped`, at most `max_ptes_swap` for khugepaged, else
//!   `thp_scan_exceed_swap_pte`), none or zero-page PTEs (`none_or_zero`,
//!   at most `max_ptes_none` for khugepaged, else
//!   `thp_scan_exceed_none_pte`); a present page must be on the LRU
//!   (`SCAN_PAGE_LRU`) and not under writeback (taken as an extra
//!   reference, `SCAN_PAGE_COUNT`); khugepaged needs one young PTE or
//!   young/referenced folio (`SCAN_LACK_REFERENCED_PAGE`), and half the
//!   range referenced when it would swap pages in; some present PTE must be
//!   writable (`SCAN_PAGE_RO`: every present anonymous page but the zero
//!   page is mapped writable in this model, as `do_anonymous_page` and
//!   `do_swap_page` map exclusive pages). MADV_COLLAPSE applies none of the
//!   three `max_ptes_*` limits nor the reference test (`cc->is_khugepaged`
//!   false). `max_ptes_shared` is accepted but nothing is shared: the model
//!   has no fork.
//! * **Collapse** (`collapse_huge_page`): `alloc_charge_folio` allocates an
//!   order-9 folio (`thp_collapse_alloc`, or `thp_collapse_alloc_failed`
//!   and `SCAN_ALLOC_HUGE_PAGE_FAIL`) with `GFP_TRANSHUGE` (direct reclaim;
//!   khugepaged: `GFP_TRANSHUGE_LIGHT`, no reclaim, when its `defrag` is
//!   off; neither wakes kswapd) and charges it to the task's group
//!   (`mem_cgroup_charge`, which may reclaim; failure is
//!   `SCAN_CGROUP_CHARGE_FAIL`, success counts the group's
//!   `thp_collapse_alloc`). Then the swap entries are faulted in
//!   (`__collapse_huge_page_swapin` → `do_swap_page`, a read fault each:
//!   `pgmajfault`, readahead, no `pgfault`), the range is checked again
//!   (`__collapse_huge_page_isolate`: a page that left the LRU meanwhile is
//!   `SCAN_DEL_PAGE_LRU`, a swap entry left `SCAN_PTE_NON_PRESENT`), the
//!   pages are copied (none and zero-page PTEs are cleared), the old folios
//!   lose their mappings and are freed (`free_page_and_swap_cache`, their
//!   swap slots and charges with them), and the new folio is mapped by the
//!   range (one young bit standing for the huge PMD's, dirty), added to the
//!   LRU. Without `[machine.compaction]` an order-9 allocation succeeds
//!   only when the buddy allocator has a free order-9 block; with it, the
//!   slow path compacts (`crate::compaction`).
//! * **MADV_COLLAPSE** (`madvise_collapse`): refused (`EINVAL`) in a
//!   MADV_NOHUGEPAGE or file VMA; the sysfs settings do not matter
//!   (`thp_vma_allowable_order` without TVA_ENFORCE_SYSFS). Each PMD range
//!   of the call is scanned and collapsed in turn; `SCAN_SUCCEED` and
//!   `SCAN_PMD_MAPPED` count as done, the kernel's list of "try the next
//!   range" results go on, any other result stops the call. The call
//!   returns 0 when every range is done, else the errno of the last
//!   failure (`madvise_collapse_errno`: ENOMEM for the allocation, EBUSY
//!   for the charge, EAGAIN for LRU and reference trouble, else EINVAL).
//!   Its work is the caller's time: one system call, a PTE walk per range,
//!   the copy (`clear_page_ns` per page) and `free_ns` per freed folio.
//! * **khugepaged** (`khugepaged_do_scan`, `khugepaged_scan_mm_slot`): a
//!   task's mm is registered (`__khugepaged_enter`, at the tail of the mm
//!   list) when it maps an anonymous VMA in which PMD size is allowed
//!   (`khugepaged_enter_vma` from `mmap_region`); the first registration
//!   wakes khugepaged at once. Each wake-up scans `pages_to_scan` units of
//!   progress from the cursor (mm slot, VMA, address): one per mm visited,
//!   one per VMA where PMD size is not allowed, 512 per PMD range scanned;
//!   a range whose scan led to a collapse attempt ends the mm's turn (the
//!   mmap lock was dropped). An mm whose VMAs are all scanned hands the
//!   cursor to the next; past the last, the cursor returns to the head and
//!   `full_scans` counts. Each `SCAN_SUCCEED` counts `pages_collapsed`.
//!   The loop stops when progress reaches `pages_to_scan` or the list has
//!   been passed through twice. A failed huge allocation makes khugepaged
//!   sleep `alloc_sleep_millisecs` and go on, a second one ends the
//!   wake-up. Then it sleeps `scan_sleep_millisecs` (with mms registered)
//!   or until one is; the sleeps start when the scan ends. An exited task's mm leaves the list when the cursor
//!   reaches it. The model keeps a task's VMAs in mapping order as their
//!   address order.
//! * **khugepaged's time**: it runs on a CPU of its own, at the nice level
//!   of background work, so its scan, reclaim and swap-in time is not the
//!   workload's: the workload clock, its IO and reclaim stall times, the
//!   CPUs' lock state and `memory.high` debt are put back after each
//!   wake-up, and the time spent is reported as khugepaged's own
//!   (`khugepaged_ns`). The reclaim it does (direct reclaim of its huge
//!   allocation, limit reclaim of its charge, and of the swap-ins' small
//!   allocations) is counted as khugepaged's, as v6.3+ `reclaimer_offset`
//!   (mm/vmscan.c, v6.12) does when `current_is_khugepaged()`:
//!   `pgscan_khugepaged` and `pgsteal_khugepaged` on the node (global
//!   reclaim only) and in the group (both), not `pgscan_direct`. Otherwise
//!   it is direct reclaim (`allocstall_normal`, the throttling, the
//!   tracepoints). MADV_COLLAPSE's reclaim is the calling task's: direct.

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpGfp, ThpSizeEnabled, VmaThpAdvice, PMD_ORDER};
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{
    pte_present, TaskId, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG,
};
use crate::sim::{Policy, Sim, SimError};
use crate::stats::item::*;
use crate::timer::TimerKind;

/// `HPAGE_PMD_NR`.
const HPAGE_PMD_NR: u32 = 1 << PMD_ORDER;

fn d_pages_to_scan() -> u32 {
    HPAGE_PMD_NR * 8
}
fn d_scan_sleep() -> u64 {
    10_000
}
fn d_alloc_sleep() -> u64 {
    60_000
}
fn d_max_ptes_none() -> u32 {
    HPAGE_PMD_NR - 1
}
fn d_max_ptes_swap() -> u32 {
    HPAGE_PMD_NR / 8
}
fn d_max_ptes_shared() -> u32 {
    HPAGE_PMD_NR / 2
}
fn yes() -> bool {
    true
}

/// `[machine.thp.khugepaged]`: /sys/kernel/mm/transparent_hugepage/khugepaged
/// with the sysfs names and the kernel's defaults (`khugepaged_init`), and
/// `run`, mmsim's switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KhugepagedConfig {
    /// Run khugepaged (default false: no background collapse, the results
    /// of every existing scenario). It still runs only while PMD-size THP
    /// is enabled (`hugepage_pmd_enabled`).
    #[serde(default)]
    pub run: bool,
    /// `pages_to_scan` (default 4096): progress units per wake-up.
    #[serde(default = "d_pages_to_scan")]
    pub pages_to_scan: u32,
    /// `scan_sleep_millisecs` (default 10000): sleep between wake-ups.
    #[serde(default = "d_scan_sleep")]
    pub scan_sleep_millisecs: u64,
    /// `alloc_sleep_millisecs` (default 60000): sleep after a failed huge allocation.
    #[serde(default = "d_alloc_sleep")]
    pub alloc_sleep_millisecs: u64,
    /// `max_ptes_none` (default 511, 0..=511).
    #[serde(default = "d_max_ptes_none")]
    pub max_ptes_none: u32,
    /// `max_ptes_swap` (default 64, 0..=511).
    #[serde(default = "d_max_ptes_swap")]
    pub max_ptes_swap: u32,
    /// `max_ptes_shared` (default 256, 0..=511; no page is shared in the model).
    #[serde(default = "d_max_ptes_shared")]
    pub max_ptes_shared: u32,
    /// `defrag` (default true): khugepaged's allocation may reclaim directly.
    #[serde(default = "yes")]
    pub defrag: bool,
}

impl Default for KhugepagedConfig {
    fn default() -> Self {
        KhugepagedConfig {
            run: false,
            pages_to_scan: d_pages_to_scan(),
            scan_sleep_millisecs: d_scan_sleep(),
            alloc_sleep_millisecs: d_alloc_sleep(),
            max_ptes_none: d_max_ptes_none(),
            max_ptes_swap: d_max_ptes_swap(),
            max_ptes_shared: d_max_ptes_shared(),
            defrag: true,
        }
    }
}

impl KhugepagedConfig {
    /// True when nothing differs from the defaults (the table is then not written).
    pub fn is_default(&self) -> bool {
        *self == KhugepagedConfig::default()
    }

    /// The ranges the sysfs files accept (`max_ptes_*_store`,
    /// `pages_to_scan_store`), and the model's own limits.
    pub(crate) fn validate(&self, policy_is_lru: bool) -> Result<(), ConfigError> {
        let field = |k: &str| format!("machine.thp.khugepaged.{k}");
        for (k, v) in [
            ("max_ptes_none", self.max_ptes_none),
            ("max_ptes_swap", self.max_ptes_swap),
            ("max_ptes_shared", self.max_ptes_shared),
        ] {
            if v > HPAGE_PMD_NR - 1 {
                return Err(ConfigError::new(
                    field(k),
                    format!("{v} is out of range (allowed: 0..=511, HPAGE_PMD_NR - 1)"),
                ));
            }
        }
        if self.pages_to_scan == 0 {
            return Err(ConfigError::new(
                field("pages_to_scan"),
                "0 is out of range (allowed: 1..=4294967295)",
            ));
        }
        if self.run && self.scan_sleep_millisecs == 0 {
            return Err(ConfigError::new(
                field("scan_sleep_millisecs"),
                "0 (khugepaged scanning without a pause) is not modelled (allowed: \
                 1..=18446744073709551615)",
            ));
        }
        if self.run && policy_is_lru {
            return Err(ConfigError::new(
                field("run"),
                "khugepaged makes PMD-size folios, which need the kernel's LRU lists (policy \
                 cost, scanned-rotated or mglru); the textbook `lru` policy handles 4 KiB \
                 pages only",
            ));
        }
        Ok(())
    }
}

impl ThpConfig {
    /// `hugepage_pmd_enabled()` (mm/khugepaged.c, v6.12) for anonymous
    /// memory: PMD size is `always` or `madvise`, or `inherit` with the top
    /// level not `never`.
    pub fn pmd_enabled(&self) -> bool {
        match self.size(PMD_ORDER) {
            ThpSizeEnabled::Always | ThpSizeEnabled::Madvise => true,
            ThpSizeEnabled::Inherit => self.enabled != ThpEnabled::Never,
            ThpSizeEnabled::Never => false,
        }
    }
}

/// The errno of a failed `madvise(MADV_COLLAPSE)` (`madvise_collapse_errno`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollapseError {
    /// The huge allocation failed (`SCAN_ALLOC_HUGE_PAGE_FAIL`).
    Enomem,
    /// The memcg charge failed (`SCAN_CGROUP_CHARGE_FAIL`).
    Ebusy,
    /// A page was off the LRU or pinned: trying again may succeed.
    Eagain,
    /// Anything else: the range cannot be collapsed (including a VMA where
    /// THP is disabled, a file VMA, or an unknown VMA or range).
    Einval,
}

impl CollapseError {
    /// The errno number `madvise` returns on x86-64 Linux
    /// (include/uapi/asm-generic/errno-base.h): ENOMEM 12, EBUSY 16, EAGAIN
    /// 11, EINVAL 22.
    pub fn errno_number(self) -> u32 {
        match self {
            CollapseError::Enomem => 12,
            CollapseError::Ebusy => 16,
            CollapseError::Eagain => 11,
            CollapseError::Einval => 22,
        }
    }
}

/// `enum scan_result` (mm/khugepaged.c, v6.12): the results the model produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScanResult {
    /// `SCAN_FAIL`.
    Fail,
    /// `SCAN_SUCCEED`.
    Succeed,
    /// `SCAN_PMD_NONE`: no page table under the PMD.
    PmdNone,
    /// `SCAN_PMD_MAPPED`: a huge PMD already.
    PmdMapped,
    /// `SCAN_EXCEED_NONE_PTE`.
    ExceedNonePte,
    /// `SCAN_EXCEED_SWAP_PTE`.
    ExceedSwapPte,
    /// `SCAN_PTE_NON_PRESENT`.
    PteNonPresent,
    /// `SCAN_PAGE_RO`.
    PageRo,
    /// `SCAN_LACK_REFERENCED_PAGE`.
    LackReferencedPage,
    /// `SCAN_PAGE_COUNT`.
    PageCount,
    /// `SCAN_PAGE_LRU`.
    PageLru,
    /// `SCAN_ANY_PROCESS`: the mm exited.
    AnyProcess,
    /// `SCAN_DEL_PAGE_LRU`.
    DelPageLru,
    /// `SCAN_ALLOC_HUGE_PAGE_FAIL`.
    AllocHugePageFail,
    /// `SCAN_CGROUP_CHARGE_FAIL`.
    CgroupChargeFail,
}

impl ScanResult {
    /// `madvise_collapse_errno`.
    fn errno(self) -> CollapseError {
        match self {
            ScanResult::AllocHugePageFail => CollapseError::Enomem,
            ScanResult::CgroupChargeFail | ScanResult::ExceedNonePte => CollapseError::Ebusy,
            ScanResult::PageCount | ScanResult::PageLru | ScanResult::DelPageLru => {
                CollapseError::Eagain
            }
            _ => CollapseError::Einval,
        }
    }

    /// The results after which `madvise_collapse` goes on to the next range.
    fn madvise_continues(self) -> bool {
        matches!(
            self,
            ScanResult::PteNonPresent
                | ScanResult::PageRo
                | ScanResult::LackReferencedPage
                | ScanResult::PageCount
                | ScanResult::PageLru
                | ScanResult::DelPageLru
        )
    }
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// khugepaged and MADV_COLLAPSE in a run's result (present only when used).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KhugepagedReport {
    /// `khugepaged/pages_collapsed`: PMD ranges khugepaged collapsed.
    pub pages_collapsed: u64,
    /// `khugepaged/full_scans`: passes over the whole mm list.
    pub full_scans: u64,
    /// khugepaged's wake-ups.
    pub wakeups: u64,
    /// khugepaged's own time (scan, reclaim, swap-in, copy), ns.
    pub khugepaged_ns: u64,
    /// `madvise(MADV_COLLAPSE)` calls.
    pub madvise_collapse_calls: u64,
    /// Of those, the ones that returned an error.
    pub madvise_collapse_failed: u64,
    /// The errno number the last `madvise(MADV_COLLAPSE)` call returned
    /// ([`CollapseError::errno_number`]; 0: it succeeded, or no call; absent
    /// from JSON when 0).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub madvise_collapse_errno: u32,
    /// PMD ranges MADV_COLLAPSE collapsed.
    pub madvise_collapse_thps: u64,
}

/// khugepaged's state and the collapse counters of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Khugepaged {
    /// The sysfs knobs.
    pub cfg: KhugepagedConfig,
    /// The khugepaged thread runs (`run` and `hugepage_pmd_enabled`).
    pub running: bool,
    /// `khugepaged_scan.mm_head`: registered tasks, oldest first.
    pub mm_head: Vec<TaskId>,
    /// MMF_VM_HUGEPAGE by task: registered.
    pub registered: Vec<bool>,
    /// `khugepaged_scan.mm_slot`: the index in `mm_head` being scanned.
    pub scan_slot: Option<usize>,
    /// `khugepaged_scan.address`: the VMA (position in the task's list) ...
    pub scan_vma: usize,
    /// ... and the page within it.
    pub scan_index: u32,
    /// A wake-up interrupted by the allocation sleep: (progress, passes
    /// through the list head).
    pub resume: Option<(u32, u32)>,
    /// The report's counters.
    pub report: KhugepagedReport,
    /// Some collapse made a PMD-size folio (the mTHP report is then written
    /// even with every size `never`).
    pub collapsed_any: bool,
    /// Collapse was used (khugepaged ran or MADV_COLLAPSE was called).
    pub used: bool,
    /// `current_is_khugepaged()`: the work being done is khugepaged's (its
    /// timer is running), so reclaim counts `pgscan_khugepaged` and
    /// `pgsteal_khugepaged` (`reclaimer_offset`, mm/vmscan.c v6.12).
    pub current: bool,
}

impl Khugepaged {
    /// The state for the knobs `cfg` with PMD size enabled or not.
    pub(crate) fn new(cfg: &KhugepagedConfig, pmd_enabled: bool) -> Khugepaged {
        Khugepaged {
            cfg: cfg.clone(),
            running: cfg.run && pmd_enabled,
            used: cfg.run && pmd_enabled,
            ..Default::default()
        }
    }

    /// `khugepaged_has_work`.
    fn has_work(&self) -> bool {
        !self.mm_head.is_empty()
    }
}

/// What one collapse is allowed: khugepaged's limits, or none (MADV_COLLAPSE).
#[derive(Clone, Copy, Debug)]
struct Control {
    /// `cc->is_khugepaged`.
    khugepaged: bool,
    max_ptes_none: u32,
    max_ptes_swap: u32,
    gfp: ThpGfp,
}

/// What a PMD range holds, from one pass over its PTEs.
#[derive(Clone, Copy, Debug, Default)]
struct RangeScan {
    none_or_zero: u32,
    unmapped: u32,
    referenced: u32,
    writable: bool,
}

impl Sim {
    fn collapse_control(&self, khugepaged: bool) -> Control {
        let k = &self.thp.khuge.cfg;
        Control {
            khugepaged,
            max_ptes_none: k.max_ptes_none,
            max_ptes_swap: k.max_ptes_swap,
            gfp: ThpGfp {
                // GFP_TRANSHUGE, or GFP_TRANSHUGE_LIGHT for khugepaged without
                // defrag (v6.12 alloc_charge_folio,
                // alloc_hugepage_khugepaged_gfpmask).
                direct: !khugepaged || k.defrag,
                kswapd: false,
                noretry: false,
                mask: if !khugepaged || k.defrag {
                    crate::gfp::GFP_TRANSHUGE
                } else {
                    crate::gfp::GFP_TRANSHUGE_LIGHT
                },
            },
        }
    }

    /// `madvise(MADV_COLLAPSE)` of `pages` pages from page `index` of `vma`
    /// (see the module overview). An unknown VMA or a range starting past
    /// its end counts out of range and is `EINVAL`.
    pub fn madvise_collapse(
        &mut self,
        vma: VmaId,
        index: u32,
        pages: u32,
    ) -> Result<(), CollapseError> {
        let Some(v) = self.vmas.get(vma as usize) else {
            self.acc.out_of_range += 1;
            return Err(CollapseError::Einval);
        };
        if index >= v.len || pages == 0 {
            self.acc.out_of_range += 1;
            return Err(CollapseError::Einval);
        }
        let (task, kind, advice, len) = (v.task, v.kind, v.thp_advice, v.len);
        if self.tasks[task as usize].dead {
            return Err(CollapseError::Einval);
        }
        self.thp.khuge.used = true;
        self.thp.khuge.report.madvise_collapse_calls += 1;
        self.cur_memcg = self.task_memcg(task);
        self.advance(self.cost.fd_access_ns);
        let r = if kind != VmaKind::Anon
            || advice == VmaThpAdvice::Nohugepage
            || self.policy == Policy::Lru
        {
            Err(CollapseError::Einval)
        } else {
            let end = index.saturating_add(pages).min(len);
            let hstart = index.div_ceil(HPAGE_PMD_NR) * HPAGE_PMD_NR;
            let hend = end & !(HPAGE_PMD_NR - 1);
            let cc = self.collapse_control(false);
            let (mut thps, mut last_fail) = (0u32, ScanResult::Fail);
            let mut addr = hstart;
            while addr < hend {
                if self.tasks[task as usize].dead {
                    last_fail = ScanResult::AnyProcess;
                    break;
                }
                self.advance(u64::from(HPAGE_PMD_NR) * self.cost.pte_walk_ns);
                let (result, _) = self.hpage_collapse_scan_pmd(vma, addr, cc);
                addr += HPAGE_PMD_NR;
                match result {
                    ScanResult::Succeed | ScanResult::PmdMapped => {
                        if result == ScanResult::Succeed {
                            self.thp.khuge.report.madvise_collapse_thps += 1;
                        }
                        thps += 1;
                    }
                    r if r.madvise_continues() => last_fail = r,
                    r => {
                        last_fail = r;
                        break;
                    }
                }
            }
            if hend > hstart && thps == (hend - hstart) / HPAGE_PMD_NR {
                Ok(())
            } else if hend <= hstart {
                // No whole PMD range: `thps == 0 == (hend - hstart) >> shift`.
                Ok(())
            } else {
                Err(last_fail.errno())
            }
        };
        if r.is_err() {
            self.thp.khuge.report.madvise_collapse_failed += 1;
        }
        self.thp.khuge.report.madvise_collapse_errno = r.err().map_or(0, |e| e.errno_number());
        r
    }

    /// `hugepage_madvise` (mm/khugepaged.c, v6.12): MADV_HUGEPAGE or
    /// MADV_NOHUGEPAGE (or, with [`VmaThpAdvice::None`], neither) on
    /// anonymous VMA `vma` from now on; MADV_HUGEPAGE registers the task
    /// with khugepaged (`khugepaged_enter_vma`).
    pub fn madvise_thp(&mut self, vma: VmaId, advice: VmaThpAdvice) -> Result<(), SimError> {
        match self.vmas.get_mut(vma as usize) {
            Some(v) if v.kind == VmaKind::Anon => v.thp_advice = advice,
            _ => return Err(SimError::Setup(format!("no anonymous VMA {vma}"))),
        }
        if advice == VmaThpAdvice::Hugepage {
            self.khugepaged_enter_vma(vma);
        }
        Ok(())
    }

    /// PMD-mapped anonymous pages now (`AnonHugePages` of /proc/meminfo
    /// and smaps, in pages): the large anonymous folios, which are PMD-size
    /// when every mTHP size is `never` (otherwise mTHP folios count too).
    pub fn anon_huge_pages(&self) -> u64 {
        self.anon_large_pages()
    }

    /// An [`crate::Event::ThpAdvice`]: [`Sim::madvise_thp`] of the whole
    /// VMA; a file or unknown VMA counts out of range and changes nothing.
    pub(crate) fn thp_advice_event(&mut self, vma: VmaId, advice: VmaThpAdvice) {
        if self.madvise_thp(vma, advice).is_err() {
            self.acc.out_of_range += 1;
        }
    }

    /// An [`crate::Event::Collapse`]: MADV_COLLAPSE, its result dropped.
    pub(crate) fn collapse_event(&mut self, vma: VmaId, index: u32, pages: u32) {
        let _ = self.madvise_collapse(vma, index, pages);
    }

    /// `find_pmd_or_thp_or_none` for the range at `start`: Some(result)
    /// when there is nothing to scan (see the module overview).
    fn find_pmd_or_thp_or_none(&self, vma: VmaId, start: u32) -> Option<ScanResult> {
        let v = &self.vmas[vma as usize];
        let pmd = (start >> PMD_ORDER) as usize;
        if v.huge_zero_pmds
            .get(pmd / 64)
            .is_some_and(|w| w & (1 << (pmd % 64)) != 0)
        {
            return Some(ScanResult::PmdMapped);
        }
        let first = v.pte(start);
        if first & PTE_PRESENT != 0 {
            let f = first & PTE_FOLIO_MASK;
            if f != self.zero_folio {
                let fo = &self.folios[f];
                if fo.order() == PMD_ORDER
                    && fo.index == start
                    && !fo.test(flags::PARTIALLY_MAPPED)
                    && (start..start + HPAGE_PMD_NR).all(|i| {
                        let p = v.pte(i);
                        p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
                    })
                {
                    return Some(ScanResult::PmdMapped);
                }
            }
        }
        if self.pte_range_none(vma, start, PMD_ORDER) {
            return Some(ScanResult::PmdNone);
        }
        None
    }

    /// One pass over the range's PTEs with `cc`'s limits: the counts, or
    /// the result that stops the scan. `isolate` is the second pass
    /// (`__collapse_huge_page_isolate`), where a swap entry is
    /// `SCAN_PTE_NON_PRESENT` and a page off the LRU `SCAN_DEL_PAGE_LRU`.
    fn scan_range(
        &mut self,
        vma: VmaId,
        start: u32,
        cc: Control,
        isolate: bool,
    ) -> Result<RangeScan, ScanResult> {
        let mut s = RangeScan::default();
        for i in start..start + HPAGE_PMD_NR {
            let pte = self.vmas[vma as usize].pte(i);
            if pte != 0 && pte & PTE_PRESENT == 0 {
                if isolate {
                    return Err(ScanResult::PteNonPresent);
                }
                s.unmapped += 1;
                if cc.khugepaged && s.unmapped > cc.max_ptes_swap {
                    self.count_vm_events(THP_SCAN_EXCEED_SWAP_PTE, 1);
                    return Err(ScanResult::ExceedSwapPte);
                }
                continue;
            }
            if pte == 0 || pte & PTE_FOLIO_MASK == self.zero_folio {
                s.none_or_zero += 1;
                if cc.khugepaged && s.none_or_zero > cc.max_ptes_none {
                    self.count_vm_events(THP_SCAN_EXCEED_NONE_PTE, 1);
                    return Err(ScanResult::ExceedNonePte);
                }
                continue;
            }
            s.writable = true;
            let fo = &self.folios[pte & PTE_FOLIO_MASK];
            if !fo.test(flags::LRU) {
                return Err(if isolate {
                    ScanResult::DelPageLru
                } else {
                    ScanResult::PageLru
                });
            }
            if fo.test(flags::WRITEBACK) {
                return Err(ScanResult::PageCount);
            }
            if cc.khugepaged
                && (pte & PTE_YOUNG != 0 || fo.test(flags::YOUNG) || fo.test(flags::REFERENCED))
            {
                s.referenced += 1;
            }
        }
        if !s.writable {
            return Err(ScanResult::PageRo);
        }
        if cc.khugepaged
            && (s.referenced == 0
                || (!isolate && s.unmapped > 0 && s.referenced < HPAGE_PMD_NR / 2))
        {
            return Err(ScanResult::LackReferencedPage);
        }
        Ok(s)
    }

    /// `hpage_collapse_scan_pmd` of the PMD range at `start` of anonymous
    /// VMA `vma`, and `collapse_huge_page` when the scan succeeds. Returns
    /// the result and whether a collapse was attempted (the mmap lock dropped).
    fn hpage_collapse_scan_pmd(
        &mut self,
        vma: VmaId,
        start: u32,
        cc: Control,
    ) -> (ScanResult, bool) {
        if let Some(r) = self.find_pmd_or_thp_or_none(vma, start) {
            return (r, false);
        }
        match self.scan_range(vma, start, cc, false) {
            Err(r) => (r, false),
            Ok(s) => (self.collapse_huge_page(vma, start, cc, s.unmapped), true),
        }
    }

    /// `collapse_huge_page` (see the module overview).
    fn collapse_huge_page(
        &mut self,
        vma: VmaId,
        start: u32,
        cc: Control,
        unmapped: u32,
    ) -> ScanResult {
        let task = self.vmas[vma as usize].task;
        self.cur_memcg = self.task_memcg(task);
        // alloc_charge_folio()
        let f = match self.alloc_charge_anon_folio(PMD_ORDER, cc.gfp, cc.gfp.mask) {
            Err(false) => {
                self.count_vm_events(THP_COLLAPSE_ALLOC_FAILED, 1);
                return ScanResult::AllocHugePageFail;
            }
            Err(true) => {
                self.count_vm_events(THP_COLLAPSE_ALLOC, 1);
                return ScanResult::CgroupChargeFail;
            }
            Ok(f) => f,
        };
        self.count_events(self.cur_memcg, THP_COLLAPSE_ALLOC, 1);
        let r = self.collapse_into(vma, start, cc, unmapped, f);
        if r != ScanResult::Succeed {
            // folio_put() of the unused huge folio: uncharged and freed.
            self.free_folio(f);
        }
        r
    }

    /// The part of `collapse_huge_page` after the allocation: revalidate,
    /// swap in, isolate, copy and map new folio `f`.
    fn collapse_into(
        &mut self,
        vma: VmaId,
        start: u32,
        cc: Control,
        unmapped: u32,
        f: FolioId,
    ) -> ScanResult {
        let task = self.vmas[vma as usize].task;
        if self.tasks[task as usize].dead {
            return ScanResult::AnyProcess;
        }
        if let Some(r) = self.find_pmd_or_thp_or_none(vma, start) {
            return r;
        }
        if unmapped > 0 {
            // __collapse_huge_page_swapin(): do_swap_page() per swap entry.
            for i in start..start + HPAGE_PMD_NR {
                let pte = self.vmas[vma as usize].pte(i);
                if pte == 0 || pte & PTE_PRESENT != 0 {
                    continue;
                }
                self.cur_memcg = self.task_memcg(task);
                self.do_swap_page(vma, i, pte - 1, false);
                if self.tasks[task as usize].dead {
                    return ScanResult::Fail;
                }
            }
            self.cur_memcg = self.task_memcg(task);
        }
        if let Err(r) = self.scan_range(vma, start, cc, true) {
            return r;
        }
        // pmdp_collapse_flush(): the PMD's 512 pages, from khugepaged's CPU
        // or the caller's (crate::tlb).
        self.flush_tlb_range(vma, start, start + HPAGE_PMD_NR, cc.khugepaged);
        // __collapse_huge_page_copy(): the copy, then the old pages go.
        self.advance(u64::from(HPAGE_PMD_NR) * self.cost.clear_page_ns);
        let mut nonzero = false;
        let mut large: Vec<FolioId> = Vec::new();
        for i in start..start + HPAGE_PMD_NR {
            let pte = std::mem::take(self.vmas[vma as usize].pte_mut(i));
            if pte == 0 {
                continue;
            }
            let src = pte & PTE_FOLIO_MASK;
            if src == self.zero_folio {
                continue;
            }
            nonzero |= self.folios[src].test(flags::NONZERO);
            if self.thp.content.on && (pte & PTE_DIRTY != 0 || self.collapse_copies_data(src, i)) {
                self.page_content_mark(f, i - start);
            }
            self.zap_anon_pte(src, &mut large);
        }
        for src in large {
            let fo = self.folios[src];
            let v = &self.vmas[fo.space as usize];
            let left = if self.fork.is_some() && self.anon_forked(fo.space) {
                // Still mapped by forked VMAs too (`crate::fork`).
                self.anon_family_mapped(src).0
            } else {
                (fo.index..fo.index + (1u32 << fo.order()))
                    .filter(|&i| {
                        let p = v.pte(i);
                        p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == src
                    })
                    .count() as u32
            };
            self.folios[src].mapcount = left.min(255) as u8;
            if left == 0 {
                self.advance(self.cost.free_ns);
                self.free_unmapped_anon_folio(src);
            } else {
                self.deferred_split_folio(src);
            }
        }
        {
            let fo = &mut self.folios[f];
            fo.space = vma;
            fo.index = start;
            fo.mapcount = 255;
            if nonzero {
                fo.set(flags::NONZERO);
            }
        }
        let head = self.folios.head_pfn(f);
        let content = &self.thp.content;
        let v = &mut self.vmas[vma as usize];
        v.pte_mut(start + HPAGE_PMD_NR - 1);
        // All 512 young: v6.12 `collapse_huge_page` builds the PMD with
        // `mk_huge_pmd(hpage, vma->vm_page_prot)` (mm/khugepaged.c 1237),
        // whose x86 and arm64 protections carry the accessed bit.
        for i in start..start + HPAGE_PMD_NR {
            // Clean over a zero-filled page under the 6.12 content bits.
            let dirty = !content.on || content.test(head + i - start);
            v.ptes[i as usize] = pte_present(f, true, dirty);
        }
        self.folio_add_lru(f);
        self.deferred_split_folio_whole(f);
        self.thp.khuge.collapsed_any = true;
        ScanResult::Succeed
    }

    /// Whether the page of `src` at VMA page `i` that a collapse copies
    /// holds data (`crate::split_zeropage`): a large folio's own bit;
    /// an order-0 folio's `NONZERO` under `machine.swap_zero_pages`,
    /// else always (its content is not tracked).
    fn collapse_copies_data(&self, src: FolioId, i: u32) -> bool {
        let fo = self.folios[src];
        if fo.order() > 0 {
            return !self.page_zero_filled(src, i - fo.index);
        }
        !self.tracks_zero_pages() || fo.test(flags::NONZERO)
    }

    /// `khugepaged_enter_vma` at the mapping of VMA `vma`: registers its
    /// task with khugepaged when PMD size is allowed in it, waking
    /// khugepaged if the list was empty.
    pub(crate) fn khugepaged_enter_vma(&mut self, vma: VmaId) {
        if !self.thp.khuge.running || !self.khugepaged_vma_ok(vma) {
            return;
        }
        let task = self.vmas[vma as usize].task;
        let k = &mut self.thp.khuge;
        if k.registered.len() <= task as usize {
            k.registered.resize(task as usize + 1, false);
        }
        if k.registered[task as usize] {
            return;
        }
        k.registered[task as usize] = true;
        let wakeup = k.mm_head.is_empty();
        k.mm_head.push(task);
        if wakeup && k.resume.is_none() {
            self.timers.mod_timer(TimerKind::Khugepaged, self.clock);
        }
    }

    /// `thp_vma_allowable_order(vma, …, TVA_ENFORCE_SYSFS, PMD_ORDER)` for
    /// an anonymous VMA.
    fn khugepaged_vma_ok(&self, vma: VmaId) -> bool {
        self.vmas[vma as usize].kind == VmaKind::Anon
            && self.thp_vma_allowable_orders(vma).0 & (1 << PMD_ORDER) != 0
    }

    /// khugepaged's timer: one wake-up (`khugepaged_do_scan`, or the rest
    /// of one after its allocation sleep), then `khugepaged_wait_work`.
    /// Runs on khugepaged's own time (see the module overview).
    pub(crate) fn khugepaged_timer(&mut self, now: u64) {
        let saved = (
            self.clock,
            self.smp.clone(),
            self.io_wait_ns,
            self.reclaim_stall_ns,
            self.pages_over_high,
            self.cur_memcg,
        );
        self.thp.khuge.current = true;
        // Its allocations, reclaim and compactions are khugepaged's in the
        // trace output.
        let task = std::mem::replace(&mut self.tp_task, crate::tracepoint::TpTask::Khugepaged);
        // khugepaged is `current`: what its collapses dirty counts for no
        // writer (`crate::page_writeback_throttle`).
        let writer = self.bdp_set_current(crate::page_writeback_throttle::KTHREAD);
        let next = self.khugepaged_do_scan(now);
        self.bdp_set_current(writer);
        self.tp_task = task;
        let k = &mut self.thp.khuge;
        k.current = false;
        k.report.khugepaged_ns += self.clock - saved.0;
        (
            self.clock,
            self.smp,
            self.io_wait_ns,
            self.reclaim_stall_ns,
            self.pages_over_high,
            self.cur_memcg,
        ) = saved;
        self.timers.set(TimerKind::Khugepaged, next);
    }

    /// `khugepaged_do_scan` then `khugepaged_wait_work`: the next wake-up's
    /// time, or None to wait for a registration.
    fn khugepaged_do_scan(&mut self, now: u64) -> Option<u64> {
        let k = &mut self.thp.khuge;
        let pages = k.cfg.pages_to_scan;
        let (mut progress, mut pass_through_head, wait) = match k.resume.take() {
            Some((p, h)) => (p, h, false),
            None => {
                k.report.wakeups += 1;
                (0, 0, true)
            }
        };
        loop {
            if self.thp.khuge.scan_slot.is_none() {
                pass_through_head += 1;
            }
            let mut result = ScanResult::Succeed;
            if self.thp.khuge.has_work() && pass_through_head < 2 {
                progress += self.khugepaged_scan_mm_slot(pages - progress, &mut result);
            } else {
                progress = pages;
            }
            if progress >= pages {
                break;
            }
            if result == ScanResult::AllocHugePageFail {
                if !wait {
                    break;
                }
                // khugepaged_alloc_sleep(), then the loop goes on.
                let k = &mut self.thp.khuge;
                k.resume = Some((progress, pass_through_head));
                return Some(self.clock.max(now) + k.cfg.alloc_sleep_millisecs * 1_000_000);
            }
        }
        // The sleep starts when the scan ends (khugepaged's clock).
        let k = &self.thp.khuge;
        k.has_work()
            .then(|| self.clock.max(now) + k.cfg.scan_sleep_millisecs * 1_000_000)
    }

    /// `khugepaged_scan_mm_slot`: scans up to `pages` progress units of the
    /// mm at the cursor; returns the progress made.
    fn khugepaged_scan_mm_slot(&mut self, pages: u32, result: &mut ScanResult) -> u32 {
        *result = ScanResult::Fail;
        let k = &mut self.thp.khuge;
        let slot = match k.scan_slot {
            Some(s) => s,
            None => {
                k.scan_slot = Some(0);
                k.scan_vma = 0;
                k.scan_index = 0;
                0
            }
        };
        let task = k.mm_head[slot];
        let cc = self.collapse_control(true);
        let mut progress = 1u32;
        let mut done_all = true;
        if !self.tasks[task as usize].dead {
            let nv = self.tasks[task as usize].vmas.len();
            'vmas: while self.thp.khuge.scan_vma < nv {
                let vma = self.tasks[task as usize].vmas[self.thp.khuge.scan_vma];
                if self.khugepaged_vma_ok(vma) {
                    let hend = self.vmas[vma as usize].len & !(HPAGE_PMD_NR - 1);
                    while self.thp.khuge.scan_index < hend {
                        if self.tasks[task as usize].dead {
                            break 'vmas;
                        }
                        let start = self.thp.khuge.scan_index;
                        self.advance(u64::from(HPAGE_PMD_NR) * self.cost.pte_walk_ns);
                        let (r, unlocked) = self.hpage_collapse_scan_pmd(vma, start, cc);
                        *result = r;
                        let k = &mut self.thp.khuge;
                        if r == ScanResult::Succeed {
                            k.report.pages_collapsed += 1;
                        }
                        k.scan_index += HPAGE_PMD_NR;
                        progress += HPAGE_PMD_NR;
                        if unlocked || progress >= pages {
                            done_all = false;
                            break 'vmas;
                        }
                    }
                } else {
                    progress += 1;
                }
                let k = &mut self.thp.khuge;
                k.scan_vma += 1;
                k.scan_index = 0;
            }
        }
        let dead = self.tasks[task as usize].dead;
        let k = &mut self.thp.khuge;
        if dead || done_all {
            if slot + 1 < k.mm_head.len() {
                k.scan_slot = Some(slot + 1);
                k.scan_vma = 0;
                k.scan_index = 0;
            } else {
                k.scan_slot = None;
                k.report.full_scans += 1;
            }
            if dead {
                // collect_mm_slot(): the exited mm leaves the list.
                k.mm_head.remove(slot);
                k.registered[task as usize] = false;
                if let Some(s) = k.scan_slot.as_mut() {
                    *s -= 1;
                }
            }
        }
        progress
    }

    /// The khugepaged/MADV_COLLAPSE part of a run's result, when used.
    pub(crate) fn khugepaged_report(&self) -> Option<KhugepagedReport> {
        self.thp.khuge.used.then(|| self.thp.khuge.report.clone())
    }
}
