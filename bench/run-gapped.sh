#!/usr/bin/env bash
# Gapped-alignment benchmark (issue 25, "Measure") on the GPU host: `wtmap align` in its default
# gapped mode against `bwa mem`, bowtie2-align-s and `bwa aln` + `samse` (bwa aln's defaults,
# gapped) on the same reads with variation, the same host, one run; speeds as time ratios to
# `bwa mem -t T`, accuracy as a ROC table against the simulator's truth (bench/roc.py).
#
#   source .device/env.sh && source .baselines/env.sh && bench/run-gapped.sh [--quick] [--paired]
#
# --paired (or WTMAP_BENCH_PAIRED=1), issue 26: the same on pairs instead of single reads: mason's
# paired-end reads (-o r1 -or r2, FR, fragments of WTMAP_BENCH_FRAGMENT = mean,sd bases, default
# 350,50 as Illumina TruSeq libraries), WTMAP_BENCH_READS pairs; wtmap align r1 r2 -> BAM and its
# I/O floor, bwa mem r1 r2, bowtie2-align-s -1 -2 (-X mean + 6 sd); no search-only pass and no bwa
# aln (both single-end only). Runs in $WORK/paired-*, results in $OUT/paired.* (the names below
# with "paired" for "gapped"), the pair statistics of roc.py beside the ROC table.
#
# From the repository root. Reads as minimap2's evaluation makes them: Debian seqan-apps'
# mason_variator (SNPs 1e-3, small indels 2e-4 of 1-10 bp, no structural variants; one VCF per
# genome) then mason_simulator (Illumina, single-end, every length of $WTMAP_BENCH_READ_LENS),
# fixed seeds and a fixed thread count (mason's output depends on it), keeping mason's truth
# alignments (-oa). Genomes: E. coli 536 ($WTMAP_ECOLI_FA) and the synthetic one of
# run-aligner.sh at $WTMAP_BENCH_SYNTH_MBP (default 250 Mbp: `bwa index` of 1 Gbp takes 15-21
# minutes single-threaded, and a device session holds 30). Genome folders (reference, indexes)
# are run-aligner.sh's and shared with it.
# Timed: bench_gapped_search (search only: wtmap align's mapping engine over reads in host memory;
# the median of up to 3 passes), wtmap align FASTQ.gz -> BAM and its I/O floor (--io-only), $WTMAP_BENCH_REPEAT
# times each (default 5, 2 with --quick), alternated, reported as medians; wtmap align -> SAM
# (which roc.py reads); bwa mem, bowtie2-align-s, bwa aln + samse, once each. Indexes are built
# first (bwa's and bowtie2's in the background, beside wtmap's and the reads) and not timed; no
# timed run shares the host with an index build. Finished steps are not redone: when the time
# budget ($WTMAP_BENCH_BUDGET_S, default 530 s) runs out, run the script again on the same machine
# and it continues.
# Results in $OUT: gapped.txt (tables and targets), gapped.json, gapped.tsv, gapped-section.md
# (for bench/RESULTS.md), gapped-roc.png (where python3 has matplotlib; else the command to draw
# it elsewhere), gapped-logs.tar.gz.
set -euo pipefail
# --paired anywhere among the arguments; harness-lib.sh takes a leading --quick.
args=()
for a in "$@"; do
  if [[ "$a" == --paired ]]; then export WTMAP_BENCH_PAIRED=1; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"
PAIRED="${WTMAP_BENCH_PAIRED:-0}"
KIND=$([[ "$PAIRED" == 1 ]] && echo paired || echo gapped)  # the prefix of run folders and result files

# 250 Mbp rather than run-aligner.sh's 1 Gbp: see above.
aligner_settings 1e6 250 5e3 5
# mason: minimap2's variant rates; seeds and threads fixed so every host makes the same reads.
MASON_VARIANTS=(--snp-rate 1e-3 --small-indel-rate 2e-4 --min-small-indel-size 1 --max-small-indel-size 10
                --sv-indel-rate 0 --sv-inversion-rate 0 --sv-translocation-rate 0 --sv-duplication-rate 0 -s 11)
