#!/usr/bin/env bash
# FM-index benchmark on the GPU host: index construction (time, peak RSS) of wtmap (GPU, CPU, and
# the blockwise suffix sorter), bwa index and bowtie2-build-s; exact-match count throughput of `wtmap count` (counting only,
# and --locate --max-hits 1) against SDSL csa_wt<> (bench_fm_count, OpenMP on all cores).
#
#   source .device/env.sh && source .baselines/env.sh && bench/run-fmindex.sh [--quick]
#
# From the repository root. Data (a synthetic reference made with a fixed seed, patterns
# sampled from it) go to $WTMAP_BENCH_WORK (default ./bench-work) and are reused by later runs.
# Results in $OUT (default ./bench-out): fmindex.txt (table), fmindex.json, fmindex.tsv,
# fmindex-logs.tar.gz. Sizes and switches: see bench/README.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/harness-lib.sh"

if [[ "$QUICK" == 1 ]]; then
  MBP="${WTMAP_BENCH_FM_MBP:-4}"; NPAT="${WTMAP_BENCH_PATTERNS:-1e5}"
else
  MBP="${WTMAP_BENCH_FM_MBP:-100}"; NPAT="${WTMAP_BENCH_PATTERNS:-1e7}"
fi
LENS="${WTMAP_BENCH_PATTERN_LENS:-32,100}"
# synthetic: gen_data.py reference (random bases, ~3 % copies); human: gen_data.py human (issue 27:
# repeat families, satellites, segmental duplications, N gaps, GRCh38's chromosome proportions).
GENOME="${WTMAP_BENCH_FM_GENOME:-synthetic}"
SKIP=",${WTMAP_BENCH_SKIP:-},"                 # e.g. bwa,bowtie2,wtmap_cpu,wtmap_blockwise,sdsl
NPAT=$(number "$NPAT")
D="$WORK/fm-${MBP}mbp"
if [[ "$GENOME" == human ]]; then D+="-human"; fi  # not $([[ ]] && ...): under set -e its false test ended the run
start_run_dir "$D"
echo "reference: ${MBP} Mbp $GENOME; patterns: $NPAT per length ($LENS)" | tee -a "$D/host.txt"

WTMAP="$(find_prog wtmap)"
BWA="$(find_prog bwa || true)"; BT2B="$(find_prog bowtie2-build-s || true)"
FMC="$(find_prog bench_fm_count || true)"

# ---- data (untimed; reused)
REF="$D/ref.fa"
if [[ ! -s "$REF" ]]; then
  case "$GENOME" in
    synthetic) python3 "$here/gen_data.py" reference --mbp "$MBP" --contigs 8 --seed 1 "$REF.tmp" ;;
    human) python3 "$here/gen_data.py" human --bp "$((MBP * 1000000))" --seed 1 --procs "$(nproc)" "$REF.tmp" ;;
    *) echo "WTMAP_BENCH_FM_GENOME: synthetic or human, not $GENOME" >&2; exit 2 ;;
  esac
  mv "$REF.tmp" "$REF"
fi
IFS=, read -ra lens <<< "$LENS"
for L in "${lens[@]}"; do
  P="$D/patterns-${L}bp-$NPAT.fa"
  [[ -s "$P" ]] || { python3 "$here/gen_data.py" patterns "$REF" --n "$NPAT" --len "$L" --random 0.01 --seed $((100 + L)) "$P.tmp" && mv "$P.tmp" "$P"; }
done
printf '' > "$D/empty.fa"

# ---- index construction
ok() { [[ "$SKIP" != *",$1,"* ]]; }
status=0
# The first two with divsufsort, the third with the blockwise sorter (the default, auto, picks it
# wherever there are two threads): each its own row, and the third's file checked against the first's.
step index/wtmap_dev -- "$WTMAP" index "$REF" -p "$D/wt_dev" --device "$DEVICE" -t "$THREADS" --sa-builder divsufsort || status=1
if ok wtmap_cpu; then step index/wtmap_cpu -- "$WTMAP" index "$REF" -p "$D/wt_cpu" --device cpu -t "$THREADS" --sa-builder divsufsort || status=1; fi
if ok wtmap_blockwise; then
  step index/wtmap_blockwise -- "$WTMAP" index "$REF" -p "$D/wt_blk" --device "$DEVICE" -t "$THREADS" --sa-builder blockwise || status=1
  # The same file as divsufsort's, byte for byte (issue 27), or the run fails.
  cmp -s "$D/wt_blk.wtmap" "$D/wt_dev.wtmap" || { echo "blockwise index differs from the divsufsort one" >&2; status=1; }
fi
if ok bwa && [[ -n "$BWA" ]]; then step index/bwa -- "$BWA" index -p "$D/bwa" "$REF" || status=1; fi
if ok bowtie2 && [[ -n "$BT2B" ]]; then step index/bowtie2 --stdout /dev/null -- "$BT2B" --threads "$THREADS" "$REF" "$D/bt2" || status=1; fi
ls -l "$D"/wt_dev.wtmap "$D"/wt_cpu.wtmap 2>/dev/null || true
IDX="$D/wt_dev"
[[ -s "$IDX.wtmap" ]] || IDX="$D/wt_cpu"

# ---- count
step count/wtmap/load --stdout /dev/null -- "$WTMAP" count -x "$IDX" "$D/empty.fa" --device "$DEVICE" -t "$THREADS" || status=1
checks=()
pats=()
for L in "${lens[@]}"; do
  P="$D/patterns-${L}bp-$NPAT.fa"
  pats+=("$P")
  step "count/wtmap/len=$L" --stdout "$D/wtmap-count-$L.tsv" -- "$WTMAP" count -x "$IDX" "$P" --device "$DEVICE" -t "$THREADS" || status=1
  checks+=(--check "$D/wtmap-count-$L.tsv")
  step "locate1/wtmap/len=$L" --stdout /dev/null -- "$WTMAP" count -x "$IDX" "$P" --locate --max-hits 1 --device "$DEVICE" -t "$THREADS" || status=1
done
if ok sdsl && [[ -n "$FMC" ]]; then
  OMP_NUM_THREADS="$THREADS" step count/sdsl_csa_wt --stdout "$D/sdsl.txt" -- "$FMC" "$REF" "${pats[@]}" "${checks[@]}" --json "$D/sdsl.json" || status=1
  cat "$D/sdsl.txt"
fi

# ---- report
cp "$TSV" "$OUT/fmindex.tsv"
python3 "$here/report.py" fmindex "$D" "$NPAT" "$LENS" "$OUT" | tee "$OUT/fmindex.txt"
tar -czf "$OUT/fmindex-logs.tar.gz" -C "$WORK" logs -C "$D" host.txt $(cd "$D" && ls sdsl.txt sdsl.json 2>/dev/null) 2>/dev/null || true
echo "== total $((SECONDS - START_S)) s; results in $OUT"
exit $status
