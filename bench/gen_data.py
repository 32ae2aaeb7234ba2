#!/usr/bin/env python3
"""Test data for bench/run-fmindex.sh and bench/run-aligner.sh (standard library only).

  gen_data.py reference --mbp 100 --contigs 4 --seed 1 OUT.fa
      synthetic genome: uniform random bases, ~3 % of it copies of earlier segments (300 bp..5 kbp,
      ~1 % substitutions; some reverse complemented), tandem repeats, and N runs (10 bp..2 kbp,
      about one per 2 Mbp). Fixed seed; 1 Gbp takes about a minute.
  gen_data.py human --gbp 3.1 --seed 1 [--procs N] [--bed OUT.tsv] [--library LIB.fa] OUT.fa
      synthetic genome with human-like structure (synth_human.py says what it imitates and what
      not): 24 chromosomes, chrM, unplaced contigs, N gaps, centromeric alpha-satellite arrays,
      repeat families at 0.5-33 % divergence (~47 % of the bases), segmental duplications,
      isochores. Same bytes for a seed whatever --procs.
  gen_data.py patterns REF.fa --n 1e7 --len 32 --random 0.01 --seed 2 OUT.fa
      patterns sampled from the reference (either strand, windows without N), a fraction random.
  gen_data.py art2fq ART.fq ART.aln OUT.fq.gz [--max N]
      renames ART's single-end reads so that the name carries the truth:
      <index>|<contig>|<1-based leftmost forward position>|<+/->|<mismatches, -1 if indels>
"""
import argparse
import gzip
import os
import random
import sys

COMP = bytes.maketrans(b"ACGTNacgtn", b"TGCANtgcan")
TO_ACGT = bytes(b"ACGT"[i & 3] for i in range(256))


def number(s):
    s = s.replace("^", "**")
    return int(float(eval(s, {"__builtins__": {}}))) if any(c in s for c in "*e") else int(s)


def revcomp(b):
    return b.translate(COMP)[::-1]


def mutate(rng, seg, rate):
    seg = bytearray(seg)
    for _ in range(int(len(seg) * rate)):
        seg[rng.randrange(len(seg))] = b"ACGT"[rng.randrange(4)]
    return bytes(seg)


