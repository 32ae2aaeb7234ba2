#!/usr/bin/env python3
"""Tests of `gen_data.py human` (synth_human.py) on a 4 Mbp genome: the FASTA read back and checked
against the generator's BED and library with independent means (N runs scanned, copies aligned to
their consensus by a banded edit distance written here, k-mers counted, GC counted); closed-form
expectations from the docstring (ctest: BenchGenHuman; or `python3 -m unittest -v test_gen_human`)."""
import collections
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOTAL = 4_000_000
# GRCh38's lengths (NCBI), the proportions the chromosomes must keep
GRCH38 = {"chr1": 248956422, "chr13": 114364328, "chr21": 46709983, "chrX": 156040895, "chrY": 57227415}
GRCH38_CHROMS = 3088269832
# divergence ranges of the docstring
RANGES = {"AluY": (0.01, 0.06), "AluS": (0.06, 0.12), "AluJ": (0.12, 0.20), "MIR": (0.22, 0.32),
          "L1HS": (0.005, 0.03), "L1PA": (0.03, 0.10), "L1PB": (0.08, 0.15), "L1M": (0.15, 0.25)}
COMP = bytes.maketrans(b"ACGTN", b"TGCAN")


def revcomp(s):
    return s.translate(COMP)[::-1]


def generate(out, seed=3, procs=1, extra=()):
    args = [sys.executable, os.path.join(HERE, "gen_data.py"), "human", "--bp", str(TOTAL), "--seed", str(seed),
            "--procs", str(procs), "--gaps-per-mbp", "3", "--sd-kbp", "2,6", "--bed", out + ".bed",
            "--bed-repeats", "--library", out + ".lib.fa", *extra, out + ".fa"]
    subprocess.run(args, check=True, capture_output=True)
    files = {}
    for ext in (".fa", ".bed", ".lib.fa"):
        with open(out + ext, "rb") as f:
            files[ext] = f.read()
    return files


def parse_fasta(text):
    names, seqs = [], []
    for block in text.split(b">")[1:]:
        head, _, body = block.partition(b"\n")
        names.append(head.split()[0].decode())
        seqs.append(body)
    return names, seqs


def banded_edit_distance(a, b, w):
    """Global unit-cost edit distance, cells within w of the scaled diagonal (larger otherwise)."""
    m, n = len(a), len(b)
    inf = 1 << 30
    plo, phi = 0, min(n, w)
    prev = list(range(plo, phi + 1))
    for i in range(1, m + 1):
        c = i * n // m
        lo, hi = max(0, c - w), min(n, c + w)
        cur = [inf] * (hi - lo + 1)
        ai = a[i - 1]
        for j in range(lo, hi + 1):
            best = prev[j - plo] + 1 if plo <= j <= phi else inf
            if j > lo and cur[j - 1 - lo] + 1 < best:
                best = cur[j - 1 - lo] + 1
            if j > 0 and plo <= j - 1 <= phi:
                d = prev[j - 1 - plo] + (ai != b[j - 1])
                if d < best:
                    best = d
            cur[j - lo] = best
        prev, plo, phi = cur, lo, hi
    return prev[n - plo] if plo <= n <= phi else inf


