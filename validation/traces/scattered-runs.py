#!/usr/bin/env python3
"""Writes scattered-runs.txt.gz, the trace of the validation case file-scattered-runs:
1500 sequential runs of 4-40 pages at scattered offsets of one 256 MiB file (one run
in each 43-page slot, at a random place in it), read whole, one page per reference,
in an order drawn from zipf(0.9) over the runs; 250,000 references. Text format: one
page number per line. Deterministic (seed 15); re-run to regenerate the same file.
"""
import gzip, random

rng = random.Random(15)
RUNS, SLOT, REFS, THETA = 1500, 43, 250_000, 0.9
runs = []
for r in range(RUNS):
    n = rng.randint(4, 40)
    start = r * SLOT + rng.randint(0, SLOT - n)
    runs.append((start, n))
rng.shuffle(runs)  # popularity unrelated to position
w = [1.0 / (k + 1) ** THETA for k in range(RUNS)]
out, total = [], 0
while total < REFS:
    start, n = rng.choices(runs, weights=w)[0]
    n = min(n, REFS - total)
    out.extend(str(p) for p in range(start, start + n))
    total += n
with gzip.GzipFile("scattered-runs.txt.gz", "wb", mtime=0) as f:
    f.write(("\n".join(out) + "\n").encode())
