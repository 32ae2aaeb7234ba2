# Shared by the bench/run-*.sh scripts (sourced without arguments, not run).
# Takes a leading --quick off the script's arguments (exports WTMAP_BENCH_QUICK=1).
# Sets: here, OUT, WORK, DEVICE, THREADS, QUICK, BUDGET, min_time; defines find_prog, step,
# remaining, number, host_info.

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
  # .device/COMMIT names the commit the bundle was built from (the device's copy of .git may lag).
  echo "commit: $(cat .device/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "wtmap: $(command -v wtmap || echo not-on-path)"
}
