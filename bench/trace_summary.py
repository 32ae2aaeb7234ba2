#!/usr/bin/env python3
"""Summary of a `wtmap align` run trace (WTMAP_TRACE=FILE, cli/run_trace.hpp): where the gapped
mapping threads spend the mapping, and whether their device calls or their host steps slow down
when more threads are in them at once.

  python3 bench/trace_summary.py trace.json [--json OUT.json]

- mapping: from the first mapping thread's first step to the last one's end;
- per mapping thread: busy seconds (the union of its top-level steps) and their share of the
  mapping, and its seconds per step;
- per step kind (each device call kind, and each top-level step): count, total, median and 90th
  percentile duration, and the median duration by concurrency -- how many spans of that kind (any
  thread's, this one included) were running at this span's midpoint. A device call whose median
  grows with its concurrency waits for the others (the GPU's queue, the driver); a host step whose
  median grows shares the host's threads.

Standard library only. A top-level step is one whose name holds no ':' ("extension"); the others
("extension: device call") run inside one.
"""
import argparse
import json
import math
import statistics
import sys

MAPPING = "mapping thread"


def load_tracks(path):
    """{track name: [(begin us, end us, step name), ...]} of the trace's complete events."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tracks = {}
    for e in events:
        if e.get("ph") == "X":
            track = names.get(e["tid"], str(e["tid"]))
            tracks.setdefault(track, []).append((float(e["ts"]), float(e["ts"]) + float(e["dur"]), e["name"]))
    return tracks


def union_length(spans):
    """Length of the union of [begin, end) intervals."""
    total, reach = 0.0, None
    for begin, end in sorted((b, e) for b, e, _ in spans):
        if reach is None or begin > reach:
            total += end - begin
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def percentile(values, fraction):
    """The value at `fraction` of the sorted values: the nearest rank, ceil(fraction * n)."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(fraction * len(ordered)))) - 1]


def concurrency(spans):
    """For each span, how many of `spans` (itself included) run at its midpoint."""
    levels = []
    for begin, end, _ in spans:
        middle = (begin + end) / 2
        levels.append(sum(1 for b, e, _ in spans if b <= middle < e))
    return levels


def summarize(tracks):
    mapping = {name: spans for name, spans in tracks.items() if MAPPING in name and spans}
    if not mapping:
        return {"mapping_seconds": 0.0, "threads": {}, "steps": {}}
    first = min(b for spans in mapping.values() for b, _, _ in spans)
    last = max(e for spans in mapping.values() for _, e, _ in spans)
    span_us = last - first
    threads = {}
    by_step = {}
    for name, spans in sorted(mapping.items()):
        top = [s for s in spans if ":" not in s[2]]
        busy = union_length(top)
        per_step = {}
        for begin, end, step in spans:
            per_step[step] = per_step.get(step, 0.0) + (end - begin) / 1e6
            by_step.setdefault(step, []).append((begin, end, step))
        threads[name] = {"busy_seconds": busy / 1e6, "busy_share": busy / span_us if span_us > 0 else 0.0,
                         "seconds": per_step}
    steps = {}
    for step, spans in sorted(by_step.items()):
        durations = [(e - b) / 1e3 for b, e, _ in spans]  # ms
        grouped = {}
        for level, duration in zip(concurrency(spans), durations):
            grouped.setdefault(level, []).append(duration)
        steps[step] = {"count": len(spans), "seconds": sum(durations) / 1e3,
                       "median_ms": statistics.median(durations), "p90_ms": percentile(durations, 0.9),
                       "median_ms_by_concurrency": {str(k): statistics.median(v) for k, v in sorted(grouped.items())}}
    return {"mapping_seconds": span_us / 1e6, "threads": threads, "steps": steps}


def print_summary(summary, out):
    out.write("mapping: %.3f s\n" % summary["mapping_seconds"])
    for name, t in summary["threads"].items():
        out.write("%-28s busy %.3f s (%5.1f %%)\n" % (name, t["busy_seconds"], 100 * t["busy_share"]))
    out.write("%-30s %6s %9s %10s %9s  median ms by concurrency\n" % ("step", "count", "seconds", "median ms", "p90 ms"))
    for step, s in summary["steps"].items():
        levels = ", ".join("%s: %.2f" % (k, v) for k, v in s["median_ms_by_concurrency"].items())
        out.write("%-30s %6d %9.3f %10.2f %9.2f  %s\n" % (step, s["count"], s["seconds"], s["median_ms"], s["p90_ms"],
                                                        levels))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="WTMAP_TRACE's file")
    parser.add_argument("--json", help="also write the summary as JSON here")
    args = parser.parse_args(argv)
    summary = summarize(load_tracks(args.trace))
    print_summary(summary, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
