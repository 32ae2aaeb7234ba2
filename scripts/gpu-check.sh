#!/usr/bin/env bash
# On the GPU host, from the repository root after `source .device/env.sh`: runs every test binary
# (the GPU suites must run, not skip), then the compute-sanitizer sweep, and packs all logs into
# $OUT/gpu-check.tar.gz with a one-screen summary on stdout.
#
#   scripts/gpu-check.sh [--no-tests] [--no-sanitizer] [--bench-quick|--bench] [--jobs=N]
# --jobs=N: N test programs at a time (default 4: the whole suite in ~140 s on an H200 host instead
# of ~410 s one by one, the same counts; 1 runs them one after another).
# SANITIZER_BINARIES="test_a test_b" limits the sanitizer sweep to those binaries.
set -u -o pipefail
OUT="${OUT:-$PWD/gpu-out}"
logs="$OUT/logs"
mkdir -p "$logs"
# Pack the logs however the script ends (the device tool returns at most 8 files).
trap 'tar -C "$OUT" -czf "$OUT/gpu-check.tar.gz" logs && rm -rf "$logs"' EXIT
bin_dir="$(dirname "$(command -v test_bits || echo build/tests/test_bits)")"
# The CLI tests run the wtmap found on PATH (.device/bin), not the build tree's.
export WTMAP_PROGRAM="${WTMAP_PROGRAM:-$(command -v wtmap || true)}"
sanitizer=1 bench="" tests=1 jobs=4
for a in "$@"; do
  case "$a" in
    --jobs=*) jobs="${a#--jobs=}" ;;
    --no-tests) tests=0 ;;
    --no-sanitizer) sanitizer=0 ;;
    --bench-quick) bench="--quick" ;;
    --bench) bench="full" ;;
  esac
done

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; echo "commit $(cat .device/COMMIT 2>/dev/null || echo unknown)"; } > "$logs/host.txt" 2>&1
cat "$logs/host.txt"

status=0 total_pass=0 total_fail=0 total_skip=0
# Each program's log and exit status, `jobs` programs at a time; then the summary in name order.
if [ "$tests" -eq 1 ]; then
  printf '%s\n' "$bin_dir"/test_* | xargs -P "$jobs" -I{} sh -c 'n=$(basename "$1"); "$1" --gtest_color=no > "$2/$n.log" 2>&1; echo $? > "$2/$n.rc"' _ {} "$logs"
fi
for t in "$bin_dir"/test_*; do
  [ "$tests" -eq 1 ] || break
  name=$(basename "$t")
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 127)
  rm -f "$logs/$name.rc"
  pass=$(grep -c '^\[       OK \]' "$logs/$name.log")
  fail=$(grep -c '^\[  FAILED  \] .*(' "$logs/$name.log")
  skip=$(grep -c '^\[  SKIPPED \] .*(' "$logs/$name.log")
  total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
  printf '%-28s rc=%d  passed %5d  failed %3d  skipped %3d\n' "$name" "$rc" "$pass" "$fail" "$skip"
  [ "$rc" -eq 0 ] || status=1
  grep '^\[  FAILED  \] .*(' "$logs/$name.log" | head -20
done
echo "tests: $total_pass passed, $total_fail failed, $total_skip skipped"
# examples/consumer built against an installed wtmap (ctest's install_and_consume; device-bundle.sh
# packs it): here its GPU half must run too.
if [ "$tests" -eq 1 ] && command -v wtmap-consumer > /dev/null; then
  wtmap-consumer > "$logs/wtmap-consumer.log" 2>&1
  rc=$?
  grep -q 'no usable GPU' "$logs/wtmap-consumer.log" && rc=2
  printf '%-28s rc=%d  (%s)\n' wtmap-consumer "$rc" "$(grep -c 'gpu backend: .* 0 wrong' "$logs/wtmap-consumer.log") GPU checks passed"
  [ "$rc" -eq 0 ] || status=1
fi

if [ "$sanitizer" -eq 1 ]; then
  LOG_DIR="$logs/sanitizer" SANITIZER_FILTER="${SANITIZER_FILTER:-*Gpu*:*gpu*:*Device*:*Kernel*-*Beyond32Bits*}" \
    tests/run-compute-sanitizer.sh "$bin_dir" ${SANITIZER_BINARIES:-} > "$logs/sanitizer.txt" 2>&1
  rc=$?
  tail -15 "$logs/sanitizer.txt"
  echo "compute-sanitizer: rc=$rc"
  [ "$rc" -eq 0 ] || status=1
fi

if [ -n "$bench" ]; then
  if [ "$bench" = "--quick" ]; then OUT="$logs/bench" bench/run-core.sh --quick > "$logs/bench.txt" 2>&1
  else OUT="$logs/bench" bench/run-core.sh > "$logs/bench.txt" 2>&1; fi
  tail -40 "$logs/bench.txt"
fi
exit $status
