#!/bin/sh
# Runs validation/khugepaged/collapse.c inside a fresh v1 memory cgroup under the
# caller's own (the 6.18 host has cgroup v1 memory), optionally with a limit
# (LIMIT_MB), then prints the group's memory.stat rss_huge and removes the group.
# Changes no system-wide setting. Usage: run.sh [pmds] [case]
set -e
here=$(dirname "$0")
cc -O2 -o /tmp/khuge-collapse "$here/collapse.c"
own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
cg=/sys/fs/cgroup/memory$own/khuge-collapse-$$
mkdir "$cg"
trap 'rmdir "$cg"' EXIT
[ -n "$LIMIT_MB" ] && echo $((LIMIT_MB << 20)) > "$cg/memory.limit_in_bytes"
sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec /tmp/khuge-collapse "$@"' sh "$cg" "${1:-32}" ${2:+"$2"}
grep -E '^(rss|rss_huge|pgfault|pgmajfault) ' "$cg/memory.stat" | tr '\n' ' '; echo
