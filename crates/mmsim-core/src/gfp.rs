//! GFP flags (include/linux/gfp_types.h, Linux v6.12) and their names as the
//! tracepoints print them (`show_gfp_flags`, include/trace/events/mmflags.h,
//! v6.12), so that mmsim's `gfp_mask=` / `gfp_flags=` fields read exactly as a
//! 6.12 kernel's `perf script` lines do.
//!
//! What was verified: the `___GFP_*` bit values (v6.12 numbers them with an
//! enum, `___GFP_DMA_BIT` …, whose values are the same as the older
//! `#define ___GFP_DMA 0x01u` … list: bit 9 is unused, `___GFP_ACCOUNT` is
//! bit 22, `___GFP_ZEROTAGS` bit 23; the KASAN, lockdep and `NO_OBJ_EXT`
//! bits above them are off or 0 on the x86-64 configurations modelled, so
//! `__GFP_SKIP_KASAN` in `GFP_HIGHUSER_MOVABLE` is 0) and the composite
//! masks (`GFP_KERNEL` … `GFP_TRANSHUGE`). The name table is v6.12's
//! hand-written `__def_gfpflag_names`: the composites from `GFP_TRANSHUGE`
//! to `__GFP_RECLAIM`'s neighbours, then the single flags in the list's own
//! order (`__GFP_HIGH`, `__GFP_IO`, `__GFP_FS`, `__GFP_NOWARN`, …,
//! `__GFP_COMP`, `__GFP_ZERO`, …, `__GFP_MOVABLE`, `__GFP_ACCOUNT`,
//! `__GFP_WRITE`, `__GFP_RECLAIM`, `__GFP_DIRECT_RECLAIM`,
//! `__GFP_KSWAPD_RECLAIM`, `__GFP_ZEROTAGS`). A later kernel ("tracing/mm:
//! ... TRACE_GFP_FLAGS", after v6.12) prints the single flags in bit order
//! instead; the 6.12 guest's lines (`GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO`
//! for an anonymous fault, `…|__GFP_NORETRY|…|__GFP_MOVABLE` for
//! readahead: `__GFP_COMP` before `__GFP_ZERO`, `__GFP_MOVABLE` last) show
//! the v6.12 order. `__print_flags` (`trace_print_flags_seq`) prints each
//! entry whose bits are all still set, clears them, joins with `|`, and
//! prints what is left as `0x%lx`; a zero mask prints `none`.

use std::fmt;

/// A `gfp_t` value.
pub type Gfp = u64;

/// `__GFP_DMA` (bit 0).
pub const __GFP_DMA: Gfp = 1 << 0;
/// `__GFP_HIGHMEM` (bit 1).
pub const __GFP_HIGHMEM: Gfp = 1 << 1;
/// `__GFP_DMA32` (bit 2).
pub const __GFP_DMA32: Gfp = 1 << 2;
/// `__GFP_MOVABLE` (bit 3).
pub const __GFP_MOVABLE: Gfp = 1 << 3;
/// `__GFP_RECLAIMABLE` (bit 4).
pub const __GFP_RECLAIMABLE: Gfp = 1 << 4;
/// `__GFP_HIGH` (bit 5).
pub const __GFP_HIGH: Gfp = 1 << 5;
/// `__GFP_IO` (bit 6).
pub const __GFP_IO: Gfp = 1 << 6;
/// `__GFP_FS` (bit 7).
pub const __GFP_FS: Gfp = 1 << 7;
/// `__GFP_ZERO` (bit 8; bit 9 is unused).
pub const __GFP_ZERO: Gfp = 1 << 8;
/// `__GFP_DIRECT_RECLAIM` (bit 10).
pub const __GFP_DIRECT_RECLAIM: Gfp = 1 << 10;
/// `__GFP_KSWAPD_RECLAIM` (bit 11).
pub const __GFP_KSWAPD_RECLAIM: Gfp = 1 << 11;
/// `__GFP_WRITE` (bit 12).
pub const __GFP_WRITE: Gfp = 1 << 12;
/// `__GFP_NOWARN` (bit 13).
pub const __GFP_NOWARN: Gfp = 1 << 13;
/// `__GFP_RETRY_MAYFAIL` (bit 14).
pub const __GFP_RETRY_MAYFAIL: Gfp = 1 << 14;
/// `__GFP_NOFAIL` (bit 15).
pub const __GFP_NOFAIL: Gfp = 1 << 15;
/// `__GFP_NORETRY` (bit 16).
pub const __GFP_NORETRY: Gfp = 1 << 16;
/// `__GFP_MEMALLOC` (bit 17).
pub const __GFP_MEMALLOC: Gfp = 1 << 17;
/// `__GFP_COMP` (bit 18).
pub const __GFP_COMP: Gfp = 1 << 18;
/// `__GFP_NOMEMALLOC` (bit 19).
pub const __GFP_NOMEMALLOC: Gfp = 1 << 19;
/// `__GFP_HARDWALL` (bit 20).
pub const __GFP_HARDWALL: Gfp = 1 << 20;
/// `__GFP_THISNODE` (bit 21).
pub const __GFP_THISNODE: Gfp = 1 << 21;
/// `__GFP_ACCOUNT` (bit 22).
pub const __GFP_ACCOUNT: Gfp = 1 << 22;
/// `__GFP_ZEROTAGS` (bit 23).
pub const __GFP_ZEROTAGS: Gfp = 1 << 23;

