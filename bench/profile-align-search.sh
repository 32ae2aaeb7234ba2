#!/usr/bin/env bash
# Nsight Compute counters of the aligner's GPU search kernel (the stepwise mismatch search).
#
#   source .device/env.sh && bench/profile-align-search.sh PREFIX READS.fq.gz [bench_align_search options]
#
# Runs bench_align_search once under ncu (--clock-control none), profiling every launch of the
# search kernel (one per chunk of up to 2^18 reads, the warm-up's included), and prints per launch:
# duration, threads active per warp instruction, warps active, instructions, DRAM bytes, L1 hit
# rate and the local-memory (per-thread state and stack) sectors loaded and stored. Extra
# arguments go to bench_align_search (e.g. --kmer 0 --gpu-slice 1024). Results in $OUT (default
# ./bench-out): ncu-align-search.csv and profile-align-search.txt. Without ncu it prints a note.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$PWD/bench-out}"
mkdir -p "$OUT"
if (( $# < 2 )); then echo "usage: $0 PREFIX READS.fq.gz [bench_align_search options]" >&2; exit 2; fi
ncu_bin="$(command -v ncu || true)"
if [[ -z "$ncu_bin" && -x /usr/local/cuda/bin/ncu ]]; then ncu_bin=/usr/local/cuda/bin/ncu; fi
if [[ -z "$ncu_bin" ]]; then
  echo "profile-align-search.sh: note: ncu (Nsight Compute) not found; nothing measured" | tee "$OUT/profile-align-search.txt"
  exit 0
fi
search="$(command -v bench_align_search || echo "$here/../build/bench/bench_align_search")"
metrics=gpu__time_duration.sum,smsp__thread_inst_executed_per_inst_executed.ratio,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_sector_hit_rate.pct
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
"$ncu_bin" --clock-control none --kernel-name-base demangled --kernel-name regex:MismatchSearchOp --metrics "$metrics" --csv \
  "$search" "$@" > "$OUT/ncu-align-search.csv"
python3 - "$OUT/ncu-align-search.csv" <<'PY' | tee "$OUT/profile-align-search.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 14 and "MismatchSearchOp" in r[4]]
launches = {}
for r in rows:
    launches.setdefault(r[0], {})[r[12]] = r[14].replace(",", "")
names = [("gpu__time_duration.sum", "ms", 1e-6), ("smsp__thread_inst_executed_per_inst_executed.ratio", "threads/inst", 1),
         ("sm__warps_active.avg.pct_of_peak_sustained_active", "warps %", 1), ("smsp__inst_executed.sum", "G inst", 1e-9),
         ("dram__bytes_read.sum", "DRAM rd GB", 1e-9), ("dram__bytes_write.sum", "DRAM wr GB", 1e-9),
         ("l1tex__t_sector_hit_rate.pct", "L1 hit %", 1), ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "local ld G sect", 1e-9),
         ("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", "local st G sect", 1e-9)]
print("launch  " + "  ".join(f"{label:>15}" for _, label, _ in names))
for launch, m in launches.items():
    print(f"{launch:>6}  " + "  ".join(f"{float(m.get(n, 'nan')) * scale:15.3f}" for n, _, scale in names))
PY
