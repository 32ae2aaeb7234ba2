#!/usr/bin/env python3
"""Table and target check for bench_dna_rank (see README.md, "DNA rank").

Usage: summarize_dna.py bench_dna_rank.json   (a Google Benchmark --benchmark_out file)

All ratios come from the one run:
  x_binary   items/s of the row / items/s of binary_tree for the same operation
  x_occ      items/s of the row / items/s of occ128 (the bwa-style baseline)
  x_gather32, x_gather64   queries/s / random-gather loads/s (32- or 64-byte loads) over a
             buffer of the structure's size (quad_level uses the quad tree's buffer)
Standard library only (runs on the GPU host as is).
"""
import sys

from summarize import fmt_rate as rate, load  # the same JSON reading and number format

IMPLS = ["quad_level", "quad_tree", "binary_tree", "occ128"]
OPS = ["rank", "rank_all", "access_rank"]


def count_of(s):
    """"2^20", "10^8" or a plain number."""
    if "^" in s:
        base, exp = s.split("^")
        return int(base) ** int(exp)
    return int(s)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fx(x, pct=False):
    if x is None:
        return "-"
    return f"{100 * x:.0f} %" if pct else f"{x:.3g}x"


def main(path):
    data = load(path)
    ctx = data.get("context", {})
    rows = {}  # (group, impl, extra) -> benchmark entry
    errors = []
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        parts = b["name"].replace("/manual_time", "").split("/")
        if len(parts) < 3 or parts[0] != "dna":
            continue
        group, impl = parts[1], parts[2]
        extra = "/".join(p for p in parts[3:] if p.startswith("chains="))
        if b.get("error_occurred"):
            errors.append(f"{b['name']}: {b.get('error_message', '')}")
            continue
        rows[(group, impl, extra)] = b

    def items(group, impl, extra=""):
        b = rows.get((group, impl, extra))
        return None if b is None else b.get("items_per_second")

    def counter(group, impl, key, extra=""):
        b = rows.get((group, impl, extra))
        return None if b is None else b.get(key)

    def gather(bytes_, impl):
        return items(f"gather{bytes_}", "quad_tree" if impl == "quad_level" else impl)

    print(f"DNA rank: n = {ctx.get('wtmap_dna_n', '?')} (requested 2^{ctx.get('wtmap_dna_requested_log2n', '?')}), "
          f"{ctx.get('wtmap_dna_queries', '?')} queries, card {ctx.get('wtmap_gpu', '?')}")
    if ctx.get("wtmap_dna_size_note"):
        print(f"note: {ctx['wtmap_dna_size_note']}")
    print()
    print(f"{'op':<12} {'impl':<12} {'items/s':>9} {'x_binary':>9} {'x_occ':>7} {'x_gather32':>10} {'x_gather64':>10}")
    for op in OPS:
        for impl in IMPLS:
            r = items(op, impl)
            print(f"{op:<12} {impl:<12} {rate(r):>9} {fx(ratio(r, items(op, 'binary_tree'))):>9} "
                  f"{fx(ratio(r, items(op, 'occ128'))):>7} {fx(ratio(r, gather(32, impl)), True):>10} "
                  f"{fx(ratio(r, gather(64, impl)), True):>10}")
    print()
    chain_keys = sorted({k[2] for k in rows if k[0] == "chain"}, key=lambda s: -count_of(s.split("=")[1]))
    print(f"{'chain':<16} {'impl':<12} {'ranks/s':>9} {'ns/rank':>8} {'rounds':>6}")
    for extra in chain_keys:
        for impl in IMPLS:
            ns = counter("chain", impl, "ns_per_rank", extra)
            rd = counter("chain", impl, "rounds", extra)
            print(f"{extra:<16} {impl:<12} {rate(items('chain', impl, extra)):>9} "
                  f"{'-' if ns is None else f'{ns:.1f}':>8} {'-' if rd is None else f'{rd:.0f}':>6}")
    print()
    print(f"{'space':<12} {'bits/sym':>8} {'overhead':>9} {'rank-only bits/sym':>18} {'rank-only overhead':>18}")
    for impl in IMPLS:
        g = lambda k: counter("space", impl, k)
        bps, ov, rbps, rov = g("bits_per_symbol"), g("overhead_pct"), g("rank_bits_per_symbol"), g("rank_overhead_pct")
        f = lambda x, s="": "-" if x is None else f"{x:.3f}{s}"
        print(f"{impl:<12} {f(bps):>8} {f(ov, ' %'):>9} {f(rbps):>18} {f(rov, ' %'):>18}")
    print()
    print(f"{'gather':<12} {'buffer of':<12} {'loads/s':>9}")
    for bytes_ in (32, 64):
        for impl in ("quad_tree", "binary_tree", "occ128"):
            print(f"{'gather' + str(bytes_):<12} {impl:<12} {rate(items(f'gather{bytes_}', impl)):>9}")

    # The issue's targets (quad = the better of quad_level and quad_tree is NOT taken: both shown).
    print()
    print("targets (issue: 4-ary wavelet tree levels, so a DNA rank costs one memory transaction)")

    def verdict(ok):
        return "-" if ok is None else ("met" if ok else "NOT met")

    for impl in ("quad_level", "quad_tree"):
        r = items("rank", impl)
        x_bin = ratio(r, items("rank", "binary_tree"))
        occ_over = ratio(items("rank", "occ128"), r)
        g64 = ratio(r, gather(64, impl))
        print(f"  {impl} rank >= 2x binary_tree rank: {fx(x_bin)} {verdict(None if x_bin is None else x_bin >= 2)}")
        print(f"  {impl} rank within 1.3x of occ128 (occ128/quad <= 1.3): {fx(occ_over)} "
              f"{verdict(None if occ_over is None else occ_over <= 1.3)}")
        print(f"  {impl} rank >= 60 % of the 64-byte gather limit: {fx(g64, True)} "
              f"{verdict(None if g64 is None else g64 >= 0.6)} (32-byte: {fx(ratio(r, gather(32, impl)), True)})")
    ov = counter("space", "quad_tree", "overhead_pct")
    rov = counter("space", "quad_tree", "rank_overhead_pct")
    print(f"  quad_tree space overhead <= 15 % over 2 bits/symbol: "
          f"{'-' if ov is None else f'{ov:.2f} %'} {verdict(None if ov is None else ov <= 15)} "
          f"(rank support only: {'-' if rov is None else f'{rov:.2f} %'})")
    if errors:
        print()
        print("errors / skipped:")
        for e in errors:
            print(f"  {e}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
