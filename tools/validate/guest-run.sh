#!/bin/bash
# Runs an mmsim validation case on a Debian kernel booted under qemu (TCG): the
# guest kernel for what the host lacks (MGLRU). Used by `mmsim validate` for cases with
# kernel = "guest"; also runnable by hand:
#
#   LRUGEN=y RUNS=3 PROBE=target/release/mmsim-probe tools/validate/guest-run.sh SCENARIO.toml
#
# Prints one line `MMV-RUN {json}` per run (kernel release, memory.stat and
# /proc/vmstat deltas of the guest, the probe's report, PSI) on stdout; the
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
#      PROBE (mmsim-probe binary), MEM (guest MiB, default 1024), TIMEOUT (s, default 1200)
set -euo pipefail
SCEN=$(readlink -f "${1:?usage: guest-run.sh SCENARIO.toml}")
HERE=$(cd "$(dirname "$0")" && pwd)
W=${W:-/var/tmp/mmsim-validate-guest}
KPKG=${KPKG:-linux-image-6.1.0-50-cloud-amd64-unsigned}
LRUGEN=${LRUGEN:-0}
RUNS=${RUNS:-3}
PROBE=$(readlink -f "${PROBE:-$HERE/../../target/release/mmsim-probe}")
MEM=${MEM:-1024}
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
for l in $(ldd "$PROBE" | grep -o '/[^ ]*'); do cp -L "$l" "$R$l"; done
cp "$SCEN" "$R/case.toml"
cp "$HERE/guest-init" "$R/init"; chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.cpio.gz"
T1=$(date +%s.%N)
log "built in $(awk "BEGIN{printf \"%.1f\", $T1 - $T0}") s; booting $(basename "$VMLINUZ") lru_gen=$LRUGEN runs=$RUNS"
CON=$W/console-$(basename "$SCEN" .toml)-$(basename "$VMLINUZ")-lrugen$LRUGEN.log
boot() {
  timeout "${TIMEOUT:-1200}" qemu-system-x86_64 -accel tcg,thread=single -m "$MEM" -smp 1 \
    -nographic -no-reboot -kernel "$VMLINUZ" -initrd "$W/initramfs.cpio.gz" \
    -drive "file=$W/disk.img,format=raw,if=none,id=d0" -device nvme,drive=d0,serial=mmvdata "${EXTRA[@]}" \
    -append "console=ttyS0 quiet panic=-1 mmv_lrugen=$LRUGEN mmv_max=$MAXB mmv_swap=$SWAP mmv_runs=$RUNS" \
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
python3 - "$CON" <<'PY'
import sys, json, re
text = open(sys.argv[1], errors='replace').read().replace('\r', '')
rel = re.search(r'MMV-KERNEL (\S+)', text)
lru = re.search(r'MMV-LRUGEN (\S+)', text)
def kv(block):
    d = {}
    for l in block.splitlines():
        p = l.split()
        if len(p) == 2 and re.fullmatch(r'-?\d+', p[1]): d[p[0]] = int(p[1])
    return d
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
    print('MMV-RUN ' + json.dumps({'kernel_release': rel.group(1) if rel else '?',
                                   'lru_gen': lru.group(1) if lru else '?', 'run': run}))
    n += 1
if n == 0:
    sys.exit("no run completed in the guest; see the console log " + sys.argv[1])
PY
