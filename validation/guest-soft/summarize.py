#!/usr/bin/env python3
"""Summarises the console log of validation/guest-soft/run.sh: per run, each group's end
(seconds after both jobs started), its v1 memory.stat pgmajfault and
workingset_refault_anon, the node's pswpin/pswpout, and /long's refaults, major faults
and usage and the node's pswpout before and after /short's end (at the last 100 ms
sample at or before it). With --json, one JSON object per run.

With --validate, the `mmsim validate` result of the suite's case `guest-soft-v1`
(validation/results/guest-soft-v1.json: the case, fair.toml's text and one kernel run
per run of the log); --from-jsonl FILE reads the runs from a --json file instead of a
console log. Then `mmsim validate --from-results --rebaseline --case guest-soft-v1` adds
the event stream's digest and the accepted errors.

    python3 validation/guest-soft/summarize.py console.log [--json]
    python3 validation/guest-soft/summarize.py console.log --validate [--date ISO] \
        > validation/results/guest-soft-v1.json
    python3 validation/guest-soft/summarize.py --from-jsonl results/kernel-6.1-416M.jsonl \
        --validate --date 2026-11-28T23:13:00Z > validation/results/guest-soft-v1.json
"""
import json
import pathlib
import re
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
CASE = 'guest-soft-v1'


def runs(text):
    text = text.replace('\r', '')
    for m in re.finditer(r'SV-BEGIN (\d+).*?SV-END-RUN \1', text, re.S):
        yield m.group(0)


def kv(block):
    d = {}
    for line in block.splitlines():
        p = line.split()
        if len(p) == 2 and re.fullmatch(r'-?\d+', p[1]):
            d[p[0]] = int(p[1])
    return d


def section(run, name):
    m = re.search(r'SV-SECTION ' + re.escape(name) + r'\n(.*?)(?=\nSV-)', run, re.S)
    return m.group(1) if m else ''


