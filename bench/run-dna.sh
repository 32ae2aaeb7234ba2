#!/usr/bin/env bash
# Runs bench_dna_rank (quad-vector vs binary wavelet-tree levels vs a bwa-style occurrence table
# on a random DNA text) on the GPU host and prints the table and the issue's targets.
#
#   source .device/env.sh && bench/run-dna.sh [--quick] [extra Google Benchmark flags]
#
# From the repository root. The program is taken from PATH (.device/bin), else from
# build-bench/bench, build-dna/bench or build/bench. Results go to $OUT (default ./bench-out):
# bench_dna_rank.json, bench_dna_rank.txt, host-dna.txt, summary-dna.txt. The default size
# (2^32 symbols, 10^8 queries) takes about 2-3 minutes on a 16-core H100 host (most of it
# generating the text and building the structures); --quick (WTMAP_BENCH_QUICK=1) runs 2^24.
# Sizes: see bench/README.md ("DNA rank").
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"  # here, OUT (created), find_prog
budget="${WTMAP_BENCH_TIMEOUT_DNA:-420}"

prog="$(find_prog bench_dna_rank)"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader 2>/dev/null || echo none)"
  echo "nproc: $(nproc)"
  echo "mem: $(awk '/MemAvailable/ {printf "%.1f GiB available", $2 / 1048576}' /proc/meminfo)"
  echo "quick: ${WTMAP_BENCH_QUICK:-0}"
  echo "commit: $(cat .device/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "command: $0 $*"
  echo "program: $prog"
} | tee "$OUT/host-dna.txt"

status=0
start=$SECONDS
echo "== bench_dna_rank (at most ${budget}s)"
timeout --signal=INT --kill-after=20 "$budget" "$prog" --benchmark_format=console \
  --benchmark_out="$OUT/bench_dna_rank.json" --benchmark_out_format=json \
  --benchmark_min_time="$min_time" "$@" 2>&1 | tee "$OUT/bench_dna_rank.txt" || {
  echo "run-dna.sh: bench_dna_rank stopped early (exit ${PIPESTATUS[0]}); its finished results are kept" >&2
  status=1
}
echo "== total $((SECONDS - start)) s"
python3 "$here/summarize_dna.py" "$OUT/bench_dna_rank.json" | tee "$OUT/summary-dna.txt"
exit $status
