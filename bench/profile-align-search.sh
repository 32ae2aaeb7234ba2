#!/usr/bin/env bash
# Nsight Compute counters of the aligner's GPU search kernel (the stepwise mismatch search).
#
#   source .device/env.sh && bench/profile-align-search.sh PREFIX READS.fq.gz [bench_align_search options]
#
# Runs bench_align_search once under ncu (--clock-control none), profiling every launch of the
# search kernel (one per chunk of up to 2^18 reads, the warm-up's included), and prints per launch:
# duration, threads active per warp instruction, warps active, instructions, DRAM bytes, L1 hit
# rate and the local-memory (per-thread state and stack) sectors loaded and stored. Extra
# arguments go to bench_align_search (e.g. --kmer 0 --slice 1024). Results in $OUT (default
# ./bench-out): ncu-align-search.csv and profile-align-search.txt. Without ncu it prints a note.
#
#   source .device/env.sh && bench/profile-align-search.sh --source PREFIX READS.fq.gz [bench_align_search options]
#
# Per source line instead: profiles ONE launch of the search kernel (the third: --launch-skip 2
# --launch-count 1; sections SourceCounters, WarpStateStats, Occupancy, LaunchStats,
# SchedulerStats, and ComputeWorkloadAnalysis for the issue slots busy) into
# $OUT/align-search-source.ncu-rep (sources imported: open it in the Nsight Compute GUI for the
# source view), exports align-search-source.csv (source page, CUDA lines and SASS) and
# align-search-details.csv, and prints into profile-align-search-source.txt the occupancy
# (theoretical, achieved), active threads per warp, warp cycles per issued instruction, issue
# slots busy and registers per thread, then the 40 CUDA source lines with the most warp
# instructions executed: % of warp and of thread instructions, % of stall samples, threads per
# instruction, file:line and the source text.
# CUDA lines appear only if bench_align_search was built with -DWTMAP_CUDA_LINEINFO=ON (adds
# -lineinfo: line tables, same code); without it the source page holds only SASS. ncu reads the
# sources at the paths compiled in: the build machine's checkout, /work/main (or
# $WTMAP_COMPILED_ROOT). On the GPU host the repository is elsewhere: if that path does not
# exist the script symlinks it to this repository for the run (removed at exit) when it can,
# and passes this repository to ncu --source-folders (recursive search for missing files) when
# ncu has that option; if neither works it prints a note and the source text may stay empty.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$PWD/bench-out}"
mkdir -p "$OUT"
source_mode=0
if [[ "${1:-}" == --source ]]; then source_mode=1; shift; fi
if (( $# < 2 )); then echo "usage: $0 [--source] PREFIX READS.fq.gz [bench_align_search options]" >&2; exit 2; fi
source "$here/ncu-lib.sh"
if (( source_mode )); then
  find_ncu_or_note "$OUT/profile-align-search-source.txt" "nothing measured"
else
  find_ncu_or_note "$OUT/profile-align-search.txt" "nothing measured"
fi
search="$(command -v bench_align_search || echo "$here/../build/bench/bench_align_search")"

if (( source_mode )); then
  # Where ncu finds the sources: at the compiled-in root, through a symlink made there, or by
  # --source-folders.
  repo="$(cd "$here/.." && pwd -P)"
  compiled_root="${WTMAP_COMPILED_ROOT:-/work/main}"
  resolved=0 note="" link=""
  if [[ "$(cd "$compiled_root" 2>/dev/null && pwd -P)" == "$repo" ]]; then
    resolved=1
  elif [[ -e "$compiled_root" || -L "$compiled_root" ]]; then
    note="note: $compiled_root exists but is not this repository ($repo): ncu reads the sources there"
    resolved=1
  elif mkdir -p "$(dirname "$compiled_root")" 2>/dev/null && ln -s "$repo" "$compiled_root" 2>/dev/null; then
    link="$compiled_root"
    trap 'rm -f -- "$link"' EXIT
    resolved=1
  fi
  src_args=()
  ncu_help="$("$ncu_bin" --help 2>&1 || true)"
  if [[ "$ncu_help" == *--source-folders* ]]; then
    src_args=(--source-folders "$repo")
    resolved=1
  fi
  if (( ! resolved )); then
    note="note: cannot create $compiled_root (the compiled-in source root) and ncu lacks --source-folders: CUDA source text may be missing"
  fi
  if [[ -n "$note" ]]; then echo "profile-align-search.sh: $note" >&2; fi
  report="$OUT/align-search-source"
  rm -f "$report.ncu-rep"
  "$ncu_bin" --clock-control none --kernel-name-base demangled --kernel-name regex:MismatchSearchOp \
    --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section Occupancy --section LaunchStats \
    --section SchedulerStats --section ComputeWorkloadAnalysis \
    --import-source yes ${src_args[@]+"${src_args[@]}"} -o "$report" -f "$search" "$@"
  if [[ ! -s "$report.ncu-rep" ]]; then
    echo "profile-align-search.sh: no report: fewer than 3 launches of the search kernel? (one per chunk of up to 2^18 reads, the warm-up's included)" \
      | tee "$OUT/profile-align-search-source.txt"
    exit 1
  fi
  "$ncu_bin" -i "$report.ncu-rep" --page source --csv --print-source cuda,sass > "$OUT/align-search-source.csv"
  "$ncu_bin" -i "$report.ncu-rep" --page details --csv > "$OUT/align-search-details.csv"
  python3 - "$OUT/align-search-source.csv" "$OUT/align-search-details.csv" "$compiled_root" "$note" <<'PY' \
    | tee "$OUT/profile-align-search-source.txt"
import csv, sys

source_csv, details_csv, root, note = sys.argv[1:5]
if note:
    print(note)

def num(text):
    text = text.replace(",", "").strip()
    try:
        return int(text)
    except ValueError:
        return int(float(text))

def column(header, name, default):
    return header.index(name) if header and name in header else default

# (a) the details page: a row per metric of the launch
rows = list(csv.reader(open(details_csv, newline="")))
header = next((r for r in rows if "Metric Name" in r and "Metric Value" in r), None)
c_kernel, c_block, c_grid = column(header, "Kernel Name", 4), column(header, "Block Size", 7), column(header, "Grid Size", 8)
c_name, c_unit, c_value = column(header, "Metric Name", 12), column(header, "Metric Unit", 13), column(header, "Metric Value", 14)
metrics, kernel = {}, None
for r in rows:
    if r is header or len(r) <= c_value:
        continue
    kernel = kernel or (r[c_kernel], r[c_grid], r[c_block])
    metrics.setdefault(r[c_name], (r[c_value], r[c_unit]))
if kernel:
    print(f"kernel {kernel[0][:100]}  grid {kernel[1]}  block {kernel[2]}")
for name in ("Theoretical Occupancy", "Achieved Occupancy", "Achieved Active Warps Per SM",
             "Avg. Active Threads Per Warp", "Avg. Not Predicated Off Threads Per Warp",
             "Warp Cycles Per Issued Instruction", "Issue Slots Busy", "Issued Warp Per Scheduler",
             "Registers Per Thread"):
    value, unit = metrics.get(name, ("n/a", ""))
    print(f"  {name:<42} {value:>12} {unit}")

# (b) the source page: per file a "File Path" line, a header, CUDA-line rows (numeric line,
# address "-") each followed by its SASS rows (an address)
rows = list(csv.reader(open(source_csv, newline="")))
path, header, lines, sass_rows = None, None, [], 0
c_addr, c_samples, c_inst, c_thread = 2, 4, 7, 8
for r in rows:
    if not r:
        continue
    if r[0] == "File Path":
        path = r[1] if len(r) > 1 else "?"
        continue
    if r[0] == "Line No":
        header = r
        c_addr = column(header, "Address", 2)
        c_samples = column(header, "Warp Stall Sampling (All Samples)", 4)
        c_inst = column(header, "Instructions Executed", 7)
        c_thread = column(header, "Thread Instructions Executed", 8)
        continue
    if header is None or len(r) <= max(c_addr, c_samples, c_inst, c_thread):
        continue
    if r[c_addr].strip() not in ("-", ""):
        sass_rows += 1
        continue
    if not r[0].strip().isdigit():
        continue
    try:
        inst, thread, samples = num(r[c_inst]), num(r[c_thread]), num(r[c_samples])
    except ValueError:
        continue
    if inst > 0:
        shown = path or "?"
        prefix = root.rstrip("/") + "/"
        shown = shown[len(prefix):] if shown.startswith(prefix) else shown.split("/")[-1]
        lines.append((inst, thread, samples, f"{shown}:{r[0].strip()}", r[1].strip()[:90]))
print()
if not lines:
    print(f"no CUDA source lines in the source page ({sass_rows} SASS rows): build bench_align_search with "
          "-DWTMAP_CUDA_LINEINFO=ON for line tables; see align-search-source.csv")
    sys.exit(0)
total_inst = sum(l[0] for l in lines)
total_thread = sum(l[1] for l in lines)
total_samples = sum(l[2] for l in lines)
print(f"{len(lines)} CUDA lines executed: {total_inst} warp instructions, {total_thread} thread instructions "
      f"({total_thread / total_inst:.2f} threads per instruction), {total_samples} stall samples")
if all(not l[4].strip() for l in lines):
    print(f"note: no source text: ncu did not find the sources (compiled in under {root}; see the script's header)")
pct = lambda part, whole: 100.0 * part / whole if whole else 0.0
print(f"{'warp%':>6} {'thread%':>7} {'stall%':>6} {'thr/inst':>8}  {'file:line':<40} source")
for inst, thread, samples, where, text in sorted(lines, key=lambda l: -l[0])[:40]:
    print(f"{pct(inst, total_inst):6.2f} {pct(thread, total_thread):7.2f} {pct(samples, total_samples):6.2f} "
          f"{thread / inst:8.2f}  {where:<40} {text}")
PY
  exit 0
fi
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
