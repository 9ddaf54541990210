//! The fallback of `__rmqueue` as v6.15 split it (mm/page_alloc.c):
//! `__rmqueue_claim()` then `__rmqueue_steal()`, with `rmqueue_bulk()`'s
//! `enum rmqueue_mode`; `machine.policy.rmqueue_fallback = "6.15"`.
//!
//! Johannes Weiner's "mm: page_alloc: don't steal single pages from biggest
//! buddy" and "mm: page_alloc: speed up fallbacks in rmqueue_bulk()" (v6.15)
//! were backported to 6.12.29 stable (Debian's changelog lists both under
//! ChangeLog-6.12.29), so the guest the validate cases ran on, Debian's
//! 6.12.107, has them. Read in Debian's linux_6.12.107 source, mm/page_alloc.c:
//! `try_to_steal_block()` (the v6.15 `try_to_claim_block()` under its
//! 6.12.y name, lines 1937–2010), `find_suitable_fallback()` (2018–2044),
//! `__rmqueue_claim()` (2199–2244), `__rmqueue_steal()` (2251–2274),
//! `__rmqueue()` (2288–2351), `rmqueue_bulk()` (2358–2388). The later v6.15
//! cleanups ("remove remnants of unlocked migratetype updates", the renames
//! of "clarify terminology in migratetype fallback code") are not in
//! 6.12.107 and change nothing modelled here.
//!
//! - `__rmqueue_claim()`: from `MAX_PAGE_ORDER` down to the request's order,
//!   at each order with a fallback block (the first type of `fallbacks[]`
//!   with one) try to claim that list's first block; an order whose fallback
//!   may not be claimed (`can_steal_fallback()` false: a movable request
//!   below `pageblock_order / 2`) ends the search. A failed claim goes on to
//!   the next lower order.
//! - `try_to_steal_block()`: a block of at least `pageblock_order` is taken
//!   whole (its pageblocks change type, no boost); a smaller one boosts the
//!   watermarks (`boost_watermark()`, at every attempt, claimed or not), then
//!   claims its pageblock when free plus alike pages reach half of it
//!   ([`Zone::count_block`]) and allocates with `__rmqueue_smallest()`;
//!   otherwise it fails and takes nothing.
//! - `__rmqueue_steal()`: the smallest fallback block from the request's
//!   order up, split, the rest left on its own type's lists; it never boosts.
//! - `__rmqueue()`'s mode: a steal makes the rest of the same
//!   `rmqueue_bulk()` go straight to `__rmqueue_steal()` (no
//!   `__rmqueue_smallest()`, no claim attempt, hence no boost); a claim
//!   returns it to normal. Each single allocation starts in normal mode.
//!
//! v6.12.0–6.12.28 (`"6.12"`, the default, `Zone::rmqueue_fallback`): the
//! largest fallback block is stolen from whatever its size, with a boost at
//! every steal below `pageblock_order` (also the single-page steal of a block
//! it may not claim and of a movable request's smallest block). Not
//! modelled in either: CMA, ALLOC_NOFRAGMENT, highatomic blocks.
//!
//! Page-table pages (`machine.pagetable_frames`) come from the per-CPU
//! unmovable list (`page_alloc/pcp.rs`), which `rmqueue_bulk()` refills a
//! batch at a time, one `__rmqueue()` a page, with per-CPU hits and no
//! `__rmqueue()` between refills, as in the kernel. Under `"6.15"` the
//! refill keeps its `enum rmqueue_mode`: one claim search per refill that
//! finds the unmovable lists empty, steal mode for the rest of the batch.
//! Under `"6.12"` (v6.12.0's `rmqueue_bulk()` keeps no mode) each page of
//! the refill that finds the unmovable lists empty does its own
//! `__rmqueue_fallback()` (a claim attempt, a boost when it steals below
//! pageblock order), until one claims a pageblock whose pages then serve
//! the rest from the unmovable lists.

use super::{MigrateType, Zone, NR_PAGE_ORDERS, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use serde::{Deserialize, Serialize};

/// Which kernel's `__rmqueue` fallback (`machine.policy.rmqueue_fallback`):
/// `"6.12"` or `"6.15"` (a TOML number, as `--set policy.rmqueue_fallback=6.15`
/// writes it, is read the same).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum RmqueueFallback {
    /// v6.12.0–6.12.28 `__rmqueue_fallback()` / `steal_suitable_fallback()`:
    /// a boost at every steal below `pageblock_order`.
    #[default]
    #[serde(rename = "6.12")]
    V6_12,
    /// v6.15 `__rmqueue_claim()` / `__rmqueue_steal()`, also 6.12.29+
    /// stable (Debian's 6.12.107): a boost only at a claim attempt.
    #[serde(rename = "6.15")]
    V6_15,
}

crate::setting_names! { RmqueueFallback, "rmqueue_fallback",
    V6_12 => "6.12",
    V6_15 => "6.15",
}

impl<'de> Deserialize<'de> for RmqueueFallback {
    /// A string or a number; anything else is refused with the allowed
    /// values (`unknown rmqueue_fallback `true`; allowed: 6.12, 6.15`).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_named(d, "rmqueue_fallback \"6.12\" or \"6.15\"")
    }
}

