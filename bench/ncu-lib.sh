# Shared by the bench/profile-*.sh scripts (sourced). find_ncu_or_note SUMMARY WHAT sets ncu_bin
# to Nsight Compute (on PATH, else /usr/local/cuda/bin/ncu); where there is none it writes
# "<script>: note: ncu (Nsight Compute) not found; WHAT" to SUMMARY and stdout and ends the
# script with status 0, so that a host without the profiler runs the rest of a call.
find_ncu_or_note() {
  ncu_bin="$(command -v ncu || true)"
  if [[ -z "$ncu_bin" && -x /usr/local/cuda/bin/ncu ]]; then ncu_bin=/usr/local/cuda/bin/ncu; fi
  if [[ -z "$ncu_bin" ]]; then
    echo "$(basename "$0"): note: ncu (Nsight Compute) not found; $2" | tee "$1"
    exit 0
  fi
}
