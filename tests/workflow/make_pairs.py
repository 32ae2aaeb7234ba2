#!/usr/bin/env python3
"""Deterministic read pairs from a FASTA reference, for the workflow test.

make_pairs.py REFERENCE.fa[.gz] PAIRS SEED R1.fq.gz R2.fq.gz

Pairs of 100-base mates in FR orientation from either strand, with 1 % substitutions and a few
small indels. The insert size grows along the file (mean 220 at the first pair, 420 at the
last, sd 20; 5 % anywhere from 120 to 800), so that a part of the file estimates another
insert-size model than the whole file does, and pairs proper under one are not under another. Some pairs are odd on purpose: a random mate 2 (a singleton), both mates random
(unmapped), a mate 2 from elsewhere (discordant), a mate 2 with 8 % substitutions (left to mate
rescue). Names end in /1 and /2. Uses Python's standard library only.
"""
import gzip
import random
import sys

COMPLEMENT = str.maketrans("ACGTN", "TGCAN")
LENGTH = 100


def read_fasta(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return "".join(line.strip().upper() for line in f if not line.startswith(">"))


def revcomp(s):
    return s.translate(COMPLEMENT)[::-1]


def mutate(rng, s, rate):
    bases = list(s)
    for i in range(len(bases)):
        if rng.random() < rate:
            bases[i] = rng.choice([b for b in "ACGT" if b != bases[i]])
    if rng.random() < 0.05:  # a small insertion or deletion inside the read
        at, size = rng.randrange(20, len(bases) - 20), rng.randrange(1, 4)
        if rng.random() < 0.5:
            del bases[at:at + size]
        else:
            bases[at:at] = [rng.choice("ACGT") for _ in range(size)]
    return "".join(bases)[:LENGTH].ljust(LENGTH, "A")


def main():
    reference_path, pairs, seed, r1_path, r2_path = sys.argv[1:]
    pairs = int(pairs)
    reference = read_fasta(reference_path)
    rng = random.Random(int(seed))
    with gzip.open(r1_path, "wt") as r1, gzip.open(r2_path, "wt") as r2:
        for i in range(pairs):
            mean = 220 + 200 * i / max(1, pairs - 1)
            insert = max(LENGTH + 10, int(rng.gauss(mean, 20)))
            if rng.random() < 0.05:  # proper or not depending on the model's bounds
                insert = rng.randrange(120, 800)
            start = rng.randrange(0, len(reference) - insert)
            fragment = reference[start:start + insert]
            if rng.random() < 0.5:
                fragment = revcomp(fragment)
            mates = [mutate(rng, fragment[:LENGTH], 0.01), mutate(rng, revcomp(fragment[-LENGTH:]), 0.01)]
            kind = rng.random()
            if kind < 0.03:
                mates[1] = "".join(rng.choice("ACGT") for _ in range(LENGTH))
            elif kind < 0.05:
                mates = ["".join(rng.choice("ACGT") for _ in range(LENGTH)) for _ in range(2)]
            elif kind < 0.07:
                elsewhere = rng.randrange(0, len(reference) - LENGTH)
                mates[1] = mutate(rng, reference[elsewhere:elsewhere + LENGTH], 0.01)
            elif kind < 0.10:
                mates[1] = mutate(rng, revcomp(fragment[-LENGTH:]), 0.08)
            quality = "".join(chr(33 + rng.choice((12, 25, 37, 40))) for _ in range(LENGTH))
            r1.write(f"@p{i}/1\n{mates[0]}\n+\n{quality}\n")
            r2.write(f"@p{i}/2\n{mates[1]}\n+\n{quality}\n")


if __name__ == "__main__":
    main()
