#!/usr/bin/env bash
# A fuzzing campaign over the libFuzzer harnesses of a WTMAP_BUILD_FUZZ build (docs/fuzzing.md):
# each harness in turn on one core (niced), for SECONDS, from its seed corpus, in libFuzzer's fork
# mode so that it goes on past a crash, a hang or an out-of-memory and collects them all.
# Usage: scripts/fuzz-campaign.sh BUILD_DIR OUT_DIR SECONDS [HARNESS...]
# Leaves OUT_DIR/<harness>/{corpus/,artifacts/,log} and prints one summary line per harness.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,6p' "$0" >&2; exit 2; }
build=$(realpath "$1"); out=$(realpath -m "$2"); seconds=$3; shift 3
source_dir=$(cd "$(dirname "$0")/.." && pwd)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_seq_reader fuzz_reference fuzz_read_group fuzz_index_loader)
export ASAN_OPTIONS=protect_shadow_gap=0 LSAN_OPTIONS=suppressions=$source_dir/tests/fuzz/lsan.supp
for h in "${harnesses[@]}"; do
  dir=$out/$h
  mkdir -p "$dir/corpus" "$dir/artifacts"
  dict=()
  [ ! -f "$source_dir/tests/fuzz/$h.dict" ] || dict=(-dict="$source_dir/tests/fuzz/$h.dict")
  start=$(date +%s)
  (cd "$dir" && nice -n 19 "$build/tests/fuzz/$h" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
     -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -max_len=65536 -artifact_prefix="$dir/artifacts/" \
     "${dict[@]}" "$dir/corpus" "$source_dir/tests/fuzz/corpus/$h" >log 2>&1) || true
  last=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -1)
  echo "$h: $(( $(date +%s) - start )) s; $last; corpus $(ls "$dir/corpus" | wc -l) files," \
       "$(du -sb "$dir/corpus" | cut -f1) bytes; artifacts: $(ls "$dir/artifacts" | wc -l)"
done
