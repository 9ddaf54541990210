"""mmsim.sweep on local cores: rows, Parquet parts, resume after kill -9, CLI."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import mmsim
from mmsim.sweep import point_id, points, read_sweep
from conftest import SMALL, cli, strip_host


def grid_for(small, **extra):
    g = {"scenario": [str(small)], "policy": ["cost", "mglru"], "memory": ["48M", "64M"],
         "seed": [1, 2]}
    g.update(extra)
    return g


def test_point_ids_are_stable_and_distinct():
    assert point_id({"policy": "cost", "seed": 1}) == point_id({"seed": 1, "policy": "cost"})
    # Fixed across processes, versions and machines: a hash of the canonical JSON.
    import hashlib

    canon = b'["mmsim-sweep-1",[["policy","cost"],["seed",1]]]'
    assert point_id({"policy": "cost", "seed": 1}) == hashlib.sha256(canon).hexdigest()[:16]
    assert point_id({"policy": "cost", "seed": 1}) == "6cf38c394a6e20a4"
    assert point_id({"seed": 1}) != point_id({"seed": "1"})
    pts = points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert pts[0] == {"a": 1, "b": "x"} and pts[1] == {"a": 1, "b": "y"} and len(pts) == 6


def test_local_sweep_rows_columns_and_parts(small, tmp_path, mmsim_bin, repo):
    out = tmp_path / "res.parquet"
    df = mmsim.sweep(grid_for(small), out=str(out), workers=2, progress=False)
    assert len(df) == 8 and list(df["index"]) == list(range(8))
    assert df["seed"].dtype == "int64" and df["policy"].dtype == object
    assert {"miss_ratio", "workingset_refault_file", "pswpout", "result_json"} <= set(df.columns)
    assert len([n for n in os.listdir(out) if n.startswith("part-")]) == 8
    # pandas reads the dataset directly: every part has the same schema.
    assert len(pd.read_parquet(out)) == 8
    # A row is the run's own result: the same as mmsim.run and as the CLI, bit for bit.
    row = df.iloc[5]
    r = mmsim.run(str(small), policy=row.policy, memory=row.memory, seed=int(row.seed))
    assert row.result_json == r.json
    assert row.miss_ratio == r.miss_ratio
    got = cli(mmsim_bin, *row.cli.split()[1:]).stdout
    assert row.result_json == strip_host(got)
    # Started again: nothing to do, nothing rewritten.
    mtimes = {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out)}
    df2 = mmsim.sweep(grid_for(small), out=str(out), workers=2, progress=False)
    assert {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out)} == mtimes
    pd.testing.assert_frame_equal(df.drop(columns=[]), df2)


def test_an_output_of_another_grid_is_refused(small, tmp_path):
    out = str(tmp_path / "o")
    mmsim.sweep({"scenario": [str(small)], "seed": [1]}, out=out, workers=1, progress=False)
    with pytest.raises(ValueError, match="holds a sweep of other keys"):
        mmsim.sweep({"scenario": [str(small)], "policy": ["cost"]}, out=out, progress=False)
    with pytest.raises(ValueError, match="holds a sweep of other keys"):
        mmsim.sweep({"scenario": [str(small)], "seed": ["1"]}, out=out, progress=False)
    # The same keys with other values extend the dataset.
    df = mmsim.sweep({"scenario": [str(small)], "seed": [1, 2]}, out=out, workers=1,
                     progress=False)
    assert list(df["seed"]) == [1, 2]


def test_sweep_without_out_and_bad_points(small):
    df = mmsim.sweep({"scenario": [str(small)], "swappiness": [0, 200]}, workers=1,
                     progress=False)
    assert list(df["swappiness"]) == [0, 200]
    with pytest.raises(mmsim.ScenarioError, match="point .*'swappiness': 300.*out of range"):
        mmsim.sweep({"scenario": [str(small)], "swappiness": [60, 300]}, progress=False)
    with pytest.raises(ValueError, match="also result columns"):
        mmsim.sweep({"scenario": [str(small)], "miss_ratio": [1]}, progress=False)
    with pytest.raises(ValueError, match="backend"):
        mmsim.sweep({"scenario": [str(small)]}, backend="spark", progress=False)


def wait_for_parts(out, n, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.isdir(out) and len([p for p in os.listdir(out) if p.startswith("part-")]) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"the sweep ended before {n} points: {proc.stderr.read()}")
        time.sleep(0.05)
    pytest.fail("the sweep made no progress")


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def write_grid(path, small, n_seeds):
    path.write_text(
        f'scenario = ["{small}"]\npolicy = ["cost", "mglru"]\n'
        f"seed = {list(range(1, n_seeds + 1))}\n"
    )


def test_kill_9_and_resume_redoes_no_finished_point(small, tmp_path):
    big = tmp_path / "big.toml"
    big.write_text(SMALL.replace("accesses = 30000", "accesses = 300000"))
    grid = tmp_path / "grid.toml"
    write_grid(grid, big, 8)
    out = tmp_path / "out.parquet"
    cmd = [sys.executable, "-m", "mmsim.sweep", str(grid), "--out", str(out), "--workers", "2",
           "--quiet"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    wait_for_parts(out, 3, proc)
    workers = children(proc.pid)
    assert workers, "the sweep runs in worker processes"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The orphaned workers notice and exit (they would otherwise run on).
    deadline = time.time() + 10
    while any(alive(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(alive(w) for w in workers), "workers outlived the killed sweep"
    before = {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out) if n.startswith("part-")}
    assert 3 <= len(before) < 16, "killed mid-sweep"
    subprocess.run(cmd, cwd=tmp_path, check=True, timeout=300)
    after = {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out) if n.startswith("part-")}
    assert len(after) == 16
    assert all(after[n] == t for n, t in before.items()), "a finished point was redone"
    df = read_sweep(str(out))
    assert sorted(df["index"]) == list(range(16)) and df["point"].is_unique
    assert not any(n.endswith(".tmp") for n in os.listdir(out))
    # A part cut short (a machine crash before the page cache reached the disk) is
    # redone; the others are kept.
    victim = sorted(after)[0]
    with open(out / victim, "r+b") as f:
        f.truncate(100)
    subprocess.run(cmd, cwd=tmp_path, check=True, timeout=300)
    again = {n: os.stat(out / n).st_mtime_ns for n in os.listdir(out) if n.startswith("part-")}
    assert set(again) == set(after)
    assert [n for n in again if again[n] != after[n]] == [victim]
    assert len(read_sweep(str(out))) == 16


def test_cli_sweep_runs_the_package_and_says_when_it_is_missing(small, tmp_path, mmsim_bin):
    grid = tmp_path / "grid.toml"
    write_grid(grid, small, 2)
    out = tmp_path / "cli.parquet"
    env = dict(os.environ, MMSIM_PYTHON=sys.executable)
    p = cli(mmsim_bin, "sweep", grid, "--out", out, "--quiet", env=env)
    assert "4 points" in p.stdout
    assert len(read_sweep(str(out))) == 4
    env["MMSIM_PYTHON"] = str(tmp_path / "no-python")
    p = cli(mmsim_bin, "sweep", grid, "--out", out, env=env, check=False)
    assert p.returncode == 1 and "no-python" in p.stderr and "pip install" in p.stderr
