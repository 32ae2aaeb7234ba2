#!/usr/bin/env bash
# Index-scale benchmark on the GPU host (issue 27): `wtmap index` of a seeded human-like genome
# (gen_data.py human: repeat families, satellites, segmental duplications, N gaps) on the GPU and
# on the CPU backend -- wall time and peak RSS each, the two files compared byte for byte -- and
# the time `wtmap count` takes to load the index (page cache warm: the file was just written).
#
#   source .device/env.sh && bench/run-index-scale.sh
#
# From the repository root. The genome goes to $WTMAP_BENCH_WORK (default ./bench-work) and is
# reused. Results in $OUT (default ./bench-out): index-scale.tsv (measure.py's rows),
# index-scale.txt (table), index-scale-logs.tar.gz (each run's stderr: the build's steps).
#   WTMAP_BENCH_INDEX_MBP   genome size in Mbp [3100]
#   WTMAP_BENCH_SKIP        e.g. cpu (the CPU backend's build, minutes at 3.1 Gbp)
#   WTMAP_BENCH_BUDGET_S    seconds the whole run may take [530]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"

MBP="${WTMAP_BENCH_INDEX_MBP:-3100}"
SKIP=",${WTMAP_BENCH_SKIP:-},"
D="$WORK/index-scale-${MBP}mbp"
start_run_dir "$D"
echo "reference: ${MBP} Mbp human-like (gen_data.py human, seed 1)" | tee -a "$D/host.txt"
WTMAP="$(find_prog wtmap)"

REF="$D/ref.fa"
if [[ ! -s "$REF" ]]; then
  python3 "$here/gen_data.py" human --bp "$((MBP * 1000000))" --seed 1 --procs "$(nproc)" "$REF.tmp" > /dev/null
  mv "$REF.tmp" "$REF"
fi
printf '' > "$D/empty.fa"

status=0
step index/wtmap_gpu -- "$WTMAP" index "$REF" -p "$D/wt_gpu" --device gpu -t "$THREADS" || status=1
if [[ "$SKIP" != *",cpu,"* ]]; then
  step index/wtmap_cpu -- "$WTMAP" index "$REF" -p "$D/wt_cpu" --device cpu -t "$THREADS" || status=1
  if [[ -s "$D/wt_gpu.wtmap" && -s "$D/wt_cpu.wtmap" ]]; then
    cmp -s "$D/wt_gpu.wtmap" "$D/wt_cpu.wtmap" || { echo "the GPU and CPU indexes differ" >&2; status=1; }
  fi
fi
[[ -s "$D/wt_gpu.wtmap" ]] && { step count/load --stdout /dev/null -- "$WTMAP" count -x "$D/wt_gpu" "$D/empty.fa" --device gpu || status=1; }

cp "$TSV" "$OUT/index-scale.tsv"
{
  cat "$D/host.txt"
  printf '%-20s %10s %12s %14s\n' step wall_s peak_GB bytes_per_base
  # measure.py's rows: label, wall seconds, peak RSS in MiB, exit status.
  awk -F'\t' -v mbp="$MBP" '{ gb = ($3 == "NA") ? "NA" : sprintf("%.2f", $3 * 1048576 / 1e9);
    bpb = ($3 == "NA") ? "NA" : sprintf("%.2f", $3 * 1048576 / (mbp * 1e6));
    printf "%-20s %10s %12s %14s%s\n", $1, $2, gb, bpb, ($4 == "0" ? "" : "  (exit " $4 ")") }' "$TSV"
  [[ -s "$D/wt_cpu.wtmap" && -s "$D/wt_gpu.wtmap" ]] && { cmp -s "$D/wt_gpu.wtmap" "$D/wt_cpu.wtmap" && echo "GPU and CPU index files: identical"; }
} | tee "$OUT/index-scale.txt"
tar -czf "$OUT/index-scale-logs.tar.gz" -C "$WORK" logs
exit $status
