#!/usr/bin/env python3
"""Soft-limit reclaim, round by round, from a guest's trace or mmsim's.

Reads the "SV-TR" lines of a guest console (run.sh SVTRACE=1) or a file of mmsim's
`--tracepoints 'vmscan:*'` output, and prints: the reclaim entries (kswapd wake/sleep,
direct reclaim begin/end) with what happened between them (soft-limit rounds by
reclaimer, pages they freed, pages written), then totals per round. A round is one
mem_cgroup_shrink_node() (mm/vmscan.c), which the tracepoints
mm_vmscan_memcg_softlimit_reclaim_begin/end wrap; its batches are the
mm_vmscan_lru_shrink_inactive lines at priority 0 between them.

usage: softlimit_trace.py FILE [--rounds]
"""
import collections
import re
import statistics
import sys

ENTRY = ("mm_vmscan_kswapd_wake", "mm_vmscan_kswapd_sleep",
         "mm_vmscan_direct_reclaim_begin", "mm_vmscan_direct_reclaim_end")


def events(path):
    """(time, task, event, fields, writes since the previous event) per line."""
    writes = 0
    for line in open(path, errors="replace"):
        if line.startswith("SV-TR-LOST"):
            print("guest ring buffer:", line.split(" ", 1)[1].strip())
            continue
        guest = line.startswith("SV-TR ")
        m = re.search(r"\s(\d+\.\d+): (?:vmscan:)?(\w+):", line)
        if not m:
            continue
        ev = m.group(2)
        if guest:
            w = re.search(r" W=(\d*)\s*$", line)
            writes += int(w.group(1) or 0) if w else 0
        elif ev == "mm_vmscan_write_folio":
            writes += 1
            continue
        task = line.split()[1 if guest else 0]
        task = "kswapd" if task.startswith("kswapd") else re.sub(r"-\d+$", "", task)
        yield float(m.group(1)), task, ev, dict(re.findall(r"(\w+)=(\S+)", line)), writes
        writes = 0


def main():
    path = sys.argv[1]
    rounds, open_rounds = [], {}
    between = collections.Counter()

    def flush():
        if between:
            print("    " + ", ".join(f"{k} {v}" for k, v in sorted(between.items())))
        between.clear()

    for t, task, ev, f, w in events(path):
        between["written"] += w
        cur = open_rounds.get(task)
        if cur is not None:
            cur["written"] += w
        if ev in ENTRY:
            flush()
            end = f" nr_reclaimed={f['nr_reclaimed']}" if "nr_reclaimed" in f else ""
            print(f"{t:10.3f} {task:12s} {ev[len('mm_vmscan_'):]}{end}")
        elif ev == "mm_vmscan_memcg_softlimit_reclaim_begin":
            open_rounds[task] = collections.Counter(t=t)
            open_rounds[task]["task"] = 0
        elif ev == "mm_vmscan_memcg_softlimit_reclaim_end" and cur is not None:
            cur["freed"] = int(f["nr_reclaimed"])
            rounds.append((task, cur))
            del open_rounds[task]
            between[f"rounds by {task}"] += 1
            between[f"freed by {task}'s rounds"] += cur["freed"]
        elif ev == "mm_vmscan_lru_shrink_inactive":
            if cur is not None:
                cur["batches"] += 1
                cur["scanned"] += int(f["nr_scanned"])
                cur["activated"] += int(f["nr_activate_anon"])
            else:
                between["scanned outside rounds"] += int(f["nr_scanned"])
    flush()
    print(f"rounds: {len(rounds)}")
    for k in ("batches", "scanned", "freed", "written", "activated"):
        v = [r[k] for _, r in rounds]
        if v:
            print(f"  {k:10s} total {sum(v):8d}  mean {statistics.mean(v):7.1f}  "
                  f"median {statistics.median(v):6.1f}  max {max(v)}")
    by = collections.Counter()
    for task, r in rounds:
        by[task] += r["freed"]
    print("  freed by reclaimer: " + ", ".join(f"{k} {v}" for k, v in by.most_common()))
    if "--rounds" in sys.argv:
        for task, r in rounds:
            print(f"{r['t']:10.3f} {task:12s} batches {r['batches']:4d} scanned {r['scanned']:6d} "
                  f"freed {r['freed']:3d} written {r['written']:4d} activated {r['activated']:4d}")


if __name__ == "__main__":
    main()
