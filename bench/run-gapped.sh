#!/usr/bin/env bash
# Gapped-alignment benchmark (issue 25, "Measure") on the GPU host: `wtmap align` in its default
# gapped mode against `bwa mem`, bowtie2-align-s and `bwa aln` + `samse` (bwa aln's defaults,
# gapped) on the same reads with variation, the same host, one run; speeds as time ratios to
# `bwa mem -t T`, accuracy as a ROC table against the simulator's truth (bench/roc.py).
#
#   source .device/env.sh && source .baselines/env.sh && bench/run-gapped.sh [--quick]
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
source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"

# 250 Mbp rather than run-aligner.sh's 1 Gbp: see above.
aligner_settings 1e6 250 5e3 5
# mason: minimap2's variant rates; seeds and threads fixed so every host makes the same reads.
MASON_VARIANTS=(--snp-rate 1e-3 --small-indel-rate 2e-4 --min-small-indel-size 1 --max-small-indel-size 10
                --sv-indel-rate 0 --sv-inversion-rate 0 --sv-translocation-rate 0 --sv-duplication-rate 0 -s 11)
MASON_READS=(--seed 5 --num-threads 8 --seq-technology illumina)
MISSING=","                                    # tools not found on this host
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
IO_DESC="wtmap align --io-only (FASTQ.gz -> BAM, no search)"
host_info | tee "$WORK/logs/host.txt"
{
  echo "reads: $READS per run (mason_simulator, Illumina single-end); lengths: $LENS; genomes: $GENOMES (synth: $SYNTH_MBP Mbp)"
  echo "variants: mason_variator ${MASON_VARIANTS[*]}; reads: mason_simulator ${MASON_READS[*]}"
  missing="$(tr -s , <<< "$MISSING")"; missing="${missing#,}"
  [[ -z "$missing" ]] || echo "not found on this host, so left out: ${missing%,}"
} | tee -a "$WORK/logs/host.txt"
status=0

# The folder of genome $g's reads of length L, and of everything measured on them.
length_dir() { echo "$WORK/gapped-$g-${1}bp-$READS"; }

# make_reads L: mason's reads of length L and their truth in $D (untimed; kept between calls).
make_reads() {
  local L="$1" vcf="$G/mason-variants.vcf"
  if [[ ! -s "$vcf" ]]; then
    echo "== mason_variator on $G" >&2
    "$MASON_VAR" "${MASON_VARIANTS[@]}" -ir "$REF" -ov "$vcf.tmp.vcf" > "$G/mason_variator.log" 2>&1 \
      || { echo "mason_variator failed: $(tail -3 "$G/mason_variator.log")" >&2; return 1; }
    mv "$vcf.tmp.vcf" "$vcf"
  fi
  if [[ ! -s "$D/reads.fq.gz" || ! -s "$D/truth.sam" ]]; then
    echo "== mason_simulator ${L} bp, $READS reads" >&2
    "$MASON_SIM" "${MASON_READS[@]}" -ir "$REF" -iv "$vcf" -n "$READS" --illumina-read-length "$L" \
      -o "$D/tmp.reads.fq.gz" -oa "$D/tmp.truth.sam" > "$D/mason_simulator.log" 2>&1 \
      || { echo "mason_simulator failed: $(tail -3 "$D/mason_simulator.log")" >&2; return 1; }
    mv "$D/tmp.truth.sam" "$D/truth.sam" && mv "$D/tmp.reads.fq.gz" "$D/reads.fq.gz"
  fi
  local variants
  variants=$(grep -vc '^#' "$vcf" || true)
  python3 -c "import json,sys; a=sys.argv; json.dump(dict(genome=a[1], genome_desc=a[2], genome_bp=int(a[3]), reads=int(a[4]), read_len=int(a[5]), variants=int(a[6]), device=a[7], threads=int(a[8]), io_floor_desc=a[9], repeat=int(a[10]), simulator='mason_simulator ' + a[11], variator='mason_variator ' + a[12]), open(a[13],'w'), indent=1)" \
    "$g" "$DESC" "$GLEN" "$READS" "$L" "$variants" "$DEVICE" "$THREADS" "$IO_DESC" "$REPEAT" "${MASON_READS[*]}" "${MASON_VARIANTS[*]}" "$D/meta.json"
  cp "$WORK/logs/host.txt" "$D/host.txt"
}