def summarize(run):
    t0 = float(re.search(r'SV-T0 (\S+)', run).group(1))
    end = {g: float(re.search(rf'SV-END {g} \d+ (\S+)', run).group(1)) - t0 for g in ('short', 'long')}
    vm0, vm1 = kv(section(run, 'vm0')), kv(section(run, 'vm1'))
    dv = {k: vm1[k] - vm0.get(k, 0) for k in vm1}
    out = {'short_end_s': round(end['short'], 2), 'long_end_s': round(end['long'], 2)}
    mem = re.search(r'SV-MEMINFO (.*)', run).group(1)
    out['memfree_kb'] = int(re.search(r'MemFree: (\d+)', mem).group(1))
    for g in ('short', 'long'):
        ms = kv(section(run, 'ms.' + g))
        out[g] = {k: ms.get(k, 0) for k in ('pgmajfault', 'workingset_refault_anon', 'pgfault')}
        out[g]['max_usage'] = int(section(run, 'max.' + g).strip() or 0)
        probe = json.loads(section(run, 'probe.' + g))
        out[g]['wall_s'] = round(probe['run']['wall_s'], 2)
    for k in ('pswpin', 'pswpout', 'pgscan_kswapd', 'pgscan_direct', 'pgsteal_kswapd',
              'pgsteal_direct', 'allocstall_normal', 'allocstall_dma32', 'pgmajfault'):
        out[k] = dv.get(k, 0)
    # Samples: t short usage refault_anon swap pgmajfault long usage ... pswpin pswpout
    samples = []
    for line in run.splitlines():
        if line.startswith('SV-S '):
            p = line.split()
            try:
                t = float(p[1]) - t0
                s = dict(zip(('usage', 'refault', 'swap', 'majflt'), map(int, p[3:7])))
                lg = dict(zip(('usage', 'refault', 'swap', 'majflt'), map(int, p[8:12])))
                samples.append((t, s, lg, int(p[12]), int(p[13]),
                                int(p[14]) * 1024 if len(p) > 14 else None))
            except (ValueError, IndexError):
                pass
    if samples:
        before = [s for s in samples if s[0] <= end['short']]
        b = before[-1] if before else samples[0]
        ls = out['long']
        out['at_short_end'] = {'t_s': round(b[0], 2), 'long_usage': b[2]['usage'],
                               'long_refault': b[2]['refault'], 'long_majflt': b[2]['majflt']}
        out['long_refault_before_after'] = [b[2]['refault'], ls['workingset_refault_anon'] - b[2]['refault']]
        out['long_majflt_before_after'] = [b[2]['majflt'], ls['pgmajfault'] - b[2]['majflt']]
        out['pswpout_before_after'] = [b[4] - vm0['pswpout'], vm1['pswpout'] - b[4]]
        out['pswpin_before_after'] = [b[3] - vm0['pswpin'], vm1['pswpin'] - b[3]]
        after = [s for s in samples if s[0] > end['short']]
        out['long_usage_max_after'] = max((s[2]['usage'] for s in after), default=0)
        # The memory the jobs had: MemFree + both groups' usage, while both ran with
        # swap in use (the median of those samples).
        jm = sorted(x[5] + x[1]['usage'] + x[2]['usage'] for x in samples
                    if x[5] is not None and x[0] <= end['short'] and x[4] > vm0['pswpout'])
        if jm:
            out['job_memory_mib'] = round(jm[len(jm) // 2] / (1 << 20), 1)
        out['sample_interval_s'] = round((samples[-1][0] - samples[0][0]) / max(1, len(samples) - 1), 3)
    return out


def kernel_run(r):
    """One run of summarize() as a KernelRun of `mmsim validate` (crates/mmsim-cli/src/
    validate/counters.rs): each group's memory.stat counters, /proc/vmstat deltas, the
    sample at /short's end and both jobs' ends."""
    groups = {}
    for g in ('short', 'long'):
        x = r[g]
        groups['/' + g] = {'pgmajfault': x['pgmajfault'],
                           'workingset_refault_anon': x['workingset_refault_anon'],
                           'pgfault': x['pgfault'], 'max_usage_in_bytes': x['max_usage']}
    vmstat = {k: r[k] for k in ('pswpin', 'pswpout', 'pgscan_kswapd', 'pgscan_direct',
                                'pgsteal_kswapd', 'pgsteal_direct', 'allocstall_normal',
                                'allocstall_dma32', 'pgmajfault')}
    out = {'memcg': {}, 'vmstat': vmstat,
           'probe': {'short_wall_s': r['short']['wall_s'], 'long_wall_s': r['long']['wall_s']},
           'groups': groups, 'ends_s': {'short': r['short_end_s'], 'long': r['long_end_s']}}
    if 'at_short_end' in r:
        a = r['at_short_end']
        out['at_split'] = {
            't_s': a['t_s'],
            'groups': {'/long': {'workingset_refault_anon': a['long_refault'],
                                 'pgmajfault': a['long_majflt'], 'usage_in_bytes': a['long_usage']}},
            'vmstat': {'pswpout': r['pswpout_before_after'][0],
                       'pswpin': r['pswpin_before_after'][0]}}
    return out


def case_result(res, release, date):
    suite = tomllib.loads((HERE.parent / 'suite.toml').read_text())
    case = next(c for c in suite['case'] if c['name'] == CASE)
    return {'format': 'mmsim-validate', 'version': 1, 'case': case,
            'scenario_toml': (HERE.parent / case['scenario']).read_text(),
            'kernel': {'site': 'guest', 'release': release, 'date': date, 'lru_gen': False,
                       'runs': [kernel_run(r) for r in res]},
            'accepted': {}}


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    release = arg('--release')
    if '--from-jsonl' in sys.argv:
        res = [json.loads(line) for line in open(arg('--from-jsonl')) if line.strip()]
    else:
        text = open(sys.argv[1], errors='replace').read()
        res = [summarize(r) for r in runs(text)]
        m = re.search(r'SV-KERNEL (\S+)', text)
        release = release or (m.group(1) if m else None)
    if '--validate' in sys.argv:
        import datetime
        date = arg('--date') or datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        print(json.dumps(case_result(res, release or '6.1.0-50-cloud-amd64', date), indent=2))
        return
    if '--json' in sys.argv:
        for r in res:
            print(json.dumps(r))
        return
    for i, r in enumerate(res):
        print(f"run {i}: short ends {r['short_end_s']} s, long {r['long_end_s']} s; "
              f"pswpin {r['pswpin']} pswpout {r['pswpout']} (before/after {r.get('pswpout_before_after')})")
        for g in ('short', 'long'):
            x = r[g]
            print(f"  {g}: pgmajfault {x['pgmajfault']} refault_anon {x['workingset_refault_anon']} "
                  f"max_usage {x['max_usage'] >> 20}M wall {x['wall_s']} s")
        if 'at_short_end' in r:
            print(f"  long at short's end ({r['at_short_end']['t_s']} s): usage "
                  f"{r['at_short_end']['long_usage'] >> 20}M; refaults before/after "
                  f"{r['long_refault_before_after']}, majflt before/after {r['long_majflt_before_after']}; "
                  f"usage max after {r['long_usage_max_after'] >> 20}M; samples every {r['sample_interval_s']} s; "
                  f"memory of the jobs {r.get('job_memory_mib')} MiB")


if __name__ == '__main__':
    main()
