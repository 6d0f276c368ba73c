#!/usr/bin/env python3
"""Medians over seeds of `sim --scale` / `--slow-down` runs against their references.

Usage: seed_table.py RUN_DIR=REFERENCE_DIR [...] [--label LABEL RUN_DIR=REFERENCE_DIR [...]] ...

Each RUN_DIR holds the timeline.json of one seed's run, REFERENCE_DIR that of the same
command with nothing changed at the same instant (factor 1 for --slow-down). The pairs after
a --label LABEL (before the first: none) are one group; per group and policy it prints, from the first
change on, the median and range over the runs of: the share of requests within the SLO,
the work in time (the feasible requests' prompt tokens within the SLO, as scale_table.py
weighs them), the worst window by requests, and the range of the references' two shares.
A row is named by its policy, then its LABEL. Python 3 standard library only.
"""
import statistics
import sys

from scale_table import load, policy, weighted, work


def measure(run_dir, ref_dir):
    run, ref = load(run_dir), load(ref_dir)
    change = run['changes_s'][0]
    out = {}
    for p in run['policies']:
        after = [w for w in p['windows'] if w['start_s'] >= change - 1e-6]
        ref_by_start = {round(w['start_s'], 3): w for w in policy(ref, p['name'])['windows']}
        before = [ref_by_start[round(w['start_s'], 3)] for w in after]
        worst = min(w['attainment'] for w in after if w.get('attainment') is not None)
        out[p['name']] = (weighted(after, 'attainment'), work(after), 100 * worst,
                          weighted(before, 'attainment'), work(before))
    return out


def spread(values, digits):
    fmt = f'{{:.{digits}f}}'
    return (fmt.format(statistics.median(values)) + ' % ('
            + fmt.format(min(values)) + '-' + fmt.format(max(values)) + ')')


def main(argv):
    args = argv[1:]
    if not args:
        sys.exit(__doc__)
    groups = {}
    label = ''
    while args:
        arg = args.pop(0)
        if arg == '--label' and args:
            label = args.pop(0)
            continue
        if '=' not in arg:
            sys.exit(__doc__)
        run_dir, ref_dir = arg.split('=', 1)
        for name, values in measure(run_dir, ref_dir).items():
            groups.setdefault((label, name), []).append(values)
    print('| row | in time, rest of run | work in time, rest of run | worst window after '
          '| reference: in time / work in time |')
    print('|---|---:|---:|---:|---:|')
    for (label, name), runs in groups.items():
        cols = list(zip(*runs))
        row = f'`{name}`' + (f', {label}' if label else '')
        print(f'| {row} | {spread(cols[0], 1)} | {spread(cols[1], 1)} | {spread(cols[2], 0)} | '
              f'{min(cols[3]):.1f}-{max(cols[3]):.1f} % / {min(cols[4]):.1f}-{max(cols[4]):.1f} % |')


if __name__ == '__main__':
    main(sys.argv)
