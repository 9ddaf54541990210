"""Tests of the real-application capture scripts' refusals and of raw-perfile's per-file
accounting on a scripted raw trace (scripts/capture-app, scripts/realapp/*).

capture-app itself needs root, cgroup v1, tracefs and a real program; what can be checked
without them is that it refuses bad command lines before touching anything. The scripts
run as the user runs them, as programs; a PATH without zstd is a directory holding only
the tools the script needs before its zstd check.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAPTURE_APP = ROOT / "scripts" / "capture-app"
DERIVE = ROOT / "scripts" / "realapp" / "derive-grep-group"
RAW_PERFILE = ROOT / "scripts" / "realapp" / "raw-perfile"


def path_with(tmp_path, *tools):
    """A PATH directory holding links to `tools` only."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for t in tools:
        (d / os.path.basename(t)).symlink_to(shutil.which(t) or t)
    return str(d)


def capture_app(args, env=None):
    return subprocess.run([sys.executable, str(CAPTURE_APP), *args], capture_output=True,
                          text=True, env=env)


# Never a command line that passes every check: as root it would start a capture.
REQUIRED = ["--limit", "192M", "--fs-dir", "/tmp", "--comm", "true", "--out",
            "/nonexistent/mmsim-capture-app-test"]


def test_capture_app_refuses_keep_raw_without_the_trace():
    r = capture_app(REQUIRED + ["--keep-raw", "--no-trace", "--", "true"])
    assert r.returncode == 2
    assert "--keep-raw keeps the raw tracepoint lines: it needs the trace" in r.stderr
    assert not Path(REQUIRED[-1]).exists()


def test_capture_app_refuses_a_trace_without_zstd(tmp_path):
    env = dict(os.environ, PATH=path_with(tmp_path, sys.executable))
    r = capture_app(REQUIRED + ["--", "true"], env=env)
    assert r.returncode == 2
    assert "zstd, which is not installed (or use --no-trace)" in r.stderr
    # --no-trace needs no zstd: the run gets past that check to the next refusal (a bad
    # --limit, or not root), which stops it before it makes anything.
    r = capture_app(["--limit", "12Q"] + REQUIRED[2:] + ["--no-trace", "--", "true"], env=env)
    assert r.returncode == 1 and "zstd" not in r.stderr


def test_capture_app_refuses_no_command():
    r = capture_app(REQUIRED + ["--"])
    assert r.returncode == 2
    assert "no COMMAND (after --)" in r.stderr


def test_capture_app_refuses_a_bad_limit_or_a_non_root_user():
    r = capture_app(["--limit", "12Q"] + REQUIRED[2:] + ["--no-trace", "--", "true"])
    assert r.returncode == 1
    if os.geteuid() == 0:
        assert "capture-app: --limit 12Q: expected a size such as 192M" in r.stderr
    else:
        assert "capture-app: needs root" in r.stderr
    assert not Path(REQUIRED[-1]).exists()


