//! Seed 003's RFC as a variant: "variable-order, large folios for anonymous
//! memory", RFC v2 (Ryan Roberts, 2023-04-14, 17 patches on v6.3-rc6),
//! `thp.kernel = "rfc-v2"`; and the `thp.kernel` setting itself.
//!
//! The RFC had no sysfs control: with it applied, every anonymous write
//! fault tries a large folio. Its rules, by patch:
//!
//! * **Order** (patch 05 "mm: Routines to determine max anon folio
//!   allocation order", `max_anon_folio_order`): a fixed maximum of order 4
//!   (64 KiB with 4 KiB pages: arm64's contiguous-bit size, and the knee
//!   the cover letter reports). The RFC proposes leaving it to the
//!   architecture (`arch_wants_pte_order`, which the later v1/v2 series
//!   added); here `thp.arch_order` (default 4) is that order, capped by the
//!   RFC's maximum of 4. 0 turns the large-folio path off.
//! * **Where** (patch 06 "mm: Allocate large folios for anonymous memory",
//!   `calc_anon_folio_order_alloc`): from that order down to order 2, the
//!   first order whose naturally aligned block around the fault lies inside
//!   the VMA (and in one PMD, which any block below PMD order does) and
//!   whose PTEs are all none; none fits → order 0 (order 1 is never used).
//!   Unlike 6.8+, there is no per-size setting and no MADV_NOHUGEPAGE check
//!   for these orders (v3 of the series added the latter).
//! * **Fallback** (patch 03 "mm: Introduce try_vma_alloc_movable_folio()"):
//!   the buddy allocation is tried at that order with `__GFP_NORETRY |
//!   __GFP_NOWARN` on `GFP_HIGHUSER_MOVABLE` (kswapd wakeup and one direct
//!   reclaim pass allowed, no retries), then each lower order down to 2,
//!   then order 0. The memcg charge (`mem_cgroup_charge(…, GFP_KERNEL)`)
//!   comes after, for the order obtained; the RFC has no charge fallback: a
//!   failed charge returns VM_FAULT_OOM and the #PF handler retries the
//!   fault (`pagefault_out_of_memory`). mmsim instead falls back to order 0
//!   at once (counted `anon_fault_fallback_charge`), so a group at
//!   `memory.max` cannot loop on the same failing 64 KiB charge.
//! * **PMD-size THP** is untouched ("Note that none of this affects the
//!   behavior of traditional PMD-sized THP"): the top-level `enabled`
//!   (`hugepages-2048kB` = inherit, as before 6.8) and `create_huge_pmd`
//!   come first, as in `crate::huge_memory`.
//! * **Write fault on the zero page** (patch 15 "mm: Convert zero page to
//!   large folios on write", in `wp_page_copy`): the folio replacing the
//!   zero page gets its order by the same rules as a fault on an unallocated
//!   address, except that PTEs of the block that map the zero page count as
//!   free (they are replaced: the new folio is zero-filled, as the zero page
//!   is). mmsim reads "state of neighboring PTEs" that way; a read fault
//!   still maps the order-0 zero page (no large zero page in the RFC).
//! * **CoW** (patches 09-14, `wp_page_copy` and `wp_page_reuse` on ranges):
//!   a non-exclusive CoW copy takes the source folio's order, and an
//!   exclusive one is reused as a whole range. Both are reached once a task
//!   forks (`crate::fork`, which has the rule: the copy's order, from the
//!   source's down to 2, is the highest whose aligned block lies in the VMA
//!   with every PTE mapping the source; the reuse when every mapping of the
//!   folio is in the faulting VMA).
//! * **Reclaim** (v6.3 `shrink_folio_list`): a large folio without a PMD
//!   map is split before swap-out, as under `thp.kernel = "6.8"`; patch 07
//!   lets partially unmapped folios of any order onto the deferred split
//!   queue, as `crate::huge_memory` does for every version.
//! * **Counters**: the RFC adds none (it predates the per-size
//!   `hugepages-<size>kB/stats` of v6.9). mmsim fills the per-size stats
//!   anyway (`anon_fault_alloc`, `anon_fault_fallback`, …) so that reports
//!   and comparisons work the same under every variant.
//!
//! Sources: the RFC v2 cover letter (seed 003: the four fault paths, the
//! order-4 maximum, "VMA and PMD bounds, and state of neighboring PTEs",
//! the fallback "all the way to 0", `__GFP_NORETRY`), and, for the code of
//! `calc_anon_folio_order_alloc` (with its single scan remembering the
//! first set PTE) and `try_vma_alloc_movable_folio`, the same functions as
//! the series' June 2023 v1 carried them over from the RFC; the RFC's own
//! patch texts for patches 05 and 15 were not at hand, so the zero-page
//! rule's "none or zero-page PTEs" is mmsim's reading of the cover letter.

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::huge_memory::{suitable, ThpConfig, ThpGfp, ThpSizeEnabled, MIN_THP_ORDER, PMD_ORDER};
use crate::mem::pagetable::{VmaId, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::sim::Sim;

/// The RFC v2's hard-coded maximum anonymous folio order (64 KiB).
pub(crate) const RFC_MAX_ORDER: u8 = 4;

/// Which kernel's large-folio rules to follow: `"6.8"`, `"6.12"`, `"6.13"`
/// or `"rfc-v2"` (a TOML number, as `--set thp.kernel=6.8` writes it, is
/// read the same).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum ThpKernel {
    /// v6.8 (multi-size THP merged): PTE-mapped large folios are split
    /// before swap-out; only PMD size can be swapped out whole.
    #[serde(rename = "6.8")]
    V6_8,
    /// v6.12: any order is swapped out whole when slots allow (v6.10+), and
    /// a swap fault on a SWP_SYNCHRONOUS_IO device (zram) reads a large
    /// folio back whole (`alloc_swap_folio`, v6.12).
    #[default]
    #[serde(rename = "6.12")]
    V6_12,
    /// v6.13: as 6.12 (mmsim models no 6.13 change yet; 6.13's
    /// `do_huge_zero_wp_pmd` is not modelled).
    #[serde(rename = "6.13")]
    V6_13,
    /// Seed 003's RFC v2 on v6.3-rc6 (see the module overview): every
    /// anonymous write fault tries a folio of `thp.arch_order`; no per-size
    /// controls; reclaim splits as 6.8 does.
    #[serde(rename = "rfc-v2")]
    RfcV2,
}

