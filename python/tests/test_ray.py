"""mmsim.sweep on a real Ray cluster: a head on loopback and two worker nodes
(ray.cluster_utils.Cluster starts a real GCS and three raylets), a sweep whose
driver is killed with kill -9 and started again; every point once, traces shipped
through the object store, results equal to the CLI's."""

import os
import signal
import subprocess
import sys
import time

import pytest

# Ray rewrites a loopback address to the machine's outward IP (for clusters that span
# machines); this switch, read when ray is imported, keeps every node, this process's
# driver and the killed and resumed drivers (which inherit it) on 127.0.0.1.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from mmsim.sweep import read_sweep  # noqa: E402
from conftest import SMALL, cli, strip_host  # noqa: E402
from test_sweep import wait_for_parts  # noqa: E402

TRACE = "data/traces/lirs/sprite.trace.gz"


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                        "include_dashboard": False},
    )
    for _ in range(2):
        c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    c.wait_for_nodes()
    yield c
    c.shutdown()


def test_ray_sweep_killed_and_resumed(cluster, tmp_path, repo, mmsim_bin):
    big = tmp_path / "big.toml"
    big.write_text(SMALL.replace("accesses = 30000", "accesses = 300000"))
    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'scenario = ["{big}"]\npolicy = ["cost", "mglru"]\nseed = [1, 2, 3, 4, 5]\n'
    )
    out = tmp_path / "ray.parquet"
    cmd = [sys.executable, "-m", "mmsim.sweep", str(grid), "--out", str(out), "--ray",
           cluster.address, "--quiet"]
    proc = subprocess.Popen(cmd, cwd=repo, stderr=subprocess.PIPE, text=True)
    wait_for_parts(out, 2, proc, timeout=180)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out) if n.startswith("part-")}
    assert 2 <= len(before) < 10, "killed mid-sweep"
    subprocess.run(cmd, cwd=repo, check=True, timeout=300)
    after = {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out) if n.startswith("part-")}
    assert len(after) == 10
    assert all(after[n] == t for n, t in before.items()), "a finished point was redone"
    df = read_sweep(str(out))
    assert sorted(df["index"]) == list(range(10)) and df["point"].is_unique
    # Both worker nodes ran points (the head has no CPU to offer).
    assert df["worker"].nunique() >= 2
    row = df.iloc[7]
    got = cli(mmsim_bin, *row.cli.split()[1:]).stdout
    assert row.result_json == strip_host(got)


def test_ray_ships_traces_once_and_reports_the_drivers_path(cluster, tmp_path, repo, mmsim_bin):
    import mmsim

    os.chdir(repo)
    grid = {"trace": [TRACE], "policy": ["lru", "cost"], "memcg_max": ["200p", "400p"]}
    df = mmsim.sweep(grid, backend="ray", address=cluster.address, out=str(tmp_path / "t"),
                     progress=False)
    assert len(df) == 4
    for _, row in df.iterrows():
        got = cli(mmsim_bin, "run", "--trace", TRACE, "--policy", row.policy, "--memcg-max",
                  row.memcg_max, "--json").stdout
        assert row.result_json == strip_host(got)
    ray.shutdown()