/// A kernel-version setting read from a string or a number (a TOML number,
/// as `--set KEY=6.15` writes it, is read as its text), parsed by `T`'s
/// `FromStr`, whose error names the allowed values; `expecting` names them
/// for serde's own errors.
pub(crate) fn deserialize_named<'de, D, T>(d: D, expecting: &'static str) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    struct V<T>(&'static str, std::marker::PhantomData<T>);
    impl<T: std::str::FromStr<Err = String>> V<T> {
        fn named<E: serde::de::Error>(v: &str) -> Result<T, E> {
            v.parse().map_err(E::custom)
        }
    }
    impl<T: std::str::FromStr<Err = String>> serde::de::Visitor<'_> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.0)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
            Self::named(v)
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
            Self::named(&format!("{v}"))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
            Self::named(&format!("{v}"))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
            Self::named(&format!("{v}"))
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<T, E> {
            Self::named(&format!("{v}"))
        }
    }
    d.deserialize_any(V(expecting, std::marker::PhantomData))
}

/// `enum rmqueue_mode` (v6.15 / 6.12.29+, no CMA): where the last
/// `__rmqueue()` of one `rmqueue_bulk()` found its page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum RmqueueMode {
    /// `RMQUEUE_NORMAL`: the request's own lists first.
    #[default]
    Normal,
    /// `RMQUEUE_STEAL`: straight to `__rmqueue_steal()`.
    Steal,
}

impl Zone {
    /// `__rmqueue` without CMA: v6.12.0's (`__rmqueue_smallest`, then
    /// `Zone::rmqueue_fallback`) or v6.15's, per `self.fallback`.
    pub(super) fn rmqueue(
        &mut self,
        order: usize,
        mt: MigrateType,
        mode: &mut RmqueueMode,
    ) -> Option<u64> {
        match self.fallback {
            RmqueueFallback::V6_12 => self
                .rmqueue_smallest(order, mt)
                .or_else(|| self.rmqueue_fallback(order, mt)),
            RmqueueFallback::V6_15 => self.rmqueue_v6_15(order, mt, mode),
        }
    }

    /// `__rmqueue()` (v6.15 / 6.12.29+): the request's lists (normal mode
    /// only), a claim, then a steal; `mode` as `rmqueue_bulk()` keeps it.
    fn rmqueue_v6_15(
        &mut self,
        order: usize,
        start: MigrateType,
        mode: &mut RmqueueMode,
    ) -> Option<u64> {
        if *mode == RmqueueMode::Normal {
            if let Some(pfn) = self.rmqueue_smallest(order, start) {
                return Some(pfn);
            }
            if let Some(pfn) = self.rmqueue_claim(order, start) {
                return Some(pfn);
            }
        }
        let pfn = self.rmqueue_steal(order, start)?;
        *mode = RmqueueMode::Steal;
        Some(pfn)
    }

    /// `__rmqueue_claim()` (v6.15 / 6.12.29+, without ALLOC_NOFRAGMENT).
    fn rmqueue_claim(&mut self, order: usize, start: MigrateType) -> Option<u64> {
        for current in (order..NR_PAGE_ORDERS).rev() {
            let Some((block_mt, can_steal)) = self.find_suitable_fallback(current, start) else {
                continue;
            };
            if !can_steal {
                break;
            }
            self.materialize_pristine(current, block_mt);
            let pfn = self.start_pfn + u64::from(self.heads[current][block_mt as usize]);
            if let Some(p) = self.try_to_steal_block(pfn, current, order, start, block_mt) {
                self.trace_extfrag(p, order, current, start, block_mt);
                return Some(p);
            }
        }
        None
    }

    /// `try_to_steal_block()` (6.12.29+; v6.15 `try_to_claim_block()`).
    fn try_to_steal_block(
        &mut self,
        pfn: u64,
        current: usize,
        order: usize,
        start: MigrateType,
        block_mt: MigrateType,
    ) -> Option<u64> {
        if current >= PAGEBLOCK_ORDER {
            self.del_from_free_list(pfn, current, block_mt);
            self.set_range_type(pfn, current, start);
            self.expand(pfn, order, current, start);
            return Some(pfn);
        }
        self.boost_watermark();
        let (free, alike) = self.count_block(pfn, start, block_mt)?;
        if free + alike < PAGEBLOCK_NR_PAGES / 2 {
            return None;
        }
        self.move_freepages_block(pfn, block_mt, start);
        self.rmqueue_smallest(order, start)
    }

    /// `__rmqueue_steal()` (v6.15 / 6.12.29+): the smallest fallback block,
    /// split on its own type's lists.
    fn rmqueue_steal(&mut self, order: usize, start: MigrateType) -> Option<u64> {
        for current in order..NR_PAGE_ORDERS {
            let Some((block_mt, _)) = self.find_suitable_fallback(current, start) else {
                continue;
            };
            self.materialize_pristine(current, block_mt);
            let pfn = self.start_pfn + u64::from(self.heads[current][block_mt as usize]);
            self.del_from_free_list(pfn, current, block_mt);
            self.expand(pfn, order, current, block_mt);
            self.trace_extfrag(pfn, order, current, start, block_mt);
            return Some(pfn);
        }
        None
    }
}