impl<'de> Deserialize<'de> for ThpKernel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(f64),
        }
        let v = match Raw::deserialize(d)? {
            Raw::Text(s) => s,
            Raw::Number(n) => format!("{n}"),
        };
        match v.as_str() {
            "6.8" => Ok(ThpKernel::V6_8),
            "6.12" => Ok(ThpKernel::V6_12),
            "6.13" => Ok(ThpKernel::V6_13),
            "rfc-v2" => Ok(ThpKernel::RfcV2),
            _ => Err(serde::de::Error::custom(format!(
                "unknown kernel `{v}`, expected \"6.8\", \"6.12\", \"6.13\" or \"rfc-v2\""
            ))),
        }
    }
}

/// The default `thp.arch_order`: arm64's contiguous-bit order with 4 KiB
/// pages, the order the RFC uses.
pub(crate) fn arch_order_default() -> u8 {
    RFC_MAX_ORDER
}

pub(crate) fn is_arch_order_default(v: &u8) -> bool {
    *v == RFC_MAX_ORDER
}

/// The per-size directories below PMD size, by order and sysfs name.
const SIZE_NAMES: [(u8, &str); 7] = [
    (2, "16kB"),
    (3, "32kB"),
    (4, "64kB"),
    (5, "128kB"),
    (6, "256kB"),
    (7, "512kB"),
    (8, "1024kB"),
];

/// The checks of `thp.kernel = "rfc-v2"` and `thp.arch_order`: the order is
/// 0 or 2..=4; it means something under the RFC only; the RFC has no
/// per-size controls, so a per-size setting other than the default
/// (`never`, and `inherit` for PMD size) is an error rather than ignored.
pub(crate) fn validate_rfc(cfg: &ThpConfig) -> Result<(), ConfigError> {
    if cfg.kernel != ThpKernel::RfcV2 {
        if cfg.arch_order != RFC_MAX_ORDER {
            return Err(ConfigError::new(
                "machine.thp.arch_order",
                "the architecture's preferred order (`arch_wants_pte_order`) is a setting of \
                 the RFC variant only: set machine.thp.kernel = \"rfc-v2\" too (6.8+ choose \
                 orders with the per-size hugepages-<size>kB.enabled)",
            ));
        }
        return Ok(());
    }
    if cfg.arch_order == 1 || cfg.arch_order > RFC_MAX_ORDER {
        return Err(ConfigError::new(
            "machine.thp.arch_order",
            format!(
                "{} is out of range (allowed: 0 or 2..=4: anonymous large folios are at least \
                 order 2, and the RFC v2 caps the order at 4)",
                cfg.arch_order
            ),
        ));
    }
    for (o, name) in SIZE_NAMES {
        if cfg.size(o) != ThpSizeEnabled::Never {
            return Err(ConfigError::new(
                format!("machine.thp.hugepages-{name}.enabled"),
                "the RFC v2 (thp.kernel = \"rfc-v2\") has no per-size controls: its order is \
                 machine.thp.arch_order (default 4, 64 KiB), tried in every anonymous VMA",
            ));
        }
    }
    if cfg.size(PMD_ORDER) != ThpSizeEnabled::Inherit {
        return Err(ConfigError::new(
            "machine.thp.hugepages-2048kB.enabled",
            "the RFC v2 (thp.kernel = \"rfc-v2\", on v6.3) has no per-size controls: PMD-size \
             THP follows the top-level machine.thp.enabled",
        ));
    }
    Ok(())
}