def load_capture_app():
    """capture-app as a module (its main() runs only as a program)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("capture_app", str(CAPTURE_APP))
    spec = importlib.util.spec_from_loader("capture_app", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_capture_app_reports_the_measured_read_period_and_the_cpus():
    ca = load_capture_app()
    # Reads started 0.2 s apart plus each read's 3 ms, then one slower read: the mean
    # of the 4 intervals, next to the nominal 200 ms.
    starts = [10.0, 10.203, 10.406, 10.609, 10.830]
    assert ca.stat_read_report(starts, "0-1\n") == {
        "memory_stat_read_ms": 200,
        "memory_stat_read_mean_ms": 207.5,
        "online_cpus": 2,
    }
    # One read (a program that ended at once): no period was measured; no CPU list.
    assert ca.stat_read_report([10.0], "") == {"memory_stat_read_ms": 200}
    assert ca.online_cpus("0,2-3,8") == 4


def test_derive_grep_group_refuses_without_zstd(tmp_path):
    env = dict(os.environ, PATH=path_with(tmp_path, "bash", "dirname"))
    r = subprocess.run([str(DERIVE)], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert r.stderr.strip() == "derive-grep-group: needs zstd"
    assert r.stdout == ""


def derive_in_a_copy(tmp_path, exclude):
    """derive-grep-group run from a copy of the repository's layout whose exclusion list
    is `exclude` (None: no list); returns the run and its output path."""
    if shutil.which("zstd") is None:
        pytest.fail("zstd is needed (CI installs it)")
    tree = tmp_path / "repo"
    (tree / "scripts" / "realapp").mkdir(parents=True)
    (tree / "data" / "realapp").mkdir(parents=True)
    shutil.copy(DERIVE, tree / "scripts" / "realapp" / "derive-grep-group")
    if exclude is not None:
        (tree / "data" / "realapp" / "grep-include-group.exclude").write_text(exclude)
    out = tmp_path / "out.txt"
    r = subprocess.run([str(tree / "scripts" / "realapp" / "derive-grep-group"), str(out)],
                       capture_output=True, text=True)
    return r, out


def test_derive_grep_group_refuses_an_empty_exclusion_list(tmp_path):
    r, out = derive_in_a_copy(tmp_path, "# comments and blank lines only\n\n   \n")
    assert r.returncode == 1
    assert r.stderr.strip() == "derive-grep-group: empty exclusion list"
    assert not out.exists(), "nothing written"


def test_derive_grep_group_names_a_missing_exclusion_list(tmp_path):
    r, out = derive_in_a_copy(tmp_path, None)
    assert r.returncode == 1
    assert r.stderr.startswith("derive-grep-group: cannot read ")
    assert r.stderr.strip().endswith("data/realapp/grep-include-group.exclude")
    assert not out.exists()


# A raw trace as `capture-app --keep-raw` keeps it: ftrace's columns, then the event.
RAW = """\
# tracer: nop
    postgres-10    [001] .....   100.000001: mm_filemap_add_to_page_cache: dev 254:1 ino 1a pfn=0x100 ofs=0 order=0
    postgres-10    [001] .....   100.000002: mm_filemap_add_to_page_cache: dev 254:1 ino 1a pfn=0x101 ofs=4096 order=0
    postgres-10    [001] .....   100.000003: mm_filemap_add_to_page_cache: dev 254:1 ino 1a pfn=0x102 ofs=8192 order=0
    postgres-10    [001] .....   100.000004: mm_filemap_get_pages: dev=254:1 ino=1a ofs=0-4095
     kswapd0-90    [000] .....   100.000005: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32
     kswapd0-90    [000] .....   100.000006: mm_filemap_delete_from_page_cache: dev 254:1 ino 1a pfn=0x101 ofs=4096 order=0
    postgres-10    [001] .....   100.000007: mm_filemap_add_to_page_cache: dev 254:1 ino 1a pfn=0x103 ofs=4096 order=0
    postgres-10    [001] .....   100.000008: mm_filemap_get_pages: dev=254:1 ino=1a ofs=4096-4096
    postgres-11    [000] .....   100.000009: ext4_da_write_begin: dev 254,1 ino 38 pos 0 len 8192
    postgres-11    [000] .....   100.000010: mm_filemap_add_to_page_cache: dev 254:1 ino 26 pfn=0x200 ofs=0 order=1
    postgres-12    [001] .....   100.000011: mm_filemap_add_to_page_cache: dev 254:1 ino 26 pfn=0x202 ofs=8192 order=0
    postgres-12    [001] .....   100.000012: mm_filemap_add_to_page_cache: dev 254:1 ino 26 pfn=0x203 ofs=12288 order=0
    postgres-12    [001] .....   100.000013: mm_filemap_get_pages: dev=254:1 ino=26 ofs=0-4095
