"""What a sweep costs beyond its runs (BENCHMARKS.md, "Python sweeps").

    python python/benchmarks/sweep_bench.py [--ray] [--points 200] [--accesses 30000]

1. The sum of single runs: every point run one after another in this process
   (``mmsim.run``), the total wall time.
2. The local sweep of the same points on every core (``mmsim.sweep``, a process
   pool, each point appended to Parquet): its wall time, and the speed-up over 1.
3. With ``--ray``: the same sweep on a Ray cluster started on loopback (a head
   without CPUs and one worker node per core), and the sweep of as many
   near-empty points (1,000 accesses), whose wall time is almost all per-point
   overhead: task submission, scheduling, the result's return, the Parquet part.

Points: a small two-workload scenario (zipf file reads and uniform anonymous
accesses with zram swap in 64M; ``--accesses`` per workload), 4 policies x N/4
seeds. Points of a few milliseconds measure the pool's start-up (each worker
imports mmsim, pandas and pyarrow) as much as the runs; larger points show the
speed-up the cores give. Each measurement runs
once: timing loops would only measure the other tenants of a shared machine.
"""

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import mmsim  # noqa: E402
from mmsim.sweep import points  # noqa: E402

SCENARIO = """\
seed = 4
[machine]
memory = "64M"
swappiness = 100
[machine.swap]
device = "zram"
size = "64M"
[[workload]]
kind = "zipf"
target = "file"
pages = "96M"
theta = 0.9
accesses = {n}
[[workload]]
kind = "uniform"
target = "anon"
pages = "48M"
accesses = {n}
"""


def cpu():
    """CPU seconds (user + system) of this process and its finished children."""
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def grid(path, points):
    return {"scenario": [path], "policy": ["lru", "scanned-rotated", "cost", "mglru"],
            "seed": list(range(1, points // 4 + 1))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--ray", action="store_true")
    ap.add_argument("--accesses", type=int, default=30000,
                    help="accesses per workload of each point")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mmsim-sweep-bench-")
    path = os.path.join(tmp, "small.toml")
    with open(path, "w") as f:
        f.write(SCENARIO.format(n=a.accesses))
    tiny = os.path.join(tmp, "tiny.toml")
    with open(tiny, "w") as f:
        f.write(SCENARIO.format(n=500))
    g = grid(path, a.points)
    pts = points(g)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}", flush=True)

    t, c = time.perf_counter(), cpu()
    for p in pts:
        p = dict(p)
        mmsim.run(p.pop("scenario"), **p)
    serial, serial_cpu = time.perf_counter() - t, cpu() - c
    print(f"sum of {len(pts)} single runs (one after another): {serial:.2f} s wall, "
          f"{serial_cpu:.2f} s CPU ({serial / len(pts) * 1000:.1f} ms per run)", flush=True)

    t, c = time.perf_counter(), cpu()
    df = mmsim.sweep(g, out=os.path.join(tmp, "local"), progress=False)
    local, local_cpu = time.perf_counter() - t, cpu() - c
    print(f"local sweep, {os.cpu_count()} worker processes: {local:.2f} s wall "
          f"(speed-up {serial / local:.2f}x), {local_cpu:.2f} s CPU (overhead "
          f"{(local_cpu - serial_cpu) / len(pts) * 1000:.1f} ms CPU per point); "
          f"{len(df)} rows; a run inside the sweep took {df.elapsed_s.mean() * 1000:.1f} ms "
          f"on average", flush=True)

    if a.ray:
        from ray.cluster_utils import Cluster
        import ray

        c = Cluster(initialize_head=True,
                    head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                    "include_dashboard": False})
        for _ in range(os.cpu_count()):
            c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        c.wait_for_nodes()
        ray.init(address=c.address)
        # Warm the workers (their first task imports mmsim, pandas and pyarrow).
        mmsim.sweep(grid(tiny, 4 * os.cpu_count()), backend="ray", progress=False)
        t = time.perf_counter()
        mmsim.sweep(g, backend="ray", out=os.path.join(tmp, "ray"), progress=False)
        r = time.perf_counter() - t
        print(f"ray sweep, {os.cpu_count()} worker nodes: {r:.2f} s; speed-up "
              f"{serial / r:.2f}x", flush=True)
        gt = grid(tiny, a.points)
        t = time.perf_counter()
        mmsim.sweep(gt, backend="ray", out=os.path.join(tmp, "ray-tiny"), progress=False)
        rt = time.perf_counter() - t
        t = time.perf_counter()
        for p in points(gt):
            p = dict(p)
            mmsim.run(p.pop("scenario"), **p)
        st = time.perf_counter() - t
        per = (rt * os.cpu_count() - st) / a.points
        print(f"ray sweep of {a.points} near-empty points: {rt:.2f} s (their runs alone "
              f"{st:.2f} s): overhead {per * 1000:.1f} ms per point per core", flush=True)
        ray.shutdown()
        c.shutdown()
    shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
