#!/usr/bin/env bash
# Packs a build for the GPU host into .device (git-ignored): the executables with the libraries
# they need (../shared/tools/device-bundle), .device/COMMIT (the commit the benchmark reports
# name), and of the test programs only those that ctest still lists. A test program of a suite
# that a later commit removed stays in the build folder, and gpu-check.sh runs every test_* it
# finds: one such leftover ran in a GPU suite on 2026-11-26 (bench/history/RESULTS-2026-11-26.md).
#
#   scripts/device-bundle.sh [--aligner] [--perf] [BUILD_DIR]     (BUILD_DIR defaults to build)
#
# The copies of the programs are stripped of their symbols (a fifth of their size). --aligner
# leaves out the core and count benchmarks (and SDSL) and wtmap-consumer, so
# that the bundle and .baselines/ fit one device call (64 MiB) with room for a second wtmap to
# compare. --perf adds .device/perf/: this machine's perf with its libraries (some 7 MiB
# compressed; the GPU hosts have none, and its software events -- cpu-clock, page-faults -- work
# there) and a copy of wtmap that keeps its symbols. On the host:
#   .device/perf/perf record -e cpu-clock --call-graph dwarf,8192 -o p.data -- .device/perf/wtmap align ...
#   .device/perf/perf report -i p.data --stdio --no-children --sort comm,sym   (threads are named by stage)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
aligner_only=0 with_perf=0
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --aligner) aligner_only=1 ;;
    --perf) with_perf=1 ;;
    *) echo "device-bundle.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build="${1:-$root/build}"
out="$root/.device"
bundle="${DEVICE_BUNDLE:-$root/../shared/tools/device-bundle}"
[[ -d "$build" ]] || { echo "device-bundle.sh: no build folder $build" >&2; exit 1; }

"$bundle" "$build" "$out"
git -C "$root" describe --always --dirty > "$out/COMMIT"

# The test programs ctest lists (their paths are the first word of each test's command).
listed="$(ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, os, sys
for t in json.load(sys.stdin).get("tests", []):
    if t.get("command"):
        print(os.path.basename(t["command"][0]))' | sort -u)"
for t in "$out"/bin/test_*; do
  [[ -e "$t" ]] || continue
  if ! grep -qxF "$(basename "$t")" <<< "$listed"; then
    echo "device-bundle.sh: left out $(basename "$t"): ctest no longer lists it (a leftover of an earlier build)"
    rm -f "$t"
  fi
done

strip --strip-unneeded "$out"/bin/*

if (( aligner_only )); then
  rm -f "$out"/bin/{bench_wavelet_tree,bench_special_rows,bench_dna_rank,bench_bit_vector,wtmap-wt-demo,bench_fm_search,bench_fm_count,wtmap-consumer}
  rm -f "$out"/lib/libsdsl.so.3  # Google Benchmark stays: bench_gapped_extend, bench_gapped_mapper, bench_smem
fi
if (( with_perf )); then
  perf_bin="$(command -v perf)" || { echo "device-bundle.sh: --perf: no perf here (Debian: linux-perf)" >&2; exit 1; }
  mkdir -p "$out/perf/lib"
  cp -L "$perf_bin" "$out/perf/perf.bin"
  # Its libraries beyond the C/C++ runtime, as the bundle's own.
  ldd "$perf_bin" | awk '/=> \//{print $3}' | { grep -vE 'libc\.so|libm\.so|libstdc\+\+|libgcc_s|ld-linux|libpthread|libdl\.so|librt\.so' || true; } |
    while read -r lib; do cp -L "$lib" "$out/perf/lib/"; done
  cat > "$out/perf/perf" <<'PERF'
#!/usr/bin/env bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LD_LIBRARY_PATH="$here/lib:$here/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/perf.bin" "$@"
PERF
  chmod +x "$out/perf/perf"
  cp "$build/cli/wtmap" "$out/perf/wtmap"  # unstripped: perf report names its functions
fi
echo "device-bundle.sh: $(ls "$out/bin" | wc -l) programs, $(du -sh "$out" | cut -f1) in $out, commit $(cat "$out/COMMIT")"
