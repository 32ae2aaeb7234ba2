#!/usr/bin/env bash
# A quick end-to-end of `wtmap index` and `wtmap count` on a generated reference, on the GPU and
# the CPU, checking that both give the same output. Usage: scripts/fm-smoke.sh [bases]
set -euo pipefail
bases=${1:-2000000}
dir=$(mktemp -d)
python3 - "$bases" "$dir" <<'PY'
import random, sys
n, d = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
seq = ''.join(rng.choice('ACGT') for _ in range(n))
with open(f'{d}/ref.fa', 'w') as f:
    for c in range(4):
        s = seq[c * n // 4:(c + 1) * n // 4]
        s = s[:1000] + 'N' * 50 + s[1050:]
        f.write(f'>chr{c}\n' + '\n'.join(s[i:i + 80] for i in range(0, len(s), 80)) + '\n')
with open(f'{d}/pat.fa', 'w') as f:
    for i in range(200000):
        p = rng.randrange(0, n - 40)
        f.write(f'>p{i}\n{seq[p:p + 32]}\n')
comp = str.maketrans('ACGT', 'TGCA')
with open(f'{d}/reads.fq', 'w') as f:
    for i in range(100000):
        p = rng.randrange(0, n - 150)
        r = list(seq[p:p + 100])
        for j in rng.sample(range(100), rng.randrange(0, 6)):
            r[j] = rng.choice([b for b in 'ACGT' if b != r[j]])
        r = ''.join(r)
        if rng.random() < 0.5:
            r = r.translate(comp)[::-1]
        f.write(f'@r{i}_{p + 1}\n{r}\n+\n' + 'I' * 100 + '\n')
PY
for dev in gpu cpu; do
  wtmap index "$dir/ref.fa" -p "$dir/idx_$dev" --device "$dev"
  wtmap count -x "$dir/idx_$dev" --locate --device "$dev" "$dir/pat.fa" > "$dir/out_$dev.tsv"
  wtmap align -x "$dir/idx_$dev" --device "$dev" "$dir/reads.fq" -o "$dir/aln_$dev.sam"
done
cmp "$dir/idx_gpu.wtmap" "$dir/idx_cpu.wtmap" && echo "index files identical (gpu vs cpu)"
cmp "$dir/out_gpu.tsv" "$dir/out_cpu.tsv" && echo "count outputs identical (gpu vs cpu)"
cmp <(grep -v '^@PG' "$dir/aln_gpu.sam") <(grep -v '^@PG' "$dir/aln_cpu.sam") && echo "align outputs identical (gpu vs cpu)"
rm -rf "$dir"
