#!/usr/bin/env python3
"""Where the follow-up turns of a conversation went, against the turn before them.

Reads the trace a run replayed and the request logs of one or more runs of it (`sim
--request-log`) and reports, per log, how many follow-up requests went to the instance of
their parent, split by whether the same router placed both, and what moved the others.

A request's parent is the latest earlier request of the trace that shares its longest
prefix of blocks (`hash_ids`), when that prefix spans at least --min-blocks blocks (two by
default: more than a system prompt's first block). A replay longer than the trace repeats
it with the hash ids of each copy shifted past the earlier copies', so a parent is always
in its child's copy: index i of a log is row i mod (trace length) of the trace.

usage: turn_split.py TRACE LOG [LOG ...] [--min-blocks 2]
"""
import argparse
import collections
import json


def parents(trace_path, min_blocks):
    rows = []
    with open(trace_path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line)["hash_ids"])
    latest = {}
    parent = [None] * len(rows)
    for i, blocks in enumerate(rows):
        key = ()
        found = None
        depth = 0
        for b in blocks:
            key = key + (b,)
            j = latest.get(key)
            if j is None:
                break
            found = j
            depth += 1
        if found is not None and depth >= min_blocks:
            parent[i] = found
        key = ()
        for b in blocks:
            key = key + (b,)
            latest[key] = i
    return parent


def load(path):
    with open(path) as f:
        return {d["index"]: d for d in map(json.loads, filter(str.strip, f))}


def pct(part, whole):
    return f"{100.0 * part / whole:.1f} %" if whole else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--min-blocks", type=int, default=2)
    args = ap.parse_args()
    parent = parents(args.trace, args.min_blocks)
    n = len(parent)
    print("| log | follow-ups | on the parent's instance | same router: on it | other router: on it "
          "| cached share of prompt tokens | rescued | what placed the others (child's reason) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for path in args.logs:
        log = load(path)
        counts = collections.Counter()
        moved_by = collections.Counter()
        cached = prompt = rescued = 0
        for i, d in log.items():
            prompt += d["prompt_tokens"]
            cached += d.get("cached_tokens") or 0
            rescued += d.get("rescued") is True
            pj = parent[i % n]
            if pj is None:
                continue
            pd = log.get((i // n) * n + pj)
            if pd is None or d["instance"] is None or pd["instance"] is None:
                continue
            same_router = d["router"] == pd["router"]
            on_it = d["instance"] == pd["instance"]
            counts["all"] += 1
            counts["on"] += on_it
            counts["sr"] += same_router
            counts["sr_on"] += same_router and on_it
            counts["or_on"] += (not same_router) and on_it
            if not on_it:
                moved_by[d["reason"]] += 1
        others = counts["all"] - counts["sr"]
        reasons = ", ".join(f"{r} {c}" for r, c in moved_by.most_common())
        print(f"| {path} | {counts['all']} | {pct(counts['on'], counts['all'])} "
              f"| {pct(counts['sr_on'], counts['sr'])} | {pct(counts['or_on'], others)} "
              f"| {cached / prompt if prompt else 0:.3f} | {pct(rescued, len(log))} | {reasons} |")


if __name__ == "__main__":
    main()
