#!/bin/bash
# Runs an mmsim validation case on a Debian kernel booted under qemu: the guest kernel
# for what the host lacks (MGLRU, a kernel of its own to fragment and compact). TCG by
# default; ACCEL=kvm uses KVM (-cpu host), many times faster where nested KVM works.
# On the project's VM (a 6.18 guest itself, AMD EPYC) it did not, 2026-11-29: the
# 6.12 bzImage stops at once with "KVM internal error. Suberror: 1" (emulation failure
# at a BMI2 shrx in its zstd decompressor; with -cpu host,-arch-capabilities, as
# -cpu host alone fails to set MSR 0x10a), and a PVH boot of the uncompressed vmlinux
# prints nothing; so every recorded guest case ran under TCG. The DAMON cases need TCG
# anyway (their pti=on is for TCG's accessed bits). Used by `mmsim validate` for cases with
# kernel = "guest"; also runnable by hand:
#
#   LRUGEN=y RUNS=3 PROBE=target/release/mmsim-probe tools/validate/guest-run.sh SCENARIO.toml
#
# Prints one line `MMV-RUN {json}` per run (kernel release, memory.stat and
# /proc/vmstat deltas of the guest, the probe's report with the guest's online CPUs
# as `online_cpus`, as the host's recorder has it, PSI) on stdout; the
# console log goes to $W/console-*.log.
#
# Needs (installed if missing, from Debian): qemu-system-x86 busybox-static cpio
# e2fsprogs. The kernel is Debian's linux-image-6.1.0-*-cloud-amd64-unsigned (LRU_GEN=y,
# NVMe and ext4 built in), unpacked under $W with `apt-get download` + `dpkg-deb -x`:
# nothing is installed into the host's /boot. Everything lives under $W.
#
# Env: W (default /var/tmp/mmsim-validate-guest), KPKG (a bookworm package, or a trixie
#      one with +deb13 in its name, e.g. linux-image-6.12.107+deb13-cloud-amd64-unsigned),
#      LRUGEN (0|y), RUNS (default 3),
#      PROBE (mmsim-probe binary), MEM (guest MiB, default 1024, or the scenario's
#      `# guest-mem: N` comment line), TIMEOUT (s, default 1200), ACCEL (tcg|kvm, default tcg)
#
# A scenario with a [machine.damon] section (one kdamond with one context and its
# schemes, or DAMON_LRU_SORT's or DAMON_RECLAIM's parameters) is set up through the
# guest's DAMON sysfs (and /sys/module/damon_{lru_sort,reclaim}/parameters) around
# each run: a vaddr target is the probe's pid, a paddr target without regions the
# biggest System RAM range of /proc/iomem; the schemes' stats and tried regions, or the
# module's stats, and the group's anon and swap are read while the probe holds its
# address space after the last event (--hold), and reported under "damon" in the run's
# JSON. These boots add pti=on (TCG then sets
# accessed bits again) and -cpu qemu64,-cx16.
#
# A scenario with a [machine.thp] section (mTHP cases) has the guest's
# /sys/kernel/mm/transparent_hugepage written once at boot with every setting of the
# section (mmsim's defaults for those it leaves out: enabled never, defrag madvise,
# hugepages-2048kB inherit, the other sizes never); the per-size stats are read right
# before the probe's first event and after its last (the probe's --ready and --hold),
# and reported under "thp" in the run's JSON: `<size>/<stat>` deltas (gauges such as
# nr_anon: the value at the end), and `rss_kb`/`anon_huge_kb` of the workload's own
# mapping (the smaps entry of its exact size) while the probe holds it.
#
# A scenario with a [machine.compaction] section (compaction cases, issue 13 item 4)
# must have it enabled (the guest kernel has CONFIG_COMPACTION and kcompactd); its
# extfrag_threshold and proactiveness are written to /proc/sys/vm at boot
# (compact-setup.sh), and the run's JSON gets the /proc/vmstat deltas of compact_*,
# pgmigrate_*, thp_*, allocstall_*, pageoutrun and kswapd_* besides the usual ones
# (the whole guest: only the case runs there). /proc/buddyinfo and /proc/pagetypeinfo
# at the probe's --ready and --hold go to the console log (MMV-BUDDY lines).
# Every run's /proc/zoneinfo before and after it is saved in the console log (sections
# zi0 and zi1, written by guest-init; the run's JSON leaves them out).
#
# TRACE=FILE (opt-in, for investigations; off in `mmsim validate`): the guest's own
# tracepoints around each run. FILE has one event a line, `group/event` optionally
# followed by a filter (`compaction/mm_compaction_finished ret > 4`) or by
# `trigger:TRIGGER` (`kmem/mm_page_alloc_extfrag trigger:stacktrace if alloc_migratetype
# != 1`: TRIGGER goes to the event's trigger file instead, removed (`!stacktrace`) and
# written again before each run, so a boot's
# second run does not fail with EEXIST; the stack follows its event in the buffer as
# `<stack trace>` and ` => function+off/size` lines); `#` lines are comments. tracefs is mounted in the guest only. The ring buffer (TRACE_KB per CPU,
# default 3072) comes out of the guest's memory: 8192 moved compact-mthp-always's runs
# into another mode (VALIDATION.md). It is cleared before each run, tracing is switched
# on right before the probe starts and off when it exits, and the buffer goes to the
# console log as the run's `trace` section (the buffer's stats, lost events included,
# as `tracestats`). The run's JSON leaves both out: tools/validate/trace-compaction.py
# reads them from the console log.
set -euo pipefail
SCEN=$(readlink -f "${1:?usage: guest-run.sh SCENARIO.toml}")
HERE=$(cd "$(dirname "$0")" && pwd)
W=${W:-/var/tmp/mmsim-validate-guest}
KPKG=${KPKG:-linux-image-6.1.0-50-cloud-amd64-unsigned}
LRUGEN=${LRUGEN:-0}
RUNS=${RUNS:-3}
PROBE=$(readlink -f "${PROBE:-$HERE/../../target/release/mmsim-probe}")
GMEM=$(sed -n 's/^# guest-mem: *\([0-9][0-9]*\).*/\1/p' "$SCEN" | head -1)
MEM=${MEM:-${GMEM:-1024}}
log() { echo "guest-run: $*" >&2; }

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -x /bin/busybox ] || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt-get install -y -qq "${need[@]}" >&2
fi
mkdir -p "$W"
KD=$W/k-$KPKG
if ! ls "$KD"/boot/vmlinuz-* >/dev/null 2>&1; then
  log "fetching $KPKG"
  APTO=()
  case "$KPKG" in
    *+deb13*)
      # A trixie kernel on a bookworm host: read trixie's index through a private apt
      # configuration under $W (the system's apt configuration is not touched).
      A=$W/apt-trixie; mkdir -p "$A"/lists/partial "$A"/cache "$A"/etc
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" > "$A"/etc/sources.list
      APTO=(-o Dir::Etc::SourceList="$A"/etc/sources.list -o Dir::Etc::SourceParts=/dev/null
            -o Dir::State::Lists="$A"/lists -o Dir::Cache="$A"/cache)
      apt-get "${APTO[@]}" update >&2
      ;;
  esac
  (cd "$W" && apt-get "${APTO[@]}" download "$KPKG" >&2 && mkdir -p "$KD" && dpkg-deb -x "$KPKG"_*.deb "$KD" && rm -f "$KPKG"_*.deb)