class GenHuman(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = generate(os.path.join(cls.tmp.name, "g"))
        names, raw = parse_fasta(cls.out[".fa"])
        cls.raw = dict(zip(names, raw))
        cls.names = names
        cls.seq = {n: r.replace(b"\n", b"") for n, r in cls.raw.items()}
        cls.bed = [l.split("\t") for l in cls.out[".bed"].decode().splitlines() if not l.startswith("#")]
        lib_names, lib_raw = parse_fasta(cls.out[".lib.fa"])
        cls.lib = {n: r.replace(b"\n", b"") for n, r in zip(lib_names, lib_raw)}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def records(self, kind, name=None):
        return [r for r in self.bed if r[3] == kind and (name is None or r[4] == name)]

    def bases(self, r):
        s = self.seq[r[0]][int(r[1]):int(r[2])]
        return revcomp(s) if r[5] == "-" else s

    def test_same_bytes_for_a_seed_whatever_the_processes(self):
        with tempfile.TemporaryDirectory() as d:
            three = generate(os.path.join(d, "p3"), procs=3)
            other = generate(os.path.join(d, "s4"), seed=4)
        self.assertEqual(three, self.out)
        self.assertNotEqual(other[".fa"], self.out[".fa"])

    def test_length_contigs_and_lines(self):
        chroms = [f"chr{i}" for i in range(1, 23)] + ["chrX", "chrY", "chrM"]
        self.assertEqual(self.names[:25], chroms)
        unplaced = self.names[25:]
        self.assertEqual(len(unplaced), 20)  # at least 20 whatever the size
        self.assertTrue(all(n.startswith("chrUn_syn") for n in unplaced))
        self.assertEqual(sum(len(s) for s in self.seq.values()), TOTAL)
        self.assertLessEqual(sum(len(self.seq[n]) for n in unplaced), 0.004 * TOTAL + 1)
        self.assertEqual(len(self.seq["chrM"]), TOTAL // 1000)
        placed = sum(len(self.seq[n]) for n in chroms[:24])
        for name, length in GRCH38.items():
            self.assertAlmostEqual(len(self.seq[name]) / placed, length / GRCH38_CHROMS, delta=1e-5)
        for name, raw in self.raw.items():
            lines = raw.split(b"\n")
            self.assertEqual(lines[-1], b"")
            self.assertTrue(all(len(l) == 60 for l in lines[:-2]), name)
            self.assertTrue(0 < len(lines[-2]) <= 60)
            self.assertFalse(self.seq[name].translate(None, b"ACGTN"), name)

    def test_n_runs_are_the_annotated_gaps(self):
        gaps = {(r[0], int(r[1]), int(r[2])) for r in self.records("gap")}
        runs = {(n, m.start(), m.end()) for n, s in self.seq.items() for m in re.finditer(b"N+", s)}
        self.assertEqual(runs, gaps)
        end_gap = round(10_000 * TOTAL / 3.1e9)
        chrom_n = chrom_len = 0
        for name in list(GRCH38) + ["chr2", "chr17"]:
            s = self.seq[name]
            self.assertEqual(s[:end_gap + 1], b"N" * end_gap + s[end_gap:end_gap + 1])
            self.assertNotEqual(s[end_gap:end_gap + 1], b"N")
            self.assertEqual(s[-end_gap - 1:], s[-end_gap - 1:-end_gap] + b"N" * end_gap)
            self.assertNotEqual(s[-end_gap - 1:-end_gap], b"N")
        for name in self.names[:24]:
            chrom_n += self.seq[name].count(b"N")
            chrom_len += len(self.seq[name])
        self.assertTrue(0.03 < chrom_n / chrom_len < 0.08, chrom_n / chrom_len)
        for name in self.names[24:]:
            self.assertNotIn(b"N", self.seq[name])
        # acrocentric: 16 of chr13's first ~18 Mbp (scaled) are N
        s13 = self.seq["chr13"]
        self.assertGreater(s13[:len(s13) * 18 // 114].count(b"N"), 0.6 * len(s13) * 16 / 114)
        # assembly gaps inside the arms (3 per Mbp here): gaps away from the structure
        inner = [r for r in self.records("gap") if r[0] in ("chr2", "chr3", "chr4", "chr5", "chr6")]
        self.assertGreaterEqual(len(inner), 5 * 2 + 3)

    def test_repeat_copies_are_their_consensus_at_their_divergence(self):
        measured = {}
        for fam, (lo, hi) in RANGES.items():
            recs = [r for r in self.records("repeat", fam) if 60 <= int(r[8]) - int(r[7]) <= 1500][:25]
            self.assertGreaterEqual(len(recs), 5, fam)
            eds = lens = stated = 0
            for r in recs:
                d = float(r[6])
                self.assertTrue(lo <= d <= hi, (fam, d))
                cons = self.lib[fam][int(r[7]):int(r[8])]
                w = 12 + int(4 * math.sqrt(len(cons) * d * 0.1) * 1.5)
                ed = banded_edit_distance(self.bases(r), cons, w)
                self.assertLess(ed / len(cons), 1.6 * d + 0.03, (fam, r))
                eds, lens, stated = eds + ed, lens + len(cons), stated + d * len(cons)
            # expected edit distance per event: 0.9 substitutions + 0.1 indels of 1.5 bases
            ratio = eds / stated
            self.assertTrue(0.75 < ratio < 1.2, (fam, ratio))
            measured[fam] = eds / lens
        for young, old in (("AluY", "AluS"), ("AluS", "AluJ"), ("L1HS", "L1PA"), ("L1PA", "L1M"), ("AluJ", "MIR")):
            self.assertLess(measured[young], measured[old])

    def test_families_recur_as_kmers_as_their_divergence_allows(self):
        genome = b"|".join(self.seq.values())
        k = 20
        others = b"|".join(s + b"|" + revcomp(s) for n, s in self.lib.items())

        def per_copy(fam):
            """Mean count in the genome (both strands) of the consensus' k-mers found in no other
            consensus (subfamilies share most of theirs), per annotated copy."""
            seq = self.lib[fam]
            kmers = [seq[i:i + k] for i in range(len(seq) - k + 1)]
            own = [x for x in kmers if others.count(x) + others.count(revcomp(x)) == 2]  # its own, both strands
            self.assertGreater(len(own), 40, fam)
            copies = len(self.records("repeat", fam))
            return sum(genome.count(x) + genome.count(revcomp(x)) for x in own) / len(own) / copies

        # a 20-mer survives on a copy with probability (1 - 0.9 d)^20: AluY (d 1-6 %) ~0.5 on the
        # ~90 % of copies that are full length; MIR (22-32 %) < 0.01
        young, old = per_copy("AluY"), per_copy("MIR")
        self.assertGreater(young, 0.3)
        self.assertLess(old, 0.03)
        rng = random.Random(1)
        chance = sum(genome.count(bytes(rng.choice(b"ACGT") for _ in range(k))) for _ in range(200))
        self.assertLessEqual(chance, 1)

    def test_repeats_cover_about_half_of_the_bases(self):
        covered = sum(int(r[2]) - int(r[1]) for r in self.bed
                      if r[3] in ("repeat", "alpha_hor", "alpha_mono", "hsat", "telomere"))
        sd = sum(int(r[2]) - int(r[1]) for r in self.records("segdup"))
        acgt = TOTAL - sum(s.count(b"N") for s in self.seq.values())
        # SD copies hold repeats too (not annotated): count them at the same share
        share = covered / (acgt - sd)
        self.assertTrue(0.42 < share < 0.52, share)

    def test_segmental_duplications_at_their_divergence(self):
        fams = collections.defaultdict(list)
        for r in self.records("segdup"):
            fams[r[4].split(".")[0]].append(r)
        sd = sum(int(r[2]) - int(r[1]) for r in self.records("segdup"))
        self.assertTrue(0.05 <= sd / TOTAL < 0.08, sd / TOTAL)
        self.assertTrue(all(len(c) >= 2 for c in fams.values()))
        self.assertTrue(any(r[5] == "-" for r in self.records("segdup")))
        self.assertTrue(any(len({r[0] for r in c}) > 1 for c in fams.values()))
        checked = 0
        for copies in fams.values():
            a, b = copies[0], copies[1]
            self.assertEqual(int(a[2]) - int(a[1]), int(b[2]) - int(b[1]))
            d = float(a[6])
            self.assertTrue(0.01 <= d <= 0.05)
            if int(a[2]) - int(a[1]) > 4000 or checked == 3:
                continue
            ed = banded_edit_distance(self.bases(a), self.bases(b), 60)
            # each copy d/2 from the ancestor; 1.05 edits an event (10 % indels of 1.5 bases);
            # Poisson spread, and the ends cut or padded after the indels
            expected = 1.05 * d * (int(a[2]) - int(a[1]))
            self.assertLess(abs(ed - expected), 4 * math.sqrt(expected) + 20, (a, b, ed, expected))
            checked += 1
        self.assertEqual(checked, 3)

    def test_alpha_satellite_repeats_at_the_hor_period(self):
        arrays = [r for r in self.records("alpha_hor")]
        self.assertEqual(len(arrays), 24)
        self.assertEqual(len(self.lib["alpha_monomer"]), 171)
        tested = 0
        for r in arrays:
            hor = self.lib[r[0] + "_HOR"]
            p = len(hor)
            self.assertEqual(p % 171, 0)
            s = self.bases(r)
            if len(s) < 2 * p + 500:
                continue

            def identity(lag):
                return sum(x == y for x, y in zip(s, s[lag:])) / (len(s) - lag)
            d = float(r[6])
            self.assertGreater(identity(p), 1 - 2 * d - 0.01)
            self.assertTrue(0.5 < identity(171) < 0.9, identity(171))
            self.assertLess(identity(100), 0.45)
            tested += 1
        self.assertGreater(tested, 5)

    def test_isochore_gc(self):
        pairs = []
        for r in self.records("isochore"):
            s = self.seq[r[0]][int(r[1]):int(r[2])]
            if len(s) >= 50000 and r[0] != "chrM":
                pairs.append((float(r[4][3:]), (s.count(b"G") + s.count(b"C")) / len(s)))
        self.assertGreater(len(pairs), 15)
        for stated, seen in pairs:
            self.assertLess(abs(stated - seen), 0.035, (stated, seen))
        self.assertGreater(max(p[0] for p in pairs) - min(p[0] for p in pairs), 0.08)

    def test_par1_of_chry_is_chrxs(self):
        x, y = self.records("par")
        self.assertEqual((x[0], y[0]), ("chrX", "chrY"))
        self.assertGreater(int(x[2]) - int(x[1]), 1000)
        self.assertEqual(self.bases(x), self.bases(y))


if __name__ == "__main__":
    unittest.main()
