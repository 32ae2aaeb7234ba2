#!/usr/bin/env bash
# The count target in memory: FmIndex::search on the GPU (bench_fm_search) against SDSL csa_wt
# count on all host cores (bench_fm_count), same reference and patterns, one host, one run.
#   source .device/env.sh && bench/run-fm-search.sh [Mbp=100] [patterns=1e7]
# WTMAP_BENCH_KMER=0,8,10,12 times each k-mer table length (default: the one the index size gives).
set -euo pipefail
mbp=${1:-100} n=${2:-1e7}
OUT=${OUT:-$PWD/bench-out}; work=${WORK:-$PWD/bench-work/fm-search}
mkdir -p "$OUT" "$work"
here=$(cd "$(dirname "$0")" && pwd)
[ -s "$work/ref.fa" ] || python3 "$here/gen_data.py" reference --mbp "$mbp" --contigs 8 --seed 1 "$work/ref.fa"
for len in 32 100; do
  [ -s "$work/p$len.fa" ] || python3 "$here/gen_data.py" patterns "$work/ref.fa" --n "$n" --len $len --seed 2 "$work/p$len.fa"
done
[ -s "$work/idx.wtmap" ] || wtmap index "$work/ref.fa" -p "$work/idx" 2> "$work/index.log"
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "nproc $(nproc)"; date -u; } | tee "$OUT/fm-search.txt"
bench_fm_search "$work/idx" "$work/p32.fa" "$work/p100.fa" ${WTMAP_BENCH_KMER:+--kmer "$WTMAP_BENCH_KMER"} | tee -a "$OUT/fm-search.txt"
bench_fm_count "$work/ref.fa" "$work/p32.fa" "$work/p100.fa" 2>&1 | tee -a "$OUT/fm-search.txt"