/// `__GFP_RECLAIM`.
pub const __GFP_RECLAIM: Gfp = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM;
/// `GFP_ATOMIC`.
pub const GFP_ATOMIC: Gfp = __GFP_HIGH | __GFP_KSWAPD_RECLAIM;
/// `GFP_KERNEL`.
pub const GFP_KERNEL: Gfp = __GFP_RECLAIM | __GFP_IO | __GFP_FS;
/// `GFP_KERNEL_ACCOUNT`.
pub const GFP_KERNEL_ACCOUNT: Gfp = GFP_KERNEL | __GFP_ACCOUNT;
/// `GFP_NOWAIT` (v6.12: `__GFP_KSWAPD_RECLAIM` alone; a later kernel adds
/// `__GFP_NOWARN` to it, which changes how a mask with both prints).
pub const GFP_NOWAIT: Gfp = __GFP_KSWAPD_RECLAIM;
/// `GFP_NOIO`.
pub const GFP_NOIO: Gfp = __GFP_RECLAIM;
/// `GFP_NOFS`.
pub const GFP_NOFS: Gfp = __GFP_RECLAIM | __GFP_IO;
/// `GFP_USER`.
pub const GFP_USER: Gfp = __GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL;
/// `GFP_DMA`.
pub const GFP_DMA: Gfp = __GFP_DMA;
/// `GFP_DMA32`.
pub const GFP_DMA32: Gfp = __GFP_DMA32;
/// `GFP_HIGHUSER`.
pub const GFP_HIGHUSER: Gfp = GFP_USER | __GFP_HIGHMEM;
/// `GFP_HIGHUSER_MOVABLE` (`__GFP_SKIP_KASAN` is 0 without KASAN_HW_TAGS).
pub const GFP_HIGHUSER_MOVABLE: Gfp = GFP_HIGHUSER | __GFP_MOVABLE;
/// `GFP_TRANSHUGE_LIGHT`.
pub const GFP_TRANSHUGE_LIGHT: Gfp =
    (GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_NOMEMALLOC | __GFP_NOWARN) & !__GFP_RECLAIM;
/// `GFP_TRANSHUGE`.
pub const GFP_TRANSHUGE: Gfp = GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM;
/// `GFP_PGTABLE_KERNEL` (include/asm-generic/pgalloc.h).
pub const GFP_PGTABLE_KERNEL: Gfp = GFP_KERNEL | __GFP_ZERO;
/// `GFP_PGTABLE_USER`: a user page table's pages, charged to the memcg.
pub const GFP_PGTABLE_USER: Gfp = GFP_PGTABLE_KERNEL | __GFP_ACCOUNT;