MASON_READS=(--seed 5 --num-threads 8 --seq-technology illumina)
MISSING=","                                    # tools not found on this host
if [[ "$PAIRED" == 1 ]]; then
  # bench_gapped_search and bwa aln + samse read single reads only
  SKIP="$SKIP,search,bwa_aln,"
  IFS=, read -r FRAGMENT_MEAN FRAGMENT_SD <<< "${WTMAP_BENCH_FRAGMENT:-350,50}"
  MASON_READS+=(--fragment-mean-size "$FRAGMENT_MEAN" --fragment-size-std-dev "$FRAGMENT_SD")
  BT2_MAX_FRAGMENT=$((FRAGMENT_MEAN + 6 * FRAGMENT_SD))  # bowtie2's -X (default 500)
fi
ok() { [[ "$SKIP" != *",$1,"* && "$BROKEN" != *",$1,"* && "$MISSING" != *",$1,"* ]]; }
rm -rf "$WORK/logs"; mkdir -p "$WORK/logs"

# Required: wtmap and mason. A missing baseline or search binary leaves its runs out (said in the report).
WTMAP="$(find_prog wtmap)"
find_mason() { find_prog "$1" 2>/dev/null || { [[ -x "/usr/lib/seqan/bin/$1" ]] && echo "/usr/lib/seqan/bin/$1"; } || \
  { echo "run-gapped.sh: $1 not found (source .baselines/env.sh, or apt-get install seqan-apps)" >&2; return 1; }; }
MASON_VAR="$(find_mason mason_variator)"; MASON_SIM="$(find_mason mason_simulator)"
BWA="$(find_prog bwa || true)"; BT2="$(find_prog bowtie2-align-s || true)"; BT2B="$(find_prog bowtie2-build-s || true)"
SEARCH="$(find_prog bench_gapped_search || true)"
[[ -n "$BWA" ]] || MISSING="$MISSING,bwa_aln,bwa_mem,"
[[ -n "$BT2" && -n "$BT2B" ]] || MISSING="$MISSING,bowtie2,"
[[ -n "$SEARCH" ]] || MISSING="$MISSING,search,"
SAMTOOLS="$(find_prog samtools 2>/dev/null || true)"  # for flagstat (logs only)
IO_DESC="wtmap align --io-only (FASTQ.gz -> BAM, no search)"
[[ "$PAIRED" == 1 ]] && IO_DESC="wtmap align --io-only (two FASTQ.gz -> BAM, no search)"
host_info | tee "$WORK/logs/host.txt"
{
  if [[ "$PAIRED" == 1 ]]; then
    echo "pairs: $READS per run (mason_simulator, Illumina paired-end FR, fragments $FRAGMENT_MEAN +- $FRAGMENT_SD); mate lengths: $LENS; genomes: $GENOMES (synth: $SYNTH_MBP Mbp)"
  else
    echo "reads: $READS per run (mason_simulator, Illumina single-end); lengths: $LENS; genomes: $GENOMES (synth: $SYNTH_MBP Mbp)"
  fi
  echo "variants: mason_variator ${MASON_VARIANTS[*]}; reads: mason_simulator ${MASON_READS[*]}"
  missing="$(tr -s , <<< "$MISSING")"; missing="${missing#,}"
  [[ -z "$missing" ]] || echo "not found on this host, so left out: ${missing%,}"
} | tee -a "$WORK/logs/host.txt"
status=0

# INPUT: the read files of folder $D (FQ: the first).
set_input() {
  if [[ "$PAIRED" == 1 ]]; then INPUT=("$D/r1.fq.gz" "$D/r2.fq.gz"); else INPUT=("$D/reads.fq.gz"); fi
  FQ="${INPUT[0]}"
}

