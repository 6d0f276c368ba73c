#!/usr/bin/env python3
"""What two runs of the same workload did with its requests, from `sim --request-log`.

Usage: request_diff.py A.jsonl B.jsonl [--bands 4000,16000,64000] [--from SECONDS] [--scrape-interval 0.5]

A and B are requests-<policy>.jsonl files that `sim --request-log` wrote for the same workload
(the same trace, warm-up and seed; any policy, router count or rate). With --from, only the
requests that arrived at or after SECONDS on the simulation's clock count (for a --scale or
--slow-down run, the change's time from its timeline.json `changes_s`). Prints three markdown
tables:

1. For each run and prompt-size band (prompt tokens below the first bound, between bounds, at or
   above the last), the feasible requests (those the yardstick counts) that missed their TTFT
   objective, by how: served late, not sent because they could no longer make it (`hopeless`:
   the queue's estimate at their release), turned away at their wait bound (`wait bound`),
   turned away by a full queue (`queue full`), otherwise turned away, or without a first token
   when the run ended; and the share of all feasible prompt tokens the band's misses hold.
2. The feasible requests A served within their objective and B did not, by band: how B missed
   them, and for those B served late, the mean time B held them in its dispatch queues
   (arrival to release) and the mean time in the engine (release to first token), against A's
   for the same requests; and how many went to the same instance in both.
3. Of those B served late, what was ahead of them on their instance when B released them: the
   logged requests released there before and without their first token yet (in the engine's
   queue or prefill), from the same router and from other routers (mean requests and uncached
   prompt tokens per late request); and how many were behind another router's prompt of at
   least 8,000 uncached tokens released less than one scrape interval earlier (--scrape-interval,
   in seconds, 0.5 by default: the engines' counters cannot have shown it yet), behind only
   older ones, or behind none. Requests of the warm-up are not logged, so they are not counted.

Python 3 standard library only.
"""
import json
import statistics
import sys

KINDS = ['late', 'hopeless', 'wait bound', 'queue full', 'other', 'unserved']


def load(path):
    with open(path, encoding='utf-8') as f:
        return {r['index']: r for r in map(json.loads, f)}


def kind(r):
    """How a request that missed its objective missed it."""
    if r['outcome'] == 'rejected':
        message = r['rejection'] or ''
        if message.startswith('429'):
            return 'queue full'
        if 'would need about' in message:
            return 'hopeless'
        if 'waited' in message:
            return 'wait bound'
        return 'other'
    return r['outcome']


def band_names(bounds):
    edges = [0] + bounds
    names = [f"{lo // 1000}k-{hi // 1000}k" for lo, hi in zip(edges, edges[1:])]
    return names + [f">= {bounds[-1] // 1000}k"]


def band(tokens, bounds):
    return next((k for k, b in enumerate(bounds) if tokens < b), len(bounds))


def mean(values):
    return f"{statistics.mean(values):.2f}" if values else "-"


def misses(name, run, bounds, names, feasible_tokens):
    print(f"| {name}: prompt tokens | feasible | missed | " + " | ".join(KINDS)
          + " | share of feasible prompt tokens missed |")
    print("|---|---:|---:|" + "---:|" * len(KINDS) + "---:|")
    for k, label in enumerate(names):
        rows = [r for r in run.values() if r['feasible'] and band(r['prompt_tokens'], bounds) == k]
        missed = [r for r in rows if r['outcome'] != 'within_slo']
        counts = [sum(1 for r in missed if kind(r) == x) for x in KINDS]
        share = sum(r['prompt_tokens'] for r in missed) / feasible_tokens
        print(f"| {label} | {len(rows)} | {len(missed)} | " + " | ".join(map(str, counts)) + f" | {share:.3f} |")
    print()


