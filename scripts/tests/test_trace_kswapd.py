"""Tests of tools/validate/trace-kswapd.py, which counts kswapd's wakeups by the
waker's mask and the allocator's fallbacks by type and caller (VALIDATION.md, "kswapd's
wakeups in the 6.12 guest and in mmsim"). Scripted traces in the guest's tracefs text
(with a `stacktrace` trigger's lines) and in mmsim's `perf script` lines.

Run with `python3 -m pytest scripts/tests`."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("tk", ROOT / "tools" / "validate" / "trace-kswapd.py")
tk = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tk)

RA = "GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_HARDWALL|__GFP_MOVABLE"
EXTFRAG = ("page=000000009b4a685b pfn=0x13c0b alloc_order=0 fallback_order=0 pageblock_order=9 "
           "alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 change_ownership={c}")

GUEST = "\n".join([
    f"     mmsim-probe-171     [000] .....    21.467567: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=none",
    "         kswapd0-42      [000] .....    21.467774: mm_vmscan_kswapd_wake: nid=0 order=0",
    "         kswapd0-42      [000] .....    22.083567: mm_compaction_wakeup_kcompactd: nid=0 order=9 classzone_idx=DMA32   ",
    "         kswapd0-42      [000] .....    22.185186: mm_vmscan_kswapd_sleep: nid=0",
    f"     mmsim-probe-171     [000] .....    22.693885: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags={RA}",
    "         kswapd0-42      [000] .....    22.694073: mm_vmscan_kswapd_wake: nid=0 order=0",
    "     mmsim-probe-174     [000] d..3.    28.678581: <stack trace>",
    " => trace_event_raw_event_mm_page_alloc_extfrag",
    " => __rmqueue_pcplist",
    " => get_page_from_freelist",
    " => __alloc_pages_noprof",
    " => alloc_pages_mpol_noprof",
    " => pte_alloc_one+0x1d/0x90",
    " => __pte_alloc",
    f"     mmsim-probe-174     [000] d..3.    28.678582: mm_page_alloc_extfrag: {EXTFRAG.format(c=0)}",
    "     mmsim-probe-174     [000] d..3.    28.678587: <stack trace>",
    " => trace_event_raw_event_mm_page_alloc_extfrag",
    " => __rmqueue_pcplist",
    " => get_page_from_freelist",
    " => __alloc_pages_noprof",
    " => alloc_pages_mpol_noprof",
    " => allocate_slab+0x2a/0x300",
    f"     mmsim-probe-174     [000] d..3.    28.678588: mm_page_alloc_extfrag: {EXTFRAG.format(c=1)}",
])


def test_guest_wakeups_runs_and_steals_by_caller():
    r = tk.summary(GUEST, "mmsim-probe")
    assert r["wakeup"] == {("task", "0", "none"): 1, ("task", "0", RA): 1}
    assert (r["kswapd_wake"], r["kswapd_sleep"], dict(r["kcompactd"])) == (2, 1, {"9": 1})
    assert r["extfrag"] == {(0, "0<-1", "frag", "unclaimed"): 1, (0, "0<-1", "frag", "claimed"): 1}
    assert r["callers"] == {"pte_alloc_one": 1, "allocate_slab": 1}


def test_mmsim_perf_script_lines():
    text = "\n".join([
        "            anon    1002 [000]    18.275179: vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=none",
        "         kswapd0      80 [001]    18.275179: vmscan:mm_vmscan_kswapd_wake: nid=0 order=0",
        f"           cache    1000 [000]    18.303339: vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags={RA}",
        "            anon    1002 [000]    18.303339: kmem:mm_page_alloc_extfrag: " + EXTFRAG.format(c=0),
    ])
    r = tk.summary(text, "anon")
    assert r["wakeup"] == {("task", "0", "none"): 1, ("cache", "0", RA): 1}
    assert (r["kswapd_wake"], r["kswapd_sleep"]) == (1, 0)
    assert r["extfrag"] == {(0, "0<-1", "frag", "unclaimed"): 1}
    assert r["callers"] == {}
