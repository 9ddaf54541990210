"""Tests of tools/validate/guest-run.sh's console parser (the Python program it runs on
the guest's console log after qemu exits): each run's JSON records the guest's online
CPUs as `online_cpus` in its probe report, as the host's recorder (`mmsim validate`'s
kernel side) and capture-app do.

Run with `python3 -m pytest scripts/tests`."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUEST_RUN = ROOT / "tools" / "validate" / "guest-run.sh"


def parser_source():
    """The parser: the heredoc of `python3 - "$CON" "$SCEN"`, up to the line `PY`."""
    text = GUEST_RUN.read_text()
    head = "python3 - \"$CON\" \"$SCEN\" <<'PY'\n"
    start = text.index(head) + len(head)
    end = text.index("\nPY\n", start)
    return text[start:end]


def console(cpus_line):
    """A console log of one completed run, with an `MMV-CPUS` line or without."""
    lines = ["MMV-KERNEL 6.12.107+deb13-cloud-amd64"]
    if cpus_line is not None:
        lines.append(cpus_line)
    lines += [
        "MMV-LRUGEN 0x0000",
        "MMV-BEGIN 1 rc=0",
        "MMV-SECTION vm0",
        "pgscan_kswapd 10",
        "MMV-SECTION vm1",
        "pgscan_kswapd 25",
        "MMV-SECTION zi0",
        "Node 0, zone      DMA",
        "  pages free     3952",
        "        min      21",
        "MMV-SECTION zi1",
        "Node 0, zone      DMA",
        "  pages free     160",
        "        min      21",
        "MMV-SECTION ms0",
        "pgscan 0",
        "MMV-SECTION ms1",
        "pgscan 7",
        "file 4096",
        "MMV-SECTION psi",
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=120",
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=80",
        "MMV-SECTION probe",
        json.dumps({"run": {"events": 100, "wall_s": 1.5}}),
        "MMV-END 1",
    ]
    return "\n".join(lines) + "\n"


def parse(tmp_path, cpus_line):
    log = tmp_path / "console.log"
    log.write_text(console(cpus_line))
    scen = tmp_path / "case.toml"
    scen.write_text("[machine]\nmemory = \"64M\"\n")
    r = subprocess.run([sys.executable, "-", str(log), str(scen)], input=parser_source(),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = [l for l in r.stdout.splitlines() if l.startswith("MMV-RUN ")]
    assert len(out) == 1, r.stdout
    return json.loads(out[0][len("MMV-RUN "):])


def test_a_guest_run_records_its_online_cpus_in_the_probe_report(tmp_path):
    run = parse(tmp_path, "MMV-CPUS 0-1")
    assert run["kernel_release"] == "6.12.107+deb13-cloud-amd64"
    assert run["run"]["probe"] == {"events": 100.0, "wall_s": 1.5, "online_cpus": 2.0}
    assert run["run"]["vmstat"] == {"pgscan_kswapd": 15}
    # The zoneinfo sections (zi0, zi1) stay in the console log, out of the JSON.
    assert "zi0" not in json.dumps(run) and "DMA" not in json.dumps(run)
    # A sparse list counts each CPU once.
    assert parse(tmp_path, "MMV-CPUS 0,2-3,8")["run"]["probe"]["online_cpus"] == 4.0


def test_a_console_log_without_the_cpu_line_records_none(tmp_path):
    # A guest image built before the line existed: no `online_cpus`, so the replay
    # falls back to the suite's `kernel_cpus`.
    run = parse(tmp_path, None)
    assert "online_cpus" not in run["run"]["probe"]
