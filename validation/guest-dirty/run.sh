#!/bin/bash
# The buffered-writer case of issue 15 (dirtyguest15): dd.toml here (160 MiB of 4 KiB
# pwrite()s into one file, a 512 MiB guest) on Debian's 6.12 kernel under qemu, with the
# writeback tracepoints of trace.events, through tools/validate/guest-run.sh. usage:
#
#   [W=/tmp/qemu-dirty] [RUNS=3] [PROBE=target/release/mmsim-probe] \
#     validation/guest-dirty/run.sh > runs.jsonl
#   python3 validation/guest-dirty/summarize.py $W/console-dd-*.log
#
# Three runs take about 65 s of qemu (TCG) on the project's VM, plus the kernel's
# download the first time (under $W, never installed).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export W=${W:-/tmp/qemu-dirty}
export KPKG=${KPKG:-linux-image-6.12.107+deb13-cloud-amd64-unsigned}
export TRACE=$HERE/trace.events
export RUNS=${RUNS:-3}
exec "$HERE/../../tools/validate/guest-run.sh" "$HERE/dd.toml"
