#!/usr/bin/env bash
# test_split_reads.sh WORK_DIR: workflow/scripts/split_reads.sh against what its pieces must be --
# consecutive records, ceil(n / chunks) a piece, empty pieces past the last record, the pieces'
# concatenation the input itself, the sample the first records -- on plain and gzip input; and
# its refusals (records that are not 4-line FASTQ, a count unlike mate 1's). Needs bash, gzip,
# awk and split only.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/workflow/scripts/split_reads.sh"
work=${1:?usage: test_split_reads.sh WORK_DIR}
rm -rf "$work"
mkdir -p "$work"
cd "$work"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# n records named r1 .. rn
fastq() { for ((i = 1; i <= $1; ++i)); do printf '@r%d\nACGT%d\n+\nIIII%d\n' "$i" "$i" "$i"; done; }

# split_case NAME RECORDS CHUNKS SAMPLE EXPECTED_SIZES (records per piece, e.g. "2 2 1")
split_case() {
  local name=$1 records=$2 chunks=$3 sample=$4 expected=$5
  for form in plain gzip; do
    local input=$name.$form.fq
    fastq "$records" > "$input"
    if [ "$form" = gzip ]; then gzip -f "$input"; input=$input.gz; fi
    if ! "$script" "$input" "$records" "$chunks" 3 "$name.$form." "$sample" "$name.$form.sample" 2> err.txt; then
      fail "$name ($form): exit status $?: $(cat err.txt)"
      continue
    fi
    local sizes=""
    : > joined.fq
    for ((i = 0; i < chunks; ++i)); do
      local piece
      piece=$(printf '%s.%s.%03d.fq.gz' "$name" "$form" "$i")
      [ -f "$piece" ] || { fail "$name ($form): no $piece"; continue; }
      gzip -t "$piece" || fail "$name ($form): $piece is not gzip"
      sizes+="${sizes:+ }$(( $(gzip -dc "$piece" | wc -l) / 4 ))"
      gzip -dc "$piece" >> joined.fq
    done
    [ "$sizes" = "$expected" ] || fail "$name ($form): pieces of $sizes records, not $expected"
    cmp -s joined.fq <(fastq "$records") || fail "$name ($form): the pieces joined are not the input"
    local want_sample=$(( sample < records ? sample : records ))
    cmp -s "$name.$form.sample" <(fastq "$want_sample") || fail "$name ($form): the sample is not the first $want_sample records"
    for file in "$name.$form."[0-9]*; do
      [[ $file == *.fq.gz ]] || fail "$name ($form): $file beside the pieces"
    done
  done
}

split_case even 6 3 2 "2 2 2"
split_case ceil 5 3 10 "2 2 1"
split_case short 2 4 1 "1 1 0 0"  # pieces past the last record: empty
split_case none 0 3 5 "0 0 0"
split_case one 7 1 0 "7"

# refuse_case NAME INPUT_TEXT RECORDS MESSAGE
refuse_case() {
  local name=$1 text=$2 records=$3 message=$4
  printf '%s' "$text" > "$name.fq"
  if "$script" "$name.fq" "$records" 2 3 "$name." 0 "$name.sample" 2> err.txt; then
    fail "$name: accepted"
  elif ! grep -qF "$message" err.txt; then
    fail "$name: the message lacks '$message': $(cat err.txt)"
  fi
}

refuse_case fasta $'>r1\nACGT\n>r2\nACGT\n' 1 "fasta.fq, line 1: a record does not start with @"
refuse_case multiline $'@r1\nACGT\nACGT\n+\nIIIIIIII\n' 1 "multiline.fq, line 3: a record has no + line"
refuse_case cut $'@r1\nACGT\n+\nIIII\n@r2\nACGT\n' 2 "cut.fq, line 6: the last record is cut short"
refuse_case fewer "$(fastq 3)"$'\n' 4 "fewer.fq, line 12: 3 records where mate 1 holds 4"
refuse_case more "$(fastq 5)"$'\n' 4 "more.fq, line 20: 5 records where mate 1 holds 4"
if "$script" missing.fq 1 1 3 missing. 0 missing.sample 2> err.txt; then fail "a missing input: accepted"; fi
if "$script" x 1 0 3 zero. 0 zero.sample 2> err.txt; then fail "0 chunks: accepted"; fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failures" >&2
  exit 1
fi
echo "split_reads.sh: all cases pass"
