#!/usr/bin/env python3
"""Compact table and target check for the wtmap core benchmarks.

Usage: summarize.py RESULT.json [RESULT.json ...]   (Google Benchmark --benchmark_out files)

Ratios, all from the same run:
  x_sdsl    items/s of a wtmap row / items/s of the SDSL row with the same operation and parameters
  x_gather  GPU kernel throughput against the card's random-gather limit over a buffer of the
            structure's size: binary rank/select queries/s / gather32 loads/s; for wavelet-tree
            queries (levels x queries/s) / gather32 loads/s, i.e. binary steps per gather load.
Standard library only (runs on the GPU host as is).
"""
import json
import re
import sys


def load(path):
    """A benchmark JSON file; a file cut short (a killed run) is repaired to its complete runs."""
    text = open(path).read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        cut = text.rfind("\n    }")
        if cut < 0:
            return {"context": {}, "benchmarks": []}
        try:
            data = json.loads(text[: cut + 6] + "\n  ]\n}\n")
            data.setdefault("context", {})["truncated"] = True
            return data
        except json.JSONDecodeError:
            return {"context": {}, "benchmarks": []}


def fmt_rate(x):
    if x is None:
        return "-"
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.3g}"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.3g}x"


def main(paths):
    rows, contexts = [], []
    for p in paths:
        data = load(p)
        contexts.append((p, data.get("context", {})))
        for b in data.get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration":
                continue
            name = b["name"].replace("/manual_time", "").replace("/real_time", "")
            rows.append((name, b))

    by_name = {name: b for name, b in rows}

    def rate(name):
        b = by_name.get(name)
        if b is None or b.get("error_occurred"):
            return None
        return b.get("items_per_second")

    def sdsl_ratio(name, parts):
        if parts[0] not in ("bv", "wt") or not parts[2].startswith("wtmap"):
            return None
        base = rate("/".join(parts[:2] + ["sdsl"] + parts[3:]))
        mine = rate(name)
        return mine / base if mine and base else None

    def gather_ratio(name, parts):
        if len(parts) < 4 or parts[2] != "wtmap_gpu_device":
            return None
        mine = rate(name)
        if parts[0] == "bv":  # bv/op/impl/n=../fill=..
            limit = rate(f"bv/gather32/gpu/{parts[3]}")
            return mine / limit if mine and limit else None
        if parts[0] == "wt":  # wt/op/impl/sigma=../q=..
            limit = rate(f"wt/gather32/gpu/{parts[3]}")
            levels = by_name[name].get("levels")
            return mine * levels / limit if mine and limit and levels else None
        return None

    print("== host")
    for p, c in contexts:
        print(f"{p}: gpu={c.get('wtmap_gpu', '?')} host_threads={c.get('wtmap_host_threads', '?')} "
              f"num_cpus={c.get('num_cpus', '?')} quick={c.get('wtmap_quick', '?')} date={c.get('date', '?')}"
              + (" TRUNCATED" if c.get("truncated") else ""))

    print("\n== throughput (items/s: queries, gather loads, copied bytes or built symbols per second)")
    w = max([len(n) for n, _ in rows] + [10])
    print(f"{'benchmark':<{w}}  {'items/s':>9}  {'x_sdsl':>8}  {'x_gather':>8}")
    skipped = {}
    for name, b in rows:
        parts = name.split("/")
        if b.get("error_occurred"):
            skipped.setdefault(b.get("error_message", ""), []).append(name)
            continue
        print(f"{name:<{w}}  {fmt_rate(b.get('items_per_second')):>9}  "
              f"{fmt_ratio(sdsl_ratio(name, parts)):>8}  {fmt_ratio(gather_ratio(name, parts)):>8}")

    for message, names in skipped.items():
        print(f"skipped {len(names)} benchmarks ({names[0]} ...): {message}")

    builds = [(n, b) for n, b in rows if n.startswith("wt_build/") and not b.get("error_occurred")]
    if builds:
        print("\n== wavelet-tree construction (seconds; build_minus_h2d = build - separately measured text copy)")
        print(f"{'benchmark':<{w}}  {'build':>8}  {'text_h2d':>8}  {'build_minus_h2d':>15}")
        for name, b in builds:
            g = lambda k: f"{b[k]:.3f}" if k in b else "-"
            print(f"{name:<{w}}  {g('build_s'):>8}  {g('text_h2d_s'):>8}  {g('build_minus_h2d_s'):>15}")

    print("\n== targets (worst case over the measured configurations)")

    def check(label, names, ratio_fn, target):
        vals = []
        for n in names:
            r = ratio_fn(n, n.split("/"))
            if r is not None:
                vals.append((r, n))
        if not vals:
            print(f"  {label}: not measured")
            return
        worst = min(vals)
        verdict = "MET" if worst[0] >= target else "NOT MET"
        print(f"  {label}: worst {worst[0]:.3g}x ({worst[1]}), best {max(vals)[0]:.3g}x -> {verdict}")

    names = [n for n, _ in rows]
    check("binary rank1 (device) >= 25x SDSL", [n for n in names if re.match(r"bv/rank1/wtmap_gpu_device/", n)],
          sdsl_ratio, 25)
    check("binary select1 (device) >= 100x SDSL", [n for n in names if re.match(r"bv/select1/wtmap_gpu_device/", n)],
          sdsl_ratio, 100)
    for sigma in ("4", "256"):
        check(f"wt queries 10^7 host-to-host (pageable) >= 5x SDSL, sigma {sigma}",
              [n for n in names if re.match(rf"wt/\w+/wtmap_gpu_pageable/sigma={sigma}/q=10\^7$", n)], sdsl_ratio, 5)
    check("binary rank1 >= 50% of the gather32 limit", [n for n in names if re.match(r"bv/rank1/wtmap_gpu_device/", n)],
          gather_ratio, 0.5)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