fi
VMLINUZ=$(ls "$KD"/boot/vmlinuz-* | head -1)

# The group's limit and swap from the scenario (the same rules as the host runner).
read -r MAXB SWAPB < <(python3 - "$SCEN" <<'PY'
import sys, tomllib, re
s = tomllib.load(open(sys.argv[1], 'rb'))
def size(v):
    if isinstance(v, int): return v
    m = re.fullmatch(r'(\d+)\s*([KMGTp]?)', str(v).strip())
    n, u = int(m.group(1)), m.group(2)
    return n * {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40, 'p': 4096}[u]
g = s['workload'][0].get('cgroup')
cg = next(c for c in s.get('cgroup', []) if c['path'] == g)
mx = cg.get('max', 'max'); mx = 'max' if mx == 'max' else size(mx)
sw = s.get('machine', {}).get('swap', {})
print(mx, size(sw['size']) if sw.get('device', 'none') != 'none' else 0)
PY
)
# DAMON cases (the scenario has a [machine.damon] section): the sysfs writes that set
# it up in the guest (damon-setup.sh, sourced by /init once the probe runs, with $WPID
# its pid) and the reads of its stats after the workload (damon-stats.sh).
rm -rf "$W/damon" && mkdir -p "$W/damon"
DAMON=$(python3 - "$SCEN" "$W/damon" <<'PY'
import sys, tomllib
s = tomllib.load(open(sys.argv[1], 'rb'))
out = sys.argv[2]
d = s.get('machine', {}).get('damon')
if not d:
    print(0); sys.exit()
def fail(m):
    sys.exit(f"guest-run: {sys.argv[1]}: machine.damon.{m}")
setup = ['A=/sys/kernel/mm/damon/admin',
         'dw() { echo "$2" > "$1" 2>/dev/null || echo "MMV-ERROR damon write $1 <- $2"; }']
stats = []
kds = d.get('kdamonds', [])
if len(kds) > 1:
    fail('kdamonds: the guest runner sets up one kdamond')
for k, kd in enumerate(kds):
    ctxs = kd.get('contexts', [])
    if len(ctxs) != 1:
        fail(f'kdamonds[{k}].contexts: one context')
    c = ctxs[0]
    K = '$A/kdamonds/0'; C = K + '/contexts/0'
    setup += [f'dw $A/kdamonds/nr_kdamonds 1', f'dw {K}/contexts/nr_contexts 1',
              f'dw {C}/operations {c["operations"]}']
    ma = c.get('monitoring_attrs', {})
    iv = ma.get('intervals', {})
    for f, dflt in (('sample_us', 5000), ('aggr_us', 100000), ('update_us', 1000000)):
        setup.append(f'dw {C}/monitoring_attrs/intervals/{f} {iv.get(f, dflt)}')
    nr = ma.get('nr_regions', {})
    # max before min: min may not exceed the current max.
    setup.append(f'dw {C}/monitoring_attrs/nr_regions/max {nr.get("max", 1000)}')
    setup.append(f'dw {C}/monitoring_attrs/nr_regions/min {nr.get("min", 10)}')
    tg = c.get('targets', [{}] if c['operations'] != 'paddr' else [])
    if c['operations'] != 'paddr' and (len(tg) != 1 or tg[0].get('pid_target', 0) != 0):
        fail(f'kdamonds[{k}].contexts[0].targets: one vaddr target, the probe (pid_target 0 or none)')
    setup.append(f'dw {C}/targets/nr_targets {len(tg)}')
    for t, tt in enumerate(tg):
        T = f'{C}/targets/{t}'
        if c['operations'] != 'paddr':
            setup.append(f'dw {T}/pid_target $WPID')
        rg = tt.get('regions', [])
        if not rg and c['operations'] == 'paddr':
            # A paddr target without regions: the biggest System RAM resource, as
            # mmsim (the zone's PFN span) and DAMON_RECLAIM/LRU_SORT's default
            # (damon_set_region_biggest_system_ram_default) take it.
            setup += ['BS=0; BE=0; for l in $(grep ": System RAM" /proc/iomem | sed "s/^ *\\([0-9a-f]*\\)-\\([0-9a-f]*\\) .*/\\1-\\2/"); do '
                      's=$((0x${l%-*})); e=$((0x${l#*-} + 1)); [ $((e - s)) -gt $((BE - BS)) ] && BS=$s && BE=$e; done',
                      f'dw {T}/regions/nr_regions 1', f'dw {T}/regions/0/end $BE', f'dw {T}/regions/0/start $BS',
                      f'echo "MMV-DAMON paddr region $BS-$BE"']
        if rg:
            setup.append(f'dw {T}/regions/nr_regions {len(rg)}')
            for i, r in enumerate(rg):
                setup += [f'dw {T}/regions/{i}/end {r["end"]}', f'dw {T}/regions/{i}/start {r["start"]}']
    sc = c.get('schemes', [])
    setup.append(f'dw {C}/schemes/nr_schemes {len(sc)}')
    for i, x in enumerate(sc):
        S = f'{C}/schemes/{i}'
        setup.append(f'dw {S}/action {x["action"]}')
        if x.get('apply_interval_us'):
            setup.append(f'dw {S}/apply_interval_us {x["apply_interval_us"]}')
        ap = x.get('access_pattern', {})
        # sysfs defaults every max to 0: write all six bounds (mmsim's defaults admit all).
        for f, mx in (('sz', 2**64 - 1), ('nr_accesses', 2**32 - 1), ('age', 2**32 - 1)):
            mm = ap.get(f, {})
            setup += [f'dw {S}/access_pattern/{f}/max {mm.get("max", mx)}',
                      f'dw {S}/access_pattern/{f}/min {mm.get("min", 0)}']
        q = x.get('quotas', {})
        for f in ('ms', 'bytes', 'reset_interval_ms'):
            setup.append(f'dw {S}/quotas/{f} {q.get(f, 0)}')
        for f in ('sz_permil', 'nr_accesses_permil', 'age_permil'):
            setup.append(f'dw {S}/quotas/weights/{f} {q.get("weights", {}).get(f, 0)}')
        if q.get('goals'):
            fail(f'kdamonds[{k}].contexts[0].schemes[{i}].quotas.goals: not set up by the guest runner')
        wm = x.get('watermarks', {})
        setup.append(f'dw {S}/watermarks/metric {wm.get("metric", "none")}')
        for f in ('interval_us', 'high', 'mid', 'low'):
            setup.append(f'dw {S}/watermarks/{f} {wm.get(f, 0)}')
        fl = x.get('filters', [])
        setup.append(f'dw {S}/filters/nr_filters {len(fl)}')
        for j, f in enumerate(fl):
            F = f'{S}/filters/{j}'
            setup.append(f'dw {F}/type {f["type"]}')
            setup.append(f'dw {F}/matching {"Y" if f.get("matching", True) else "N"}')
            if f.get('allow'):
                fail(f'kdamonds[{k}].contexts[0].schemes[{i}].filters[{j}].allow: 6.14+, the 6.12 guest has no allow file')
            if f['type'] == 'memcg':
                setup.append(f'dw {F}/memcg_path {f["memcg_path"]}')
            if f['type'] == 'addr':
                setup += [f'dw {F}/addr_end {f["addr_end"]}', f'dw {F}/addr_start {f["addr_start"]}']
            if f['type'] == 'target':
                setup.append(f'dw {F}/target_idx {f.get("target_idx", 0)}')
        stats += [f'for f in nr_tried sz_tried nr_applied sz_applied qt_exceeds; do echo "damos{i}_$f $(cat {S}/stats/$f)"; done',
                  f'echo "damos{i}_tried_regions_bytes $(cat {S}/tried_regions/total_bytes)"',
                  f'echo "damos{i}_nr_tried_regions $(ls {S}/tried_regions | grep -c "^[0-9]")"',
                  # On the console only (for VALIDATION.md): the tried regions and the
                  # probe's mappings they fall in.
                  f'for r in $(ls {S}/tried_regions | grep "^[0-9]"); do echo "MMV-TRIED {i} $(cat {S}/tried_regions/$r/start) $(cat {S}/tried_regions/$r/end) $(cat {S}/tried_regions/$r/nr_accesses) $(cat {S}/tried_regions/$r/age)"; done']
        if c['operations'] != 'paddr':
            stats.append('sed "s/^/MMV-MAPS /" /proc/$WPID/maps')
    # damon:damon_aggregated (every aggregation's regions) up to the hold's marker: the
    # state at the workload's last event, which the stats read later cannot give (the
    # hold's idle aggregations change them).
    setup += ['mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null', 'TR=/sys/kernel/tracing',
              'dw $TR/tracing_on 0', 'echo > $TR/trace', 'dw $TR/buffer_size_kb 8192',
              'dw $TR/events/damon/damon_aggregated/enable 1', 'dw $TR/tracing_on 1']
    setup.append(f'dw {K}/state on')
    setup.append(f'echo "MMV-DAMON kdamond state=$(cat {K}/state) pid=$(cat {K}/pid) target=$WPID"')
    stats = ['echo MMV-HOLD > $TR/trace_marker', f'dw {K}/state update_schemes_stats',
             f'dw {K}/state update_schemes_tried_regions'] + stats
    stats += [f'dw {K}/state off', 'dw $TR/events/damon/damon_aggregated/enable 0',
              'grep -a -e damon_aggregated -e MMV-HOLD $TR/trace | sed "s/^/MMV-TRACE /"',
              'dw $A/kdamonds/nr_kdamonds 0']
ls = d.get('lru_sort')
if ls and ls.get('enabled'):
    P = '/sys/module/damon_lru_sort/parameters'
    for f, v in ls.items():
        if f in ('enabled', 'filter_young_pages', 'autotune_monitoring_intervals'):
            if f != 'enabled' and v:
                fail(f'lru_sort.{f}: not in the 6.12 module')
            continue
        setup.append(f'dw {P}/{f} {v}')
    setup.append(f'dw {P}/enabled Y')
    setup.append(f'echo "MMV-DAMON lru_sort enabled=$(cat {P}/enabled) kdamond_pid=$(cat {P}/kdamond_pid)"')
    stats.append(f'for f in {P}/*; do case "${{f##*/}}" in *regions|*exceeds) echo "lru_sort_${{f##*/}} $(cat $f)";; esac; done')
    stats.append('dw $TR/events/damon/damos_before_apply/enable 0')
    stats.append('echo "reclaim_trace_damos_before_apply $(grep -ac damos_before_apply $TR/trace)"')
    stats.append('grep -a damos_before_apply $TR/trace | head -n 5 | sed "s/^/MMV-TRACE /"')
    stats.append(f'dw {P}/enabled N')
rc = d.get('reclaim')
if rc and rc.get('enabled'):
    # DAMON_RECLAIM: every parameter the scenario sets is written before `enabled` Y
    # (which applies them all and starts the module's kdamond; commit_inputs is only
    # for changes while it runs). Its stats parameters are read at the hold as
    # `reclaim_<name>`.
    P = '/sys/module/damon_reclaim/parameters'
    for f, v in rc.items():
        if f == 'enabled':
            continue
        if isinstance(v, bool):
            v = 'Y' if v else 'N'
        setup.append(f'dw {P}/{f} {v}')
    # damon:damos_before_apply fires for every region a scheme is applied to: its
    # count shows whether the module's context has a scheme at all.
    setup += ['mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null', 'TR=/sys/kernel/tracing',
              'dw $TR/tracing_on 0', 'echo > $TR/trace', 'dw $TR/buffer_size_kb 8192',
              'dw $TR/events/damon/damos_before_apply/enable 1', 'dw $TR/tracing_on 1']
    setup.append(f'dw {P}/enabled Y')
    setup.append(f'echo "MMV-DAMON reclaim enabled=$(cat {P}/enabled) kdamond_pid=$(cat {P}/kdamond_pid) min_age=$(cat {P}/min_age) wmarks=$(cat {P}/wmarks_high)/$(cat {P}/wmarks_mid)/$(cat {P}/wmarks_low)"')
    stats.append(f'for f in {P}/*; do case "${{f##*/}}" in *regions|*exceeds) echo "reclaim_${{f##*/}} $(cat $f)";; esac; done')
    # The kdamond's CPU time (utime + stime, clock ticks of 10 ms).
    stats.append(f'echo "reclaim_kdamond_ticks $(awk "{{print \\$14 + \\$15}}" /proc/$(cat {P}/kdamond_pid)/stat)"')
    stats.append('dw $TR/events/damon/damos_before_apply/enable 0')
    stats.append('echo "reclaim_trace_damos_before_apply $(grep -ac damos_before_apply $TR/trace)"')
    stats.append('grep -a damos_before_apply $TR/trace | head -n 5 | sed "s/^/MMV-TRACE /"')
    stats.append(f'dw {P}/enabled N')
# Every DAMON case: the group's anon bytes and swap (memory.swap.current) at the hold
# (the probe still holds its memory; memory.stat after the run no longer has it), and
# the guest's free memory.
stats += ['echo "memcg_anon_hold $(grep "^anon " $G/memory.stat | cut -d" " -f2)"',
          'echo "memcg_swap_hold $(cat $G/memory.swap.current)"',
          'echo "memfree_kb_hold $(grep "^MemFree:" /proc/meminfo | tr -s " " | cut -d" " -f2)"']
open(out + '/damon-setup.sh', 'w').write('\n'.join(setup) + '\n')
open(out + '/damon-stats.sh', 'w').write('\n'.join(stats) + '\n')
print(1)
PY
)
# mTHP cases (the scenario has a [machine.thp] section): the sysfs writes (thp-setup.sh).
THP=$(python3 - "$SCEN" "$W/damon" <<'PY'
import sys, tomllib
s = tomllib.load(open(sys.argv[1], 'rb'))
t = s.get('machine', {}).get('thp')
if t is None:
    print(0); sys.exit()
def fail(m):
    sys.exit(f"guest-run: {sys.argv[1]}: machine.thp.{m}")
for k in ('kernel', 'vma_advice'):
    if k in t and not (k == 'kernel' and str(t[k]) == '6.12') and not (k == 'vma_advice' and t[k] == 'none'):
        fail(f'{k}: the guest runs the 6.12 kernel without madvise (only the defaults)')
T = '/sys/kernel/mm/transparent_hugepage'
w = ['tw() { echo "$2" > "$1" 2>/dev/null || echo "MMV-ERROR thp write $1 <- $2"; }',
     f'tw {T}/enabled {t.get("enabled", "never")}', f'tw {T}/defrag {t.get("defrag", "madvise")}']
for kb in (16, 32, 64, 128, 256, 512, 1024, 2048):
    v = t.get(f'hugepages-{kb}kB', {}).get('enabled', 'inherit' if kb == 2048 else 'never')
    w.append(f'tw {T}/hugepages-{kb}kB/enabled {v}')
open(sys.argv[2] + '/thp-setup.sh', 'w').write('\n'.join(w) + '\n')
print(1)
PY
)
# Compaction cases: the sysctls (compact-setup.sh).
COMPACT=$(python3 - "$SCEN" "$W/damon" <<'PY'
import sys, tomllib
s = tomllib.load(open(sys.argv[1], 'rb'))
c = s.get('machine', {}).get('compaction')
if c is None:
    print(0); sys.exit()
def fail(m):
    sys.exit(f"guest-run: {sys.argv[1]}: machine.compaction.{m}")
if not c.get('enabled', False):
    fail('enabled: the guest kernel always compacts (CONFIG_COMPACTION); set it true')
if not c.get('kcompactd', True):
    fail('kcompactd: the guest kernel always runs kcompactd')
w = ['cw() { echo "$2" > "$1" 2>/dev/null || echo "MMV-ERROR compaction write $1 <- $2"; }',
     f'cw /proc/sys/vm/extfrag_threshold {c.get("extfrag_threshold", 500)}',
     f'cw /proc/sys/vm/compaction_proactiveness {c.get("proactiveness", 20)}']
open(sys.argv[2] + '/compact-setup.sh', 'w').write('\n'.join(w) + '\n')
print(1)
PY
)
T0=$(date +%s.%N)
# Region files -> ext4 data disk; swap disk.
rm -rf "$W/files" && mkdir -p "$W/files"
"$PROBE" "$SCEN" --dir "$W/files" --prepare -q >/dev/null
FILES_MB=$(( $(du -sm "$W/files" | cut -f1) ))
rm -f "$W/disk.img"
truncate -s $(( FILES_MB + FILES_MB / 4 + 64 ))M "$W/disk.img"
mkfs.ext4 -q -F -d "$W/files" "$W/disk.img"
rm -rf "$W/files"
SWAP=0; EXTRA=()
if [ "$SWAPB" != 0 ]; then
  SWAP=1
  rm -f "$W/swap.img"; truncate -s "$SWAPB" "$W/swap.img"
  EXTRA=(-drive "file=$W/swap.img,format=raw,if=none,id=s0" -device nvme,drive=s0,serial=mmvswap)
