#!/usr/bin/env bash
# Index-scale benchmark on the GPU host (issue 27): `wtmap index` of a seeded human-like genome
# (gen_data.py human: repeat families, satellites, segmental duplications, N gaps) on the GPU and
# on the CPU backend -- wall time and peak RSS each, the two files compared byte for byte -- and
# the time `wtmap count` takes to load the index (page cache warm: the file was just written).
# Then the issue's baselines on a smaller genome of the same generator: `wtmap index` on the GPU,
# `bowtie2-build --threads N` and `bwa index`, in that order, each while the budget lasts. A
# baseline the budget cuts off is reported with how far it got (bwa's last "characters
# processed" line against the 2 x bases it processes), not extrapolated by the script.
#
#   source .device/env.sh && bench/run-index-scale.sh
#
# From the repository root. The genome goes to $WTMAP_BENCH_WORK (default ./bench-work) and is
# reused. Results in $OUT (default ./bench-out): index-scale.tsv (measure.py's rows),
# index-scale.txt (table), index-scale-logs.tar.gz (each run's stderr: the build's steps).
#   WTMAP_BENCH_INDEX_MBP   genome size in Mbp [3100]
#   WTMAP_BENCH_SKIP        any of cpu (the CPU backend's build, minutes at 3.1 Gbp), load,
#                           baselines, bowtie2, bwa; `gpu,cpu,load` runs the baselines alone
#   WTMAP_BENCH_BASELINE_MBP genome size of the baselines in Mbp [1000; --quick: 5]
#   WTMAP_BENCH_BUDGET_S    seconds the whole run may take [530]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"

MBP="${WTMAP_BENCH_INDEX_MBP:-3100}"
SKIP=",${WTMAP_BENCH_SKIP:-},"
D="$WORK/index-scale-${MBP}mbp"
start_run_dir "$D"
WTMAP="$(find_prog wtmap)"

REF="$D/ref.fa"
# The large genome is made only for a step that reads it (the baselines have their own).
needs_ref=0
for s in gpu cpu load; do [[ "$SKIP" == *",$s,"* ]] || needs_ref=1; done
[[ "$needs_ref" == 1 ]] && echo "reference: ${MBP} Mbp human-like (gen_data.py human, seed 1)" | tee -a "$D/host.txt"
if [[ "$needs_ref" == 1 && ! -s "$REF" ]]; then
  python3 "$here/gen_data.py" human --bp "$((MBP * 1000000))" --seed 1 --procs "$(nproc)" "$REF.tmp" > /dev/null
  mv "$REF.tmp" "$REF"
fi
printf '' > "$D/empty.fa"

status=0
if [[ "$SKIP" != *",gpu,"* ]]; then
  step index/wtmap_gpu -- "$WTMAP" index "$REF" -p "$D/wt_gpu" --device gpu -t "$THREADS" || status=1
fi
if [[ "$SKIP" != *",cpu,"* ]]; then
  step index/wtmap_cpu -- "$WTMAP" index "$REF" -p "$D/wt_cpu" --device cpu -t "$THREADS" || status=1
  if [[ -s "$D/wt_gpu.wtmap" && -s "$D/wt_cpu.wtmap" ]]; then
    cmp -s "$D/wt_gpu.wtmap" "$D/wt_cpu.wtmap" || { echo "the GPU and CPU indexes differ" >&2; status=1; }
  fi
fi
if [[ "$SKIP" != *",load,"* && -s "$D/wt_gpu.wtmap" ]]; then
  step count/load --stdout /dev/null -- "$WTMAP" count -x "$D/wt_gpu" "$D/empty.fa" --device gpu || status=1
fi

# The baselines, on a genome of BASE_MBP of the same generator.
BASE_MBP="${WTMAP_BENCH_BASELINE_MBP:-$([[ "$QUICK" == 1 ]] && echo 5 || echo 1000)}"
if [[ "$SKIP" != *",baselines,"* ]]; then
  B="$WORK/index-scale-${BASE_MBP}mbp"
  mkdir -p "$B"
  echo "baselines' reference: ${BASE_MBP} Mbp human-like (gen_data.py human, seed 1)" | tee -a "$D/host.txt"
  if [[ ! -s "$B/ref.fa" ]]; then
    python3 "$here/gen_data.py" human --bp "$((BASE_MBP * 1000000))" --seed 1 --procs "$(nproc)" "$B/ref.fa.tmp" > /dev/null
    mv "$B/ref.fa.tmp" "$B/ref.fa"
  fi
  step "index/wtmap_gpu_${BASE_MBP}mbp" -- "$WTMAP" index "$B/ref.fa" -p "$B/wt_gpu" --device gpu -t "$THREADS" || status=1
  if [[ "$SKIP" != *",bowtie2,"* ]]; then
    step "index/bowtie2_${BASE_MBP}mbp" --stdout /dev/null -- "$(find_prog bowtie2-build-s)" --threads "$THREADS" "$B/ref.fa" "$B/bt2" || status=1
  fi
  if [[ "$SKIP" != *",bwa,"* ]]; then
    step "index/bwa_${BASE_MBP}mbp" -- "$(find_prog bwa)" index -p "$B/bwa" "$B/ref.fa" || status=1
  fi
fi

cp "$TSV" "$OUT/index-scale.tsv"
{
  cat "$D/host.txt"
  printf '%-26s %10s %12s %14s\n' step wall_s peak_GB bytes_per_base
  # measure.py's rows: label, wall seconds, peak RSS in MiB, exit status.
  # (a baseline's label ends in its genome's size: _1000mbp)
  awk -F'\t' -v mbp="$MBP" '{ size = mbp; if (match($1, /_[0-9]+mbp$/)) size = substr($1, RSTART + 1, RLENGTH - 4);
    gb = ($3 == "NA") ? "NA" : sprintf("%.2f", $3 * 1048576 / 1e9);
    bpb = ($3 == "NA") ? "NA" : sprintf("%.2f", $3 * 1048576 / (size * 1e6));
    printf "%-26s %10s %12s %14s%s\n", $1, $2, gb, bpb, ($4 == "0" ? "" : "  (exit " $4 ")") }' "$TSV"
  [[ -s "$D/wt_cpu.wtmap" && -s "$D/wt_gpu.wtmap" ]] && { cmp -s "$D/wt_gpu.wtmap" "$D/wt_cpu.wtmap" && echo "GPU and CPU index files: identical"; }
  # How far a baseline cut off by the budget got (bwa: characters of the 2 x bases it indexes).
  bwa_log="$WORK/logs/index_bwa_${BASE_MBP}mbp.log"
  if [[ -s "$bwa_log" ]] && ! grep -q "Version" "$bwa_log"; then
    # (no such line yet when it was stopped while still packing the reference)
    done_chars=$(grep -o '[0-9]* characters processed' "$bwa_log" | tail -1 | cut -d' ' -f1 || true)
    echo "bwa index stopped before its end: ${done_chars:-0} of $((2 * BASE_MBP * 1000000)) characters processed (BWT construction only)"
  fi
} | tee "$OUT/index-scale.txt"
tar -czf "$OUT/index-scale-logs.tar.gz" -C "$WORK" logs
exit $status
