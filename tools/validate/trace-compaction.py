#!/usr/bin/env python3
"""Reads the `trace` sections of a guest console log written with guest-run.sh's
TRACE=tools/validate/trace-compaction.events and tells how each direct compaction of
the workload ended (VALIDATION.md, "compact_success in the 6.12 guest, traced").

    tools/validate/trace-compaction.py CONSOLE.log
    tools/validate/trace-compaction.py --task anon MMSIM-TRACEPOINTS.txt

It reads both the guest's tracefs lines (`COMM-PID [CPU] FLAGS TS: EVENT: FIELDS`,
inside the console log's MMV-BEGIN/MMV-END run sections) and the `perf script` lines
of `mmsim run --tracepoints 'compaction:*' --tracepoints-out FILE` (`COMM PID [CPU]
TS: SYSTEM:EVENT: FIELDS`; a file without run sections is one run, without vmstat
deltas). `--task` names the workload task whose direct compactions are counted
(default `mmsim-probe`, the guest's; in mmsim the scenario's workload name). mmsim
emits no `kmem:mm_page_alloc`, so a call with one `defer_reset` and no successful
`compact_zone` run counts as the watermark check's success without a page.

A direct compaction is one `try_to_compact_pages` call of the workload's task (v6.12
mm/compaction.c), with the per-zone events that follow it in that task until another
event: `mm_compaction_deferred` (zone deferred), `mm_compaction_suitable` (not
suitable: skipped), `mm_compaction_begin` ... `mm_compaction_end` (a `compact_zone`
run, its status), `mm_compaction_defer_reset`. A zone of the zonelist with no event at
all returned COMPACT_SUCCESS from `compaction_suit_allocation_order`'s watermark check
(no tracepoint there); `try_to_compact_pages` then resets its deferral (one
`defer_reset`). `__alloc_pages_direct_compact` counts compact_success and resets the
zone's deferral once more (`compaction_defer_reset(.., true)`: consider=0 limit=1)
when it got a page: so a call got its page iff it has one more `defer_reset` than
zones that ended COMPACT_SUCCESS (by the watermark check, by `__compact_finished` or by
capture). A COMPACT_SUCCESS run with an `mm_compaction_finished ret=success` is
`__compact_finished`'s free-list check; without one, a captured page
(`compaction_capture`, the `capc->page` break). kswapd/kcompactd "ran" in a call when a
sched_switch to them falls between its `try_to_compact_pages` and its last event.
"""
import re
import sys
from collections import Counter, defaultdict

LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>[\d.]+): (?P<ev>\w+): (?P<args>.*)$')
# `perf script` (and mmsim's --tracepoints-out): no flags column, `system:event`.
PERF_LINE = re.compile(r'^\s*(?P<comm>\S+)\s+(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<ts>[\d.]+): \w+:(?P<ev>\w+): (?P<args>.*)$')
KV = re.compile(r'(\w+)=(\S+?),?(?=\s|$)')


def runs_of(path):
    text = open(path, errors='replace').read().replace('\r', '')
    out = {}
    for m in re.finditer(r'^MMV-BEGIN (\d+) rc=\d+\n(.*?)^MMV-END \1$', text, re.M | re.S):
        sec = dict(re.findall(r'^MMV-SECTION (\w+)\n(.*?)(?=^MMV-SECTION |\Z)', m.group(2), re.M | re.S))
        out[int(m.group(1))] = sec
    return out


def vmdelta(sec):
    def kv(b):
        return {p[0]: int(p[1]) for p in (l.split() for l in b.splitlines()) if len(p) == 2 and p[1].lstrip('-').isdigit()}
    a, b = kv(sec['vm0']), kv(sec['vm1'])
    return {k: b[k] - a.get(k, 0) for k in b}


def parse(trace):
    evs = []
    for l in trace.splitlines():
        m = LINE.match(l) or PERF_LINE.match(l)
        if not m:
            continue
        d = m.groupdict()
        d['pid'] = int(d['pid'])
        d['ts'] = float(d['ts'])
        d['kv'] = dict(KV.findall(d['args']))
        evs.append(d)
    return evs


CALL_EVENTS = {'mm_compaction_suitable', 'mm_compaction_begin', 'mm_compaction_end',
               'mm_compaction_finished', 'mm_compaction_migratepages', 'mm_compaction_deferred',
               'mm_compaction_defer_compaction', 'mm_compaction_defer_reset'}