fi
# initramfs: busybox, the probe and its libraries, the scenario, /init.
R=$W/initramfs; rm -rf "$R"; mkdir -p "$R"/{bin,proc,sys,dev,tmp,mnt,lib64,lib/x86_64-linux-gnu}
cp /bin/busybox "$R/bin/busybox"
cp "$PROBE" "$R/bin/mmsim-probe"
# Compaction cases: the probe without its debug sections (its 47 MB release binary
# would take that much of the small guest's memory in the initramfs, unevictable).
if [ "$COMPACT" = 1 ] && command -v strip >/dev/null; then strip "$R/bin/mmsim-probe"; fi
for l in $(ldd "$PROBE" | grep -o '/[^ ]*'); do cp -L "$l" "$R$l"; done
cp "$SCEN" "$R/case.toml"
cp "$HERE/guest-init" "$R/init"; chmod +x "$R/init"
DAMONARGS=""
if [ "$DAMON" = 1 ]; then
  cp "$W/damon/damon-setup.sh" "$W/damon/damon-stats.sh" "$R/"
  # pti=on: page-table isolation flushes the TLB on every kernel entry, so TCG sets the
  # accessed bits DAMON samples again; -cx16: the 6.12 guest double-faulted in a
  # cmpxchg16b under TCG's default CPU model.
  DAMONARGS="pti=on mmv_damon=1"
  QCPU=(-cpu qemu64,-cx16)
  # SMP=2 gives kdamond a vCPU of its own; under TCG (one host thread for all vCPUs)
  # that did not bring its loop closer to its intervals and doubled the run time
  # (VALIDATION.md, DAMON), so the default stays one vCPU.
  SMP=${SMP:-1}
