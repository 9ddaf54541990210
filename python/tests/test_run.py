"""mmsim.run, mmsim.compare, mmsim.trace.info against the CLI, bit for bit."""

import io
import json
import os
import threading
import time

import pandas as pd
import pytest

import mmsim
from conftest import SMALL, cli, strip_host

LOOP = "data/traces/lirs/cs.trace.gz"


def test_run_equals_cli_json_bit_for_bit(mmsim_bin, small, repo):
    r = mmsim.run(str(small), policy="mglru", memory="48M", swappiness=60, seed=7)
    out = cli(mmsim_bin, "run", small, "--policy", "mglru", "--memory", "48M",
              "--swappiness", "60", "--seed", "7", "--json").stdout
    assert r.json == strip_host(out)
    assert r.policy == "mglru" and r["seed"] == 7


def test_scenario_as_dict_toml_text_and_file_agree(small):
    tomllib = pytest.importorskip("tomllib")

    as_file = mmsim.run(str(small))
    as_text = mmsim.run(SMALL)
    as_dict = mmsim.run(tomllib.loads(SMALL))
    # The scenario's name is its file's stem, else the placeholder; the rest is equal.
    strip = lambda r: {k: v for k, v in r.data.items() if k != "scenario"}
    assert strip(as_text) == strip(as_file) == strip(as_dict)
    assert as_text.data["vmstat"] == as_file.data["vmstat"]


def test_trace_run_equals_cli(mmsim_bin, repo):
    os.chdir(repo)
    r = mmsim.run(trace=LOOP, policy="lru", memcg_max="100p")
    out = cli(mmsim_bin, "run", "--trace", LOOP, "--policy", "lru", "--memcg-max", "100p",
              "--json").stdout
    assert r.json == strip_host(out)
    # An anonymous trace gets zram swap, as on the command line, with the same note.
    a = mmsim.run(trace=LOOP, target="anon", policy="cost", memcg_max="64p")
    assert a.data["machine"]["swap"]["device"] == "zram"
    assert any("added zram swap" in n for n in a.notes)


def test_set_keys_are_machine_keys_as_the_cli_writes_them(mmsim_bin, small):
    r = mmsim.run(str(small), page_cluster=0, swap__device="ssd")
    assert r.data["machine"]["page_cluster"] == 0
    assert r.data["machine"]["swap"]["device"] == "ssd"
    out = cli(mmsim_bin, "run", small, "--set", "page_cluster=0", "--set", "swap.device=ssd",
              "--json").stdout
    assert r.json == strip_host(out)
    assert mmsim.cli_args(str(small), page_cluster=0, swap__device="ssd") == [
        "run", str(small), "--set", "page_cluster=0", "--set", "swap.device=ssd"]


def test_schedule_and_sample_are_run_flags(mmsim_bin, small):
    r = mmsim.run(str(small), schedule="fair")
    out = cli(mmsim_bin, "run", small, "--schedule", "fair", "--json").stdout
    assert r.json == strip_host(out)
    assert all("cpu_ns" in w for w in r.data["workloads"])
    assert all("cpu_ns" not in w for w in mmsim.run(str(small)).data["workloads"])
    assert mmsim.cli_args(str(small), schedule="fair", sample=0.5, sample_block=2) == [
        "run", str(small), "--schedule", "fair", "--sample", "0.5", "--sample-block", "2"]
    s = mmsim.run(str(small), sample=0.5, sample_block=2)
    out = cli(mmsim_bin, "run", small, "--sample", "0.5", "--sample-block", "2",
              "--json").stdout
    assert s.json == strip_host(out)
    with pytest.raises(mmsim.ScenarioError, match="allowed: round-robin, fair"):
        mmsim.run(str(small), schedule="cfs")