def calls(evs, task):
    """The direct compactions of `task` (comm prefix), each a dict."""
    out = []
    cur = None
    # Who had the CPU: kswapd/kcompactd switched in at ts.
    for i, e in enumerate(evs):
        if e['ev'] == 'sched_switch':
            continue
        if not e['comm'].startswith(task):
            continue
        if e['ev'] == 'mm_compaction_try_to_compact_pages':
            cur = {'i0': i, 'ts0': e['ts'], 'prio': int(e['kv']['priority']), 'zones': [],
                   'resets': 0, 'succ_status': 0, 'next': None, 'migrated': 0, 'pid': e['pid']}
            out.append(cur)
            continue
        if cur is None:
            continue
        if e['pid'] != cur['pid']:
            continue
        if e['ev'] in CALL_EVENTS and cur['next'] is None:
            k = e['kv']
            z = cur['zones'][-1] if cur['zones'] else None
            if e['ev'] == 'mm_compaction_deferred':
                cur['zones'].append({'zone': k['zone'], 'res': 'deferred'})
            elif e['ev'] == 'mm_compaction_suitable':
                r = k['ret']
                cur['zones'].append({'zone': k['zone'], 'res': r if r != 'continue' else None, 'suit': r})
            elif e['ev'] == 'mm_compaction_begin':
                z['begin'] = (int(k['migrate_pfn'], 16), int(k['free_pfn'], 16),
                              int(k['zone_start'], 16), int(k['zone_end'], 16))
            elif e['ev'] == 'mm_compaction_finished':
                z['finished'] = k['ret']
            elif e['ev'] == 'mm_compaction_migratepages':
                cur['migrated'] += int(k['nr_migrated'])
            elif e['ev'] == 'mm_compaction_end':
                z['res'] = k['status']
                z['end'] = (int(k['migrate_pfn'], 16), int(k['free_pfn'], 16))
                if k['status'] == 'success':
                    cur['succ_status'] += 1
                    z['how'] = 'compact_finished' if z.get('finished') == 'success' else 'capture'
            elif e['ev'] == 'mm_compaction_defer_reset':
                cur['resets'] += 1
                cur.setdefault('reset_zones', []).append(k['zone'])
            cur['i1'] = i
            cur['ts1'] = e['ts']
            continue
        if cur['next'] is None:
            cur['next'] = (e['ev'], e['kv'].get('order'))
            if e['ev'] == 'mm_page_alloc':
                cur['pfn'] = int(e['kv']['pfn'], 16)
    return out


def classify(c):
    """(stalled, got_page, how, result): whether `__alloc_pages_direct_compact`
    counted a stall (some zone not COMPACT_SKIPPED) and a success, how the page came
    (`capture`, `compact_finished`, `watermark_ok_at_start`) or, for a failed
    call, each zone's result, and `try_to_compact_pages`' result (the maximum)."""
    zres = [z['res'] for z in c['zones']]
    rank = {'not_suitable_zone': 0, 'skipped': 1, 'deferred': 2, 'complete': 5,
            'partial_skipped': 6, 'contended': 7, 'success': 8}
    silent = c['resets'] - c['succ_status']  # 0, 1 or 2
    # resets = succ_status + wm_success + got_page, each at most 1 a call (the walk stops
    # at the first success).
    got_by_alloc = c['next'] is not None and c['next'][0] == 'mm_page_alloc'
    if silent == 2:
        wm_success, got = 1, True
    elif silent == 1:
        if c['succ_status']:
            wm_success, got = 0, True
        else:
            # one reset and no success run: a silent zone without a page, or a page
            # after COMPLETE etc.; the next event (an order-4 mm_page_alloc) decides.
            wm_success, got = (0, True) if got_by_alloc else (1, False)
    else:
        wm_success, got = 0, False
    rc = max([rank.get(r, 0) for r in zres if r] + ([8] if wm_success else []) + [1])
    stalled = rc != 1
    if wm_success:
        how = 'watermark_ok_at_start'
    elif c['succ_status']:
        how = next(z['how'] for z in c['zones'] if z.get('res') == 'success')
    else:
        how = 'status=' + '+'.join(f"{z['zone']}:{z['res']}" for z in c['zones'])
    return stalled, got, how, rc


def kthread_windows(evs):
    """[(ts_in, ts_out, comm)] of kswapd/kcompactd on the CPU."""
    w, on = [], {}
    for e in evs:
        if e['ev'] != 'sched_switch':
            continue
        k = e['kv']
        pc, nc = k.get('prev_comm', ''), k.get('next_comm', '')
        if pc.startswith(('kswapd', 'kcompactd')) and pc in on:
            w.append((on.pop(pc), e['ts'], pc))
        if nc.startswith(('kswapd', 'kcompactd')):
            on[nc] = e['ts']
    return w


