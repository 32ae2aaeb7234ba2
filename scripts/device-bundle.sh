#!/usr/bin/env bash
# Packs a build for the GPU host into .device (git-ignored): the executables with the libraries
# they need (../shared/tools/device-bundle), .device/COMMIT (the commit the benchmark reports
# name), and of the test programs only those that ctest still lists. A test program of a suite
# that a later commit removed stays in the build folder, and gpu-check.sh runs every test_* it
# finds: one such leftover ran in a GPU suite on 2026-11-26 (bench/history/RESULTS-2026-11-26.md).
#
#   scripts/device-bundle.sh [--aligner] [BUILD_DIR]     (BUILD_DIR defaults to build)
#
# The copies of the programs are stripped of their symbols (a fifth of their size). --aligner
# leaves out the core and count benchmarks (and SDSL, Google Benchmark) and wtmap-consumer, so
# that the bundle and .baselines/ fit one device call (64 MiB) with room for a second wtmap to
# compare.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
aligner_only=0
if [[ "${1:-}" == --aligner ]]; then aligner_only=1; shift; fi
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
  rm -f "$out"/lib/{libsdsl.so.3,libbenchmark.so.1debian}
fi
echo "device-bundle.sh: $(ls "$out/bin" | wc -l) programs, $(du -sh "$out" | cut -f1) in $out, commit $(cat "$out/COMMIT")"
