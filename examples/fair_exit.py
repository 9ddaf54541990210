#!/usr/bin/env python3
"""Runs examples/fair-exit-softlimit.toml under both schedules and prints, per schedule,
each workload's end and CPU/sleep time, and the refaults (per group) and pswpout (the
node's) before and after the short workload's exit, read from the stats sampler's
samples (every 20 ms of simulated time: "before" is the last sample at or before the
exit).

    python3 examples/fair_exit.py [path/to/mmsim]
"""
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
MMSIM = sys.argv[1] if len(sys.argv) > 1 else "mmsim"
SCENARIO = HERE / "fair-exit-softlimit.toml"


def run(text):
    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "fair-exit-softlimit.toml"
        p.write_text(text)
        out = subprocess.run([MMSIM, "run", str(p), "--json", "-q"], check=True,
                             capture_output=True, text=True).stdout
    return json.loads(out)


def refaults(stat):
    return stat.get("workingset_refault_anon", 0) + stat.get("workingset_refault_file", 0)


def report(name, r):
    ws = {w["name"]: w for w in r["workloads"]}
    exit_ns = ws["short"]["exit_ns"]
    samples = r["stats_samples"]
    paths = r["stats_memcg_paths"]
    before = [s for s in samples if s["t_ns"] <= exit_ns][-1]
    last = samples[-1]
    print(f"## {name}: runtime {r['runtime_s']:.3f} s, short exits at {exit_ns / 1e9:.3f} s "
          f"(sample at {before['t_ns'] / 1e9:.3f} s)")
    for w in ("short", "long"):
        x = ws[w]
        cpu = x.get("cpu_ns")
        extra = "" if cpu is None else f", cpu {cpu / 1e9:.3f} s, slept {x['sleep_ns'] / 1e9:.3f} s"
        print(f"  {w}: {x['events']} events, ends at {x['end_ns'] / 1e9:.3f} s{extra}")
    for g in ("/short", "/long"):
        i = paths.index(g)
        b = refaults(before["memcg"][i])
        e = refaults(r["memcg"][g])
        print(f"  {g} refaults: {b} before the exit, {e - b} after")
    b = before["vmstat"]["pswpout"]
    e = r["vmstat"]["pswpout"]
    print(f"  pswpout: {b} before the exit, {e - b} after; pswpin {r['vmstat']['pswpin']}")


text = SCENARIO.read_text()
rr = "\n".join(l for l in text.splitlines() if not l.startswith("schedule ="))
report("round-robin", run(rr))
report("fair", run(text))