# The folder of genome $g's reads of length L, and of everything measured on them.
length_dir() { echo "$WORK/$KIND-$g-${1}bp-$READS"; }

# make_reads L: mason's reads of length L (pairs: mates) and their truth in $D (untimed; kept between
# calls): reads.fq.gz, or r1.fq.gz and r2.fq.gz; truth.sam.
make_reads() {
  local L="$1" vcf="$G/mason-variants.vcf"
  if [[ ! -s "$vcf" ]]; then
    echo "== mason_variator on $G" >&2
    "$MASON_VAR" "${MASON_VARIANTS[@]}" -ir "$REF" -ov "$vcf.tmp.vcf" > "$G/mason_variator.log" 2>&1 \
      || { echo "mason_variator failed: $(tail -3 "$G/mason_variator.log")" >&2; return 1; }
    mv "$vcf.tmp.vcf" "$vcf"
  fi
  local files=("${INPUT[@]##*/}") out=(-o "$D/tmp.${INPUT[0]##*/}") mates=1
  if [[ "$PAIRED" == 1 ]]; then out+=(-or "$D/tmp.${INPUT[1]##*/}"); mates=2; fi
  if [[ ! -s "${INPUT[-1]}" || ! -s "$D/truth.sam" ]]; then
    echo "== mason_simulator ${L} bp, $READS ${KIND/gapped/single} reads" >&2
    "$MASON_SIM" "${MASON_READS[@]}" -ir "$REF" -iv "$vcf" -n "$READS" --illumina-read-length "$L" \
      "${out[@]}" -oa "$D/tmp.truth.sam" > "$D/mason_simulator.log" 2>&1 \
      || { echo "mason_simulator failed: $(tail -3 "$D/mason_simulator.log")" >&2; return 1; }
    mv "$D/tmp.truth.sam" "$D/truth.sam"
    for f in "${files[@]}"; do mv "$D/tmp.$f" "$D/$f"; done
  fi
  local variants
  variants=$(grep -vc '^#' "$vcf" || true)
  # reads: every mate a read (reads/s); pairs: 0 for single reads
  python3 -c "import json,sys; a=sys.argv; json.dump(dict(genome=a[1], genome_desc=a[2], genome_bp=int(a[3]), reads=int(a[4]), read_len=int(a[5]), variants=int(a[6]), device=a[7], threads=int(a[8]), io_floor_desc=a[9], repeat=int(a[10]), simulator='mason_simulator ' + a[11], variator='mason_variator ' + a[12], pairs=int(a[14])), open(a[13],'w'), indent=1)" \
    "$g" "$DESC" "$GLEN" "$((mates * READS))" "$L" "$variants" "$DEVICE" "$THREADS" "$IO_DESC" "$REPEAT" "${MASON_READS[*]}" "${MASON_VARIANTS[*]}" "$D/meta.json" "$(( mates == 2 ? READS : 0 ))"
  cp "$WORK/logs/host.txt" "$D/host.txt"
}

