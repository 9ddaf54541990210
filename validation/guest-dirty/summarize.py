#!/usr/bin/env python3
"""Per run of validation/guest-dirty (the console log of tools/validate/guest-run.sh with
TRACE=trace.events): the writer's calls into balance_dirty_pages() (its task's
global_dirty_state events, one per pass of the loop), the pages dirtied between them,
the pauses (balance_dirty_pages events), the most dirty and writeback pages a call saw,
the dirtied count at the first call after background writeback had written something,
the dirty pages over bg_thresh at the first call that saw NR_FILE_DIRTY above it (the call
whose balance_dirty_pages() starts background writeback: v6.12 starts it there, when
nr_dirty > bg_thresh, page-writeback.c:1877-1879), and the run's /proc/vmstat deltas (nr_dirtied, nr_written, pgpgout) and end gauges."""
import collections
import re
import sys

LINE = re.compile(r'\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)')


def kv(block):
    return {p[0]: int(p[1]) for p in (l.split() for l in block.splitlines())
            if len(p) == 2 and re.fullmatch(r'-?\d+', p[1])}


def main(path):
    text = open(path, errors='replace').read().replace('\r', '')
    for m in re.finditer(r'^MMV-BEGIN (\d+) rc=\d+\n(.*?)^MMV-END \1$', text, re.M | re.S):
        sec = dict(re.findall(r'^MMV-SECTION (\w+)\n(.*?)(?=^MMV-SECTION |\Z)', m.group(2), re.M | re.S))
        calls, pauses, others = [], [], collections.Counter()
        for l in sec.get('trace', '').splitlines():
            t = LINE.match(l)
            if not t:
                continue
            comm, _, _, name, rest = t.groups()
            f = {k: int(v) for k, v in re.findall(r'(\w+)=(-?\d+)', rest)}
            if name == 'global_dirty_state' and comm == 'mmsim-probe':
                calls.append(f)
            elif name == 'balance_dirty_pages':
                pauses.append(f)
            else:
                others[(comm, name)] += 1
        vm0, vm1 = kv(sec['vm0']), kv(sec['vm1'])
        d0, w0 = calls[0]['dirtied'], calls[0]['written']
        gaps = collections.Counter(b['dirtied'] - a['dirtied'] for a, b in zip(calls, calls[1:]))
        first_bg = next((c['dirtied'] - d0 for c in calls if c['written'] > w0), None)
        over = next(((c['dirty'] - c['bg_thresh'], c['thresh'], c['bg_thresh']) for c in calls
                     if c['dirty'] > c['bg_thresh']), None)
        print(f"run {m.group(1)}: calls {len(calls)} (other events {dict(others)}); "
              f"pauses {len(pauses)} ({sum(p['pause'] for p in pauses if p['pause'] > 0)} jiffies); "
              f"gaps {gaps.most_common(5)}; most dirty+writeback {max(c['dirty'] + c['writeback'] for c in calls)}; "
              f"first call after background writeback at dirtied +{first_bg}; "
              f"first call past bg_thresh: dirty - bg_thresh {over and over[0]} "
              f"(thresh / bg_thresh there {over and over[1]} / {over and over[2]})")
        d = {k: vm1[k] - vm0[k] for k in ('nr_dirtied', 'nr_written', 'pgpgout')}
        g = {k: vm1[k] for k in ('nr_dirty', 'nr_writeback', 'nr_dirty_threshold', 'nr_dirty_background_threshold')}
        print(f"  vmstat deltas {d}; at the end {g}; buffer {sec.get('tracestats', '').split(chr(10))[1:3]}")


if __name__ == '__main__':
    main(sys.argv[1])
