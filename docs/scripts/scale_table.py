#!/usr/bin/env python3
"""The scaling and slowdown tables of docs/benchmarks.md from `sim --scale` / `--slow-down` outputs.

Usage: scale_table.py SCALEOUT_DIR SCALEIN_DIR REFERENCE_DIR
       scale_table.py LABEL=DIR [LABEL=DIR ...] REFERENCE_DIR

Each directory holds the timeline.json that `sim --scale` or `sim --slow-down` writes; the
first form labels its two runs +2 and −1. Windows are aligned to the
change, so the first window starting at the change is "0-30 s after". Differences are in
percentage points, scaled run minus reference, window by window; "rest of run" averages are
weighted by requests per window; "work in time" is the headline's view of the same windows,
the feasible requests' prompt tokens within the SLO over all of theirs (weighted by those
tokens); "worst" is the scaled run's lowest window attainment from the change on. For runs
with --slow-down a second table gives how fast the routers notice: the mean of router 0's
estimates of a cold reference prompt on the slowed instances over the median of the others'
(timeline.json `cold_ttft_estimate_s`), at the end of the window before the change and 30 s,
1, 2 and 5 minutes after it. Python 3 standard library only.
"""
import json
import statistics
import sys


def load(directory):
    with open(directory + '/timeline.json') as f:
        return json.load(f)


def policy(run, name):
    return next(p for p in run['policies'] if p['name'] == name)


def weighted(windows, key, weight='requests'):
    known = [w for w in windows if w.get(key) is not None]
    return 100 * sum(w[weight] * w[key] for w in known) / sum(w[weight] for w in known)


def work(windows):
    return weighted(windows, 'token_attainment', 'feasible_prompt_tokens')


def rows(label, scaled, reference):
    change = scaled['changes_s'][0]
    out = []
    for name in [p['name'] for p in scaled['policies']]:
        after = [w for w in policy(scaled, name)['windows'] if w['start_s'] >= change - 1e-6]
        ref_by_start = {round(w['start_s'], 3): w for w in policy(reference, name)['windows']}
        ref = [ref_by_start[round(w['start_s'], 3)] for w in after]
        diff = [100 * (a['hit_rate'] - b['hit_rate']) for a, b in zip(after[:2], ref[:2])]
        worst = min(w['attainment'] for w in after if w.get('attainment') is not None)
        out.append(f"| {label} | {name} | {diff[0]:+.1f} | {diff[1]:+.1f} | "
                   f"{weighted(after, 'hit_rate'):.1f} % vs {weighted(ref, 'hit_rate'):.1f} % | "
                   f"{weighted(after, 'attainment'):.1f} % vs {weighted(ref, 'attainment'):.1f} % | "
                   f"{work(after):.1f} % vs {work(ref):.1f} % | "
                   f"{100 * worst:.0f} % |")
    return out


def slowed_slots(run):
    """The instances a --slow-down run slows (factor other than 1)."""
    slots = set()
    for step in filter(None, run.get('slow_down', '').split(',')):
        _, instance, factor = step.strip().rsplit(':', 2)
        if float(factor) != 1:
            slots.add(int(instance))
    return sorted(slots)


def estimate_rows(label, scaled):
    slots = slowed_slots(scaled)
    if not slots:
        return []
    change = scaled['changes_s'][0]
    width = scaled['window_s']
    out = []
    for p in scaled['policies']:
        by_end = {round(w['start_s'] + width - change): w['cold_ttft_estimate_s'] for w in p['windows']}
        cells = []
        for after in (0, 30, 60, 120, 300):
            estimates = by_end.get(after)
            slowed = [estimates[k] for k in slots if estimates and estimates[k] is not None]
            others = [e for k, e in enumerate(estimates or []) if k not in slots and e is not None]
            cells.append(f"{statistics.mean(slowed) / statistics.median(others):.2f}x"
                         if slowed and others else "-")
        out.append(f"| {label} | {p['name']} | " + " | ".join(cells) + " |")
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    runs = argv[1:-1]
    if all('=' in r for r in runs):
        labelled = [tuple(r.split('=', 1)) for r in runs]
    elif len(runs) == 2 and not any('=' in r for r in runs):
        labelled = [('+2', runs[0]), ('−1', runs[1])]
    else:
        sys.exit(__doc__)
    reference = load(argv[-1])
    print('| run | policy | hit rate, 0-30 s after | 30-60 s after | hit rate, rest of run '
          '| SLO attainment, rest of run | work in time, rest of run | worst window after |')
    print('|---|---|---:|---:|---:|---:|---:|---:|')
    for label, directory in labelled:
        print('\n'.join(rows(label, load(directory), reference)))
    estimates = [row for label, directory in labelled for row in estimate_rows(label, load(directory))]
    if estimates:
        print()
        print('| run | policy | slowed instances\' estimate over the others\': before the change '
              '| 30 s after | 1 min | 2 min | 5 min |')
        print('|---|---|---:|---:|---:|---:|---:|')
        print('\n'.join(estimates))


if __name__ == '__main__':
    main(sys.argv)
