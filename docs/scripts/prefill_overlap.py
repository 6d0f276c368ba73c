#!/usr/bin/env python3
"""How often a run's instances held more prefill than the release limit, from `sim --request-log`.

Usage: prefill_overlap.py RUN.jsonl [RUN.jsonl ...] [--limit 16384]

Each RUN.jsonl is a requests-<policy>.jsonl file that `sim --request-log` wrote. A request is in
prefill on its instance from its release to its first token (`released_s` to `arrival_s +
ttft_s`), with its uncached prompt tokens (`prompt_tokens - cached_tokens`); requests turned away
or without a first token are left out. For each run prints one markdown row:

- the share of the time, summed over instances, that two or more requests were in prefill on an
  instance with more uncached tokens than `--limit` (the gateway's `max-prefill-tokens`, 16384 by
  default; a single larger request alone is what the limit allows);
- the releases that took an instance over the limit while it had a request in prefill, and of
  those the ones made at the same instant as another router's release to that instance
  (several gateway replicas filling the same room), and the ones onto an instance whose every
  request in prefill had been released at that instant.

Python 3 standard library only.
"""
import json
import sys
from collections import defaultdict


def overlap(path, limit):
    events = defaultdict(list)
    with open(path, encoding='utf-8') as f:
        for r in map(json.loads, f):
            if r['released_s'] is None or r['ttft_s'] is None:
                continue
            uncached = r['prompt_tokens'] - (r['cached_tokens'] or 0)
            # Ends sort before starts at the same instant: a first token frees room first.
            events[r['instance']].append((r['released_s'], 1, uncached, r))
            events[r['instance']].append((r['arrival_s'] + r['ttft_s'], 0, uncached, r))
    total = over = 0.0
    pushes = together = fresh = 0
    for evs in events.values():
        evs.sort(key=lambda e: (e[0], e[1], e[3]['index']))
        tokens = requests = 0
        in_prefill = {}
        last = evs[0][0]
        for at, start, uncached, r in evs:
            total += at - last
            if tokens > limit and requests > 1:
                over += at - last
            last = at
            if start:
                if requests > 0 and tokens + uncached > limit:
                    pushes += 1
                    same = [x for x in in_prefill.values() if x['released_s'] == at]
                    if any(x['router'] != r['router'] for x in same):
                        together += 1
                        if len(same) == len(in_prefill):
                            fresh += 1
                in_prefill[r['index']] = r
                tokens += uncached
                requests += 1
            else:
                in_prefill.pop(r['index'], None)
                tokens -= uncached
                requests -= 1
    return (over / total if total else 0.0), pushes, together, fresh


def main(argv):
    limit = 16384
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == '--limit':
            if i + 1 >= len(argv):
                sys.exit('--limit needs a number of tokens')
            limit = int(argv[i + 1])
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    if not paths:
        sys.exit(__doc__.split('\n\n')[1])
    print(f'| run | time over {limit} tokens | releases over it | at the same instant as another '
          'router | of those, onto an instance with nothing older in prefill |')
    print('|---|---:|---:|---:|---:|')
    for path in paths:
        share, pushes, together, fresh = overlap(path, limit)
        print(f'| {path} | {100 * share:.1f} % | {pushes} | {together} | {fresh} |')


if __name__ == '__main__':
    main(sys.argv[1:])
