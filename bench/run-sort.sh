#!/usr/bin/env bash
# Issue 29's measure of `wtmap align --sort`: sorted and indexed BAM end to end against the same
# run unsorted (target: at most 1.3x), and against `bwa mem -t T | samtools sort -@ T` (with
# `samtools index`) where bwa is found. Same reads, same host, each run $REPEAT times alternated;
# the table gives the medians of the wall times.
#
#   bench/run-sort.sh INDEX_PREFIX READS.fq[.gz] [BWA_INDEX_PREFIX]
#
# Environment: WTMAP (default: wtmap on PATH, else build/cli/wtmap), THREADS (default: all
# cores), REPEAT (default 3), BWA_REPEAT (default REPEAT: bwa's runs, the first ones of the
# alternation, as bwa takes several times wtmap's time), SORT_MEM (passed to --sort-mem;
# default: wtmap's own), WORK (default ./bench-work/sort), and EXTRA (more options for both
# wtmap runs, e.g. "-k 4").
# Results: $WORK/sort.txt (table) and each run's stderr in $WORK/logs/.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n 2,14p "$0"; exit 2; }
INDEX="$1"; READS="$2"; BWA_INDEX="${3:-}"
WTMAP="${WTMAP:-$(command -v wtmap || echo build/cli/wtmap)}"
THREADS="${THREADS:-$(nproc)}"; REPEAT="${REPEAT:-3}"; BWA_REPEAT="${BWA_REPEAT:-$REPEAT}"; WORK="${WORK:-bench-work/sort}"
EXTRA="${EXTRA:-}"
SORT_MEM_OPTION=(); [[ -n "${SORT_MEM:-}" ]] && SORT_MEM_OPTION=(--sort-mem "$SORT_MEM")
mkdir -p "$WORK/logs"

# Wall seconds of the command "$@" (its stderr to $WORK/logs/$name-$r.txt).
timed() {
  local name="$1" r="$2"; shift 2
  local start end
  start=$(date +%s.%N)
  "$@" 2> "$WORK/logs/$name-$r.txt"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run_unsorted() { "$WTMAP" align -x "$INDEX" -t "$THREADS" $EXTRA -o "$WORK/unsorted.bam" "$READS"; }
run_sorted() { "$WTMAP" align -x "$INDEX" -t "$THREADS" $EXTRA --sort "${SORT_MEM_OPTION[@]}" -v -o "$WORK/sorted.bam" "$READS"; }
run_bwa() {
  bwa mem -t "$THREADS" "$BWA_INDEX" "$READS" | samtools sort -@ "$THREADS" -o "$WORK/bwa.bam" - &&
    samtools index -@ "$THREADS" "$WORK/bwa.bam"
}

names=(unsorted sorted)
[[ -n "$BWA_INDEX" ]] && command -v bwa > /dev/null && command -v samtools > /dev/null && names+=(bwa)
declare -A times
for ((r = 1; r <= REPEAT; r++)); do
  for name in "${names[@]}"; do
    [[ $name == bwa ]] && (( r > BWA_REPEAT )) && continue
    times[$name]+="$(timed "$name" "$r" "run_$name") "
  done
done
{
  echo "reads: $READS; index: $INDEX; threads: $THREADS; runs: $REPEAT each (bwa: $BWA_REPEAT), medians; host: $(hostname)"
  unsorted=$(tr ' ' '\n' <<< "${times[unsorted]}" | grep . | median)
  printf '%-10s %10s %10s\n' run seconds "x unsorted"
  for name in "${names[@]}"; do
    m=$(tr ' ' '\n' <<< "${times[$name]}" | grep . | median)
    printf '%-10s %10.2f %10.2f\n' "$name" "$m" "$(awk -v m="$m" -v u="$unsorted" 'BEGIN { print m / u }')"
  done
  grep -h 'coordinate-sorted\|sorting, seconds' "$WORK/logs/sorted-$REPEAT.txt" || true
} | tee "$WORK/sort.txt"