# The timed runs on the reads ${INPUT[@]} (one file or the two of pairs) of folder $D (steps in $TSV).
timed_runs() {
  local e2e floor
  # Search only: one process, index loaded once, at most 3 passes (a pass takes about as long as a
  # wtmap align run, without the process's start-up and the CUDA context that spread those); then
  # one pass of a single mapper with its seconds by step (--steps), where the time goes.
  if ok search; then
    tstep search/wtmap -- "$SEARCH" "$G/wtmap" "$FQ" --device "$DEVICE" --repeat $((REPEAT < 3 ? REPEAT : 3)) \
      --steps --json "$D/search.json" || status=1
  fi
  # Each command ends with -o, its output file following.
  e2e=("$WTMAP" align -v -x "$G/wtmap" "${INPUT[@]}" -t "$THREADS" --device "$DEVICE" -o)
  floor=("$WTMAP" align -v --io-only -x "$G/wtmap" "${INPUT[@]}" -t "$THREADS" --device "$DEVICE" -o)
  e2e_and_floor
  tstep align/wtmap_sam -- "${e2e[@]}" "$D/wtmap.sam" || status=1
  if ok bwa_mem; then tstep align/bwa_mem --stdout "$D/bwa_mem.sam" -- "$BWA" mem -t "$THREADS" "$G/bwa" "${INPUT[@]}" || status=1; fi
  local bt2_reads=(-U "$FQ")
  [[ "$PAIRED" == 1 ]] && bt2_reads=(-1 "${INPUT[0]}" -2 "${INPUT[1]}" -X "$BT2_MAX_FRAGMENT")
  if ok bowtie2; then tstep align/bowtie2 -- "$BT2" -p "$THREADS" -x "$G/bt2" "${bt2_reads[@]}" -S "$D/bowtie2.sam" || status=1; fi
  if ok bwa_aln; then
    tstep align/bwa_aln --stdout "$D/bwa_aln.sai" -- "$BWA" aln -t "$THREADS" "$G/bwa" "$FQ" || status=1
    done_ok align/bwa_aln && { tstep align/bwa_samse --stdout "$D/bwa_aln.sam" -- "$BWA" samse "$G/bwa" "$D/bwa_aln.sai" "$FQ" || status=1; }
  fi
}

# samtools flagstat of every finished run's output, into $D/flagstat.txt (untimed; for the logs).
flagstats() {
  [[ -n "$SAMTOOLS" ]] || return 0
  local f
  for f in "$D"/{wtmap.bam,bwa_mem.sam,bowtie2.sam}; do
    [[ -s "$f" ]] && { echo "== samtools flagstat ${f##*/}"; "$SAMTOOLS" flagstat "$f"; }
  done > "$D/flagstat.txt" 2>&1 || true
}

