#!/usr/bin/env bash
# Issue 28's measure: wtmap align on 1, 2, 4 and 8 GPUs of one host, on the 1 Gbp synthetic
# genome (run-aligner.sh's, gen_data.py reference, 8 contigs, seed 7) and 10^7 ART HS25 reads:
#
#   source .device/env.sh && source .baselines/env.sh && bench/run-scale.sh
#
# - search only: one bench_gapped_search per GPU (CUDA_VISIBLE_DEVICES), all started together,
#   each on its 1/N of the reads with its own index copy, as --gpus gives every GPU one; the
#   time is the slowest one's search (index load and reading excluded), so what the GPUs'
#   processes share -- the host's cores and memory -- counts against the efficiency;
# - end to end: `wtmap align -t T reads.fq -o out.bam` with N GPUs visible (--gpus all, the
#   default), $REPEAT runs alternated over the GPU counts, medians; the I/O floor (`--io-only`,
#   no GPU work) $REPEAT times beside them;
# - identity: every count's first output equals one GPU's byte for byte (cmp; @PG included, as
#   every run has the same command line).
# Reads are plain FASTQ (a 1 Gbp genome's 10^7 reads gzipped would take longer than the runs on
# one core, and the host has no parallel gzip): the floor is the same files' parsing and BAM
# writing. Table: $OUT/scale.txt; numbers: $OUT/scale.json.
#
# Environment (besides harness-lib.sh's WTMAP_BENCH_WORK, _THREADS, _BUDGET_S, _REPEAT):
#   WTMAP_BENCH_GPU_COUNTS   GPU counts to run (default 1 2 4 8, those beyond the visible left out)
#   WTMAP_BENCH_SYNTH_MBP    genome size (default 1000); WTMAP_BENCH_READS (default 1e7);
#   WTMAP_BENCH_READ_LEN     read length (default 150)
#   WTMAP_BENCH_INDEX_OPTIONS  more `wtmap index` options (default "--sa-builder blockwise": the
#                            1 Gbp index in one call; divsufsort took 575 s on one thread)
#   WTMAP_BENCH_EXTRA        more `wtmap align` options for every run (e.g. "-k 4")
# Resumable like the other aligner harnesses: finished steps are not redone, so a first device
# call may build the genome, index and reads and a second one time the runs (same machine).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=harness-lib.sh
source "$here/harness-lib.sh"
aligner_settings 1e7 1000 2e5 20
READ_LEN="${WTMAP_BENCH_READ_LEN:-150}"
export WTMAP_BENCH_INDEX_OPTIONS="${WTMAP_BENCH_INDEX_OPTIONS---sa-builder blockwise}"
EXTRA="${WTMAP_BENCH_EXTRA:-}"
WTMAP="$(find_prog wtmap)" || exit 1
SEARCH="$(find_prog bench_gapped_search)" || exit 1
ART="$(find_prog art_illumina)" || exit 1
VISIBLE=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
COUNTS=()
for n in ${WTMAP_BENCH_GPU_COUNTS:-1 2 4 8}; do (( n <= VISIBLE )) && COUNTS+=("$n"); done
(( ${#COUNTS[@]} )) || { echo "run-scale: no GPU count fits the $VISIBLE visible GPUs" >&2; exit 1; }
ok() { return 1; }  # prepare_genome: no baseline indexes here
status=0
mkdir -p "$OUT"
host_info > "$OUT/host.txt"

prepare_genome synth
D="$WORK/scale-${SYNTH_MBP}mbp-${READ_LEN}bp-$READS"
mkdir -p "$D"
INDEX_TSV="$TSV"
TSV="$D/steps.tsv"; touch "$TSV"

# ---- reads (untimed): ART in parallel, one process per core up to 16, each its share of the
# reads with its own seed; then the first READS reads of them all.
FQ="$D/reads.fq"
if [[ ! -s "$FQ" ]]; then
  parts=$(( $(nproc) < 16 ? $(nproc) : 16 ))
  per_part=$(( (READS + parts - 1) / parts ))
  cov=$(python3 -c "print($per_part * $READ_LEN / $GLEN * 1.01)")
  echo "== ART HS25 ${READ_LEN} bp: $parts processes, coverage $cov each" >&2
  for ((s = 1; s <= parts; s++)); do
    "$ART" -ss HS25 -l "$READ_LEN" -f "$cov" -rs "$s" -na -i "$REF" -o "$D/art$s" > "$D/art$s.log" 2>&1 &
  done
  wait
  for ((s = 1; s <= parts; s++)); do head -n $((4 * per_part)) "$D/art$s.fq"; rm -f "$D/art$s.fq"; done |
    head -n $((4 * READS)) > "$FQ.tmp" && mv "$FQ.tmp" "$FQ"
fi
NREADS=$(( $(wc -l < "$FQ") / 4 ))

# ---- search only: N processes, each on 1/N of the reads (consecutive records), each on its GPU.
search_on() {
  local n="$1" i
  if done_ok "search/gpus$n"; then return 0; fi
  python3 - "$FQ" "$n" "$D/part" <<'PY'
import sys
path, n, stem = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = sum(1 for _ in open(path, 'rb'))
records = lines // 4
outs = [open(f"{stem}{i}.fq", 'wb') for i in range(n)]
with open(path, 'rb') as f:
    for r in range(records):
        part = r * n // records
        for _ in range(4): outs[part].write(f.readline())
PY
  echo "== search/gpus$n" >&2
  local pids=() pid failed=0
  for ((i = 0; i < n; i++)); do
    CUDA_VISIBLE_DEVICES=$i "$SEARCH" "$G/wtmap" "$D/part$i.fq" --device gpu --repeat 1 --json "$D/search$n-$i.json" \
      > "$WORK/logs/search_gpus$n-$i.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  (( failed == 0 )) || tail -n 3 "$WORK"/logs/search_gpus"$n"-*.log >&2
  rm -f "$D"/part*.fq
  printf 'search/gpus%s\tNA\tNA\t%s\n' "$n" "$failed" >> "$TSV"
  (( failed == 0 )) || status=1
}
for n in "${COUNTS[@]}"; do out_of_time || search_on "$n"; done

# ---- end to end and the floor, alternated.
for ((r = 1; r <= REPEAT; r++)); do
  suffix=""; (( r > 1 )) && suffix="@$r"
  for n in "${COUNTS[@]}"; do
    # The GPUs by CUDA_VISIBLE_DEVICES and --gpus all (the default), the output by one name, so
    # that the command line in @PG, and with it every byte, is the same at every count.
    # shellcheck disable=SC2086
    tstep "align/gpus$n$suffix" -- env CUDA_VISIBLE_DEVICES="$(seq -s, 0 $((n - 1)))" \
      "$WTMAP" align -v -x "$G/wtmap" "$FQ" -t "$THREADS" $EXTRA -o "$D/out.bam" || status=1
    if (( r == 1 )) && [[ -s "$D/out.bam" ]]; then mv "$D/out.bam" "$D/gpus$n.bam"; fi
  done
  # shellcheck disable=SC2086
  tstep "io/floor$suffix" -- "$WTMAP" align -v --io-only -x "$G/wtmap" "$FQ" -t "$THREADS" $EXTRA -o "$D/floor.bam" || status=1
done
rm -f "$D/out.bam"

identical=()
for n in "${COUNTS[@]}"; do
  if [[ -s "$D/gpus$n.bam" ]] && cmp -s "$D/gpus1.bam" "$D/gpus$n.bam"; then identical+=("$n:yes"); else identical+=("$n:no"); fi
done

python3 - "$TSV" "$INDEX_TSV" "$D" "$NREADS" "$OUT" "${identical[@]}" <<'PY' || status=1
import glob, json, statistics, sys
tsv, index_tsv, d, reads, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
identical = dict(a.split(':') for a in sys.argv[6:])
walls = {}
for line in list(open(tsv)) + list(open(index_tsv)):
    f = line.rstrip('\n').split('\t')
    if len(f) >= 4 and f[3] == '0' and f[1] != 'NA':
        walls.setdefault(f[0].split('@')[0], []).append(float(f[1]))
med = {k: statistics.median(v) for k, v in walls.items()}
floor = med.get('io/floor')
rows = []
for n in sorted(int(k) for k in identical):
    parts = [json.load(open(p)) for p in sorted(glob.glob(f"{d}/search{n}-*.json"))]
    search = max(p['search_s'] for p in parts) if len(parts) == n else None
    rows.append(dict(gpus=n, search_s=search, e2e_s=med.get(f'align/gpus{n}'), identical=identical[str(n)] == 'yes'))
base = rows[0] if rows and rows[0]['gpus'] == 1 else None
for r in rows:
    for key in ('search', 'e2e'):
        t, t1 = r[f'{key}_s'], base and base[f'{key}_s']
        r[f'{key}_speedup'] = t1 / t if t and t1 else None
        r[f'{key}_efficiency'] = r[f'{key}_speedup'] / r['gpus'] if r[f'{key}_speedup'] else None
    r['e2e_of_floor'] = floor / r['e2e_s'] if floor and r['e2e_s'] else None
index = med.get('index/wtmap')
json.dump(dict(reads=reads, floor_s=floor, index_s=index, runs=rows), open(f"{out}/scale.json", 'w'), indent=1)
fmt = lambda v, spec: format(v, spec) if v is not None else '-'
with open(f"{out}/scale.txt", 'w') as t:
    t.write(f"reads: {reads}; I/O floor {fmt(floor, '.2f')} s; index build {fmt(index, '.1f')} s\n")
    t.write("gpus  search_s  speedup  eff   e2e_s  speedup  eff   %floor  identical\n")
    for r in rows:
        t.write(f"{r['gpus']:4d}  {fmt(r['search_s'], '8.2f')}  {fmt(r['search_speedup'], '7.2f')}  {fmt(r['search_efficiency'], '.2f')}"
                f"  {fmt(r['e2e_s'], '6.2f')}  {fmt(r['e2e_speedup'], '7.2f')}  {fmt(r['e2e_efficiency'], '.2f')}"
                f"  {fmt(r['e2e_of_floor'] and 100 * r['e2e_of_floor'], '6.1f')}  {'yes' if r['identical'] else 'NO'}\n")
print(open(f"{out}/scale.txt").read())
PY
exit $status
