#!/usr/bin/env bash
# The main job on the bundled example: index a 100 kbp E. coli excerpt, align 5,000 reads to BAM,
# and print the first records. Runs on the GPU when one is usable, else on the CPU (with a note).
set -euo pipefail
cd "$(dirname "$0")/.."
wtmap=${WTMAP:-build/cli/wtmap}
out=${1:-build/example}
mkdir -p "$(dirname "$out")"
"$wtmap" index examples/ecoli536-100k.fa.gz -p "$out"
"$wtmap" align -x "$out" examples/ecoli536-100k.reads.fq.gz -o "$out.sam"
# The first three records (awk stops reading the file itself: `grep | head` would end grep with
# SIGPIPE, which pipefail turns into the script's exit status).
awk '!/^@/ { print; if (++n == 3) exit }' "$out.sam" | cut -f 1-9,12-
echo "alignments: $out.sam"
