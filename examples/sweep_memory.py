"""Sweep the memory limit and the reclaim policy on a shipped trace and plot the
miss-ratio and refault curves (docs/sweep_memory.png).

    pip install ./python matplotlib
    python examples/sweep_memory.py            # from the repository's root

The trace is LIRS's `sprite` (data/traces/lirs/sprite.trace.gz: 133,996 page
references over 7,075 distinct pages), replayed as file reads in a memory cgroup
whose memory.max is swept from 3 % to 100 % of the footprint, under the four
reclaim policies. Each point is one `mmsim run --trace ... --policy P --memcg-max
Np --json`; the sweep runs them on every local core, appending each finished
point to sweep_memory.parquet (run it again: nothing is redone). Beside the
simulated policies, the dashed line is the exact plain-LRU miss-ratio curve from
one pass over the trace (`mmsim.trace.info`), which the `lru` policy's points
must lie on. The refault panel leaves `lru` out: the textbook LRU keeps no
shadow entries, so it sees no refault.
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import mmsim  # noqa: E402

TRACE = "data/traces/lirs/sprite.trace.gz"
SIZES = [250, 500, 750, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 7100]
POLICIES = ["lru", "scanned-rotated", "cost", "mglru"]


def main(out_png: str = "docs/sweep_memory.png", store: str = "target/sweep_memory.parquet"):
    grid = {
        "trace": [TRACE],
        "policy": POLICIES,
        "memcg_max": [f"{n}p" for n in SIZES],
    }
    df = mmsim.sweep(grid, out=store)
    df["pages"] = df["memcg_max"].str.rstrip("p").astype(int)
    info = mmsim.trace.info(TRACE, sizes=SIZES)
    mrc = info.mrc

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for policy, g in df.groupby("policy", sort=False):
        g = g.sort_values("pages")
        ax1.plot(g["pages"], g["miss_ratio"], marker="o", ms=3, label=policy)
        if policy != "lru":  # textbook LRU keeps no shadow entries: no refault is seen
            ax2.plot(g["pages"], g["workingset_refault_file"], marker="o", ms=3, label=policy)
    ax1.plot(mrc["entries"], mrc["miss_ratio"], "k--", lw=1, label="LRU (stack distances)")
    ax1.set(xlabel="memory.max (pages)", ylabel="miss ratio",
            title=f"{os.path.basename(TRACE)}: miss ratio")
    ax2.set(xlabel="memory.max (pages)", ylabel="workingset_refault_file",
            title="refaults: evicted pages read again (workingset shadows)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.savefig(out_png, dpi=110)
    print(f"{len(df)} points; plot in {out_png}")
    print(df.pivot(index="pages", columns="policy", values="miss_ratio").round(4))


if __name__ == "__main__":
    main(*sys.argv[1:])