def make_contig(rng, length):
    seq = bytearray(rng.randbytes(length).translate(TO_ACGT))
    # interspersed repeats: copies of earlier segments, mutated, some reverse complemented
    copied = 0
    while copied < length * 0.03 and length > 20000:
        n = rng.randrange(300, 5000)
        src = rng.randrange(0, length - n)
        dst = rng.randrange(0, length - n)
        seg = mutate(rng, bytes(seq[src:src + n]), 0.01)
        if rng.random() < 0.5:
            seg = revcomp(seg)
        seq[dst:dst + n] = seg
        copied += n
    # tandem repeats
    for _ in range(max(1, length // 1000000)):
        unit = rng.randbytes(rng.randrange(2, 60)).translate(TO_ACGT)
        n = min(length // 4, rng.randrange(200, 3000))
        dst = rng.randrange(0, length - n)
        seq[dst:dst + n] = (unit * (n // len(unit) + 1))[:n]
    # N runs
    for _ in range(max(1, length // 2000000)):
        n = min(length // 10, rng.randrange(10, 2000))
        dst = rng.randrange(0, length - n)
        seq[dst:dst + n] = b"N" * n
    return bytes(seq)


def cmd_reference(a):
    rng = random.Random(a.seed)
    total = number(a.mbp) * 1000000 if a.bp is None else number(a.bp)
    per = total // a.contigs
    with open(a.out, "wb") as f:
        for c in range(a.contigs):
            n = per if c < a.contigs - 1 else total - per * (a.contigs - 1)
            seq = make_contig(rng, n)
            f.write(b">synth%d synthetic seed=%d\n" % (c + 1, a.seed))
            w = 100
            f.write(b"\n".join(seq[i:i + w] for i in range(0, len(seq), w)))
            f.write(b"\n")
    print(f"reference: {total} bp in {a.contigs} contigs -> {a.out}", file=sys.stderr)


def cmd_human(a):
    import synth_human
    a.total = number(a.bp) if a.bp is not None else int(round(float(a.gbp) * 1e9))
    a.sd_min, a.sd_max = (float(x) * 1000 for x in a.sd_kbp.split(","))
    a.sd_div = tuple(float(x) for x in a.sd_div.split(","))
    synth_human.generate(a)


def read_fasta(path):
    op = gzip.open if path.endswith(".gz") else open
    names, seqs, cur = [], [], []
    with op(path, "rb") as f:
        for line in f:
            if line.startswith(b">"):
                if names:
                    seqs.append(b"".join(cur).upper())
                names.append(line[1:].split()[0].decode())
                cur = []
            else:
                cur.append(line.strip())
    if names:
        seqs.append(b"".join(cur).upper())
    return names, seqs


def cmd_patterns(a):
    rng = random.Random(a.seed)
    names, seqs = read_fasta(a.ref)
    n, L = number(a.n), a.len
    usable = [s for s in seqs if len(s) >= L]
    weights = [len(s) - L + 1 for s in usable]
    n_random = int(n * a.random)
    which = rng.choices(range(len(usable)), weights=weights, k=n - n_random)
    out = []
    with open(a.out, "wb") as f:
        for i, ci in enumerate(which):
            s = usable[ci]
            while True:
                p = rng.randrange(len(s) - L + 1)
                w = s[p:p + L]
                if not w.translate(None, b"ACGT"):
                    break
            if rng.random() < 0.5:
                w = revcomp(w)
            out.append(b">p%d\n%s\n" % (i, w))
            if len(out) >= 100000:
                f.write(b"".join(out))
                out = []
        base = n - n_random
        for j in range(n_random):
            out.append(b">r%d\n%s\n" % (base + j, rng.randbytes(L).translate(TO_ACGT)))
        f.write(b"".join(out))
    print(f"patterns: {n} x {L} bp ({n_random} random) -> {a.out}", file=sys.stderr)


def cmd_art2fq(a):
    lengths = {}
    truth = {}
    with open(a.aln) as f:
        for line in f:
            if line.startswith("@SQ"):
                _, name, length = line.rstrip("\n").split("\t")
                lengths[name.split()[0]] = int(length)
            elif line.startswith("##Header End"):
                break
        while True:
            h = f.readline()
            if not h:
                break
            ref = f.readline().rstrip("\n")
            read = f.readline().rstrip("\n")
            contig, rid, pos, strand = h[1:].rstrip("\n").split("\t")
            span = len(ref) - ref.count("-")
            pos = int(pos)
            if strand == "-":
                pos = lengths[contig] - pos - span
            if "-" in ref or "-" in read:
                mm = -1
            else:
                mm = sum(1 for x, y in zip(ref, read) if x != y)
            truth[rid] = f"{contig}|{pos + 1}|{strand}|{mm}"
    n = 0
    limit = number(a.max) if a.max else None
    with open(a.fq) as f, gzip.open(a.out, "wt", compresslevel=4) as out:
        while limit is None or n < limit:
            h = f.readline()
            if not h:
                break
            seq, plus, qual = f.readline(), f.readline(), f.readline()
            rid = h[1:].split()[0]
            out.write(f"@{n}|{truth[rid]}\n{seq}+\n{qual}")
            n += 1
    print(f"art2fq: {n} reads -> {a.out}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reference")
    r.add_argument("--mbp", default="100")
    r.add_argument("--bp", default=None, help="size in bases (overrides --mbp)")
    r.add_argument("--contigs", type=int, default=1)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("out")
    h = sub.add_parser("human", help="human-like synthetic genome (synth_human.py)")
    h.add_argument("--gbp", default="3.1", help="size in Gbp")
    h.add_argument("--bp", default=None, help="size in bases (overrides --gbp)")
    h.add_argument("--seed", type=int, default=1)
    h.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    h.add_argument("--width", type=int, default=60, help="bases per FASTA line")
    h.add_argument("--unplaced", type=int, default=None, help="unplaced contigs (default 170 per 3.1 Gbp, >= 20)")
    h.add_argument("--gaps-per-mbp", type=float, default=0.1, help="assembly gaps per Mbp of arm")
    h.add_argument("--sd-frac", type=float, default=0.05, help="fraction of the genome in SDs")
    h.add_argument("--sd-kbp", default="10,300", help="SD length range (kbp)")
    h.add_argument("--sd-div", default="0.01,0.05", help="SD pairwise divergence range")
    h.add_argument("--par", choices=("copy", "mask"), default="copy", help="chrY's PAR1: chrX's bases or Ns")
    h.add_argument("--bed", default=None, help="features TSV (0-based, half-open)")
    h.add_argument("--bed-repeats", action="store_true", help="with --bed: every repeat copy too")
    h.add_argument("--library", default=None, help="FASTA of the repeat consensi and HORs")
    h.add_argument("out")
    q = sub.add_parser("patterns")
    q.add_argument("ref")
    q.add_argument("--n", default="1e7")
    q.add_argument("--len", type=int, default=32)
    q.add_argument("--random", type=float, default=0.01)
    q.add_argument("--seed", type=int, default=2)
    q.add_argument("out")
    t = sub.add_parser("art2fq")
    t.add_argument("fq")
    t.add_argument("aln")
    t.add_argument("out")
    t.add_argument("--max", default=None)
    a = p.parse_args()
    {"reference": cmd_reference, "human": cmd_human, "patterns": cmd_patterns, "art2fq": cmd_art2fq}[a.cmd](a)


if __name__ == "__main__":
    main()
