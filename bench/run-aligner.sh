#!/usr/bin/env bash
# Aligner benchmark on the GPU host: wtmap align (GPU) against bwa aln -o 0 + samse, bwa mem and
# bowtie2-align-s on the same ART-simulated single-end reads, the same host; wall time, reads/s,
# ratios to bwa aln, the I/O floor, and accuracy from the simulated truth (bench/evaluate.py).
#
#   source .device/env.sh && source .baselines/env.sh && bench/run-aligner.sh [--quick]
#
# From the repository root. Genomes: the E. coli 536 genome ($WTMAP_ECOLI_FA, set by
# .baselines/env.sh) and a synthetic one ($WTMAP_BENCH_SYNTH_MBP, default 1000 Mbp; no real large
# genome is available offline). Per genome: indexes and the ART reads of every length (not
# timed), then the timed runs (two passes over the lengths, below) and each length's evaluation.
# Everything lives in $WTMAP_BENCH_WORK (default ./bench-work) and finished steps are not redone:
# when the time budget ($WTMAP_BENCH_BUDGET_S, default 530 s) runs out, the script stops and the
# next run (same machine, still warm) continues where it stopped.
# `bwa index` (single-threaded: 15-21 min for 1 Gbp) and `bowtie2-build` run detached in the
# background, beside `wtmap index`, and the timed runs of a genome wait for them (the same run, or
# a later one).
# wtmap align (FASTQ.gz -> BAM) and the I/O floor run $WTMAP_BENCH_REPEAT times each (default 5,
# 2 with --quick), alternated; the table gives their medians.
# Results in $OUT: aligner.txt (table), aligner.json, aligner.tsv, aligner-logs.tar.gz.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"

aligner_settings 1e6 1000 2e4 5
K="${WTMAP_BENCH_K:-4}"
OVERLAP="${WTMAP_BENCH_OVERLAP:-0}"            # 1: wtmap's and bowtie2's timed runs beside bwa index
ok() { [[ "$SKIP" != *",$1,"* && "$BROKEN" != *",$1,"* ]]; }
rm -rf "$WORK/logs"; mkdir -p "$WORK/logs"

WTMAP="$(find_prog wtmap)"
BWA="$(find_prog bwa)"; BT2="$(find_prog bowtie2-align-s)"; BT2B="$(find_prog bowtie2-build-s)"
SAMTOOLS="$(find_prog samtools)"; ART="$(find_prog art_illumina)"
SEARCH="$(find_prog bench_align_search || true)"
if "$WTMAP" align --help 2>&1 | grep -q -- '--io-only'; then
  IO_FLOOR=wtmap; IO_DESC="wtmap align --io-only (FASTQ.gz -> BAM, no search)"
else
  IO_FLOOR=samtools; IO_DESC="samtools import -@T FASTQ.gz -> BAM (stand-in: wtmap align has no --io-only)"
fi
host_info | tee "$WORK/logs/host.txt"
echo "reads: $READS per run; lengths: $LENS; k: $K; genomes: $GENOMES (synth: $SYNTH_MBP Mbp); I/O floor: $IO_DESC" | tee -a "$WORK/logs/host.txt"

status=0

# The folder of genome $g's reads of length L, and of everything measured on them.
length_dir() { echo "$WORK/aligner-$g-${1}bp-$READS-k$K"; }