# Accuracy of every finished run against mason's truth (again only when the set of runs changed).
evaluate() {
  local runs=() tool label
  for tool in wtmap:align/wtmap_sam bwa_mem:align/bwa_mem bowtie2:align/bowtie2 bwa_aln:align/bwa_samse; do
    label="${tool#*:}"; tool="${tool%%:*}"
    done_ok "$label" && runs+=("$tool=$D/$tool.sam")
  done
  (( ${#runs[@]} )) || return 0
  if [[ -s "$D/roc.json" && "$(cat "$D/roc.runs" 2>/dev/null)" == "${runs[*]}" ]]; then return 0; fi
  out_of_time && return 0
  echo "== evaluate ${runs[*]##*/}" >&2
  if python3 "$here/roc.py" --truth "$D/truth.sam" --json "$D/roc.json" "${runs[@]}" > "$D/roc.txt"; then
    echo "${runs[*]}" > "$D/roc.runs"
    cat "$D/roc.txt"
  else
    status=1
  fi
}

# NM and MD of wtmap's records recomputed by `samtools calmd` from the reference (issue 25: no
# difference on a real-sized run): calmd.txt counts the records whose NM or MD it changes.
check_edit_tags() {
  [[ -s "$D/wtmap.sam" && ! -s "$D/calmd.txt" ]] && done_ok align/wtmap_sam || return 0
  local samtools; samtools="$(find_prog samtools)" || return 0
  tags() { awk -F'\t' '!/^@/ {nm = md = ""; for (i = 12; i <= NF; i++) { if ($i ~ /^NM:/) nm = $i; if ($i ~ /^MD:/) md = $i } print nm, md}'; }
  if "$samtools" calmd "$D/wtmap.sam" "$REF" 2> "$D/calmd.err" | tags > "$D/calmd.tags" && tags < "$D/wtmap.sam" > "$D/wtmap.tags"; then
    echo "samtools calmd: $(wc -l < "$D/wtmap.tags") records, $(paste -d'|' "$D/wtmap.tags" "$D/calmd.tags" | awk -F'|' '$1 != $2' | wc -l) with NM or MD changed" | tee "$D/calmd.txt"
  else
    status=1
  fi
  rm -f "$D/calmd.tags" "$D/wtmap.tags"
}

IFS=, read -ra genomes <<< "$GENOMES"
IFS=, read -ra lens <<< "$LENS"
for g in "${genomes[@]}"; do
  out_of_time && break
  prepare_genome "$g"
  # ---- reads (untimed), of every length, while the indexes build
  for L in "${lens[@]}"; do
    out_of_time && break
    D="$(length_dir "$L")"
    mkdir -p "$D"
    set_input
    make_reads "$L" || status=1
  done
  # ---- timed runs, once every index is there (a tool whose index failed is left out)
  waits=()
  { ok bwa_aln || ok bwa_mem; } && waits+=(bwa)
  ok bowtie2 && waits+=(bowtie2)
  (( ${#waits[@]} == 0 )) || wait_for "${waits[@]}" || break
  for L in "${lens[@]}"; do
    out_of_time && break
    D="$(length_dir "$L")"
    set_input
    [[ -s "${INPUT[-1]}" && -s "$D/meta.json" ]] || continue  # (mason failed)
    TSV="$D/measure.tsv"; touch "$TSV"
    # for the report: tools not run (skipped, missing, index failed), each once
    tr , '\n' <<< "$BROKEN$MISSING$SKIP" | awk 'NF && !seen[$0]++' | paste -sd, > "$D/left-out.txt"
    timed_runs
    flagstats
    evaluate
    check_edit_tags
    # this length's step logs beside its results (the next length's steps have the same names)
    mkdir -p "$D/logs"
    for f in "$WORK"/logs/{search,align,io}_*.log; do [[ -e "$f" ]] && mv "$f" "$D/logs/"; done
  done
done

# ---- report (every finished run in $WORK, this call's and earlier ones)
for d in "$WORK"/$KIND-*/; do [[ -s "$d/measure.tsv" ]] && sed "s|^|$(basename "$d")\t|" "$d/measure.tsv"; done > "$OUT/$KIND.tsv" || true
python3 "$here/report_gapped.py" --kind "$KIND" "$WORK" "$OUT" | tee "$OUT/$KIND.txt" || status=1
# The ROC plot needs matplotlib (Debian's python3-matplotlib on the build machine).
PLOT_PY="${WTMAP_BENCH_PLOT_PYTHON:-}"
for p in python3 /usr/bin/python3; do
  [[ -z "$PLOT_PY" ]] && "$p" -c 'import matplotlib' 2>/dev/null && PLOT_PY="$p"
done
if [[ -n "$PLOT_PY" && -s "$OUT/$KIND.json" ]]; then
  "$PLOT_PY" "$here/plot_roc.py" "$OUT/$KIND.json" "$OUT/$KIND-roc.png" || status=1
elif [[ -s "$OUT/$KIND.json" ]]; then
  echo "== no python3 with matplotlib here: draw the ROC plot where there is one: /usr/bin/python3 bench/plot_roc.py $KIND.json $KIND-roc.png"
fi
(cd "$WORK" && tar -czf "$OUT/$KIND-logs.tar.gz" logs $(ls -d $KIND-*/{roc.txt,calmd.txt,search.json,measure.tsv,meta.json,flagstat.txt,mason_simulator.log,logs} genome-*/{index.tsv,bwa-index.log,bowtie2-index.log,mason_variator.log} 2>/dev/null)) || true
if out_of_time; then echo "== time budget used up: run bench/run-gapped.sh$([[ "$PAIRED" == 1 ]] && echo " --paired") again (same machine) to continue"; fi
echo "== total $((SECONDS - START_S)) s; results in $OUT"
exit $status