else
  QCPU=()
  SMP=1
fi
if [ "$THP" = 1 ]; then
  cp "$W/damon/thp-setup.sh" "$R/"
  DAMONARGS="$DAMONARGS mmv_thp=1"
  # The 6.12 guest's early TCG crashes (a double fault, a fault in IMA's init) were
  # not seen with this CPU model (see the DAMON boots above).
  QCPU=(-cpu qemu64,-cx16)
fi
if [ "$COMPACT" = 1 ]; then
  cp "$W/damon/compact-setup.sh" "$R/"
  DAMONARGS="$DAMONARGS mmv_compact=1"
fi
if [ -n "${TRACE:-}" ]; then
  # trace-setup.sh, sourced by /init before each run: clear, size, enable, filter.
  {
    echo 'mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; TR=/sys/kernel/tracing'
    echo 'tw() { echo "$2" > "$1" 2>/dev/null || echo "MMV-ERROR trace write $1 <- $2"; }'
    echo 'tw $TR/tracing_on 0; tw $TR/trace_clock global'
    echo "tw \$TR/buffer_size_kb ${TRACE_KB:-3072}; echo > \$TR/trace"
    grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$TRACE" | while read -r ev filt; do
      case "$filt" in
        trigger:*)
          t=${filt#trigger:}
          printf "echo '!%s' > \$TR/events/%s/trigger 2>/dev/null\n" "${t%% *}" "$ev"
          printf "tw \$TR/events/%s/trigger '%s'\n" "$ev" "${filt#trigger:}";;
        ?*) printf "tw \$TR/events/%s/filter '%s'\n" "$ev" "$filt";;
      esac
      echo "tw \$TR/events/$ev/enable 1"
    done
  } > "$W/damon/trace-setup.sh"
  cp "$W/damon/trace-setup.sh" "$R/"
  DAMONARGS="$DAMONARGS mmv_trace=1"