# The timed runs on the reads $FQ of folder $D (steps in $TSV): wtmap's and bowtie2's, then bwa's
# and the evaluation of every finished run.
timed_wtmap_bowtie2() {
  if [[ "$OVERLAP" == 1 && ! -e "$G/bwa.done" ]] && { ok bwa_aln || ok bwa_mem; }; then
    echo "wtmap's and bowtie2's timed runs started beside bwa index (single-threaded; WTMAP_BENCH_OVERLAP=1)" > "$D/beside.txt"
  fi
  # Search only, $REPEAT runs (the report takes the median: one run spread 0.107-0.163 s between
  # calls on the same reads, bench/history/RESULTS-2026-11-26.md): search.json, search@2.json, ...
  local r suffix resident e2e floor
  if ok search && [[ -n "$SEARCH" ]]; then
    for ((r = 1; r <= REPEAT; r++)); do
      suffix=""; (( r > 1 )) && suffix="@$r"
      if [[ ! -s "$D/search$suffix.json" ]]; then
        resident=(); [[ "$DEVICE" == gpu ]] && resident=(--resident)  # reads on the GPU too
        tstep "search/wtmap$suffix" -- "$SEARCH" "$G/wtmap" "$FQ" -k "$K" --device "$DEVICE" "${resident[@]}" \
          --json "$D/search$suffix.json" || status=1
      fi
    done
  fi
  # Each command ends with -o, its output file following.
  e2e=("$WTMAP" align -v -x "$G/wtmap" "$FQ" -k "$K" -t "$THREADS" --device "$DEVICE" -o)
  if [[ "$IO_FLOOR" == wtmap ]]; then
    floor=("$WTMAP" align -v --io-only -x "$G/wtmap" "$FQ" -k "$K" -t "$THREADS" --device "$DEVICE" -o)
  else
    floor=("$SAMTOOLS" import -@ "$THREADS" -0 "$FQ" -o)
  fi
  e2e_and_floor
  tstep align/wtmap_sam -- "$WTMAP" align -v -x "$G/wtmap" "$FQ" -o "$D/wtmap.sam" -k "$K" -t "$THREADS" --device "$DEVICE" || status=1
  if ok bowtie2; then tstep align/bowtie2 -- "$BT2" -p "$THREADS" -x "$G/bt2" -U "$FQ" -S "$D/bowtie2.sam" || status=1; fi
}
timed_bwa_evaluate() {
  if ok bwa_aln; then
    tstep align/bwa_aln --stdout "$D/bwa_aln.sai" -- "$BWA" aln -o 0 -n "$K" -t "$THREADS" "$G/bwa" "$FQ" || status=1
    tstep align/bwa_samse --stdout "$D/bwa_aln.sam" -- "$BWA" samse "$G/bwa" "$D/bwa_aln.sai" "$FQ" || status=1
  fi
  if ok bwa_mem; then tstep align/bwa_mem --stdout "$D/bwa_mem.sam" -- "$BWA" mem -t "$THREADS" "$G/bwa" "$FQ" || status=1; fi
  local runs=()
  done_ok align/wtmap_e2e && runs+=("wtmap=$D/wtmap.bam")
  done_ok align/bwa_samse && runs+=("bwa_aln=$D/bwa_aln.sam")
  done_ok align/bwa_mem && runs+=("bwa_mem=$D/bwa_mem.sam")
  done_ok align/bowtie2 && runs+=("bowtie2=$D/bowtie2.sam")
  if (( ${#runs[@]} )) && ! out_of_time; then
    echo "== evaluate ${runs[*]##*/}" >&2
    PATH="$(dirname "$SAMTOOLS"):$PATH" python3 "$here/evaluate.py" --k "$K" --json "$D/eval.json" "${runs[@]}" | tee "$D/eval.txt" || status=1
  fi
}

IFS=, read -ra genomes <<< "$GENOMES"
IFS=, read -ra lens <<< "$LENS"
for g in "${genomes[@]}"; do
  prepare_genome "$g"

  # ---- reads (untimed), of every length before any timed run, while the indexes build: ART HS25
  # (MSv3 when HS25 cannot make L bp), names carry the truth
  for L in "${lens[@]}"; do
    out_of_time && break
    D="$(length_dir "$L")"
    mkdir -p "$D"
    PROFILE=HS25
    (( L > 150 )) && PROFILE=MSv3
    FQ="$D/reads.fq.gz"
    if [[ ! -s "$FQ" ]]; then
      COV=$(python3 -c "print($READS * $L / $GLEN * 1.0005)")
      echo "== ART $PROFILE ${L} bp, coverage $COV" >&2
      "$ART" -ss "$PROFILE" -l "$L" -f "$COV" -rs 42 -i "$REF" -o "$D/art" > "$D/art.log" 2>&1 || { echo "ART failed: $(tail -3 "$D/art.log")" >&2; status=1; continue; }
      python3 "$here/gen_data.py" art2fq "$D/art.fq" "$D/art.aln" "$FQ.tmp" --max "$READS" && mv "$FQ.tmp" "$FQ"
      rm -f "$D/art.fq" "$D/art.aln"
    fi
    NREADS=$(python3 -c "import gzip,sys; print(sum(1 for _ in gzip.open(sys.argv[1]))//4)" "$FQ")
    python3 -c "import json,sys; json.dump(dict(genome=sys.argv[1], genome_desc=sys.argv[2], genome_bp=int(sys.argv[3]), reads=int(sys.argv[4]), read_len=int(sys.argv[5]), art_profile=sys.argv[6], k=int(sys.argv[7]), device=sys.argv[8], threads=int(sys.argv[9]), io_floor_desc=sys.argv[10]), open(sys.argv[11],'w'), indent=1)" \
      "$g" "$DESC" "$GLEN" "$NREADS" "$L" "$PROFILE" "$K" "$DEVICE" "$THREADS" "$IO_DESC" "$D/meta.json"
    cp "$WORK/logs/host.txt" "$D/host.txt"
  done

  # ---- timed runs, in two passes over the read lengths: first wtmap and bowtie2, then bwa (whose
  # index takes longest) and the evaluation. Each tool waits for its index (maybe still building in
  # the background); without one, it is left out of this genome's runs. By default the first pass
  # also waits for bwa's index, so that no timed run shares the host with an index build;
  # WTMAP_BENCH_OVERLAP=1 lets it run beside `bwa index` (one core of the host's, single-threaded),
  # which on 1 Gbp with two read lengths saves the first pass's ~5 minutes (1,388 s from reference
  # to report instead of ~1,680 s), and says so in the report (beside.txt).
  for pass in 1 2; do
    for L in "${lens[@]}"; do
      out_of_time && break
      D="$(length_dir "$L")"
      FQ="$D/reads.fq.gz"
      [[ -s "$FQ" ]] || continue  # (ART failed)
      TSV="$D/measure.tsv"; touch "$TSV"
      waits=()
      { ok bwa_aln || ok bwa_mem; } && { (( pass == 2 )) || [[ "$OVERLAP" != 1 ]]; } && waits+=(bwa)
      (( pass == 1 )) && ok bowtie2 && waits+=(bowtie2)
      wait_for "${waits[@]}" || break
      if (( pass == 1 )); then timed_wtmap_bowtie2; else timed_bwa_evaluate; fi
    done
  done
done

# ---- report (every finished run in $WORK, this call's and earlier ones)
for d in "$WORK"/aligner-*/; do [[ -s "$d/measure.tsv" ]] && sed "s|^|$(basename "$d")\t|" "$d/measure.tsv"; done > "$OUT/aligner.tsv" || true
python3 "$here/report.py" aligner "$WORK" "$OUT" | tee "$OUT/aligner.txt"
(cd "$WORK" && tar -czf "$OUT/aligner-logs.tar.gz" logs $(ls -d aligner-*/{eval.txt,search*.json,measure.tsv,art.log,meta.json,beside.txt} genome-*/{index.tsv,bwa-index.log,bowtie2-index.log} 2>/dev/null)) || true
if out_of_time; then echo "== time budget used up: run bench/run-aligner.sh again (same machine) to continue"; fi
echo "== total $((SECONDS - START_S)) s; results in $OUT"
exit $status
