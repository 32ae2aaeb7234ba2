#!/usr/bin/env bash
# test_workflow.sh WTMAP WORK_DIR: workflow/Snakefile on the bundled example with the CPU
# backend, its final BAM's records (samtools view, no header) against one `wtmap align` run over
# the same input sorted by samtools sort:
#   - the bundled single reads (examples/), in 3 pieces and in 1;
#   - pairs made from the bundled reference by make_pairs.py (the insert size grows along the
#     file, so a piece that estimated its own model would pair differently: checked below), in
#     3 pieces and in 1, and in 3 in the k-mismatch mode (-k 2); and 5 pairs (too few to estimate
#     a model: -I none) in 4 pieces, one of them empty.
# Also: the sample of leading pairs the workflow estimates the model from is as long as wtmap's
# window (kInsertWindowPairs). Exit 77 (ctest: skipped) without snakemake, samtools or python3.
set -euo pipefail
wtmap=${1:?usage: test_workflow.sh WTMAP WORK_DIR}
work=${2:?usage: test_workflow.sh WTMAP WORK_DIR}
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
for tool in snakemake samtools python3; do
  command -v "$tool" > /dev/null || { echo "skipped: no $tool on PATH"; exit 77; }
done
wtmap=$(cd "$(dirname "$wtmap")" && pwd)/$(basename "$wtmap")
rm -rf "$work"
mkdir -p "$work"
cd "$work"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

window=$(sed -n 's/.*kInsertWindowPairs = \([0-9]*\);.*/\1/p' "$source_dir/aligner/include/wtmap/aligner/pairing.hpp")
sample=$(sed -n 's/^INSERT_WINDOW_PAIRS = \([0-9]*\)$/\1/p' "$source_dir/workflow/Snakefile")
if [ -z "$window" ] || [ "$window" != "$sample" ]; then
  fail "the Snakefile samples $sample pairs, wtmap estimates from its first $window"
fi

reference=$source_dir/examples/ecoli536-100k.fa.gz
"$wtmap" index -q "$reference" -p ref

# single NAME OPTIONS READS...: one run, sorted by samtools -> NAME.expected.txt
single() {
  local name=$1 options=$2
  shift 2
  # shellcheck disable=SC2086
  "$wtmap" align -q --device cpu $options -x ref "$@" -o "$name.single.bam" --stats-json "$name.single.json"
  samtools sort -o "$name.single.sorted.bam" "$name.single.bam" 2> /dev/null
  samtools view "$name.single.sorted.bam" > "$name.expected.txt"
  [ -s "$name.expected.txt" ] || fail "$name: the single run wrote no records"
}

# workflow NAME CHUNKS EXPECTED OPTIONS CONFIG...: the workflow's records, align_options
# "--device cpu OPTIONS", against EXPECTED.expected.txt
workflow() {
  local name=$1 chunks=$2 expected=$3 options=$4
  shift 4
  if ! snakemake -s "$source_dir/workflow/Snakefile" --directory "$work" --cores 2 \
      --config reference="$reference" chunks="$chunks" out="$name.bam" wtmap="$wtmap" \
      align_options="--device cpu $options" "$@" > "$name.snakemake.log" 2>&1; then
    fail "$name: snakemake failed"
    tail -n 30 "$name.snakemake.log" >&2
    return
  fi
  samtools quickcheck "$name.bam" || fail "$name: not a whole BAM"
  [ -f "$name.bam.bai" ] || fail "$name: no $name.bam.bai"
  samtools view -H "$name.bam" | grep -q $'^@HD.*\tSO:coordinate' || fail "$name: no @HD SO:coordinate"
  samtools view "$name.bam" > "$name.txt"
  if ! cmp -s "$expected.expected.txt" "$name.txt"; then
    fail "$name: records differ from one run's ($(wc -l < "$name.txt") against $(wc -l < "$expected.expected.txt"))"
    diff "$expected.expected.txt" "$name.txt" | head -n 6 >&2 || true  # head may cut diff short (SIGPIPE)
  fi
}

reads=$source_dir/examples/ecoli536-100k.reads.fq.gz
single single "" "$reads"
workflow single-3 3 single "" r1="$reads"
workflow single-1 1 single "" r1="$reads"

python3 "$source_dir/tests/workflow/make_pairs.py" "$reference" 15000 11 pairs_1.fq.gz pairs_2.fq.gz
single pairs "" pairs_1.fq.gz pairs_2.fq.gz
workflow pairs-3 3 pairs "" r1=pairs_1.fq.gz r2=pairs_2.fq.gz
workflow pairs-1 1 pairs "" r1=pairs_1.fq.gz r2=pairs_2.fq.gz
# The k-mismatch mode samples the insert size from its own hits.
single pairs-k "-k 2" pairs_1.fq.gz pairs_2.fq.gz
workflow pairs-k-3 3 pairs-k "-k 2" r1=pairs_1.fq.gz r2=pairs_2.fq.gz
model() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pairs"]["insert_size_model"][sys.argv[2]])' "$@"; }
option=$(model pairs-3.bam.work/insert_size.json option)
[ "$option" = "$(model pairs.single.json option)" ] || fail "pairs-3: the model $option is not the single run's"
# The single run estimates from its first 10^4 confident pairs, not from all 15000 pairs: a
# workflow that estimated from the whole input would pair otherwise.
[ "$(model pairs.single.json pairs_sampled)" = 10000 ] || fail "the single run estimates from all pairs"

# The data can tell: the last third of the pairs aligned as a run of its own (its own estimate)
# pairs some of them otherwise than the whole run; given the whole run's model, as the workflow
# gives it, exactly as the whole run.
for mate in 1 2; do gzip -dc "pairs_$mate.fq.gz" | tail -n 20000 > "last_$mate.fq"; done
samtools view pairs.single.bam | awk 'substr($1, 2) + 0 >= 10000' > last.expected.txt  # pairs p10000 .. p14999
"$wtmap" align -q --device cpu -x ref last_1.fq last_2.fq -o last.own.sam
"$wtmap" align -q --device cpu -x ref -I "$option" last_1.fq last_2.fq -o last.given.sam
grep -v '^@' last.own.sam | cmp -s last.expected.txt - && fail "the last third on its own pairs as the whole run"
grep -v '^@' last.given.sam | cmp -s last.expected.txt - || fail "the last third given -I $option pairs otherwise"

for mate in 1 2; do gzip -dc "pairs_$mate.fq.gz" | awk 'NR <= 20' | gzip > "few_$mate.fq.gz"; done
single few "" few_1.fq.gz few_2.fq.gz
workflow few-4 4 few "" r1=few_1.fq.gz r2=few_2.fq.gz

if [ "$failures" -ne 0 ]; then
  echo "$failures failures" >&2
  exit 1
fi
echo "workflow: the records of every run equal one wtmap align run's"