fi
# TCG unless ACCEL=kvm (see the header); DAMON cases always TCG.
ACCEL=${ACCEL:-tcg}
[ "$DAMON" = 1 ] && ACCEL=tcg
if [ "$ACCEL" = kvm ]; then
  QACCEL=(-accel kvm); QCPU=(-cpu host,-arch-capabilities)
else
  QACCEL=(-accel tcg,thread=single)
fi
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.cpio.gz"
T1=$(date +%s.%N)
log "built in $(awk "BEGIN{printf \"%.1f\", $T1 - $T0}") s; booting $(basename "$VMLINUZ") lru_gen=$LRUGEN runs=$RUNS accel=$ACCEL mem=${MEM}M"
CON=$W/console-$(basename "$SCEN" .toml)-$(basename "$VMLINUZ")-lrugen$LRUGEN.log
boot() {
  timeout "${TIMEOUT:-1200}" qemu-system-x86_64 "${QACCEL[@]}" "${QCPU[@]}" -m "$MEM" -smp "$SMP" \
    -nographic -no-reboot -kernel "$VMLINUZ" -initrd "$W/initramfs.cpio.gz" \
    -drive "file=$W/disk.img,format=raw,if=none,id=d0" -device nvme,drive=d0,serial=mmvdata "${EXTRA[@]}" \
    -append "console=ttyS0 quiet panic=-1 mmv_lrugen=$LRUGEN mmv_max=$MAXB mmv_swap=$SWAP mmv_runs=$RUNS $DAMONARGS" \
    < /dev/null > "$CON" 2>&1 || true
}
# A boot that dies before /init ran a case (TCG has given a rare early double fault on
# 6.12) is retried once.
boot
if ! grep -aq '^MMV-END' "$CON"; then
  log "no run completed (see $CON); booting again"
  cp "$CON" "$CON.failed"
  boot
