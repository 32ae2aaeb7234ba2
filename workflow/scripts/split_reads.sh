#!/usr/bin/env bash
# split_reads.sh READS RECORDS CHUNKS WIDTH PREFIX SAMPLE_RECORDS SAMPLE
#
# Splits a 4-line FASTQ file, plain or gzip, into CHUNKS pieces of consecutive records,
# PREFIX<i>.fq.gz for i = 0 .. CHUNKS-1 written with WIDTH digits (gzip -1): the first
# ceil(RECORDS / CHUNKS) records in piece 0, the next as many in piece 1, ...; pieces past the
# last record are empty files. Mate files split with the same RECORDS (mate 1's count) hold the
# same pairs piece by piece. The first SAMPLE_RECORDS records also go to SAMPLE (plain FASTQ).
# One streaming pass (gzip -dc | awk | split): memory does not grow with the input.
#
# Stops with a message naming the file and line where a record does not look like 4-line FASTQ
# (no @ header, no + line, cut short), and where the file does not hold RECORDS records.
set -euo pipefail

if [ $# -ne 7 ]; then
  echo "usage: split_reads.sh READS RECORDS CHUNKS WIDTH PREFIX SAMPLE_RECORDS SAMPLE" >&2
  exit 2
fi
reads=$1 records=$2 chunks=$3 width=$4 prefix=$5 sample_records=$6 sample=$7
for n in "$records" "$chunks" "$width" "$sample_records"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "split_reads: '$n' is not a count" >&2; exit 2; }
done
[ "$chunks" -ge 1 ] || { echo "split_reads: CHUNKS must be at least 1" >&2; exit 2; }

per=$(( (records + chunks - 1) / chunks ))
[ "$per" -ge 1 ] || per=1  # no records: split writes nothing, every piece is made empty below

: > "$sample"
# awk checks each record's shape and the count, and copies the sample; split cuts the stream
# (its filter expands $FILE itself).
# shellcheck disable=SC2016
gzip -dcf -- "$reads" \
  | awk -v name="$reads" -v expected="$records" -v sample="$sample" -v sample_lines=$((4 * sample_records)) '
      function fail(why) {
        printf "split_reads: %s, line %d: %s\n", name, NR, why > "/dev/stderr"
        failed = 1
        exit 1
      }
      NR % 4 == 1 && substr($0, 1, 1) != "@" { fail("a record does not start with @ (4-line FASTQ expected)") }
      NR % 4 == 3 && substr($0, 1, 1) != "+" { fail("a record has no + line (4-line FASTQ expected)") }
      NR <= sample_lines { print > sample }
      { print }
      END {
        if (failed) exit 1
        if (NR % 4 != 0) fail("the last record is cut short")
        if (NR / 4 != expected) fail(sprintf("%.0f records where mate 1 holds %.0f", NR / 4, expected))
      }' \
  | split -l $((4 * per)) -d -a "$width" --additional-suffix=.fq --filter='gzip -1 > "$FILE.gz"' - "$prefix"

for ((i = 0; i < chunks; ++i)); do
  piece=$(printf '%s%0*d.fq.gz' "$prefix" "$width" "$i")
  [ -e "$piece" ] || gzip -c < /dev/null > "$piece"
done
