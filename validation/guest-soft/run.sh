#!/bin/bash
# Boots Debian's 6.1 kernel (bookworm, v1 memory controller, LRU_GEN=y but off unless
# LRUGEN=y) under qemu and runs the soft-limit case of issue 15 item 2: two v1 groups
# under one parent, /short and /long, each over its soft limit, their mmsim-probe jobs
# of different lengths started together on a machine too small for both (global
# pressure: v1 soft-limit reclaim runs only in global reclaim), swap on a raw NVMe disk.
# Adapted from the ground-truth notes' qemu/build.sh, run.sh and soft.sh (copied into
# this directory; nothing outside the repository is read). usage:
#
#   [W=/tmp/qemu-gt] [MEM=448] [RUNS=3] [KVM=0]   (the recorded case: MEM=416) [LRUGEN=0] [PROBE=target/release/mmsim-probe] \
#     validation/guest-soft/run.sh > console.log
#   python3 validation/guest-soft/summarize.py console.log
#
# SVTRACE=1 adds the vmscan tracepoints of each soft-limit round to the console
# (init, sv_trace); `softlimit_trace.py console.log` sums them per round and per reclaim
# entry, and reads mmsim's `--tracepoints 'vmscan:*'` output the same way.
#
# The jobs: short.toml and long.toml here, each the probe's exact stream of one workload
# of validation/guest-soft/fair.toml (long.toml keeps fair.toml's workload order with a
# one-access stand-in for /short, so that its generator gets the same seed).
# TCG by default: on the PVM hosts of this project /dev/kvm hangs a stock kernel right
# after the BIOS (KVM=1 for a real KVM host). Needs qemu-system-x86 busybox-static cpio; the kernel .deb is fetched with
# `apt-get download` and unpacked under $W (never installed).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
W=${W:-/tmp/qemu-gt}
KPKG=${KPKG:-linux-image-6.1.0-50-cloud-amd64-unsigned}
MEM=${MEM:-448}
RUNS=${RUNS:-3}
KVM=${KVM:-0}
LRUGEN=${LRUGEN:-0}
SOFTA=${SOFTA:-96M}
SOFTB=${SOFTB:-96M}
PARENT=${PARENT:--1}
SWAP_MB=${SWAP_MB:-1024}
# pti=on: page-table isolation flushes the TLB on every kernel entry, so that TCG sets
# the accessed bits of hot pages again after reclaim clears them (as tools/validate/
# guest-run.sh does for DAMON); PTI= (empty) boots without it. no_timer_check: a loaded
# host made a TCG boot panic in the IO-APIC timer check ("IO-APIC + timer does not work").
PTI=${PTI-pti=on}
PROBE=$(readlink -f "${PROBE:-$HERE/../../target/release/mmsim-probe}")
mkdir -p "$W"
KD=$W/k-$KPKG
if ! ls "$KD"/boot/vmlinuz-* >/dev/null 2>&1; then
  (cd "$W" && apt-get download "$KPKG" >&2 && mkdir -p "$KD" && dpkg-deb -x "$KPKG"_*.deb "$KD" && rm -f "$KPKG"_*.deb)
fi
VMLINUZ=$(ls "$KD"/boot/vmlinuz-* | head -1)
R=$W/soft-initramfs; rm -rf "$R"; mkdir -p "$R"/{bin,proc,sys,dev,tmp,lib64,lib/x86_64-linux-gnu}
cp /bin/busybox "$R/bin/busybox"
strip -o "$R/bin/mmsim-probe" "$PROBE"
for l in $(ldd "$PROBE" | grep -o '/[^ ]*'); do cp -L "$l" "$R$l"; done
cp "$HERE/short.toml" "$HERE/long.toml" "$R/"
cp "$HERE/init" "$R/init"; chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/soft-initramfs.cpio.gz"
rm -f "$W/soft-swap.img"; truncate -s ${SWAP_MB}M "$W/soft-swap.img"
ACC=(-accel tcg,thread=single)
[ "$KVM" = 1 ] && ACC=(-enable-kvm -cpu "${KVMCPU:-host,-arch-capabilities}")
timeout "${TIMEOUT:-1800}" qemu-system-x86_64 "${ACC[@]}" -m "$MEM" -smp "${SMP:-1}" -nographic -no-reboot \
  -kernel "$VMLINUZ" -initrd "$W/soft-initramfs.cpio.gz" \
  -drive "file=$W/soft-swap.img,format=raw,if=none,id=s0" -device nvme,drive=s0,serial=svswap \
  -append "console=ttyS0 quiet panic=-1 no_timer_check $PTI sv_lrugen=$LRUGEN sv_softA=$SOFTA sv_softB=$SOFTB sv_parent=$PARENT sv_runs=$RUNS sv_trace=${SVTRACE:-0}" \
  < /dev/null
rm -f "$W/soft-swap.img"
