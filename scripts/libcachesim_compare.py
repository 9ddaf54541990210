#!/usr/bin/env python3
"""Side-by-side: mmsim's `lru` policy against libCacheSim's LRU on the same trace.

Runs both on a libCacheSim oracleGeneral trace with unit-size entries (one entry per
object, libCacheSim's `ignore_obj_size=True`) at the given cache sizes, checks that the
miss counts are identical, and times both in the same run, alternating, reporting
medians. mmsim is timed as a whole process (`mmsim run --trace ... --json`, including
process start and trace reading); libCacheSim as its `process_trace` call only
(excluding the interpreter start and the import), which favours libCacheSim.

Usage (from the repository root, after `cargo build --release`):

    # a larger trace: the w106 u32 array as oracleGeneral records (next access -1)
    python3 scripts/libcachesim_compare.py --u32le-to-oracle \
        data/traces/cloudphysics/w106.trace.xz /tmp/w106.oracleGeneral.bin

    python3 -m venv /tmp/lcs && /tmp/lcs/bin/pip install libcachesim
    /tmp/lcs/bin/python scripts/libcachesim_compare.py \
        data/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin 1000,10000 --repeat 7
"""

import argparse
import json
import statistics
import subprocess
import sys
import time



def run_libcachesim(path, entries):
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    cache = lcs.LRU(entries)
    t0 = time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    elapsed = time.perf_counter() - t0
    return miss_ratio, elapsed


def run_mmsim(binary, path, entries):
    cmd = [binary, "run", "--trace", path, "--format", "oracle-general", "--policy", "lru",
           "--memcg-max", f"{entries}p", "--json", "--quiet"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    elapsed = time.perf_counter() - t0
    result = json.loads(out)
    return result["accesses"], result["misses"], elapsed


def u32le_to_oracle(src, dst):
    """Writes an xz-compressed little-endian u32 key array as oracleGeneral records."""
    import array
    import lzma
    import struct

    keys = array.array("I")
    keys.frombytes(lzma.open(src).read())
    rec = struct.Struct("<IQIq")
    with open(dst, "wb") as f:
        buf = bytearray()
        for i, k in enumerate(keys):
            buf += rec.pack(i, k, 4096, -1)
            if len(buf) >= 1 << 22:
                f.write(buf)
                buf.clear()
        f.write(buf)
    print(f"{dst}: {len(keys)} records")


def make_zipf(dst, requests=10_000_000, keys=1_000_000, alpha=0.9, seed=18):
    """Writes a zipf(alpha) oracleGeneral trace: `requests` records over `keys` objects.

    Deterministic (Python's Mersenne Twister seeded with `seed`, inverse CDF over the
    exact cumulative weights 1/rank^alpha by bisection): the same file on every machine.
    Rank r (1 = most popular) is object id (r * 0x9E3779B97F4A7C15) mod 2^64, sparse
    like hashed object ids, so a simulator cannot index them directly.
    """
    import bisect
    import itertools
    import random
    import struct

    cum = list(itertools.accumulate(r ** -alpha for r in range(1, keys + 1)))
    total = cum[-1]
    rng = random.Random(seed)
    rec = struct.Struct("<IQIq")
    mult = 0x9E3779B97F4A7C15
    with open(dst, "wb") as f:
        buf = bytearray()
        for i in range(requests):
            rank = bisect.bisect_left(cum, rng.random() * total) + 1
            buf += rec.pack(i, (min(rank, keys) * mult) & 0xFFFF_FFFF_FFFF_FFFF, 4096, -1)
            if len(buf) >= 1 << 22:
                f.write(buf)
                buf.clear()
        f.write(buf)
    print(f"{dst}: {requests} records, zipf({alpha}) over {keys} keys, seed {seed}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--u32le-to-oracle":
        u32le_to_oracle(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--make-zipf":
        make_zipf(sys.argv[2])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("sizes", help="comma-separated cache sizes in entries")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--mmsim", default="target/release/mmsim")
    args = ap.parse_args()
    global lcs
    import libcachesim as lcs

    print(f"libcachesim {getattr(lcs, '__version__', '?')}, trace {args.trace}")
    print("| entries | requests | mmsim misses | libCacheSim misses | mmsim s (median) "
          "| libCacheSim s (median) | mmsim req/s | libCacheSim req/s | speed ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    for entries in [int(s) for s in args.sizes.split(",")]:
        t_mm, t_lcs = [], []
        for _ in range(args.repeat):
            n, misses, t = run_mmsim(args.mmsim, args.trace, entries)
            t_mm.append(t)
            ratio, t = run_libcachesim(args.trace, entries)
            t_lcs.append(t)
        lcs_misses = round(ratio * n)
        ok &= lcs_misses == misses
        m_mm, m_lcs = statistics.median(t_mm), statistics.median(t_lcs)
        print(f"| {entries} | {n} | {misses} | {lcs_misses} | {m_mm:.4f} | {m_lcs:.4f} "
              f"| {n / m_mm / 1e6:.2f} M | {n / m_lcs / 1e6:.2f} M | {m_lcs / m_mm:.2f} |")
    if not ok:
        print("MISMATCH: miss counts differ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
