#!/usr/bin/env python3
"""Compares mmsim's run of validation/guest-soft/fair.toml with the 6.1 guest's runs
recorded in results/ (summarize.py --json of run.sh's console log, one run a line;
--results NAME picks the file, default kernel-6.1-416M.jsonl), counter by counter: kernel mean, spread (largest deviation of a run from
the mean, relative), mmsim, error (mmsim - mean) / mean. No guest needed.

    python3 validation/guest-soft/compare.py target/release/mmsim [--results kernel-6.1-448M.jsonl]
        [--memory 355M] [--json]

"before"/"after" split the run at /short's end: in the guest at the last 100 ms sample
at or before it, in mmsim at the last stats sample (100 ms of simulated time) at or
before /short's exit.
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def mmsim_counters(mmsim, memory):
    text = (HERE / 'fair.toml').read_text()
    if memory:
        text = re.sub(r'^memory = "[^"]*"', f'memory = "{memory}"', text, count=1, flags=re.M)
    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / 'fair.toml'
        p.write_text(text)
        r = json.loads(subprocess.run([mmsim, 'run', str(p), '--json', '-q'], check=True,
                                      capture_output=True, text=True).stdout)
    ws = {w['name']: w for w in r['workloads']}
    paths, samples = r['stats_memcg_paths'], r['stats_samples']
    ex = ws['short']['exit_ns']
    b, last = [s for s in samples if s['t_ns'] <= ex][-1], samples[-1]
    c = {}
    for g in ('short', 'long'):
        i = paths.index('/' + g)
        c[f'{g}.pgmajfault'] = last['memcg'][i]['pgmajfault']
        c[f'{g}.workingset_refault_anon'] = last['memcg'][i]['workingset_refault_anon']
    i = paths.index('/long')
    c['long.refault_before_short_end'] = b['memcg'][i]['workingset_refault_anon']
    c['long.refault_after_short_end'] = c['long.workingset_refault_anon'] - c['long.refault_before_short_end']
    c['pswpin'] = r['vmstat'].get('pswpin', 0)
    c['pswpout'] = r['vmstat'].get('pswpout', 0)
    c['pswpout_after_short_end'] = c['pswpout'] - b['vmstat'].get('pswpout', 0)
    c['short_end/long_end'] = ex / ws['long']['end_ns']
    return c


def kernel_counters(run):
    c = {}
    for g in ('short', 'long'):
        c[f'{g}.pgmajfault'] = run[g]['pgmajfault']
        c[f'{g}.workingset_refault_anon'] = run[g]['workingset_refault_anon']
    c['long.refault_before_short_end'], c['long.refault_after_short_end'] = run['long_refault_before_after']
    c['pswpin'] = run['pswpin']
    c['pswpout'] = run['pswpout']
    c['pswpout_after_short_end'] = run['pswpout_before_after'][1]
    c['short_end/long_end'] = run['short_end_s'] / run['long_end_s']
    return c


def main():
    mmsim = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('--') else 'mmsim'
    memory = sys.argv[sys.argv.index('--memory') + 1] if '--memory' in sys.argv else None
    name = sys.argv[sys.argv.index('--results') + 1] if '--results' in sys.argv else 'kernel-6.1-416M.jsonl'
    runs = [kernel_counters(json.loads(line))
            for line in (HERE / 'results' / name).read_text().splitlines() if line.strip()]
    m = mmsim_counters(mmsim, memory)
    rows = []
    for k in m:
        vals = [r[k] for r in runs]
        mean = sum(vals) / len(vals)
        spread = max(abs(v - mean) for v in vals) / mean if mean else 0.0
        err = (m[k] - mean) / mean if mean else float('nan')
        rows.append({'counter': k, 'kernel_mean': mean, 'spread': spread, 'mmsim': m[k], 'error': err})
    if '--json' in sys.argv:
        print(json.dumps(rows))
        return
    print(f"{'counter':32} {'kernel mean':>12} {'spread':>8} {'mmsim':>10} {'error':>9}")
    for r in rows:
        fmt = (lambda v: f'{v:12.3f}') if r['counter'] == 'short_end/long_end' else (lambda v: f'{v:12,.0f}')
        print(f"{r['counter']:32} {fmt(r['kernel_mean'])} {r['spread']:8.1%} {fmt(r['mmsim']):>10} {r['error']:+9.1%}")


if __name__ == '__main__':
    main()