/// An order-0 anonymous folio of `do_anonymous_page` and of `wp_page_copy`
/// of the zero page (v6.12 `folio_prealloc(…, need_zero = true)` →
/// `vma_alloc_zeroed_movable_folio`: `GFP_HIGHUSER_MOVABLE | __GFP_ZERO`),
/// with the `__GFP_COMP` that `vma_alloc_folio` → `folio_alloc_mpol` adds to
/// every folio allocation: what the 6.12 guest's `mm_vmscan_wakeup_kswapd`
/// prints for an anonymous fault.
pub const GFP_ANON_FOLIO: Gfp = GFP_HIGHUSER_MOVABLE | __GFP_ZERO | __GFP_COMP;
/// Any other order-0 user folio (v6.12): a copy (`folio_prealloc(…, false)`:
/// `vma_alloc_folio(GFP_HIGHUSER_MOVABLE, 0, …)`), a swap-in
/// (`swapin_readahead(entry, GFP_HIGHUSER_MOVABLE, …)`), a page-cache folio
/// outside readahead (`filemap_alloc_folio(mapping_gfp_mask(mapping), 0)`;
/// the mapping's mask is `inode_init_always`'s `GFP_HIGHUSER_MOVABLE`, as
/// the guest's readahead line shows for ext4), each with `__GFP_COMP`.
pub const GFP_USER_FOLIO: Gfp = GFP_HIGHUSER_MOVABLE | __GFP_COMP;
/// A readahead folio (v6.12 mm/readahead.c): `readahead_gfp_mask(mapping)`
/// = `mapping_gfp_mask | __GFP_NORETRY | __GFP_NOWARN`, allocated inside
/// `page_cache_ra_unbounded`'s `memalloc_nofs_save()` scope, so that
/// `__alloc_pages`' `current_gfp_context` clears `__GFP_FS` before the slow
/// path sees the mask, plus `__GFP_COMP`. The 6.12 guest prints it as
/// `GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_HARDWALL|__GFP_MOVABLE`.
pub const GFP_READAHEAD: Gfp =
    ((GFP_HIGHUSER_MOVABLE | __GFP_NORETRY | __GFP_NOWARN) & !__GFP_FS) | __GFP_COMP;

/// `GFP_CONSTRAINT_MASK` (mm/internal.h, v6.12): the cpuset and node
/// constraints an allocation keeps when its mask is narrowed.
pub const GFP_CONSTRAINT_MASK: Gfp = __GFP_HARDWALL | __GFP_THISNODE;

/// `GFP_RECLAIM_MASK` (mm/internal.h, v6.12; `__GFP_NOLOCKDEP` is 0).
pub const GFP_RECLAIM_MASK: Gfp = __GFP_RECLAIM
    | __GFP_HIGH
    | __GFP_IO
    | __GFP_FS
    | __GFP_NOWARN
    | __GFP_RETRY_MAYFAIL
    | __GFP_NOFAIL
    | __GFP_NORETRY
    | __GFP_MEMALLOC
    | __GFP_NOMEMALLOC;

/// The mask memcg reclaim traces for a charge with `gfp` (v6.12 mm/vmscan.c
/// `try_to_free_mem_cgroup_pages` and `mem_cgroup_shrink_node`):
/// `(gfp & GFP_RECLAIM_MASK) | (GFP_HIGHUSER_MOVABLE & ~GFP_RECLAIM_MASK)`
/// (the former applies `current_gfp_context` first; mmsim's charges are
/// made outside any `memalloc_nofs`/`noio` scope but readahead's, whose
/// mask has `__GFP_FS` cleared already). `GFP_KERNEL` (an order-0
/// anonymous charge, `memory.high`, a knob write, kswapd's soft-limit pass)
/// gives `GFP_HIGHUSER_MOVABLE`.
pub const fn memcg_reclaim_mask(gfp: Gfp) -> Gfp {
    (gfp & GFP_RECLAIM_MASK) | (GFP_HIGHUSER_MOVABLE & !GFP_RECLAIM_MASK)
}

