#!/usr/bin/env bash
# Runs the wtmap core benchmarks on the GPU host and prints a compact summary.
#
#   source .device/env.sh && bench/run-core.sh [--quick] [extra Google Benchmark flags]
#
# From the repository root. The programs (bench_bit_vector, bench_wavelet_tree) are taken from
# PATH (.device/bin), else from build-bench/bench or build/bench. Results go to $OUT (set by the
# device tool; default ./bench-out): <program>.json, <program>.txt, host.txt, summary.txt.
# The default sizes are meant to finish in about 8 minutes on a 16-core H100 host; --quick (or
# WTMAP_BENCH_QUICK=1) runs the smoke-test sizes. Sizes: see bench/README.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"  # here, OUT (created), find_prog
# Seconds each program may run before it is stopped (its finished results are kept).
budget_bv="${WTMAP_BENCH_TIMEOUT_BV:-200}"
budget_wt="${WTMAP_BENCH_TIMEOUT_WT:-260}"


{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo none)"
  echo "nproc: $(nproc)"
  echo "quick: ${WTMAP_BENCH_QUICK:-0}"
  echo "commit: $(cat .device/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "command: $0 $*"
} | tee "$OUT/host.txt"

status=0
run() {  # name, time budget, flags...
  local name="$1" budget="$2"
  shift 2
  local prog
  prog="$(find_prog "$name")"
  echo "== $name (at most ${budget}s)"
  timeout --signal=INT --kill-after=20 "$budget" "$prog" --benchmark_format=console \
    --benchmark_out="$OUT/$name.json" --benchmark_out_format=json \
    --benchmark_min_time="$min_time" "$@" 2>&1 | tee "$OUT/$name.txt" || {
    echo "run-core.sh: $name stopped early (exit ${PIPESTATUS[0]}); its finished results are kept" >&2
    status=1
  }
}
start=$SECONDS
run bench_bit_vector "$budget_bv" "$@"
run bench_wavelet_tree "$budget_wt" "$@"
echo "== total $((SECONDS - start)) s"

python3 "$here/summarize.py" "$OUT"/bench_*.json | tee "$OUT/summary.txt"
exit $status