def main():
    args = sys.argv[1:]
    task = 'mmsim-probe'
    if len(args) == 3 and args[0] == '--task':
        task, args = args[1], args[2:]
    if len(args) != 1:
        sys.exit("usage: trace-compaction.py [--task COMM] CONSOLE.log|TRACEPOINTS.txt")
    path = args[0]
    runs = runs_of(path)
    if not runs:
        # mmsim's --tracepoints-out: the whole file is one run's trace.
        runs = {0: {'trace': open(path, errors='replace').read()}}
    for n, sec in sorted(runs.items()):
        if 'trace' not in sec:
            continue
        vd = vmdelta(sec) if 'vm0' in sec else {}
        evs = parse(sec['trace'])
        cs = calls(evs, task)
        wins = kthread_windows(evs)
        st = re.search(r'overrun: (\d+)', sec.get('tracestats', ''))
        print(f"== run {n}: {len(evs)} events (overrun {st.group(1) if st else '?'}); vmstat compact_stall "
              f"{vd.get('compact_stall')} compact_success {vd.get('compact_success')} compact_fail "
              f"{vd.get('compact_fail')}")
        tot = Counter()
        hows = Counter()
        ends = Counter()
        zone_ends = Counter()
        prio = Counter()
        ran = Counter()
        for c in cs:
            stalled, got, how, rc = classify(c)
            tot['calls'] += 1
            tot['stall'] += stalled
            tot['success'] += got
            prio[(c['prio'], got)] += 1
            if got:
                hows[how] += 1
            for z in c['zones']:
                zone_ends[(z['zone'], z['res'], z.get('how', ''))] += 1
            if stalled and not got:
                ends[how] += 1
            # kthreads on the CPU within the call
            t0, t1 = c['ts0'], c.get('ts1', c['ts0'])
            k = {w[2] for w in wins if w[0] < t1 and w[1] > t0}
            ran[(got, tuple(sorted(k)))] += 1
        print(f"   calls {tot['calls']}, stalls {tot['stall']}, successes {tot['success']}")
        print("   successes by how the page came:", dict(hows))
        print("   failed stalls by the zones' results:", dict(ends.most_common(8)))
        print("   per-zone results (zone, status, how):", dict(zone_ends.most_common(12)))
        print("   (priority, got page):", dict(prio))
        if wins:
            print("   (got page, kthreads on the CPU during the call):", dict(ran))
        # Where a captured block lies against its run's scanners: inside the range
        # the migrate scanner covered in that run (its migrations freed it), or not.
        where = Counter()
        for c in cs:
            z = next((z for z in c['zones'] if z.get('how') == 'capture'), None)
            if z is None or 'pfn' not in c or 'begin' not in z:
                continue
            m0, m1, p = z['begin'][0], z['end'][0], c['pfn']
            where['in the migrate scanner\'s range' if m0 - 512 <= p < m1 + 512 else
                  ('above the free scanner' if p >= z['end'][1] else 'elsewhere')] += 1
        print("   captured blocks:", dict(where))
        mg = Counter(min(c['migrated'], 64) // 16 * 16 for c in cs if classify(c)[1])
        print("   successful calls by pages migrated (bins of 16):", dict(sorted(mg.items())))
        # Runs of consecutive successful calls, and the upper zone's runs whose migrate
        # scanner started away from the zone's start right after one that started
        # there (the skip hints were reset in between: __reset_isolation_suitable
        # moves the cached position to the first block it cleared).
        streaks, cur, restarts, prev = [], 0, 0, None
        for c in cs:
            z = next((z for z in c['zones'] if 'begin' in z and z['zone'] != 'DMA'), None)
            if z:
                if prev is not None and prev == z['begin'][2] and z['begin'][0] != z['begin'][2]:
                    restarts += 1
                prev = z['begin'][0]
            if classify(c)[1]:
                cur += 1
            elif cur:
                streaks.append(cur)
                cur = 0
        if cur:
            streaks.append(cur)
        if streaks:
            print(f"   runs of consecutive successes: {len(streaks)}, longest {max(streaks)}, "
                  f"mean {sum(streaks) / len(streaks):.1f}; restarts after a reset: {restarts}")
        # direct calls' scanners
        mig = [c['migrated'] for c in cs]
        print(f"   pages migrated by direct calls: {sum(mig)}; calls that migrated any: {sum(1 for m in mig if m)}")
        kc = Counter((e['comm'].split('-')[0], e['kv'].get('status')) for e in evs if e['ev'] == 'mm_compaction_end' and not e['comm'].startswith(task))
        print("   other tasks' compact_zone ends:", dict(kc))


if __name__ == '__main__':
    main()