/// v6.12's `__def_gfpflag_names`, in its order (x86-64 without KASAN_HW_TAGS).
const NAMES: [(Gfp, &str); 36] = [
    (GFP_TRANSHUGE, "GFP_TRANSHUGE"),
    (GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"),
    (GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
    (GFP_HIGHUSER, "GFP_HIGHUSER"),
    (GFP_USER, "GFP_USER"),
    (GFP_KERNEL_ACCOUNT, "GFP_KERNEL_ACCOUNT"),
    (GFP_KERNEL, "GFP_KERNEL"),
    (GFP_NOFS, "GFP_NOFS"),
    (GFP_ATOMIC, "GFP_ATOMIC"),
    (GFP_NOIO, "GFP_NOIO"),
    (GFP_NOWAIT, "GFP_NOWAIT"),
    (GFP_DMA, "GFP_DMA"),
    (__GFP_HIGHMEM, "__GFP_HIGHMEM"),
    (GFP_DMA32, "GFP_DMA32"),
    (__GFP_HIGH, "__GFP_HIGH"),
    (__GFP_IO, "__GFP_IO"),
    (__GFP_FS, "__GFP_FS"),
    (__GFP_NOWARN, "__GFP_NOWARN"),
    (__GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"),
    (__GFP_NOFAIL, "__GFP_NOFAIL"),
    (__GFP_NORETRY, "__GFP_NORETRY"),
    (__GFP_COMP, "__GFP_COMP"),
    (__GFP_ZERO, "__GFP_ZERO"),
    (__GFP_NOMEMALLOC, "__GFP_NOMEMALLOC"),
    (__GFP_MEMALLOC, "__GFP_MEMALLOC"),
    (__GFP_HARDWALL, "__GFP_HARDWALL"),
    (__GFP_THISNODE, "__GFP_THISNODE"),
    (__GFP_RECLAIMABLE, "__GFP_RECLAIMABLE"),
    (__GFP_MOVABLE, "__GFP_MOVABLE"),
    (__GFP_ACCOUNT, "__GFP_ACCOUNT"),
    (__GFP_WRITE, "__GFP_WRITE"),
    (__GFP_RECLAIM, "__GFP_RECLAIM"),
    (__GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"),
    (__GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"),
    (__GFP_ZEROTAGS, "__GFP_ZEROTAGS"),
    (0, ""),
];

/// `show_gfp_flags(flags)` as a `Display` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShowGfp(pub Gfp);

impl fmt::Display for ShowGfp {
    /// `__print_flags(flags, "|", __def_gfpflag_names)`, or `none` for 0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut flags = self.0;
        if flags == 0 {
            return f.write_str("none");
        }
        let mut first = true;
        for &(mask, name) in NAMES.iter().take_while(|(m, _)| *m != 0) {
            if flags == 0 {
                break;
            }
            if flags & mask != mask {
                continue;
            }
            flags &= !mask;
            if !first {
                f.write_str("|")?;
            }
            first = false;
            f.write_str(name)?;
        }
        if flags != 0 {
            if !first {
                f.write_str("|")?;
            }
            write!(f, "{flags:#x}")?;
        }
        Ok(())
    }
}

/// `gfp_zone(flags)` (include/linux/gfp.h, v6.12, `GFP_ZONE_TABLE` on
/// x86-64: no ZONE_HIGHMEM, so `__GFP_HIGHMEM` alone is ZONE_NORMAL): the
/// allocation's `highest_zoneidx` (`ac->highest_zoneidx`) as the
/// compaction tracepoints' `ZONE_TYPE` index (0 DMA, 1 DMA32, 2 Normal,
/// 3 Movable). Only `__GFP_HIGHMEM | __GFP_MOVABLE` reaches ZONE_MOVABLE.
pub fn gfp_zone(flags: Gfp) -> u8 {
    if flags & __GFP_DMA != 0 {
        0
    } else if flags & __GFP_DMA32 != 0 {
        1
    } else if flags & (__GFP_HIGHMEM | __GFP_MOVABLE) == __GFP_HIGHMEM | __GFP_MOVABLE {
        3
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(g: Gfp) -> String {
        ShowGfp(g).to_string()
    }

    #[test]
    fn bits_are_v6_12s() {
        // The `#define ___GFP_*` values of gfp_types.h (same bits as v6.12's enum).
        let bits = [
            (__GFP_DMA, 0x01),
            (__GFP_HIGHMEM, 0x02),
            (__GFP_DMA32, 0x04),
            (__GFP_MOVABLE, 0x08),
            (__GFP_RECLAIMABLE, 0x10),
            (__GFP_HIGH, 0x20),
            (__GFP_IO, 0x40),
            (__GFP_FS, 0x80),
            (__GFP_ZERO, 0x100),
            (__GFP_DIRECT_RECLAIM, 0x400),
            (__GFP_KSWAPD_RECLAIM, 0x800),
            (__GFP_WRITE, 0x1000),
            (__GFP_NOWARN, 0x2000),
            (__GFP_RETRY_MAYFAIL, 0x4000),
            (__GFP_NOFAIL, 0x8000),
            (__GFP_NORETRY, 0x10000),
            (__GFP_MEMALLOC, 0x20000),
            (__GFP_COMP, 0x40000),
            (__GFP_NOMEMALLOC, 0x80000),
            (__GFP_HARDWALL, 0x100000),
            (__GFP_THISNODE, 0x200000),
            (__GFP_ACCOUNT, 0x400000),
            (__GFP_ZEROTAGS, 0x800000),
        ];
        for (g, v) in bits {
            assert_eq!(g, v);
        }
        assert_eq!(GFP_KERNEL, 0xcc0);
        assert_eq!(GFP_HIGHUSER_MOVABLE, 0x100cca);
        assert_eq!(GFP_TRANSHUGE_LIGHT, 0x1c20ca);
        assert_eq!(GFP_TRANSHUGE, 0x1c24ca);
        assert_eq!(GFP_PGTABLE_USER, 0x400dc0);
    }

    #[test]
    fn names_print_as_show_gfp_flags_does() {
        assert_eq!(show(0), "none");
        assert_eq!(
            show(GFP_TRANSHUGE | __GFP_NORETRY),
            "GFP_TRANSHUGE|__GFP_NORETRY"
        );
        assert_eq!(show(GFP_TRANSHUGE), "GFP_TRANSHUGE");
        // v6.12's GFP_NOWAIT is __GFP_KSWAPD_RECLAIM alone: the leftover
        // kswapd bit prints as GFP_NOWAIT (a kernel whose GFP_NOWAIT has
        // __GFP_NOWARN, which GFP_TRANSHUGE_LIGHT took, prints the bit).
        assert_eq!(
            show(GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM),
            "GFP_TRANSHUGE_LIGHT|GFP_NOWAIT"
        );
        assert_eq!(show(GFP_TRANSHUGE_LIGHT), "GFP_TRANSHUGE_LIGHT");
        // The 6.12 guest's anonymous fault: __GFP_COMP before __GFP_ZERO.
        assert_eq!(
            show(GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_ZERO),
            "GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO"
        );
        // Readahead under memalloc_nofs_save: GFP_NOFS first, __GFP_MOVABLE last.
        let ra = ((GFP_HIGHUSER_MOVABLE & !__GFP_FS) | __GFP_NORETRY | __GFP_NOWARN) | __GFP_COMP;
        assert_eq!(
            show(ra),
            "GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_HARDWALL|__GFP_MOVABLE"
        );
        assert_eq!(
            show(GFP_PGTABLE_USER | __GFP_COMP),
            "GFP_KERNEL_ACCOUNT|__GFP_COMP|__GFP_ZERO"
        );
        assert_eq!(show(__GFP_KSWAPD_RECLAIM), "GFP_NOWAIT");
        assert_eq!(show(GFP_NOWAIT | __GFP_NOWARN), "GFP_NOWAIT|__GFP_NOWARN");
        assert_eq!(show(__GFP_RECLAIM), "GFP_NOIO");
        // The unused bit 9 is printed as the leftover.
        assert_eq!(show(GFP_KERNEL | 0x200), "GFP_KERNEL|0x200");
        assert_eq!(show(0x200), "0x200");
    }

    #[test]
    fn gfp_zone_is_x86_64s() {
        assert_eq!(gfp_zone(GFP_HIGHUSER_MOVABLE), 3);
        assert_eq!(gfp_zone(GFP_TRANSHUGE), 3);
        assert_eq!(gfp_zone(GFP_HIGHUSER), 2);
        assert_eq!(gfp_zone(GFP_KERNEL), 2);
        assert_eq!(gfp_zone(GFP_PGTABLE_USER), 2);
        assert_eq!(gfp_zone(GFP_KERNEL | __GFP_MOVABLE), 2);
        assert_eq!(gfp_zone(GFP_KERNEL | __GFP_DMA32), 1);
        assert_eq!(gfp_zone(GFP_KERNEL | __GFP_DMA), 0);
    }
}