/// The RFC's large-folio order for the run: `thp.arch_order` under
/// `rfc-v2`, else 0 (the RFC path off).
pub(crate) fn rfc_order(cfg: &ThpConfig) -> u8 {
    if cfg.kernel == ThpKernel::RfcV2 {
        cfg.arch_order.min(RFC_MAX_ORDER)
    } else {
        0
    }
}

/// `try_vma_alloc_movable_folio`'s gfp for orders above 0: `GFP_HIGHUSER_MOVABLE`
/// (kswapd wakeup and direct reclaim) with `__GFP_NORETRY`; the charge is
/// `GFP_KERNEL` (may reclaim); `vma_alloc_folio` adds `__GFP_COMP`.
pub(crate) const RFC_GFP: ThpGfp = ThpGfp {
    direct: true,
    kswapd: true,
    noretry: true,
    mask: crate::gfp::GFP_HIGHUSER_MOVABLE | crate::gfp::__GFP_NORETRY | crate::gfp::__GFP_COMP,
};

/// The RFC v2 fault paths (mm/memory.c with the RFC's patches 03, 06 and 15).
impl Sim {
    /// `calc_anon_folio_order_alloc` (RFC v2 patch 06): the highest order
    /// from the RFC's order down to 2 whose aligned block around `index`
    /// lies in the VMA and has only none PTEs (or, for the zero-page write
    /// of patch 15, `zero_ok`, PTEs mapping the zero page); else 0.
    pub(crate) fn calc_anon_folio_order_alloc(&self, vma: VmaId, index: u32, zero_ok: bool) -> u8 {
        let v = &self.vmas[vma as usize];
        let zero = self.zero_folio;
        let mut order = self.thp.rfc_order;
        while order >= MIN_THP_ORDER {
            let start = index & !((1u32 << order) - 1);
            if suitable(v.len, index, order) {
                let end = (start as usize + (1 << order)).min(v.ptes.len());
                let free = |&p: &u32| {
                    p == 0 || (zero_ok && p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == zero)
                };
                if v.ptes
                    .get(start as usize..end)
                    .is_none_or(|r| r.iter().all(free))
                {
                    return order;
                }
            }
            order -= 1;
        }
        0
    }

    /// The RFC's part of an anonymous write fault on the none PTE `index`
    /// (after the PMD path) or of a write to the zero page (`zero_ok`): the
    /// order of `calc_anon_folio_order_alloc`, then
    /// `try_vma_alloc_movable_folio`'s chain down to order 2 on buddy
    /// failures (`anon_fault_fallback` of each order tried); the folio is
    /// charged, zeroed and mapped over its whole block. Returns false when
    /// the fault is left to the order-0 path (no order fits, every order
    /// failed in the buddy allocator, or the charge failed: see the module
    /// overview), true when a large folio was mapped or the task died.
    pub(crate) fn do_anonymous_rfc(&mut self, vma: VmaId, index: u32, zero_ok: bool) -> bool {
        let mut order = self.calc_anon_folio_order_alloc(vma, index, zero_ok);
        while order >= MIN_THP_ORDER {
            match self.alloc_charge_anon_folio(order, RFC_GFP, crate::gfp::GFP_KERNEL) {
                Ok(f) => {
                    if zero_ok {
                        // The store that replaced the zero page.
                        self.anon_wp_fault_content(f);
                    }
                    return self.map_anon_large(vma, index, f);
                }
                Err(charge) => {
                    let s = &mut self.thp.stats[order as usize];
                    s.anon_fault_fallback += 1;
                    if charge {
                        // VM_FAULT_OOM in the RFC; order 0 here.
                        s.anon_fault_fallback_charge += 1;
                        return false;
                    }
                }
            }
            order -= 1;
            if order == 1 {
                break;
            }
        }
        false
    }
}