# The timed runs on the reads $FQ of folder $D (steps in $TSV).
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
  e2e=("$WTMAP" align -v -x "$G/wtmap" "$FQ" -t "$THREADS" --device "$DEVICE" -o)
  floor=("$WTMAP" align -v --io-only -x "$G/wtmap" "$FQ" -t "$THREADS" --device "$DEVICE" -o)
  e2e_and_floor
  tstep align/wtmap_sam -- "${e2e[@]}" "$D/wtmap.sam" || status=1
  if ok bwa_mem; then tstep align/bwa_mem --stdout "$D/bwa_mem.sam" -- "$BWA" mem -t "$THREADS" "$G/bwa" "$FQ" || status=1; fi
  if ok bowtie2; then tstep align/bowtie2 -- "$BT2" -p "$THREADS" -x "$G/bt2" -U "$FQ" -S "$D/bowtie2.sam" || status=1; fi
  if ok bwa_aln; then
    tstep align/bwa_aln --stdout "$D/bwa_aln.sai" -- "$BWA" aln -t "$THREADS" "$G/bwa" "$FQ" || status=1
    done_ok align/bwa_aln && { tstep align/bwa_samse --stdout "$D/bwa_aln.sam" -- "$BWA" samse "$G/bwa" "$D/bwa_aln.sai" "$FQ" || status=1; }
  fi
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
    FQ="$D/reads.fq.gz"
    [[ -s "$FQ" && -s "$D/meta.json" ]] || continue  # (mason failed)
    TSV="$D/measure.tsv"; touch "$TSV"
    left="$(tr -s , <<< "$BROKEN$MISSING$SKIP")"; left="${left#,}"
    echo "${left%,}" > "$D/left-out.txt"  # for the report: tools not run (skipped, missing, index failed)
    timed_runs
    evaluate
    # this length's step logs beside its results (the next length's steps have the same names)
    mkdir -p "$D/logs"
    for f in "$WORK"/logs/{search,align,io}_*.log; do [[ -e "$f" ]] && mv "$f" "$D/logs/"; done
  done
done

# ---- report (every finished run in $WORK, this call's and earlier ones)
for d in "$WORK"/gapped-*/; do [[ -s "$d/measure.tsv" ]] && sed "s|^|$(basename "$d")\t|" "$d/measure.tsv"; done > "$OUT/gapped.tsv" || true
python3 "$here/report_gapped.py" "$WORK" "$OUT" | tee "$OUT/gapped.txt" || status=1
# The ROC plot needs matplotlib (Debian's python3-matplotlib on the build machine).
PLOT_PY="${WTMAP_BENCH_PLOT_PYTHON:-}"
for p in python3 /usr/bin/python3; do
  [[ -z "$PLOT_PY" ]] && "$p" -c 'import matplotlib' 2>/dev/null && PLOT_PY="$p"
done
if [[ -n "$PLOT_PY" && -s "$OUT/gapped.json" ]]; then
  "$PLOT_PY" "$here/plot_roc.py" "$OUT/gapped.json" "$OUT/gapped-roc.png" || status=1
elif [[ -s "$OUT/gapped.json" ]]; then
  echo "== no python3 with matplotlib here: draw the ROC plot where there is one: /usr/bin/python3 bench/plot_roc.py gapped.json gapped-roc.png"
fi
(cd "$WORK" && tar -czf "$OUT/gapped-logs.tar.gz" logs $(ls -d gapped-*/{roc.txt,search.json,measure.tsv,meta.json,mason_simulator.log,logs} genome-*/{index.tsv,bwa-index.log,bowtie2-index.log,mason_variator.log} 2>/dev/null)) || true
if out_of_time; then echo "== time budget used up: run bench/run-gapped.sh again (same machine) to continue"; fi
echo "== total $((SECONDS - START_S)) s; results in $OUT"
exit $status
