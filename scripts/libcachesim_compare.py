#!/usr/bin/env python3
"""Side-by-side: mmsim's `lru` policy against libCacheSim's LRU on the same trace.

Runs both on a libCacheSim oracleGeneral trace with unit-size entries (one entry per
object, libCacheSim's `ignore_obj_size=True`) at the given cache sizes, checks that the
miss counts are identical, and times both in the same run, alternating, reporting
medians of wall and CPU (user + system) time. mmsim is timed as a whole process
(`mmsim run --trace ... --json`, including process start and trace reading);
libCacheSim as its `process_trace` call only (excluding the interpreter start and the
import), which favours libCacheSim. On a shared machine CPU time is the steadier
measure: wall time counts the time other processes hold the cores.

Usage (from the repository root, after `cargo build --release`):

    # a larger trace: the w106 u32 array as oracleGeneral records (next access -1)
    python3 scripts/libcachesim_compare.py --u32le-to-oracle \
        data/traces/cloudphysics/w106.trace.xz /tmp/w106.oracleGeneral.bin

    python3 -m venv /tmp/lcs && /tmp/lcs/bin/pip install libcachesim==0.3.5
    /tmp/lcs/bin/python scripts/libcachesim_compare.py \
        data/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin 1000,10000 --repeat 7

    # issue #18's trace: 10 M requests, zipf(0.9) over 1 M keys (deterministic, 240 MB),
    # at 10 % (100,000 entries), the kernel policies too, on files and on anon memory
    python3 scripts/libcachesim_compare.py --make-zipf /tmp/zipf.oracleGeneral.bin
    /tmp/lcs/bin/python scripts/libcachesim_compare.py /tmp/zipf.oracleGeneral.bin 100000 \
        --repeat 3 --policies lru,cost,mglru --as file,anon

    # the same with mmsim reading a native copy with dense keys (no key table)
    target/release/mmsim trace convert /tmp/zipf.oracleGeneral.bin \
        --format oracle-general /tmp/zipf.dense.native --dense-keys
    /tmp/lcs/bin/python scripts/libcachesim_compare.py /tmp/zipf.oracleGeneral.bin 100000 \
        --repeat 3 --policies lru,cost,mglru --as file,anon \
        --mmsim-trace /tmp/zipf.dense.native --mmsim-format native

Only `lru` is checked against libCacheSim's miss count (the kernel policies `cost` and
`mglru` are different algorithms); every row is timed against libCacheSim's LRU.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time



def run_libcachesim(path, entries):
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    cache = lcs.LRU(entries)
    t0, c0 = time.perf_counter(), time.process_time()
    miss_ratio, _ = cache.process_trace(reader)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return miss_ratio, elapsed, cpu


def run_mmsim(binary, path, entries, policy="lru", target=None, fmt="oracle-general"):
    cmd = [binary, "run", "--trace", path, "--format", fmt, "--policy", policy,
           "--memcg-max", f"{entries}p", "--json", "--quiet"]
    if target:
        cmd += ["--as", target]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    elapsed = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    result = json.loads(out)
    return result["accesses"], result["misses"], elapsed, cpu


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
    ap.add_argument("--policies", default="lru",
                    help="comma-separated mmsim policies (lru, cost, mglru, ...)")
    ap.add_argument("--as", dest="targets", default="",
                    help="comma-separated mmsim --as targets (file, anon); default: none given")
    ap.add_argument("--mmsim-trace", help="the trace mmsim reads, if not TRACE (e.g. a "
                    "native copy from `mmsim trace convert --dense-keys`)")
    ap.add_argument("--mmsim-format", default="oracle-general")
    args = ap.parse_args()
    global lcs
    import libcachesim as lcs

    mm_trace = args.mmsim_trace or args.trace
    policies = args.policies.split(",")
    targets = args.targets.split(",") if args.targets else [None]
    configs = [(p, t) for t in targets for p in policies]
    print(f"libcachesim {getattr(lcs, '__version__', '?')}, trace {args.trace}"
          + (f", mmsim reads {mm_trace} as {args.mmsim_format}" if args.mmsim_trace else ""))
    print("| entries | policy | as | requests | mmsim misses | libCacheSim LRU misses "
          "| mmsim wall s | libCacheSim wall s | wall ratio | mmsim CPU s | libCacheSim CPU s "
          "| CPU ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for entries in [int(s) for s in args.sizes.split(",")]:
        t_mm = {c: [] for c in configs}
        c_mm = {c: [] for c in configs}
        res = {}
        t_lcs, c_lcs = [], []
        # Alternating: libCacheSim, then every mmsim configuration, `repeat` times.
        for _ in range(args.repeat):
            ratio, t, cpu = run_libcachesim(args.trace, entries)
            t_lcs.append(t)
            c_lcs.append(cpu)
            for c in configs:
                n, misses, t, cpu = run_mmsim(args.mmsim, mm_trace, entries, c[0], c[1],
                                              args.mmsim_format)
                t_mm[c].append(t)
                c_mm[c].append(cpu)
                res[c] = (n, misses)
        m_lcs, mc_lcs = statistics.median(t_lcs), statistics.median(c_lcs)
        for c in configs:
            n, misses = res[c]
            lcs_misses = round(ratio * n)
            if c[0] == "lru":
                ok &= lcs_misses == misses
            m_mm, mc_mm = statistics.median(t_mm[c]), statistics.median(c_mm[c])
            print(f"| {entries} | {c[0]} | {c[1] or '-'} | {n} | {misses} | {lcs_misses} "
                  f"| {m_mm:.3f} | {m_lcs:.3f} | {m_lcs / m_mm:.2f} "
                  f"| {mc_mm:.3f} | {mc_lcs:.3f} | {mc_lcs / mc_mm:.2f} |", flush=True)
    if not ok:
        print("MISMATCH: lru miss counts differ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
