#!/usr/bin/env bash
# Where the gapped mapper's GPU time goes (issue 25): Nsight Compute over bench_gapped_mapper's
# GPU benchmark, every launch of every kernel, one pass each (the metrics below, no replayed
# sections), summed per kernel -- batch_query_kernel<Op> per operation: SMEM seeding (SmemOp),
# locate (LocateOp), extension (ExtendOp), global alignment (GlobalOp), mate rescue (LocalOp) --
# and the CUB and helper kernels beside them.
#
#   source .device/env.sh && bench/profile-gapped.sh
#
# Per kernel: launches, total and mean duration, share of the GPU time, and launch-weighted means
# of warps active (% of peak), threads active per warp instruction (32: no divergence), DRAM
# throughput (% of peak) and registers per thread. Results in $OUT (default ./bench-out):
# ncu-gapped.csv (ncu's raw page, a row per launch) and profile-gapped.txt (the table). ncu runs
# with --clock-control none (METHOD.md: the clocks are left alone). Without ncu it prints a note.
#   WTMAP_BENCH_GAPPED_READS   reads the benchmark maps [2*10^4: each launch is profiled alone]
#   WTMAP_BENCH_GAPPED_GENOME  genome bases [2^26]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$PWD/bench-out}"
mkdir -p "$OUT"
summary="$OUT/profile-gapped.txt"
source "$here/ncu-lib.sh"
find_ncu_or_note "$summary" "nothing measured"
mapper="$(command -v bench_gapped_mapper || echo "$here/../build/bench/bench_gapped_mapper")"
export WTMAP_BENCH_GAPPED_READS="${WTMAP_BENCH_GAPPED_READS:-20000}"

metrics=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__thread_inst_executed_per_inst_executed.ratio,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,launch__registers_per_thread
csv="$OUT/ncu-gapped.csv"
"$ncu_bin" --clock-control none --target-processes all --metrics "$metrics" --csv --page raw --print-units base \
  "$mapper" --benchmark_filter='gapped/map/gpu' --benchmark_min_time=0 > "$csv" 2> "$OUT/ncu-gapped.log" || {
  echo "profile-gapped.sh: ncu failed: $(tail -3 "$OUT/ncu-gapped.log")" | tee "$summary"
  exit 1
}

python3 - "$csv" > "$summary" <<'EOF'
import csv, re, sys
from collections import defaultdict

rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
head, rows = rows[0], rows[1:]
col = {name: i for i, name in enumerate(head)}
def num(row, name):
    try:
        return float(row[col[name]].replace(",", ""))
    except (KeyError, ValueError):
        return float("nan")
def short(name):  # batch_query_kernel<wtmap::...::SmemOp> -> SmemOp; CUB's by their kernel name
    ops = re.findall(r"(\w+Op)\b", name)
    base = re.sub(r"\(.*", "", name).split("<")[0].split("::")[-1].replace("void ", "")
    return f"{base}<{ops[0]}>" if ops else base
units = [r for r in rows if r[col["Kernel Name"]] and not r[col["Kernel Name"]].startswith("Kernel")]
groups = defaultdict(list)
for r in units:
    groups[short(r[col["Kernel Name"]])].append(r)
total = sum(num(r, "gpu__time_duration.sum") for r in units)
print(f"{len(units)} launches, {total / 1e6:.2f} ms of GPU time (ncu, one launch at a time)")
print(f"{'kernel':44s} {'launches':>8s} {'total ms':>9s} {'share':>6s} {'mean us':>8s} {'warps%':>7s} {'thr/inst':>8s} {'dram%':>6s} {'regs':>5s}")
for name, rs in sorted(groups.items(), key=lambda kv: -sum(num(r, "gpu__time_duration.sum") for r in kv[1])):
    t = [num(r, "gpu__time_duration.sum") for r in rs]
    mean = lambda m: sum(num(r, m) for r in rs) / len(rs)
    print(f"{name[:44]:44s} {len(rs):8d} {sum(t) / 1e6:9.2f} {100 * sum(t) / total:5.1f}% {sum(t) / len(t) / 1e3:8.1f} "
          f"{mean('sm__warps_active.avg.pct_of_peak_sustained_active'):7.1f} "
          f"{mean('smsp__thread_inst_executed_per_inst_executed.ratio'):8.1f} "
          f"{mean('gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'):6.1f} {mean('launch__registers_per_thread'):5.0f}")
EOF
cat "$summary"