fi
T2=$(date +%s.%N)
log "qemu ran $(awk "BEGIN{printf \"%.1f\", $T2 - $T1}") s; console log $CON"
rm -f "$W/disk.img" "$W/swap.img"
python3 - "$CON" "$SCEN" <<'PY'
import sys, json, re
text = open(sys.argv[1], errors='replace').read().replace('\r', '')
rel = re.search(r'MMV-KERNEL (\S+)', text)
lru = re.search(r'MMV-LRUGEN (\S+)', text)
cpus = re.search(r'MMV-CPUS (\S+)', text)
def online_cpus(text):
    """num_online_cpus() from /sys/devices/system/cpu/online's list (`0-1`, `0,2-3`),
    as the host's recorder (`mmsim validate`) and capture-app count it."""
    n = 0
    for part in text.strip().split(','):
        a, _, b = part.partition('-')
        n += int(b or a) - int(a) + 1
    return n
def kv(block):
    d = {}
    for l in block.splitlines():
        p = l.split()
        if len(p) == 2 and re.fullmatch(r'-?\d+', p[1]): d[p[0]] = int(p[1])
    return d
import tomllib
scen = tomllib.load(open(sys.argv[2], 'rb'))
def size(v):
    if isinstance(v, int): return v * 4096
    m = re.fullmatch(r'(\d+)\s*([KMGTp]?)', str(v).strip())
    return int(m.group(1)) * {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40, 'p': 4096}[m.group(2)]
