#!/usr/bin/env python3
"""Summarises kswapd's wakeups and the allocator's fallbacks in a guest console log
written with guest-run.sh's TRACE=tools/validate/trace-kswapd.events, or in mmsim's
`perf script` lines (`mmsim run --tracepoints 'vmscan:*,kmem:mm_page_alloc_extfrag,compaction:*'
--tracepoints-out FILE`; a file without run sections is one run). VALIDATION.md,
"kswapd's wakeups in the 6.12 guest and in mmsim (kswapd13)".

    tools/validate/trace-kswapd.py CONSOLE.log
    tools/validate/trace-kswapd.py --task anon MMSIM-TRACEPOINTS.txt

Per run it prints:

* `mm_vmscan_wakeup_kswapd` by the waker's mask: `none` is v6.12 `rmqueue`'s
  ZONE_BOOSTED_WATERMARK wakeup after a boosting fallback, the others are
  `wake_all_kswapds` of an allocation that missed the low mark (readahead's
  `GFP_NOFS|…|__GFP_MOVABLE`, an anonymous fault's `GFP_HIGHUSER_MOVABLE|…`, a page
  table's `GFP_KERNEL_ACCOUNT|__GFP_ZERO`);
* kswapd's runs (`mm_vmscan_kswapd_wake`: every `balance_pgdat`, also one started
  when a wakeup ends its short nap) and full sleeps (`mm_vmscan_kswapd_sleep`), and
  kcompactd's wakeups by order (order 9 is `balance_pgdat`'s end of a boosted run);
* `kmem:mm_page_alloc_extfrag` by `alloc_order alloc<-fallback migratetype`,
  fragmenting or whole block, claimed (`change_ownership`) or not; with the
  guest's `stacktrace` trigger, also by the caller (the first frame past the
  allocator: `pte_alloc_one` a page table, `allocate_slab` a slab page, …);
* the vmstat deltas that go with them (guest runs only).
"""
import argparse
import importlib.util
import os
import re
from collections import Counter

_spec = importlib.util.spec_from_file_location(
    'trace_compaction', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'trace-compaction.py'))
tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tc)

# Allocator frames skipped to find an extfrag event's caller.
ALLOC = re.compile(r'^(trace_event_raw|perf_trace|__rmqueue|rmqueue|get_page_from_freelist|__alloc_pages'
                   r'|alloc_pages|__alloc_frozen|alloc_frozen|__folio_alloc|folio_alloc|alloc_slab_page'
                   r'|get_free_pages|__get_free_pages|event_triggers_call|trace_event_buffer)')
VMSTAT = ('pageoutrun', 'kswapd_low_wmark_hit_quickly', 'kswapd_high_wmark_hit_quickly',
          'allocstall_movable', 'compact_stall', 'compact_success', 'compact_daemon_wake',
          'pgmigrate_success', 'pgsteal_kswapd', 'pgsteal_direct')


def stacks(trace):
    """The caller of each extfrag event that has a `<stack trace>` before it, in order."""
    out, lines, i = [], trace.splitlines(), 0
    while i < len(lines):
        if '<stack trace>' in lines[i]:
            fr = []
            i += 1
            while i < len(lines) and lines[i].startswith(' => '):
                fr.append(lines[i][4:].split('+')[0])
                i += 1
            caller = next((f for f in fr if not ALLOC.match(f)), '?')
            out.append(caller)
            continue
        i += 1
    return out


def summary(trace, task):
    evs = tc.parse(trace)
    r = {'wakeup': Counter(), 'kswapd_wake': 0, 'kswapd_sleep': 0, 'kcompactd': Counter(),
         'extfrag': Counter(), 'callers': Counter()}
    for e in evs:
        ev, kv = e['ev'], e['kv']
        if ev == 'mm_vmscan_wakeup_kswapd':
            who = 'task' if e['comm'].startswith(task) else e['comm']
            r['wakeup'][(who, kv.get('order'), kv.get('gfp_flags'))] += 1
        elif ev == 'mm_vmscan_kswapd_wake':
            r['kswapd_wake'] += 1
        elif ev == 'mm_vmscan_kswapd_sleep':
            r['kswapd_sleep'] += 1
        elif ev == 'mm_compaction_wakeup_kcompactd':
            r['kcompactd'][kv.get('order')] += 1
        elif ev == 'mm_page_alloc_extfrag':
            frag = 'frag' if kv['fragmenting'] == '1' else 'block'
            claim = 'claimed' if kv['change_ownership'] == '1' else 'unclaimed'
            r['extfrag'][(int(kv['alloc_order']), f"{kv['alloc_migratetype']}<-{kv['fallback_migratetype']}",
                          frag, claim)] += 1
    for c in stacks(trace):
        r['callers'][c] += 1
    return r


def show(name, r, vm):
    print(f'== {name}')
    if vm:
        print('  vmstat: ' + ' '.join(f'{k}={vm.get(k, 0)}' for k in VMSTAT))
    print(f"  kswapd runs (kswapd_wake) {r['kswapd_wake']}, full sleeps {r['kswapd_sleep']}, "
          f"kcompactd wakeups by order {dict(sorted(r['kcompactd'].items()))}")
    total = sum(r['wakeup'].values())
    boost = sum(n for (w, o, g), n in r['wakeup'].items() if g == 'none')
    print(f'  wakeup_kswapd {total}: boost (gfp none) {boost}, allocations {total - boost}')
    for (w, o, g), n in r['wakeup'].most_common():
        print(f'    {n:6d}  {w} order={o} {g}')
    print(f"  extfrag {sum(r['extfrag'].values())} (order alloc<-fallback, 0 unmovable 1 movable 2 reclaimable):")
    for k, n in sorted(r['extfrag'].items(), key=lambda x: -x[1]):
        print(f'    {n:6d}  o{k[0]} {k[1]} {k[2]} {k[3]}')
    if r['callers']:
        print('  stack-traced extfrag by caller:')
        for c, n in r['callers'].most_common():
            print(f'    {n:6d}  {c}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('log')
    ap.add_argument('--task', default='mmsim-probe', help="the workload's comm (mmsim: its workload name)")
    a = ap.parse_args()
    runs = tc.runs_of(a.log)
    if not runs:
        text = open(a.log, errors='replace').read()
        show('run (no vmstat)', summary(text, a.task), None)
        return
    for i, sec in sorted(runs.items()):
        show(f'run {i}', summary(sec.get('trace', ''), a.task), tc.vmdelta(sec))


if __name__ == '__main__':
    main()