"""
COLS = ["demand", "ahead", "by_write", "evicted", "refault", "async_clean", "async_clean_pages",
        "async_written", "async_written_pages"]


def perfile(path):
    r = subprocess.run([sys.executable, str(RAW_PERFILE), str(path)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["inode"] + COLS
    return {l.split()[0]: dict(zip(COLS, map(int, l.split()[1:]))) for l in lines[1:]}


def test_raw_perfile_tells_each_files_story(tmp_path):
    raw = tmp_path / "trace.raw.txt"
    raw.write_text(RAW)
    rows = perfile(raw)
    # 1a: a read of page 0 with pages 1-2 read ahead; page 1 evicted by kswapd (its vmscan
    # line skipped) and read again: a refault, demanded.
    assert rows["1a"] == dict(demand=2, ahead=2, by_write=0, evicted=1, refault=1,
                              async_clean=0, async_clean_pages=0, async_written=0,
                              async_written_pages=0)
    # 26 (inode 38 in ext4's decimal): an order-1 folio inserted by the write of pages
    # 0-1; another task's read of page 0 finds it cached and inserts pages 2-3:
    # asynchronous readahead from a page written since it was inserted.
    assert rows["26"] == dict(demand=0, ahead=2, by_write=2, evicted=0, refault=0,
                              async_clean=0, async_clean_pages=0, async_written=1,
                              async_written_pages=2)
    assert rows["total"]["ahead"] == 4 and rows["total"]["by_write"] == 2
    assert list(rows) == ["1a", "26", "total"], "sorted by evictions + demand"
    # The same trace compressed, as capture-app keeps it.
    if shutil.which("zstd") is None:
        pytest.fail("zstd is needed (CI installs it)")
    subprocess.run(["zstd", "-q", str(raw), "-o", str(tmp_path / "t.zst")], check=True)
    assert perfile(tmp_path / "t.zst") == rows


def test_raw_perfile_names_a_trace_it_cannot_read(tmp_path):
    missing = tmp_path / "missing.raw.txt.zst"
    r = subprocess.run([sys.executable, str(RAW_PERFILE), str(missing)], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert f"raw-perfile: zstdcat {missing} failed" in r.stderr


RECLAIM_CAPTURE = ROOT / "scripts" / "realapp" / "reclaim-capture"
RECLAIM_SUMMARY = ROOT / "scripts" / "realapp" / "reclaim-summary"


def test_reclaim_capture_refuses_a_short_command_line():
    r = subprocess.run([str(RECLAIM_CAPTURE), "/nonexistent/mmsim-reclaim-capture-test"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("usage: reclaim-capture OUT CAPTURE-APP-ARGS...")
    assert not Path("/nonexistent/mmsim-reclaim-capture-test").exists()


def test_reclaim_summary_counts_reclaim_flusher_writers_and_latency(tmp_path):
    si = ("mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned={} nr_reclaimed={} nr_dirty={} "
          "nr_writeback={} nr_congested=0 nr_immediate=0 nr_activate_anon=0 "
          "nr_activate_file={} nr_ref_keep=0 nr_unmap_fail=0 priority=12 "
          "flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC")
    raw = "\n".join([
        "# tracer: nop",
        "        postgres-101     [000] ..... 10.000000: mm_vmscan_memcg_reclaim_begin: order=0 gfp_flags=GFP_NOFS",
        "        postgres-101     [000] ..... 10.000100: " + si.format(32, 30, 2, 0, 2),
        "           <...>-101     [001] ..... 10.000200: " + si.format(8, 0, 8, 0, 8),
        "        postgres-102     [000] ..... 10.000300: mm_vmscan_memcg_reclaim_begin: order=0 gfp_flags=GFP_NOFS",
        "        postgres-102     [000] ..... 10.500300: " + si.format(16, 15, 0, 1, 0),
        "         kswapd0-45      [001] ..... 10.600000: " + si.format(32, 32, 0, 0, 0),
        "    kworker/u8:2-17     [001] ...1. 10.010000: writeback_start: bdi 254:0: sb_dev 0:0 nr_pages=99 sync_mode=0 kupdate=0 range_cyclic=1 background=0 reason=vmscan cgroup_ino=1",
        "    kworker/u8:2-17     [001] ..... 10.020000: ext4_writepages_result: dev 254,0 ino 5 ret 0 pages_written 12 pages_skipped 0 sync_mode 0 writeback_index 0",
        "        postgres-103     [000] ..... 10.030000: ext4_writepages_result: dev 254,0 ino 6 ret 0 pages_written 3 pages_skipped 0 sync_mode 1 writeback_index 0",
        "        postgres-103     [000] ..... 11.000000: block_rq_issue: 254,0 WS 8192 () 800 + 16 be,0,4 [postgres]",
        "          <idle>-0       [000] ..s.. 11.000500: block_rq_complete: 254,0 WS () 800 + 16 be,0,4 [0]",
        "        postgres-103     [000] ..... 11.100000: block_rq_issue: 254,0 RA 4096 () 64 + 8 be,0,4 [postgres]",
        "          <idle>-0       [000] ..s.. 11.100100: block_rq_complete: 254,0 RA () 64 + 8 be,0,4 [0]",
    ]) + "\n"
    p = tmp_path / "raw.txt"
    p.write_text(raw)
    r = subprocess.run([sys.executable, str(RECLAIM_SUMMARY), str(p)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    import json
    s = json.loads(r.stdout)
    own = s["limit_reclaim"]
    # The `<...>` line is pid 101's (postgres): three calls of the program, kswapd apart.
    assert (own["calls"], own["nr_scanned"], own["nr_reclaimed"], own["nr_dirty"],
            own["nr_writeback"], own["nr_activate_file"]) == (3, 56, 45, 10, 1, 10)
    assert (own["calls_with_dirty"], own["calls_with_writeback"], own["calls_all_dirty"]) == (2, 1, 1)
    assert s["limit_reclaim_window_s"] == 0.5
    assert s["other_reclaim"]["kswapd0"]["nr_scanned"] == 32
    assert s["reclaimers"] == {"pids": [101, 102], "n": 2}
    assert s["pids"] == [101, 102, 103]
    assert s["flusher_works"] == {"vmscan": 1}
    assert s["writepages_pages"] == {"flusher sync_mode 0": 12, "postgres sync_mode 1": 3}
    assert s["block_latency_us"] == {
        "R": {"n": 1, "p10": 100, "p50": 100, "p90": 100, "p99": 100, "mean": 100},
        "W": {"n": 1, "p10": 500, "p50": 500, "p90": 500, "p99": 500, "mean": 500}}


def test_reclaim_summary_names_a_trace_it_cannot_read(tmp_path):
    r = subprocess.run([sys.executable, str(RECLAIM_SUMMARY), str(tmp_path / "none.txt")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip() == f"reclaim-summary: cannot read {tmp_path / 'none.txt'}: No such file or directory"


RECLAIM_TIMELINE = ROOT / "scripts" / "realapp" / "reclaim-timeline"


def test_reclaim_timeline_bins_dirty_pages_met_by_flusher_state(tmp_path):
    si = ("mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned={} nr_reclaimed=0 nr_dirty={} "
          "nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=0 "
          "nr_activate_file=0 nr_ref_keep=0 nr_unmap_fail=0 priority=12 "
          "flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC")
    wb = ("    kworker/u8:2-17     [001] ...1. {}: writeback_{}: bdi 254:0: sb_dev 0:0 "
          "nr_pages={} sync_mode=0 kupdate=0 range_cyclic=1 background=0 reason=vmscan "
          "cgroup_ino=1")
    raw = "\n".join([
        "        postgres-101     [000] ..... 10.010000: " + si.format(32, 2),
        "           <...>-101     [001] ..... 10.050000: " + si.format(8, 8),
        "         kswapd0-45      [001] ..... 10.060000: " + si.format(32, 32),
        wb.format("10.100000", "start", 99),
        wb.format("10.110000", "written", 40),
        "        postgres-102     [000] ..... 10.150000: " + si.format(16, 1),
        wb.format("10.200000", "start", 40),
        wb.format("10.210000", "written", 40),
        "        postgres-102     [000] ..... 10.250000: " + si.format(16, 3),
        # mmsim's own tracepoints, as `perf script` prints them.
        "    postgres    1000 [000]     10.260000: vmscan:mm_vmscan_lru_shrink_inactive: "
        + si.split(": ", 1)[1].format(4, 4),
    ]) + "\n"
    p = tmp_path / "raw.txt"
    p.write_text(raw)
    r = subprocess.run([sys.executable, str(RECLAIM_TIMELINE), str(p)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "work 10.100 10.210",
        "10.000 40 10 idle",
        "10.100 16 1 busy",
        "10.200 20 7 idle",
        "idle scanned 60 dirty 17",
        "busy scanned 16 dirty 1",
        "all-dirty calls 2",
    ]


def test_reclaim_timeline_names_a_trace_it_cannot_read(tmp_path):
    r = subprocess.run([sys.executable, str(RECLAIM_TIMELINE), str(tmp_path / "none.txt")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip() == f"reclaim-timeline: cannot read {tmp_path / 'none.txt'}: No such file or directory"