def damon_at_end(text):
    """Scheme 0 at the workload's last event, from the damon_aggregated records before
    the hold's marker: the aggregations completed, the regions matching the scheme's
    access pattern summed over them (what nr_tried/sz_tried were then) and in the last
    one (what tried_regions/ held then), and the part of those inside the workload's
    mappings (/proc/PID/maps entries of a workload region's exact size)."""
    try:
        c = scen['machine']['damon']['kdamonds'][0]['contexts'][0]
        ap = c['schemes'][0].get('access_pattern', {})
    except (KeyError, IndexError):
        return {}
    rng = {f: (ap.get(f, {}).get('min', 0), ap.get(f, {}).get('max', 2**64)) for f in ('sz', 'nr_accesses', 'age')}
    wl = {size(w['pages']) for w in scen.get('workload', []) if 'pages' in w}
    maps = []
    for l in text.splitlines():
        p = l.split()
        if p[:1] == ['MMV-MAPS']:
            a, b = (int(x, 16) for x in p[1].split('-'))
            if b - a in wl:
                maps.append((a, b))
    snaps, cur, want = [], [], 0
    for l in text.splitlines():
        if l.startswith('MMV-TRACE') and 'MMV-HOLD' in l:
            break
        m = re.search(r'damon_aggregated: target_id=\d+ nr_regions=(\d+) (\d+)-(\d+): (\d+) (\d+)', l)
        if not m:
            continue
        n, a, b, nr, age = (int(x) for x in m.groups())
        cur.append((a, b, nr, age)); want = n
        if len(cur) == want:
            snaps.append(cur); cur = []
    def match(r):
        a, b, nr, age = r
        return all(lo <= v <= hi for v, (lo, hi) in ((b - a, rng['sz']), (nr, rng['nr_accesses']), (age, rng['age'])))
    out = {'damon_aggregations_end': len(snaps)}
    if c['schemes'][0]['action'] != 'stat':
        # Other actions reset an applied region's age before the record is written.
        return out
    out['damos0_end_nr_tried'] = sum(1 for s in snaps for r in s if match(r))
    out['damos0_end_sz_tried'] = sum(r[1] - r[0] for s in snaps for r in s if match(r))
    last = [r for r in (snaps[-1] if snaps else []) if match(r)]
    out['damos0_end_tried_regions'] = len(last)
    out['damos0_end_tried_bytes'] = sum(r[1] - r[0] for r in last)
    out['damos0_end_tried_mapped_bytes'] = sum(max(0, min(b, r[1]) - max(a, r[0])) for r in last for a, b in maps)
    return out
