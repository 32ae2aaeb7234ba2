#!/usr/bin/env bash
# Runs bench_special_rows (the FM-index's sorted special-row table vs a rank bit vector over all
# rows, as the correction of the # / $ rows stored as A; occ_all on a random DNA text) on the GPU
# host.
#
#   source .device/env.sh && bench/run-special-rows.sh [--quick] [extra Google Benchmark flags]
#
# From the repository root. The program is taken from PATH (.device/bin), else from the build
# folders (harness-lib.sh's find_prog). Results go to $OUT (default ./bench-out):
# special-rows.json and special-rows.txt (the console table). --quick (WTMAP_BENCH_QUICK=1) runs
# 2^24 symbols, 10^3 specials, 10^6 queries. Sizes: see bench/README.md ("Special rows").
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"  # here, OUT (created), find_prog

prog="$(find_prog bench_special_rows)"
echo "== $prog (gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo none); commit $(cat .device/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown))"
"$prog" --benchmark_format=console --benchmark_out="$OUT/special-rows.json" --benchmark_out_format=json \
  --benchmark_min_time="$min_time" "$@" 2>&1 | tee "$OUT/special-rows.txt"
