"""Tests of tools/validate/trace-compaction.py, which tells from the 6.12 guest's
tracepoints how each direct compaction ended (VALIDATION.md, "compact_success in the
6.12 guest, traced"). Scripted traces of one call each, in the text format of
/sys/kernel/tracing/trace.

Run with `python3 -m pytest scripts/tests`."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("tc", ROOT / "tools" / "validate" / "trace-compaction.py")
tc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tc)

P = "     mmsim-probe-173     [000] .....   {ts}: {ev}: {args}"
TRY = "order=4 gfp_mask=GFP_TRANSHUGE|__GFP_NORETRY priority=2"
BEGIN = "zone_start=0x1000 migrate_pfn=0x1400 free_pfn=0x1fbd6 zone_end=0x1ffd7, mode=async"


def end(status, mig="0x2420"):
    return f"zone_start=0x1000 migrate_pfn={mig} free_pfn=0x1fbd6 zone_end=0x1ffd7, mode=async status={status}"


def reset(zone, consider, limit):
    return f"node=0 zone={zone:<8} order=4 order_failed=9 consider={consider} limit={limit}"


def trace(*events):
    return "\n".join(P.format(ts=f"{1.0 + i / 1000:.6f}", ev=e, args=a) for i, (e, a) in enumerate(events))


def one(*events):
    calls = tc.calls(tc.parse(trace(*events)), "mmsim-probe")
    assert len(calls) == 1
    return tc.classify(calls[0])


def test_a_captured_block_is_a_success_by_capture():
    # compact_zone's `capc->page` break: status success, no finished(success);
    # try_to_compact_pages' reset, then __alloc_pages_direct_compact's.
    r = one(("mm_compaction_try_to_compact_pages", TRY),
            ("mm_compaction_suitable", "node=0 zone=DMA32    order=4 ret=continue"),
            ("mm_compaction_begin", BEGIN),
            ("mm_compaction_migratepages", "nr_migrated=16 nr_failed=0"),
            ("mm_compaction_end", end("success")),
            ("mm_compaction_defer_reset", reset("DMA32", 2, 8)),
            ("mm_compaction_defer_reset", reset("DMA32", 0, 1)),
            ("mm_page_alloc", "page=0 pfn=0x2410 order=4 migratetype=1 gfp_flags=GFP_TRANSHUGE|__GFP_NORETRY"))
    assert r == (True, True, "capture", 8)


def test_compact_finished_free_list_success():
    r = one(("mm_compaction_try_to_compact_pages", TRY),
            ("mm_compaction_suitable", "node=0 zone=DMA32    order=4 ret=continue"),
            ("mm_compaction_begin", BEGIN),
            ("mm_compaction_finished", "node=0 zone=DMA32    order=4 ret=success"),
            ("mm_compaction_end", end("success")),
            ("mm_compaction_defer_reset", reset("DMA32", 0, 1)),
            ("mm_compaction_defer_reset", reset("DMA32", 0, 1)))
    assert r == (True, True, "compact_finished", 8)


def test_a_zone_that_passes_the_watermark_at_the_start_is_silent():
    # compaction_suit_allocation_order's COMPACT_SUCCESS has no tracepoint: only the
    # two resets tell it.
    r = one(("mm_compaction_try_to_compact_pages", TRY),
            ("mm_compaction_defer_reset", reset("DMA32", 0, 1)),
            ("mm_compaction_defer_reset", reset("DMA32", 0, 1)))
    assert r == (True, True, "watermark_ok_at_start", 8)


def test_scanners_met_without_a_page_is_a_failed_stall():
    r = one(("mm_compaction_try_to_compact_pages", TRY),
            ("mm_compaction_suitable", "node=0 zone=DMA32    order=4 ret=continue"),
            ("mm_compaction_begin", BEGIN.replace("0x1400", "0x1000")),
            ("mm_compaction_finished", "node=0 zone=DMA32    order=4 ret=complete"),
            ("mm_compaction_end", end("complete", "0x1fe00")),
            ("mm_compaction_suitable", "node=0 zone=DMA      order=4 ret=skipped"),
            ("mm_vmscan_direct_reclaim_begin", "order=4 gfp_flags=GFP_TRANSHUGE|__GFP_NORETRY"))
    assert r == (True, False, "status=DMA32:complete+DMA:skipped", 5)


def test_every_zone_skipped_is_no_stall():
    r = one(("mm_compaction_try_to_compact_pages", TRY),
            ("mm_compaction_suitable", "node=0 zone=DMA32    order=4 ret=skipped"),
            ("mm_compaction_suitable", "node=0 zone=DMA      order=4 ret=skipped"))
    assert r[:2] == (False, False)
