"""Fixtures of the mmsim package's tests: the repository, the CLI binary built from
it (``MMSIM_BIN``, default ``target/release/mmsim``) and a small scenario."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SMALL = """\
seed = 4
[machine]
memory = "64M"
swappiness = 100
stats_interval_ms = 50
[machine.swap]
device = "zram"
size = "64M"
[[workload]]
kind = "zipf"
target = "file"
pages = "96M"
theta = 0.9
accesses = 30000
[[workload]]
kind = "uniform"
target = "anon"
pages = "48M"
accesses = 30000
"""


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mmsim_bin() -> str:
    path = os.environ.get("MMSIM_BIN") or str(REPO / "target" / "release" / "mmsim")
    if not os.path.exists(path):
        found = shutil.which("mmsim")
        if not found:
            pytest.skip("the mmsim CLI is not built (cargo build --release -p mmsim-cli)")
        path = found
    return path


@pytest.fixture()
def small(tmp_path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def cli(mmsim_bin, *args, cwd=REPO, env=None, check=True):
    """Runs the CLI; returns the completed process (text)."""
    return subprocess.run(
        [mmsim_bin, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=check,
    )


def strip_host(text: str) -> str:
    """``mmsim run --json``'s text without the CLI's host-dependent peak heap."""
    import re

    out, n = re.subn(r',\n  "host_heap_peak_bytes": \d+', "", text)
    assert n == 1, "the CLI reports its peak heap once"
    return out
