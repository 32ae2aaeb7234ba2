#!/usr/bin/env bash
# Memory sectors per query of the DNA rank kernels (bench_dna_rank) from Nsight Compute.
#
#   source .device/env.sh && bench/profile-dna-rank.sh [log2n] [queries]
#
# Runs bench_dna_rank's rank, rank_all and access_rank batches (and the loaded chains) once each
# (WTMAP_BENCH_DNA_ITERATIONS=1: one warm-up and one timed launch per benchmark) on a small query
# count (default 10^6 queries and 2^16 chains over 2^28 symbols, so the structures are far bigger than L2) under
#   ncu --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum, lts__t_sectors_srcunit_tex_op_read.sum,
#                 dram__sectors_read.sum, smsp__inst_executed.sum
# and prints, per kernel, the averages per launch divided by the queries (chains: by the dependent
# ranks, chains x steps). Global-load sectors include the 8-byte query itself (1/4 sector per query
# when coalesced); chains read no queries. Results go to $OUT (default ./bench-out):
# ncu-dna.csv and profile-dna.txt. Without ncu it prints a note and exits 0.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$PWD/bench-out}"
mkdir -p "$OUT"
log2n="${1:-28}"
queries="${2:-1000000}"
chains="${WTMAP_BENCH_DNA_CHAINS:-65536}"
steps="${WTMAP_BENCH_DNA_STEPS:-64}"

source "$here/ncu-lib.sh"
find_ncu_or_note "$OUT/profile-dna.txt" "no sector counts measured"
source "$here/harness-lib.sh"  # find_prog
prog="$(find_prog bench_dna_rank)"

metrics="l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__sectors_read.sum,smsp__inst_executed.sum"
echo "== ncu on $prog: 2^$log2n symbols, $queries queries, $chains chains x $steps steps"
set +e
WTMAP_BENCH_DNA_LOG2N="$log2n" WTMAP_BENCH_DNA_QUERIES="$queries" WTMAP_BENCH_DNA_CHAINS="$chains" \
  WTMAP_BENCH_DNA_STEPS="$steps" WTMAP_BENCH_DNA_ITERATIONS=1 \
  "$ncu_bin" --kernel-name regex:'dna_(query|chain)_kernel' --metrics "$metrics" --csv --page raw \
  --print-units base "$prog" --benchmark_filter='dna/(rank|rank_all|access_rank)/|dna/chain/.*chains=('"$chains"'|2\^)' \
  > "$OUT/ncu-dna.csv" 2> "$OUT/ncu-dna.stderr"
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  echo "profile-dna-rank.sh: ncu exited with $rc (see $OUT/ncu-dna.stderr; profiling may need admin rights:"
  echo "  ERR_NVGPUCTRPERM) -- last lines:"
  tail -5 "$OUT/ncu-dna.stderr" || true
fi
python3 - "$OUT/ncu-dna.csv" "$queries" "$chains" "$steps" <<'PY' | tee "$OUT/profile-dna.txt"
import csv, re, sys, collections
path, queries, chains, steps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
lines = [l for l in open(path, errors="replace") if l.startswith('"')]  # drop the program's own output
if not lines:
    print("no ncu rows (was anything profiled?)"); sys.exit(0)
rows = list(csv.reader(lines))
header, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
body = [r for r in body if r[header.index("ID")].strip().isdigit()]  # skip the units row
name_col = header.index("Kernel Name")
short = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "ld_sectors",
         "lts__t_sectors_srcunit_tex_op_read.sum": "L2_sectors",
         "dram__sectors_read.sum": "dram_sectors",
         "smsp__inst_executed.sum": "warp_insts"}
metrics = [k for k in short if k in header]  # `--page raw` adds every device attribute too
sums = collections.defaultdict(lambda: collections.defaultdict(float))
launches = collections.Counter()
for r in body:
    # e.g. "void <ns>::dna_query_kernel<<ns>::RankAllQ<<ns>::QuadTree>>(...)" -> "query:RankAllQ:QuadTree"
    name = re.sub(r"\(.*", "", r[name_col])
    m = re.search(r"dna_(query|chain)_kernel<(.*)", name)
    label = name
    if m:
        parts = [p for p in re.findall(r"(\w+)(?=[<>])", m.group(2)) if p not in ("unnamed", "anonymous")]
        label = ":".join([m.group(1)] + parts)
    launches[label] += 1
    for k in metrics:
        try:
            sums[label][k] += float(r[header.index(k)].replace(",", ""))
        except ValueError:
            pass
print("per query (chain kernels: per dependent rank), averaged over each kernel's launches")
print(f"{'kernel':<48} {'launches':>8} " + " ".join(f"{short.get(k, k):>12}" for k in metrics))
for label in sorted(sums):
    per = queries if label.startswith("query:") else chains * steps
    vals = [sums[label][k] / launches[label] / per for k in metrics]
    print(f"{label:<48} {launches[label]:>8} " + " ".join(f"{v:>12.3f}" for v in vals))
print("warp_insts is per query too (warp instructions / query; x32 for thread instructions).")
PY
exit 0
