#!/usr/bin/env bash
# Runs the GPU test binaries under compute-sanitizer's memcheck, racecheck, initcheck and synccheck
# tools and fails if any tool reports an error or any test fails.
#
# Usage: tests/run-compute-sanitizer.sh BIN_DIR [BINARY...]
#   BIN_DIR    the folder holding the test executables (test_*), e.g. build/tests or .device/bin
#   BINARY...  names of the binaries to run (default: every executable test_* in BIN_DIR)
# Environment:
#   SANITIZER_TOOLS   tools to run (default: "memcheck racecheck initcheck synccheck")
#   SANITIZER_FILTER  a --gtest_filter for every run (default: all tests; e.g. "*Gpu*:*Device*"
#                     for the GPU configurations only, or "-*Beyond32Bits*" to leave out the
#                     512 MiB vectors)
#   SANITIZER_ARGS    extra compute-sanitizer arguments, e.g. "--leak-check full"
#   WTMAP_TEST_SIZES  "small" (default here) runs the wavelet-tree contract on a subset of its
#                     alphabet sizes and lengths; "all" runs every one (racecheck then takes long)
#   LOG_DIR           where the per-run logs go (default: a fresh temporary folder)
# Exit status: 0 all clean; 1 a tool reported errors or a test failed; 2 usage or setup problem
# (no compute-sanitizer on PATH, no usable GPU: the GPU tests would only be skipped).
set -u -o pipefail

if [[ $# -lt 1 || ! -d $1 ]]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2
  exit 2
fi
bin_dir=$(cd "$1" && pwd)
shift

if ! command -v compute-sanitizer > /dev/null; then
  echo "compute-sanitizer is not on PATH (it ships with the CUDA toolkit, in \$CUDA_HOME/bin)" >&2
  exit 2
fi

binaries=()
if [[ $# -gt 0 ]]; then
  for name in "$@"; do binaries+=("$bin_dir/$name"); done
else
  while IFS= read -r -d '' f; do binaries+=("$f"); done \
    < <(find "$bin_dir" -maxdepth 1 -type f -name 'test_*' -perm -u+x -print0 | sort -z)
fi
if [[ ${#binaries[@]} -eq 0 ]]; then
  echo "no test_* executables in $bin_dir" >&2
  exit 2
fi

tools=${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}
filter=${SANITIZER_FILTER:-*}
# Tests that re-run their binary in a child (EXPECT_EXIT in gtest's "threadsafe" style, so that a
# memory limit or a thread limit is set there first) do not finish under the sanitizer: one took
# over 150 s there against 0.6 s without (H200, 2026-11-28). Left out; the code they test runs
# under the sanitizer in the other tests.
in_a_child=DeviceMemoryGpu.GrowWithSlackTakesTheExactSizeWhereTheSlackDoesNotFit:DeviceMemoryGpu.LimitHoldsPerDevice
in_a_child+=:QueryWorkspaceGpu.ReserveTakesTheExactSizeWhereTheSlackDoesNotFit
in_a_child+=:ParallelForRanges.ThreadsTheSystemRefusesRunOnTheCallingThread
if [[ $filter == *-* ]]; then filter+=":$in_a_child"; else filter+="-$in_a_child"; fi
export WTMAP_TEST_SIZES=${WTMAP_TEST_SIZES:-small}
log_dir=${LOG_DIR:-$(mktemp -d -t wtmap-sanitizer.XXXXXX)}
mkdir -p "$log_dir"

# Without a usable GPU every GPU test skips itself and the sanitizer checks nothing: refuse.
if [[ -x $bin_dir/test_bits ]] &&
   "$bin_dir/test_bits" --gtest_filter='Bits.DeviceMatchesNaive' 2>&1 | grep -q 'SKIPPED'; then
  echo "no usable CUDA device: the GPU tests would all be skipped" >&2
  exit 2
fi

failures=()
for bin in "${binaries[@]}"; do
  name=$(basename "$bin")
  # A binary with no test under the filter never calls CUDA, which the sanitizer reports as an
  # error: leave it out.
  if ! "$bin" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -q '^  '; then
    echo "skip  $name  (no test matches the filter)"
    continue
  fi
  for tool in $tools; do
    log="$log_dir/$name.$tool.log"
    start=$SECONDS
    # shellcheck disable=SC2086  # SANITIZER_ARGS is a list of words
    compute-sanitizer --tool "$tool" --error-exitcode 1 ${SANITIZER_ARGS:-} \
      "$bin" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1
    rc=$?
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)
    if [[ $rc -ne 0 ]]; then
      failures+=("$name/$tool")
      echo "FAIL  $name  $tool  (exit $rc, $((SECONDS - start)) s) ${summary}  -> $log"
      grep -E '^========= (Invalid|Uninitialized|Race|Barrier|Error|Program hit)|^\[  FAILED  \]' "$log" | head -20
    else
      echo "ok    $name  $tool  ($((SECONDS - start)) s) ${summary}"
    fi
  done
done

echo "logs: $log_dir"
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "compute-sanitizer found problems in: ${failures[*]}" >&2
  exit 1
fi
echo "compute-sanitizer: all clean (${tools})"
