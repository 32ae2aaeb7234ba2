# Shared by the bench/run-*.sh scripts (sourced without arguments, not run).
# Takes a leading --quick off the script's arguments (exports WTMAP_BENCH_QUICK=1).
# Sets: here, OUT, WORK, DEVICE, THREADS, QUICK, BUDGET, min_time; defines find_prog, step,
# remaining, number, host_info, start_run_dir; and for the aligner harnesses done_ok, tstep, out_of_time,
# e2e_and_floor, index_bg, index_wait, wait_for, prepare_genome, aligner_settings (at the end).

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$PWD/bench-out}"
mkdir -p "$OUT"
WORK="${WTMAP_BENCH_WORK:-$PWD/bench-work}"   # data, indexes, outputs; kept between runs
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
DEVICE="${WTMAP_BENCH_DEVICE:-gpu}"           # wtmap's --device for the measured runs
THREADS="${WTMAP_BENCH_THREADS:-$(nproc)}"
# Sourced without arguments, this file sees the script's own "$@", and `shift` shifts it.
if [[ "${1:-}" == "--quick" ]]; then
  export WTMAP_BENCH_QUICK=1
  shift
fi
QUICK="${WTMAP_BENCH_QUICK:-0}"
min_time="${WTMAP_BENCH_MIN_TIME:-0.2}"         # Google Benchmark's --benchmark_min_time
BUDGET="${WTMAP_BENCH_BUDGET_S:-530}"         # seconds this run may take (device calls: 600)
START_S=$SECONDS

# A program from PATH (.device/bin, .baselines/bin), else from the usual build folders.
find_prog() {
  local p d
  if p="$(command -v "$1" 2>/dev/null)"; then echo "$p"; return; fi
  for d in build-fmb/bench build-bench/bench build-dna/bench build/bench build-fmb/cli build/cli build-fmb/aligner build/aligner; do
    if [[ -x "$d/$1" ]]; then echo "$PWD/$d/$1"; return; fi
  done
  echo "harness: $1 not found on PATH (source .device/env.sh / .baselines/env.sh) or in build*/" >&2
  return 1
}

remaining() { echo $((BUDGET - (SECONDS - START_S))); }

# Numbers like 1e7, 10^7, 2^20 -> integer.
number() { python3 -c "import sys; s=sys.argv[1].replace('^','**'); print(int(float(eval(s,{'__builtins__':{}}))))" "$1"; }

# step LABEL [measure.py options] -- CMD...: runs CMD under measure.py (wall time, peak RSS into
# $TSV), with the time left in the budget as its timeout; logs to $WORK/logs/LABEL.log.
# Returns the command's status; a step is skipped (status 125) when less than 5 s are left.
step() {
  local label="$1"; shift
  local left; left=$(remaining)
  mkdir -p "$WORK/logs"
  if (( left < 5 )); then
    echo "harness: $label skipped: time budget ($BUDGET s) used up" | tee -a "$WORK/logs/skipped.txt" >&2
    printf '%s\tNA\tNA\tskipped\n' "$label" >> "$TSV"
    return 125
  fi
  echo "== $label" >&2
  python3 "$here/measure.py" --label "$label" --tsv "$TSV" --timeout "$left" "$@" 2> >(tee "$WORK/logs/${label//\//_}.log" >&2)
}