n = 0
for m in re.finditer(r'^MMV-BEGIN (\d+) rc=(\d+)\n(.*?)^MMV-END \1$', text, re.M | re.S):
    if m.group(2) != '0':
        sys.exit(f"guest run {m.group(1)} failed: probe exit {m.group(2)}")
    sec = dict(re.findall(r'^MMV-SECTION (\w+)\n(.*?)(?=^MMV-SECTION |\Z)', m.group(3), re.M | re.S))
    vm0, vm1, ms0, ms1 = (kv(sec[k]) for k in ('vm0', 'vm1', 'ms0', 'ms1'))
    gauges = {'anon', 'file', 'inactive_anon', 'active_anon', 'inactive_file', 'active_file', 'file_mapped', 'swapcached'}
    memcg = {k: (v if k in gauges else max(0, v - ms0.get(k, 0))) for k, v in ms1.items()}
    # Event counters only (workingset_nodes is a gauge and can shrink).
    vmstat = {k: v - vm0.get(k, 0) for k, v in vm1.items()
              if v - vm0.get(k, 0) > 0 and k != 'workingset_nodes'
              and re.match(r'(pswp|swp|swap_ra|workingset|pgscan|pgsteal|pgmajfault|pgpgin)', k)}
    psi = dict(re.findall(r'^(some|full) .*total=(\d+)', sec['psi'], re.M))
    probe = json.loads(sec['probe'])['run']
    run = {'memcg': memcg, 'vmstat': vmstat, 'probe': {k: float(v) for k, v in probe.items()},
           'psi_some_us': int(psi['some']), 'psi_full_us': int(psi['full'])}
    if cpus:
        # The update threshold of the 6.12+ memcg statistics flush counts them.
        run['probe']['online_cpus'] = float(online_cpus(cpus.group(1)))
    if 'damon' in sec:
        # DAMON cases: the schemes' and the modules' stats; the reclaim and LRU
        # counters of the whole guest (only the case runs there).
        run['damon'] = kv(sec['damon'])
        run['damon'].update(damon_at_end(sec['damon']))
        run['vmstat'].update({k: v - vm0.get(k, 0) for k, v in vm1.items()
                              if v - vm0.get(k, 0) > 0 and re.match(r'(pgactivate|pgdeactivate|pgrefill)$', k)})
    if 'compact' in sec:
        # Compaction cases: the guest's compaction, migration, THP and allocation
        # stall event counters (only the case runs in the guest), zero deltas included.
        run['vmstat'].update({k: v - vm0.get(k, 0) for k, v in vm1.items()
                              if re.match(r'(compact_|pgmigrate_|thp_|allocstall_|pageoutrun|kswapd_)', k)})
    if 'thp0' in sec:
        # mTHP cases: hugepages-<size>kB/stats/<stat> lines of `grep -r .` before and
        # after; the workload's mapping in smaps at the hold.
        def thp(block):
            d = {}
            for l in block.splitlines():
                m = re.search(r'hugepages-(\d+kB)/stats/(\w+):(\d+)$', l)
                if m: d[m.group(1) + '/' + m.group(2)] = int(m.group(3))
            return d
        t0, t1 = thp(sec['thp0']), thp(sec['thp1'])
        gauge = ('nr_anon', 'nr_anon_partially_mapped')
        run['thp'] = {k: (v if k.split('/')[1] in gauge else v - t0.get(k, 0)) for k, v in t1.items()}
        wl = {size(w['pages']) for w in scen.get('workload', []) if 'pages' in w}
        cur = None
        for l in sec['smaps'].splitlines():
            m = re.match(r'([0-9a-f]+)-([0-9a-f]+) ', l)
            if m:
                cur = int(m.group(2), 16) - int(m.group(1), 16) in wl
                continue
            m = re.match(r'(Rss|AnonHugePages):\s+(\d+) kB', l)
            if cur and m:
                k = {'Rss': 'rss_kb', 'AnonHugePages': 'anon_huge_kb'}[m.group(1)]
                run['thp'][k] = run['thp'].get(k, 0) + int(m.group(2))
    print('MMV-RUN ' + json.dumps({'kernel_release': rel.group(1) if rel else '?',
                                   'lru_gen': lru.group(1) if lru else '?', 'run': run}))
    n += 1
if n == 0:
    sys.exit("no run completed in the guest; see the console log " + sys.argv[1])
PY
