#!/usr/bin/env bash
# CI's second build (README's test command runs it after the plain one): every host source --
# C++ and the host side of the .cu files, through nvcc's host compiler -- built by clang with
# AddressSanitizer + UndefinedBehaviorSanitizer; then the GoogleTest suites (the CPU backend; GPU
# configurations skip without a device) and each libFuzzer harness of tests/fuzz for
# WTMAP_FUZZ_SECONDS (default 30) from its seed corpus. Any sanitizer report, failed test or
# fuzzing finding fails it. Usage: scripts/sanitized-check.sh [BUILD_DIR]  (default build-sanitized)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitized}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CUDA_HOST_COMPILER=clang++ -DWTMAP_BUILD_FUZZ=ON -DWTMAP_BUILD_BENCH=OFF \
  -DWTMAP_FUZZ_SECONDS="${WTMAP_FUZZ_SECONDS:-30}"
cmake --build "$build" -j"$(nproc)"
# protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be (GPU hosts).
export ASAN_OPTIONS=protect_shadow_gap=0 LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp
# The suites side by side (each test makes its own temporary folder); then the harnesses, one
# core each.
ctest --test-dir "$build" --output-on-failure -LE fuzz -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -L fuzz -j"$(nproc)"