host_info() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo none)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "nproc: $(nproc); threads used: $THREADS"
  echo "mem: $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  echo "device: $DEVICE; quick: $QUICK; budget_s: $BUDGET"
  # .device/COMMIT names the commit the bundle was built from (the device's copy of .git may lag),
  # where the wtmap that runs is the bundle's; else a build here, at this checkout's commit.
  local commit
  if [[ "$(command -v wtmap)" == */.device/* && -s .device/COMMIT ]]; then commit="$(cat .device/COMMIT)"
  else commit="$(git describe --always --dirty 2>/dev/null || echo unknown)"; fi
  echo "commit: $commit"
  echo "wtmap: $(command -v wtmap || echo not-on-path)"
}

# A run's folder $1 made, its measure.tsv (TSV, where step appends) emptied, the logs folder
# emptied, and the host described on stdout and in $1/host.txt.
start_run_dir() {
  mkdir -p "$1"
  TSV="$1/measure.tsv"
  : > "$TSV"
  rm -rf "$WORK/logs"; mkdir -p "$WORK/logs"
  host_info | tee "$1/host.txt"
}

# ---- The aligner harnesses (run-aligner.sh, run-gapped.sh): steps recorded in $TSV and not redone
# once an earlier call finished them, indexes built in the background across calls, and the
# genomes both harnesses share ($WORK/genome-*: reference, indexes). They use the caller's `ok TOOL`
# (the tool is neither skipped nor broken), BROKEN (tools whose index failed, per genome) and status.

# aligner_settings READS MBP QUICK_READS QUICK_MBP: the settings both harnesses share, from the
# environment (bench/README.md) or these defaults (a full run's, --quick's): READS (per genome and
# length), SYNTH_MBP, GENOMES, LENS, REPEAT (runs of wtmap align and of its I/O floor, alternated,
# whose median the report takes: one host's runs of the same command spread by 0.1-0.2 s,
# bench/history/RESULTS-2026-11-26.md, as much as the 70 % target's margin), SKIP, ECOLI, BROKEN.
aligner_settings() {
  if [[ "$QUICK" == 1 ]]; then
    READS="${WTMAP_BENCH_READS:-$3}"; SYNTH_MBP="${WTMAP_BENCH_SYNTH_MBP:-$4}"
  else
    READS="${WTMAP_BENCH_READS:-$1}"; SYNTH_MBP="${WTMAP_BENCH_SYNTH_MBP:-$2}"
  fi
  READS=$(number "$READS")
  GENOMES="${WTMAP_BENCH_GENOMES:-ecoli,synth}"
  LENS="${WTMAP_BENCH_READ_LENS:-100,150}"
  REPEAT="${WTMAP_BENCH_REPEAT:-$([[ "$QUICK" == 1 ]] && echo 2 || echo 5)}"
  SKIP=",${WTMAP_BENCH_SKIP:-},"                 # any of bwa_aln,bwa_mem,bowtie2,search
  ECOLI="${WTMAP_ECOLI_FA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}"
  BROKEN=","                                     # tools whose index failed, per genome
}

done_ok() { [[ -f "$TSV" ]] && awk -F'\t' -v l="$1" '$1 == l && $4 == "0" {f = 1} END {exit !f}' "$TSV"; }
# tstep LABEL ...: a measured step, skipped when an earlier run finished it.
tstep() {
  local label="$1"; shift
  if done_ok "$label"; then echo "== $label: done earlier" >&2; return 0; fi
  awk -F'\t' -v l="$label" '$1 != l' "$TSV" > "$TSV.tmp" && mv "$TSV.tmp" "$TSV"
  step "$label" "$@"
}
out_of_time() { (( $(remaining) < 5 )); }

# e2e_and_floor: wtmap align end to end (steps align/wtmap_e2e, @2, ...) and the I/O floor
# (io/floor, @2, ...) on the reads of folder $D, alternated, $REPEAT times each; the first runs
# write $D/wtmap.bam and $D/floor.bam. The caller's arrays e2e and floor hold the commands, each
# ending with -o.
e2e_and_floor() {
  local r
  tstep align/wtmap_e2e -- "${e2e[@]}" "$D/wtmap.bam" || status=1
  tstep io/floor -- "${floor[@]}" "$D/floor.bam" || status=1
  for ((r = 2; r <= REPEAT; r++)); do
    tstep "align/wtmap_e2e@$r" -- "${e2e[@]}" "$D/repeat.bam" || status=1
    tstep "io/floor@$r" -- "${floor[@]}" "$D/repeat.bam" || status=1
  done
  rm -f "$D/repeat.bam"
}

# index_bg G NAME CMD...: CMD detached, surviving the end of this run (the 1 Gbp indexes of bwa
# and bowtie2 take longer than a call), its output in G/NAME-index.log with its wall time, then
# G/NAME.done; not started again while it runs or once done. index_wait G NAME: waits for it;
# 1 if it failed, 2 if the time budget ran out first.
index_bg() {
  local G="$1" name="$2"; shift 2
  [[ -e "$G/$name.done" ]] && return 0
  if [[ -s "$G/$name.pid" ]] && kill -0 "$(cat "$G/$name.pid")" 2>/dev/null; then return 0; fi
  echo "== $name index of $G (background)" >&2
  LOG="$G/$name-index.log" DONE="$G/$name.done" NAME="$name" setsid nohup bash -c \
    's=$SECONDS; "$@" > "$LOG" 2>&1 && echo "$NAME index wall_s=$((SECONDS - s))" >> "$LOG" && touch "$DONE"' \
    index_bg "$@" > /dev/null 2>&1 < /dev/null &
  echo $! > "$G/$name.pid"
}
index_wait() {
  local G="$1" name="$2"
  while [[ ! -e "$G/$name.done" ]]; do
    if ! kill -0 "$(cat "$G/$name.pid" 2>/dev/null || echo 0)" 2>/dev/null; then
      echo "harness: $name index of $G failed (see $G/$name-index.log)" >&2; return 1
    fi
    if out_of_time; then echo "harness: $name index of $G still running; run again to continue" >&2; return 2; fi
    sleep 2
  done
}

# wait_for NAME...: waits for these background indexes of genome $G; a tool whose index failed is
# left out of the genome's runs (BROKEN); 1 when the time budget ran out first.
wait_for() {
  local name waited
  for name in "$@"; do
    waited=0; index_wait "$G" "$name" || waited=$?
    case "$name:$waited" in
      *:0) ;;
      bwa:1) status=1; BROKEN="$BROKEN,bwa_aln,bwa_mem,";;
      bowtie2:1) status=1; BROKEN="$BROKEN,bowtie2,";;
      *) status=1; return 1;;
    esac
  done
}

# prepare_genome NAME: genome NAME (ecoli: $ECOLI; synth: gen_data.py reference of $SYNTH_MBP Mbp)
# in G=$WORK/genome-*, REF=$G/ref.fa, its length GLEN and a description DESC; starts bwa's and
# bowtie2's indexes in the background (where `ok` wants them) and builds wtmap's (step index/wtmap
# of TSV=$G/index.tsv, with $WTMAP_BENCH_INDEX_OPTIONS). Uses WTMAP, BWA, BT2B, THREADS, DEVICE.
prepare_genome() {
  case "$1" in
    ecoli) G="$WORK/genome-ecoli"; DESC="E. coli 536, NC_008253, 4.9 Mbp, real";;
    synth) G="$WORK/genome-synth-${SYNTH_MBP}mbp"; DESC="synthetic ${SYNTH_MBP} Mbp, random + repeats + N runs (no real large genome offline)";;
    *) echo "harness: unknown genome $1" >&2; exit 2;;
  esac
  mkdir -p "$G"
  BROKEN=","
  TSV="$G/index.tsv"; touch "$TSV"
  REF="$G/ref.fa"
  if [[ ! -s "$REF" ]]; then
    if [[ "$1" == ecoli ]]; then
      # ART keeps the whole FASTA header line as the contig name in its .aln: shorten headers
      python3 -c "import gzip,sys; f=gzip.open(sys.argv[1],'rt') if sys.argv[1].endswith('.gz') else open(sys.argv[1]); o=open(sys.argv[2],'w'); [o.write(l.split()[0]+'\n' if l.startswith('>') else l) for l in f]" "$ECOLI" "$REF.tmp"
    else
      python3 "$here/gen_data.py" reference --mbp "$SYNTH_MBP" --contigs 8 --seed 7 "$REF.tmp"
    fi
    mv "$REF.tmp" "$REF"
  fi
  GLEN=$(python3 -c "import sys; print(sum(len(l)-1 for l in open(sys.argv[1]) if not l.startswith('>')))" "$REF")
  # bwa's IS algorithm (-a is) builds its index in about 3/4 of bwtsw's time (100 Mbp synthetic
  # on one core: 61 s against 81.5 s) but takes at most 2^31 - 1 symbols, and bwa indexes both
  # strands: bwtsw beyond that.
  local bwa_algo=bwtsw
  (( 2 * GLEN < 2147483647 - 1048576 )) && bwa_algo=is
  if ok bwa_aln || ok bwa_mem; then index_bg "$G" bwa "$BWA" index -a "$bwa_algo" -b 100000000 -p "$G/bwa" "$REF"; fi
  if ok bowtie2; then index_bg "$G" bowtie2 "$BT2B" --threads "$THREADS" "$REF" "$G/bt2"; fi
  # shellcheck disable=SC2086  # WTMAP_BENCH_INDEX_OPTIONS: more options, split on spaces
  tstep index/wtmap -- "$WTMAP" index "$REF" -p "$G/wtmap" --device "$DEVICE" -t "$THREADS" ${WTMAP_BENCH_INDEX_OPTIONS:-} || status=1
}