def lost(a, b, bounds, names, feasible_tokens):
    print("| prompt tokens | served by A, missed by B | their share of feasible prompt tokens | how B missed them"
          " | B late: queued / in engine (s) | A, same requests: queued / in engine (s) | same instance |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for k, label in enumerate(names):
        rows = [i for i, r in a.items() if r['feasible'] and r['outcome'] == 'within_slo'
                and band(r['prompt_tokens'], bounds) == k and b[i]['outcome'] != 'within_slo']
        if not rows:
            continue
        how = ", ".join(f"{x} {n}" for x in KINDS if (n := sum(1 for i in rows if kind(b[i]) == x)))
        late = [i for i in rows if b[i]['outcome'] == 'late']
        queued = lambda r: r['released_s'] - r['arrival_s']
        engine = lambda r: r['ttft_s'] - queued(r)
        share = sum(a[i]['prompt_tokens'] for i in rows) / feasible_tokens
        same = sum(1 for i in rows if a[i]['instance'] == b[i]['instance'])
        print(f"| {label} | {len(rows)} | {share:.3f} | {how} | {mean([queued(b[i]) for i in late])} / "
              f"{mean([engine(b[i]) for i in late])} | {mean([queued(a[i]) for i in late])} / "
              f"{mean([engine(a[i]) for i in late])} | {same} |")
    print()


LONG_PROMPT = 8000


def ahead(a, b, bounds, names, interval):
    on = {}
    for r in b.values():
        if r['instance'] and r['released_s'] is not None and r['ttft_s'] is not None:
            on.setdefault(r['instance'], []).append(r)
    print("| prompt tokens | late in B, served by A | ahead from the same router: requests / uncached tokens"
          " | ahead from other routers: requests / uncached tokens | behind another router's long prompt"
          " released within a scrape interval | behind only older ones | behind none |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, label in enumerate(names):
        late = [b[i] for i, r in a.items() if r['feasible'] and r['outcome'] == 'within_slo'
                and band(r['prompt_tokens'], bounds) == k and b[i]['outcome'] == 'late']
        if not late:
            continue
        counts = {'same': [0, 0], 'other': [0, 0]}
        behind = [0, 0, 0]
        for r in late:
            at = r['released_s']
            ages = []
            for o in on.get(r['instance'], []):
                if o is r or not o['released_s'] <= at < o['arrival_s'] + o['ttft_s']:
                    continue
                uncached = o['prompt_tokens'] - (o['cached_tokens'] or 0)
                sender = 'same' if o['router'] == r['router'] else 'other'
                counts[sender][0] += 1
                counts[sender][1] += uncached
                if sender == 'other' and uncached >= LONG_PROMPT:
                    ages.append(at - o['released_s'])
            behind[0 if ages and min(ages) < interval else 1 if ages else 2] += 1
        n = len(late)
        cells = [f"{counts[s][0] / n:.1f} / {counts[s][1] / n:,.0f}" for s in ('same', 'other')]
        print(f"| {label} | {n} | " + " | ".join(cells) + " | " + " | ".join(map(str, behind)) + " |")
    print()


def main(argv):
    args = argv[1:]
    bounds = [4000, 16000, 64000]
    if '--bands' in args:
        at = args.index('--bands')
        bounds = sorted(int(x) for x in args[at + 1].split(','))
        del args[at:at + 2]
    start = None
    if '--from' in args:
        at = args.index('--from')
        start = float(args[at + 1])
        del args[at:at + 2]
    interval = 0.5
    if '--scrape-interval' in args:
        at = args.index('--scrape-interval')
        interval = float(args[at + 1])
        del args[at:at + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    a, b = load(args[0]), load(args[1])
    if a.keys() != b.keys() or any(a[i]['prompt_tokens'] != b[i]['prompt_tokens'] for i in a):
        sys.exit("the two files do not log the same requests: run the same workload, warm-up and seed")
    if start is not None:
        a = {i: r for i, r in a.items() if r['arrival_s'] >= start}
        b = {i: b[i] for i in a}
    names = band_names(bounds)
    feasible_tokens = sum(r['prompt_tokens'] for r in a.values() if r['feasible']) or 1
    misses("A", a, bounds, names, feasible_tokens)
    misses("B", b, bounds, names, feasible_tokens)
    lost(a, b, bounds, names, feasible_tokens)
    ahead(a, b, bounds, names, interval)


if __name__ == '__main__':
    main(sys.argv)
