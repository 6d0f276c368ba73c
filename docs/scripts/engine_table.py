#!/usr/bin/env python3
"""A per-instance timeline table from `sim --engine-timeline`.

Usage: engine_table.py DIR [SECONDS ...]

DIR holds the engine_timeline.json that `sim --engine-timeline` writes. For each policy and each
time asked for (default: 10 20 30 40 50 80 120 200 300 360), the sample at or just before it:
requests in flight per instance (mean and population standard deviation over the instances),
mean KV usage, preemptions in the 10 s before it, and requests held in the dispatch queues (all
instances). Python 3 standard library only.
"""
import bisect
import json
import statistics
import sys

DEFAULT_TIMES = [10, 20, 30, 40, 50, 80, 120, 200, 300, 360]


def at(times, t):
    """Index of the last sample at or before t (the first one if none)."""
    return max(0, bisect.bisect_right(times, t) - 1)


def row(policy, t):
    times = policy['time_s']
    i = at(times, t)
    before = at(times, t - 10)
    instances = policy['instances']
    in_flight = [inst['in_flight'][i] for inst in instances]
    kv = statistics.mean(inst['kv_usage'][i] for inst in instances)
    preempted = sum(inst['preemptions'][i] - inst['preemptions'][before] for inst in instances)
    queued = sum(inst['queued'][i] for inst in instances)
    return (f"{statistics.mean(in_flight):.1f} ± {statistics.pstdev(in_flight):.1f}", f"{kv:.2f}",
            str(preempted), str(queued))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    with open(argv[1] + '/engine_timeline.json') as f:
        run = json.load(f)
    seconds = [float(s) for s in argv[2:]] or DEFAULT_TIMES
    policies = run['policies']
    head = ['time (s)']
    for p in policies:
        head += [p['name'] + ': in flight', 'KV', 'preemptions', 'queued']
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---:|' * len(head))
    for t in seconds:
        cells = [f"{t:g}"]
        for p in policies:
            cells += row(p, t)
        print('| ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main(sys.argv)