def test_tables(small):
    r = mmsim.run(str(small))
    v = r.vmstat
    assert isinstance(v, pd.Series) and v["pgfault"] == r.data["vmstat"]["pgfault"] > 0
    assert list(r.psi.index) == ["some", "full"]
    assert {"avg10", "avg60", "avg300", "total"} <= set(r.psi.columns)
    m = r.memcg
    assert "/" in m.index and m.loc["/", "pgfault"] == r.data["memcg"]["/"]["pgfault"]
    ts = r.timeseries
    assert len(ts) == len(r.data["stats_samples"]) > 2
    assert ts["t_s"].is_monotonic_increasing
    assert ts["t_s"].iloc[1] - ts["t_s"].iloc[0] == pytest.approx(0.05)
    # counters are cumulative: the last sample is at most the final count
    assert ts["pgfault"].iloc[-1] <= v["pgfault"]
    assert r.metrics["miss_ratio"] == r.miss_ratio
    assert list(r.workloads["name"]) == ["zipf-0", "uniform-1"]


def test_typed_errors_carry_mmsim_messages(small):
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.run(str(small), swappiness=300)
    assert str(e.value) == "--swappiness 300: machine.swappiness: 300 is out of range [0, 200]"
    with pytest.raises(mmsim.ScenarioError, match="unknown field `swapiness`"):
        mmsim.run(str(small), swapiness=1)
    with pytest.raises(mmsim.ScenarioError, match="no such scenario file, and not an embedded"):
        mmsim.run("no-such-scenario")
    with pytest.raises(mmsim.TraceError, match="no-such.trace"):
        mmsim.run(trace="no-such.trace")
    with pytest.raises(mmsim.ScenarioError, match="line 3"):
        mmsim.run("[machine]\nmemory = \"64M\"\nbogus = 1\n")
    with pytest.raises(mmsim.ScenarioError, match="policy=fifo"):
        mmsim.run(str(small), policy="fifo")
    assert issubclass(mmsim.TraceError, mmsim.MmsimError)
    assert issubclass(mmsim.ScenarioError, mmsim.MmsimError)


def test_runs_release_the_gil(small):
    big = SMALL.replace("accesses = 30000", "accesses = 1500000")
    done = threading.Event()
    result = {}

    def work():
        start = time.perf_counter()
        result["r"] = mmsim.run(big)
        result["s"] = time.perf_counter() - start
        done.set()

    t = threading.Thread(target=work)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # runs only while the other thread does not hold the GIL
        time.sleep(0.005)
    t.join()
    assert result["s"] > 0.2, "the run is long enough to measure"
    # Held for the whole run, the GIL would allow no tick (the first is before it).
    assert ticks >= result["s"] / 0.005 / 4


def test_compare_equals_cli_csv(mmsim_bin, small):
    table = mmsim.compare(str(small), policy=["cost", "mglru"], set={"swappiness": [60, 100]})
    out = cli(mmsim_bin, "compare", small, "--policy", "cost,mglru", "--set",
              "swappiness=60,100", "--csv").stdout
    expected = pd.read_csv(io.StringIO(out))
    pd.testing.assert_frame_equal(table, expected)
    assert set(table["config"]) == {
        "policy=cost,swappiness=60", "policy=cost,swappiness=100",
        "policy=mglru,swappiness=60", "policy=mglru,swappiness=100"}
    with pytest.raises(mmsim.ScenarioError, match="nothing to compare"):
        mmsim.compare(str(small))
    with pytest.raises(mmsim.ScenarioError, match="conflicts with --set swappiness"):
        mmsim.compare(str(small), swappiness=60, set={"swappiness": [60, 100]})


