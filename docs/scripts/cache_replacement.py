#!/usr/bin/env python3
"""How much prefix reuse a pooled KV cache keeps on a Mooncake trace: LRU against optimal.

Usage: cache_replacement.py TRACE.jsonl [INSTANCES ...]

The KV capacity of INSTANCES engines (900,000 tokens each, the h100-8b-fp8 profile) is pooled into one
cache of 512-token blocks (the trace's hash blocks); requests are served one after another in
arrival order and the first 500 are not counted. For each size it prints the share of the counted
requests' prompt tokens found cached as a prefix, with least-recently-used replacement (a request's
tail blocks evicted before its prefix, as the engine's free queue), with a segmented LRU (blocks
used again protected from new ones, a common engine-side alternative), with LRU that never caches a
block no later request uses (an oracle admission rule), and with Belady's optimal rule (evict the
block used again last; a parent is never used later than its children, so evicting the deepest
of equals keeps the cache prefix-closed and the rule optimal for prefixes too). It also prints how
many block uses are the block's last, and how many requests have no block any later request
uses (those a router could keep off the caches by placement alone). The simulator's
`WorkBound.pooledLru` does the LRU case with the engine's 16-token blocks.
"""
import heapq
import json
import sys
from collections import OrderedDict

BLOCK = 512
KV_TOKENS = 900_000
WARMUP = 500


def load(path):
    nodes = {}
    requests = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            prompt = r["input_length"]
            full = prompt // BLOCK
            path_ids, parent = [], -1
            for h in r["hash_ids"][:full]:
                key = (parent, h)
                node = nodes.get(key)
                if node is None:
                    node = nodes[key] = len(nodes)
                path_ids.append(node)
                parent = node
            requests.append((prompt, path_ids))
    return requests


def next_uses(requests):
    """For each request and block, the index of the next request using the block."""
    never = len(requests)
    nxt = [None] * len(requests)
    upcoming = {}
    for i in range(len(requests) - 1, -1, -1):
        ids = requests[i][1]
        nxt[i] = [upcoming.get(b, never) for b in ids]
        for b in ids:
            upcoming[b] = i
    return nxt


def lru(requests, capacity, admit=None):
    """LRU; with `admit`, a block is cached only when admit(request, depth) says so."""
    cache = OrderedDict()
    hit = total = 0
    for i, (prompt, ids) in enumerate(requests):
        cap = (prompt - 1) // BLOCK
        h = 0
        while h < len(ids) and h < cap and ids[h] in cache:
            h += 1
        for b in ids:
            cache.pop(b, None)
        for d in range(len(ids) - 1, -1, -1):  # tail first: evicted before the prefix
            if admit is not None and not admit(i, d):
                continue
            while len(cache) >= capacity:
                cache.popitem(last=False)
            cache[ids[d]] = True
        if i >= WARMUP:
            hit += h * BLOCK
            total += prompt
    return hit / total


def segmented_lru(requests, capacity, protected_share):
    """Segmented LRU: new blocks enter a probation segment, a block used again moves to a
    protected one of `protected_share` of the capacity (its LRU end falls back to probation);
    probation is evicted first."""
    probation, protected = OrderedDict(), OrderedDict()
    protected_capacity = int(capacity * protected_share)
    hit = total = 0
    for i, (prompt, ids) in enumerate(requests):
        cap = (prompt - 1) // BLOCK
        h = 0
        while h < len(ids) and h < cap and (ids[h] in probation or ids[h] in protected):
            h += 1
        for b in reversed(ids):
            if b in protected:
                protected.move_to_end(b)
            elif b in probation:
                del probation[b]
                protected[b] = True
                while len(protected) > protected_capacity:
                    old, _ = protected.popitem(last=False)
                    probation[old] = True
            else:
                while len(probation) + len(protected) >= capacity:
                    (probation if probation else protected).popitem(last=False)
                probation[b] = True
        if i >= WARMUP:
            hit += h * BLOCK
            total += prompt
    return hit / total


def optimal(requests, capacity, nxt):
    key = {}
    heap = []  # (-next use, -depth, block): the top is evicted
    hit = total = 0
    for i, (prompt, ids) in enumerate(requests):
        cap = (prompt - 1) // BLOCK
        h = 0
        while h < len(ids) and h < cap and ids[h] in key:
            h += 1
        for d, b in enumerate(ids):
            if b not in key:
                while len(key) >= capacity:
                    top = heapq.heappop(heap)
                    if key.get(top[2]) == top:  # else a stale entry of a block used since
                        del key[top[2]]
            entry = (-nxt[i][d], -d, b)
            key[b] = entry
            heapq.heappush(heap, entry)
        if i >= WARMUP:
            hit += h * BLOCK
            total += prompt
    return hit / total


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    requests = load(sys.argv[1])
    if len(requests) <= WARMUP:
        sys.exit(f"{sys.argv[1]} has {len(requests)} requests and the first {WARMUP} are not counted: "
                 "give a longer trace")
    sizes = [int(a) for a in sys.argv[2:]] or [8, 16, 32]
    nxt = next_uses(requests)
    never = len(requests)
    accesses = sum(len(x) for x in nxt)
    dead = sum(1 for x in nxt for v in x if v == never)
    wholly = sum(1 for x in nxt if x and all(v == never for v in x))
    print(f"block uses never followed by another: {100 * dead / accesses:.1f} %; "
          f"requests none of whose blocks is used again: {100 * wholly / len(requests):.1f} %")
    print()
    print("| instances | cache (512-token blocks) | LRU | segmented LRU, half protected "
          "| LRU, blocks never used again not cached | optimal |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        capacity = n * KV_TOKENS // BLOCK
        plain = lru(requests, capacity)
        segmented = segmented_lru(requests, capacity, 0.5)
        admitted = lru(requests, capacity, lambda i, d: nxt[i][d] < never)
        best = optimal(requests, capacity, nxt)
        print(f"| {n} | {capacity} | {100 * plain:.1f} % | {100 * segmented:.1f} % | {100 * admitted:.1f} % "
              f"| {100 * best:.1f} % |")


if __name__ == "__main__":
    main()