def test_trace_info_equals_cli(mmsim_bin, repo):
    os.chdir(repo)
    info = mmsim.trace.info(LOOP, sizes=[10, 100, 1000])
    out = json.loads(cli(mmsim_bin, "trace", "info", LOOP, "--sizes", "10,100,1000",
                         "--json").stdout)
    out.pop("schema_version")
    assert dict(info) == out
    mrc = info.mrc
    assert list(mrc["entries"]) == [10, 100, 1000]
    assert (mrc["hits"] + mrc["misses"] == info["references"]).all()
    assert mrc["miss_ratio"].is_monotonic_decreasing
    # Each row equals a full LRU run at that size.
    r = mmsim.run(trace=LOOP, policy="lru", memcg_max="100p")
    assert r.data["misses"] == int(mrc.loc[mrc.entries == 100, "misses"].iloc[0])
    with pytest.raises(mmsim.TraceError):
        mmsim.trace.info("no-such.trace")
    with pytest.raises(mmsim.ScenarioError, match="at least 1 entry"):
        mmsim.trace.info(LOOP, sizes=[0])
    # A SHARDS estimate, as the CLI's.
    est = mmsim.trace.info(LOOP, sizes=[10, 100, 1000], sample=0.5)
    out = json.loads(cli(mmsim_bin, "trace", "info", LOOP, "--sizes", "10,100,1000",
                         "--sample", "0.5", "--json").stdout)
    out.pop("schema_version")
    assert dict(est) == out
    assert est["sample"]["method"] == "SHARDS_adj, fixed rate"
    with pytest.raises(mmsim.ScenarioError, match="out of range"):
        mmsim.trace.info(LOOP, sample=0)
    # Fixed-size SHARDS, as the CLI's.
    fixed = mmsim.trace.info(LOOP, sizes=[10, 100, 1000], sample_size=64)
    out = json.loads(cli(mmsim_bin, "trace", "info", LOOP, "--sizes", "10,100,1000",
                         "--sample-size", "64", "--json").stdout)
    out.pop("schema_version")
    assert dict(fixed) == out
    assert fixed["sample"]["method"] == "SHARDS_adj, fixed size"
    assert fixed["sample"]["sampled_keys"] <= 64
    with pytest.raises(mmsim.ScenarioError, match="--sample and --sample-size"):
        mmsim.trace.info(LOOP, sample=0.5, sample_size=64)


def test_scenarios_and_print_scenario(mmsim_bin):
    s = mmsim.scenarios()
    assert "default" in s and "zipf-file" in s
    text = mmsim.scenario_toml("zipf-file", memory="256M", policy="mglru")
    out = cli(mmsim_bin, "run", "zipf-file", "--memory", "256M", "--policy", "mglru",
              "--print-scenario").stdout
    assert text == out


def test_ctrl_c_stops_a_run_with_keyboard_interrupt(tmp_path):
    import signal
    import subprocess
    import sys

    big = tmp_path / "big.toml"
    big.write_text(SMALL.replace("accesses = 30000", "accesses = 200000000"))
    code = (
        "import signal, sys, time, mmsim\n"
        # A child inherits an ignored (or blocked) SIGINT from its parent, as
        # pytest's can be after the Ray tests, and Python then keeps ignoring
        # it: give the child what an interactive Python has.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
        "print('importing done', flush=True)\n"
        "t = time.time()\n"
        "try:\n"
        f"    mmsim.run({str(big)!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted after', round(time.time() - t, 1)); sys.exit(130)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE,
                         text=True)
    # Only once the imports are done (slow on a loaded machine, and a signal during
    # them is not the run's to handle): then inside the run, the GIL released.
    assert p.stdout.readline().strip() == "importing done"
    time.sleep(1.5)
    start = time.time()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 130, out
    assert "interrupted after" in out
    assert time.time() - start < 5, "the run noticed Ctrl-C within a batch or two"


def test_compare_without_axes_takes_the_published_ones(mmsim_bin, tmp_path):
    s = tmp_path / "pub.toml"
    s.write_text(SMALL + '''
[[published]]
metric = "workingset_refault_file"
baseline = "policy=cost"
compared = "policy=mglru"
change_pct = -10.0
source = "a test's made-up number"
''')
    table = mmsim.compare(str(s))
    out = cli(mmsim_bin, "compare", s, "--csv").stdout
    pd.testing.assert_frame_equal(table, pd.read_csv(io.StringIO(out)))
    assert set(table["config"]) == {"policy=cost", "policy=mglru"}


def test_a_run_too_big_for_the_host_is_refused_as_on_the_command_line(mmsim_bin, small):
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.run(str(small), host_memory="1M")
    msg = str(e.value)
    assert "more than the 1.0 MiB (host_memory=1.0 MiB) mmsim may use" in msg
    assert msg.endswith('; host_memory="max" runs it anyway')
    out = cli(mmsim_bin, "run", small, "--host-memory", "1M", check=False)
    assert out.returncode == 2
    # The same sentence but for the setting's name.
    assert msg.split(" (host_memory")[0] in out.stderr
    assert mmsim.run(str(small), host_memory="max").data["events"] == 60000
    with pytest.raises(mmsim.ScenarioError, match="compare|1.0 MiB"):
        mmsim.compare(str(small), policy=["cost", "mglru"], host_memory="1M")
