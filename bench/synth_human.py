"""A seeded synthetic reference with human-like structure, for index-scale benchmarks (issue 27).

`gen_data.py human --gbp 3.1 --seed 1 OUT.fa` (standard library only). Numbers below are at
--gbp 3.1; the proportions are roughly GRCh38's at any size.

What it imitates:
- Contigs: chr1..chr22, chrX, chrY with GRCh38's relative lengths, chrM (16,569 bp, no repeats)
  and --unplaced small contigs chrUn_synNNNN (log-normal, median 40 kbp, together <= 0.4 % of the
  genome; half of them satellite). Total length exactly --gbp / --bp.
- N gaps (~5 %): 10 kbp at both ends of every chromosome (GRCh38's telomere gaps); assembly gaps
  of 10 kbp-3 Mbp inside the arms (--gaps-per-mbp 0.1, log-normal, median 50 kbp); the short arms
  of the acrocentric chromosomes (13, 14, 15, 21, 22) and the heterochromatin of 1q12, 9q12, 16q11
  and Yq12 as blocks of gaps <= 3 Mbp with 20-200 kbp satellite islands between; sometimes a gap
  beside the centromere.
- Telomere runs: 3-8 kbp of (CCCTAA)n / (TTAGGG)n inside the end gaps (0.5 % substitutions).
- Centromeres: per chromosome a higher-order repeat (HOR) of 4-24 alpha-satellite-like monomers
  of 171 bp (each 8-18 % from one monomer consensus, so 15-30 % apart), tandemly repeated over
  0.5-6 Mbp with each copy 0.5-1.5 % from the chromosome's HOR (substitutions only), flanked by
  monomeric alpha satellite (8-18 %) and HSat2/3-like arrays (CATTC-based units of 1-3 kbp).
- Interspersed repeats from a made-up library (--library writes it): Alu-like SINEs (~300 bp
  dimer with A-rich linker and tail; subfamilies Y/S/J at 1-6, 6-12, 12-20 % divergence), MIR-,
  L1- (6.1 kbp, mostly 5'-truncated; four subfamilies, 0.5-25 %), L2-, ERV- (solo LTRs, internal
  parts, some full proviruses), MaLR- and DNA-transposon-like families, microsatellites,
  minisatellites and low-complexity runs, in shares of the euchromatin like RepeatMasker's on
  GRCh38 (SINE 13 %, LINE 20 %, LTR 8 %, DNA 3 %, simple 2 %; with satellites ~47 % of the
  non-N bases). Old copies are sometimes split by a younger insertion. Alu-like copies are denser
  in GC-rich isochores, L1-like ones in AT-rich ones.
- Divergence = substitution and indel events per base: substitutions with transitions twice as
  frequent as transversions, 10 % of events short indels (geometric lengths, mean 1.5).
- Segmental duplications (--sd-frac 0.05 of the genome): families of 2-5 copies of 10-300 kbp
  (log-uniform), 1-5 % pairwise divergence (each copy d/2 from a common ancestor, which holds
  repeats like any euchromatin), 40 % of copies reverse complemented, 60 % on the chromosome of the
  first copy, half near a centromere or telomere.
- PAR1: chrY's first 2.7 Mbp after its telomere identical to chrX's (as in GRCh38's chrY; --par
  mask writes Ns there instead, as the analysis sets do).
- GC: isochores (log-normal, median 300 kbp) with GC drawn from the L1/L2/H1/H2/H3 classes
  (34-59 %; the background is set so that the isochore with its repeats has that GC), CpG
  depleted to ~25 % of expected.

What it does not: real sequence (every consensus is random), genes, exons, CpG islands, the CpG
decay of old repeats, target-site duplications, variable poly-A tails, rDNA arrays, the layered
structure of real HOR arrays, gene conversion, diploid variation, soft-masking (all upper case),
GRCh38's exact gap and centromere positions (approximate, scaled), repeats inside SDs annotated.

Scaling: features of chromosome structure (telomere gaps and runs, centromeres, heterochromatin
and acrocentric blocks, PAR1) scale with the genome (--gbp / 3.1); elements (repeat copies,
isochores, SDs, assembly gaps) keep their sizes but never exceed a fraction of their chromosome.

Output is a function of the seed and the options, never of --procs (nor of the Python version as
far as `random`'s seeding from str and its generators stay as they are since 3.9): the plan (contigs, features
cut into units of at most 1 Mbp, each with its own seed) is made in the parent; a process pool
makes the units, which are written in order with at most 3 per process pending (memory: tens of
MB per process). Mutations of a whole sequence run as big-integer arithmetic on 2-bit codes (no
per-base Python loop). --bed writes the features (0-based, half-open): gap, telomere, alpha_hor,
alpha_mono, hsat, segdup, par, isochore, and with --bed-repeats every repeat copy with its
consensus interval and stated divergence.
"""
import bisect
import collections
import functools
import itertools
import math
import multiprocessing
import random
import sys

UNIT = 1_000_000  # largest piece one task makes
HUMAN_BP = 3.1e9
TEL_GAP, TEL_RUN = 10_000, (3_000, 8_000)
MAX_GAP = 3_000_000
FEATURE_CAP = 0.02  # an SD copy or assembly gap never exceeds this fraction of its chromosome
PAR1 = 2_700_000

# name, length, centromere midpoint (Mbp), N block (Mbp), where the block lies ("p": the short arm
# of an acrocentric, "q": after the centromere, "qter": before the q-arm's end). Approximate GRCh38.
GRCH38 = [
    ("chr1", 248956422, 123.4, 18.0, "q"), ("chr2", 242193529, 93.9, 0, ""),
    ("chr3", 198295559, 90.9, 0, ""), ("chr4", 190214555, 50.0, 0, ""),
    ("chr5", 181538259, 48.8, 0, ""), ("chr6", 170805979, 59.8, 0, ""),
    ("chr7", 159345973, 60.1, 0, ""), ("chr8", 145138636, 45.2, 0, ""),
    ("chr9", 138394717, 43.0, 14.0, "q"), ("chr10", 133797422, 39.8, 0, ""),
    ("chr11", 135086622, 53.4, 0, ""), ("chr12", 133275309, 35.5, 0, ""),
    ("chr13", 114364328, 17.7, 16.0, "p"), ("chr14", 107043718, 17.2, 16.0, "p"),
    ("chr15", 101991189, 19.0, 17.0, "p"), ("chr16", 90338345, 36.8, 8.0, "q"),
    ("chr17", 83257441, 25.1, 0, ""), ("chr18", 80373285, 18.5, 0, ""),
    ("chr19", 58617616, 26.2, 0, ""), ("chr20", 64444167, 28.1, 0, ""),
    ("chr21", 46709983, 12.0, 10.0, "p"), ("chr22", 50818468, 15.0, 12.0, "p"),
    ("chrX", 156040895, 60.6, 0, ""), ("chrY", 57227415, 10.4, 30.0, "qter"),
]
CHRM = 16569

# Isochore classes (Bernardi): weight, GC range.
ISOCHORES = [(0.30, 0.34, 0.37), (0.32, 0.37, 0.41), (0.22, 0.41, 0.46), (0.10, 0.46, 0.53), (0.06, 0.53, 0.59)]

# Interspersed families: name, class, divergence range, share of the euchromatin, probability of a
# full-length copy, mean fragment length, fragments keep the 3' end ("3p") or lie anywhere, GC bias
# (+1 denser in GC-rich isochores, -1 in AT-rich ones). Consensi are built in make_library().
FAMILIES = [
    ("AluY", "SINE/Alu", (0.01, 0.06), 0.011, 0.9, 150, "any", 1),
    ("AluS", "SINE/Alu", (0.06, 0.12), 0.060, 0.85, 150, "any", 1),
    ("AluJ", "SINE/Alu", (0.12, 0.20), 0.035, 0.8, 150, "any", 1),
    ("MIR", "SINE/MIR", (0.22, 0.32), 0.025, 0.1, 120, "any", 0),
    ("L1HS", "LINE/L1", (0.005, 0.03), 0.004, 0.15, 1000, "3p", -1),
    ("L1PA", "LINE/L1", (0.03, 0.10), 0.050, 0.05, 900, "3p", -1),
    ("L1PB", "LINE/L1", (0.08, 0.15), 0.036, 0.04, 900, "3p", -1),
    ("L1M", "LINE/L1", (0.15, 0.25), 0.080, 0.02, 700, "any", -1),
    ("L2", "LINE/L2", (0.25, 0.33), 0.032, 0.01, 400, "any", 0),
    ("ERVK_LTR", "LTR/ERVK", (0.01, 0.05), 0.002, 0.8, 300, "any", 0),
    ("ERV1_LTR", "LTR/ERV1", (0.06, 0.15), 0.020, 0.7, 200, "any", 0),
    ("ERV1_int", "LTR/ERV1", (0.06, 0.15), 0.012, 0.3, 1500, "any", 0),
    ("MaLR_LTR", "LTR/ERVL-MaLR", (0.14, 0.24), 0.035, 0.7, 200, "any", 0),
    ("ERVL_LTR", "LTR/ERVL", (0.18, 0.28), 0.015, 0.6, 200, "any", 0),
    ("Tigger", "DNA/TcMar", (0.15, 0.25), 0.015, 0.1, 300, "any", 0),
    ("Charlie", "DNA/hAT", (0.18, 0.30), 0.015, 0.1, 250, "any", 0),
    ("simple", "Simple_repeat", (0.0, 0.12), 0.008, 1, 0, "any", 0),
    ("low_complexity", "Low_complexity", (0.0, 0.10), 0.006, 1, 0, "any", 0),
    ("minisatellite", "Satellite/VNTR", (0.02, 0.15), 0.004, 1, 0, "any", 0),
]
GENERATED = {"simple", "low_complexity", "minisatellite"}  # made per copy, no consensus
NEST_P = 0.1  # an old copy (divergence >= 12 %) is split by a younger insertion
PROVIRUS_P = 0.1  # an ERV1_int copy comes with its two LTRs
INDEL_FRAC = 0.1

CODE = bytes.maketrans(b"ACGT", b"\0\1\2\3")
BASE = bytes.maketrans(b"\0\1\2\3", b"ACGT")
COMP = bytes.maketrans(b"ACGTN", b"TGCAN")
# a substitution adds 2 (a transition: A<->G, C<->T) with probability 2/3, else 1 or 3 (mod 4)
DELTA = bytes(2 if b < 171 else 1 if b < 213 else 3 for b in range(256))
BELOW = [bytes(0xFF if b < k else 0 for b in range(256)) for k in range(257)]
EQUAL = [bytes(0xFF if b == k else 0 for b in range(256)) for k in range(256)]


def rng_for(*key):
    """An independent generator per key: str seeds are hashed with SHA-512, the same in every process."""
    return random.Random(":".join(map(str, key)))


@functools.lru_cache(maxsize=None)
def gc_table(k):
    """Byte -> base with k/256 of bytes C or G."""
    return bytes((b"C" if b < k // 2 else b"G" if b < k else b"A" if b < k + (256 - k) // 2 else b"T")[0]
                 for b in range(256))


def random_dna(rng, n, gc):
    return rng.randbytes(n).translate(gc_table(min(256, max(0, round(gc * 256)))))


def revcomp(s):
    return s.translate(COMP)[::-1]


def cpg_deplete(s):
    """Removes the CpGs not preceded by G (~3/4: C->T or G->A, as deamination does)."""
    return s.replace(b"ACG", b"ATG").replace(b"TCG", b"TCA").replace(b"CCG", b"CTG")


def cpg_loss(gc):
    """GC lost by cpg_deplete on random sequence of this GC (one base per removed CpG)."""
    return (gc / 2) ** 2 * (1 - gc / 2)


def substitute(rng, s, rate):
    """Each base substituted with probability `rate` (1/65536 steps) by another base, Ts:Tv 2:1.

    Whole-sequence big-integer arithmetic: codes 0..3 per byte plus a delta of 1..3 where hit, masked
    to 2 bits (a byte never carries into the next)."""
    n = len(s)
    q = int(rate * 65536)
    if n == 0 or q <= 0:
        return s
    hi, lo = divmod(min(q, 65535), 256)
    r1 = rng.randbytes(n)
    hit = int.from_bytes(r1.translate(BELOW[hi]), "little")
    if lo:
        hit |= int.from_bytes(r1.translate(EQUAL[hi]), "little") & int.from_bytes(
            rng.randbytes(n).translate(BELOW[lo]), "little")
    delta = int.from_bytes(rng.randbytes(n).translate(DELTA), "little")
    codes = int.from_bytes(s.translate(CODE), "little")
    out = (codes + (hit & delta)) & int.from_bytes(b"\3" * n, "little")
    return out.to_bytes(n, "little").translate(BASE)


def indels(rng, s, events):
    """`events` short insertions or deletions (half each, lengths geometric with mean 1.5)."""
    if events <= 0 or len(s) < 2:
        return s
    out, prev = [], 0
    for p in sorted(rng.randrange(len(s)) for _ in range(events)):
        if p < prev:
            continue
        out.append(s[prev:p])
        k = 1
        while rng.random() < 1 / 3:
            k += 1
        if rng.random() < 0.5:
            prev = p + k
        else:
            out.append(random_dna(rng, k, 0.5))
            prev = p
    out.append(s[prev:])
    return b"".join(out)


def mutate(rng, s, div, indel_frac=INDEL_FRAC):
    """`div` events per base: substitutions and (indel_frac of them) indels."""
    s = substitute(rng, s, div * (1 - indel_frac))
    x = len(s) * div * indel_frac
    return indels(rng, s, int(x) + (rng.random() < x - int(x)))


def fit(s, n, rng):
    """Exactly n bases: cut, or padded with random bases (after indels changed a length)."""
    return s[:n] if len(s) >= n else s + random_dna(rng, n - len(s), 0.45)


class Family:
    """An interspersed repeat family: consensus, copy divergence and copy-length model."""

    def __init__(self, row, consensus):
        (self.name, self.cls, self.div, self.share, self.p_full, self.frag_mean, self.anchor,
         self.gc_bias) = row
        self.consensus = consensus
        L = len(consensus)
        if self.name in GENERATED:
            self.mean_len = {"simple": 70, "low_complexity": 120, "minisatellite": 1100}[self.name]
            self.gc = 0.4
        else:
            m = self.frag_mean
            self.mean_len = self.p_full * L + (1 - self.p_full) * m * (1 - math.exp(-L / m))
            self.gc = (consensus.count(b"C") + consensus.count(b"G")) / L

    def span(self, rng):
        """Consensus interval of one copy."""
        L = len(self.consensus)
        if rng.random() < self.p_full:
            return 0, L
        n = max(30, min(L, int(rng.expovariate(1 / self.frag_mean))))
        if self.anchor == "3p":
            return L - n, L
        a = rng.randrange(L - n + 1)
        return a, a + n


def alu_consensus(rng):
    """Dimer: left monomer, A-rich linker, right monomer (the left one 20 % diverged, plus a 31 bp
    insertion), A-rich tail."""
    left = random_dna(rng, 118, 0.56)
    right = substitute(rng, left, 0.2)
    right = right[:60] + random_dna(rng, 31, 0.56) + right[60:]
    return left + b"AAAAAGAAAAAA" + right + b"AAAAAAAAAAAAAAAAAAAA"


@functools.lru_cache(maxsize=4)
def make_library(seed):
    """Family name -> Family; also the alpha monomer. Subfamilies descend from one another."""
    rng = rng_for(seed, "library")
    alu_j = alu_consensus(rng)
    alu_s = substitute(rng, alu_j, 0.05)
    alu_y = substitute(rng, alu_s, 0.02)
    l1m = random_dna(rng, 6100, 0.41) + b"A" * 20
    l1pb = mutate(rng, l1m, 0.10)
    l1pa = mutate(rng, l1pb, 0.06)
    l1hs = mutate(rng, l1pa, 0.03)
    cons = {"AluY": alu_y, "AluS": alu_s, "AluJ": alu_j, "MIR": random_dna(rng, 262, 0.5),
            "L1HS": l1hs, "L1PA": l1pa, "L1PB": l1pb, "L1M": l1m, "L2": random_dna(rng, 3300, 0.45),
            "ERVK_LTR": random_dna(rng, 968, 0.5), "ERV1_LTR": random_dna(rng, 450, 0.45),
            "ERV1_int": random_dna(rng, 6000, 0.44), "MaLR_LTR": random_dna(rng, 370, 0.42),
            "ERVL_LTR": random_dna(rng, 500, 0.43), "Tigger": random_dna(rng, 2400, 0.40),
            "Charlie": random_dna(rng, 2800, 0.38)}
    fams = {row[0]: Family(row, cons.get(row[0], b"")) for row in FAMILIES}
    alpha = random_dna(rng, 171, 0.38)
    return fams, alpha


def library_fasta(seed, plan):
    fams, alpha = make_library(seed)
    out = [b">%s %s\n%s\n" % (f.name.encode(), f.cls.encode(), f.consensus) for f in fams.values()
           if f.consensus]
    out.append(b">alpha_monomer Satellite/centr\n%s\n" % alpha)
    for name, _, features in plan:
        for start, length, spec in features:
            if spec[0] == "alpha_hor":
                out.append(b">%s_HOR Satellite/centr\n%s\n" % (name.encode(), make_hor(seed, spec[1])[0]))
                break
    return b"".join(out)


# ---------------------------------------------------------------------------------------------
# Sequence makers (run in the worker processes)

class Euchromatin:
    """Background of an isochore's GC with interspersed copies of the library's families."""

    def __init__(self, seed, gc):
        fams, _ = make_library(seed)
        self.fams = list(fams.values())
        weights = [f.share / f.mean_len * math.exp(0.8 * f.gc_bias * (gc - 0.41) / 0.05) for f in self.fams]
        self.cum = list(itertools.accumulate(weights))
        total_w = self.cum[-1]
        mean_rep = sum(w * f.mean_len for w, f in zip(weights, self.fams)) / total_w
        frac = sum(f.share for f in self.fams)
        rep_gc = sum(w * f.mean_len * f.gc for w, f in zip(weights, self.fams)) / (total_w * mean_rep)
        self.mean_gap = mean_rep * (1 - frac) / frac
        bg = (gc - frac * rep_gc) / (1 - frac)
        self.bg_gc = min(0.75, max(0.2, bg + cpg_loss(bg)))
        young = [(f, w) for f, w in zip(self.fams, weights) if f.div[1] <= 0.12 and f.name not in GENERATED]
        self.young = [f for f, _ in young]
        self.young_cum = list(itertools.accumulate(w for _, w in young))
        self.by_name = fams

    def make(self, rng, n, annotate):
        """n bases; records (offset, length, family, strand, div, cons_start, cons_end)."""
        bg = cpg_deplete(random_dna(rng, n, self.bg_gc))
        out, recs, pos = [], [], 0
        while True:
            g = int(rng.expovariate(1 / self.mean_gap))
            if pos + g >= n:
                break
            out.append(bg[pos:pos + g])
            pos += g
            fam = rng.choices(self.fams, cum_weights=self.cum)[0]
            parts = self.copy(rng, fam, nest=True)
            length = sum(len(p[0]) for p in parts)
            if pos + length > n:
                break
            for seq, rec in parts:
                if annotate and rec:
                    recs.append((pos,) + rec)
                pos += len(seq)
                out.append(seq)
        out.append(bg[pos:n])
        return b"".join(out), recs

    def copy(self, rng, fam, nest):
        """One insertion in genomic order: [(bases, (length, name, strand, div, cs, ce) or None)]."""
        div = rng.uniform(*fam.div)
        if fam.name in GENERATED:
            seq = mutate(rng, generated_repeat(rng, fam.name), div)
            return [(seq, (len(seq), fam.name, "+", div, -1, -1))]
        plus = rng.random() < 0.5
        a, b = fam.span(rng)
        if nest and div >= 0.12 and b - a > 100 and rng.random() < NEST_P:
            c = rng.randrange(a + 30, b - 30)
            inner = self.copy(rng, rng.choices(self.young, cum_weights=self.young_cum)[0], nest=False)
            left, right = self.piece(rng, fam, a, c, div, plus), self.piece(rng, fam, c, b, div, plus)
            return (left + inner + right) if plus else (right + inner + left)
        parts = self.piece(rng, fam, a, b, div, plus)
        if fam.name == "ERV1_int" and rng.random() < PROVIRUS_P:
            ltr = self.by_name["ERV1_LTR"]
            L = len(ltr.consensus)
            parts = self.piece(rng, ltr, 0, L, div, plus) + parts + self.piece(rng, ltr, 0, L, div, plus)
        return parts

    @staticmethod
    def piece(rng, fam, a, b, div, plus):
        seq = mutate(rng, fam.consensus[a:b], div)
        if not plus:
            seq = revcomp(seq)
        return [(seq, (len(seq), fam.name, "+" if plus else "-", div, a, b))]


def generated_repeat(rng, kind):
    """A microsatellite (unit 1-6 bp, 20-300 bp), a two-base low-complexity run (30-400 bp) or a
    minisatellite (unit 10-60 bp, 200-3000 bp)."""
    if kind == "simple":
        unit = random_dna(rng, rng.choice((1, 2, 2, 2, 3, 4, 4, 5, 6)), 0.4)
        n = min(300, 20 + int(rng.expovariate(1 / 50)))
    elif kind == "minisatellite":
        unit = random_dna(rng, rng.randint(10, 60), 0.55)
        n = rng.randint(200, 2000)
    else:
        pair = rng.choice((b"AG", b"AC", b"AT", b"CT", b"GT", b"AA", b"TT"))
        n = min(400, 30 + int(rng.expovariate(1 / 90)))
        return rng.randbytes(n).translate(bytes(pair[b & 1] for b in range(256)))
    return (unit * (n // len(unit) + 1))[:n]


@functools.lru_cache(maxsize=64)
def make_hor(seed, key):
    """A chromosome's HOR: 4-24 monomers, each 8-18 % from the alpha monomer; and the array's
    copy divergence."""
    _, alpha = make_library(seed)
    rng = rng_for(seed, "hor", key)
    hor = b"".join(substitute(rng, alpha, rng.uniform(0.08, 0.18)) for _ in range(rng.randint(4, 24)))
    return hor, rng.uniform(0.005, 0.015)


@functools.lru_cache(maxsize=64)
def make_hsat(seed, key):
    """An HSat2/3-like higher-order unit of 1-3 kbp: CATTC repeats 15-30 % diverged."""
    rng = rng_for(seed, "hsat", key)
    n = rng.randint(1000, 3000)
    return substitute(rng, (b"CATTC" * (n // 5 + 1))[:n], rng.uniform(0.15, 0.30))


def tandem(rng, unit, offset, n, div):
    """Bases [offset, offset + n) of a tandem array of `unit`, each base substituted at `div`
    (substitutions only, so copies stay in phase)."""
    phase = offset % len(unit)
    reps = (phase + n) // len(unit) + 1
    return substitute(rng, (unit * reps)[phase:phase + n], div)


def make_sequence(seed, spec, offset, n, annotate, piece):
    """Bases [offset, offset + n) of one feature; records for --bed-repeats."""
    kind = spec[0]
    rng = rng_for(seed, kind, *piece)
    if kind == "gap":
        return b"N" * n, []
    if kind in ("eu", "par"):
        return Euchromatin(seed, spec[2]).make(rng, n, annotate)
    if kind == "mito":
        return random_dna(rng, n, spec[2]), []
    if kind == "telomere":
        return tandem(rng, b"CCCTAA" if spec[2] == "p" else b"TTAGGG", offset, n, 0.005), []
    if kind == "alpha_hor":
        hor, div = make_hor(seed, spec[1])
        return tandem(rng, hor, offset, n, div), []
    if kind == "alpha_mono":
        return tandem(rng, make_library(seed)[1], offset, n, spec[2]), []
    if kind == "hsat":
        return tandem(rng, make_hsat(seed, spec[1]), offset, n, 0.03), []
    if kind == "segdup":
        _, fam, copy, length, gc, half, strand = spec
        anc, _ = Euchromatin(seed, gc).make(rng_for(seed, "sd", fam), length, False)
        crng = rng_for(seed, "sdcopy", fam, copy)
        seq = fit(mutate(crng, anc, half), length, crng)
        if strand == "-":
            seq = revcomp(seq)
        return seq[offset:offset + n], []
    raise ValueError(kind)


def make_unit(task):
    """One task: FASTA text of its bases (line breaks by contig position) and its records."""
    seed, width, contig_len, start, spec, offset, n, key, annotate = task
    seq, recs = make_sequence(seed, spec, offset, n, annotate, key)
    assert len(seq) == n, (spec, n, len(seq))
    first = width - start % width
    lines = [seq[:first]] + [seq[i:i + width] for i in range(first, n, width)]
    end = start + n
    text = b"\n".join(lines) + (b"\n" if end % width == 0 or end == contig_len else b"")
    return text, [(start + r[0],) + r[1:] for r in recs]


# ---------------------------------------------------------------------------------------------
# Plan (parent): contigs and their features

class Occupancy:
    """Sorted disjoint intervals of one chromosome."""

    def __init__(self):
        self.starts, self.ends = [], []

    def free(self, a, b, margin=1):
        i = bisect.bisect_left(self.starts, a)
        if i < len(self.starts) and self.starts[i] < b + margin:
            return False
        return not (i > 0 and self.ends[i - 1] + margin > a)

    def add(self, a, b):
        i = bisect.bisect_left(self.starts, a)
        self.starts.insert(i, a)
        self.ends.insert(i, b)


def poisson(rng, lam):
    k, t = 0, rng.expovariate(1)
    while t < lam:
        k += 1
        t += rng.expovariate(1)
    return k


def draw_gc(rng):
    _, lo, hi = rng.choices(ISOCHORES, weights=[w for w, _, _ in ISOCHORES])[0]
    return rng.uniform(lo, hi)


def sat_island(rng, key, length):
    kind = rng.choice(("hsat", "hsat", "alpha_mono"))
    return (kind, key, rng.uniform(0.08, 0.18)) if kind == "alpha_mono" else (kind, key)


def block(rng, key, length, scale):
    """N gaps <= MAX_GAP (scaled) separated by satellite islands of 20-200 kbp (scaled)."""
    out, left, i = [], length, 0
    while left > 0:
        g = min(left, max(1, int(rng.uniform(0.5, 1.0) * MAX_GAP * scale)))
        out.append((g, ("gap",)))
        left -= g
        if left <= 0:
            break
        isl = min(left, max(1, int(rng.uniform(20_000, 200_000) * scale)))
        out.append((isl, sat_island(rng, f"{key}.{i}", isl)))
        left -= isl
        i += 1
    if out[-1][1][0] == "gap" and len(out) > 1 and out[-1][0] < 2:  # keep gaps apart
        out[-2] = (out[-2][0] + out[-1][0], out[-2][1])
        out.pop()
    return out


def skeleton(rng, name, L, grch38_len, cen_mbp, block_mbp, where, s, par):
    """The chromosome's structure in order: [(length, spec)], arms as ("arm",) placeholders."""
    tel_gap = max(1, round(TEL_GAP * s))
    tel = max(1, int(rng.uniform(*TEL_RUN) * s))
    hor = int(min(6e6, max(5e5, rng.lognormvariate(math.log(2.5e6), 0.5))) * s)
    mono = [int(rng.uniform(5e4, 3e5) * s) for _ in range(2)]
    hsat = int(rng.uniform(1e5, 1e6) * s) if rng.random() < 0.5 else 0
    cen_gaps = [int(rng.uniform(1e4, 1e5) * s) if rng.random() < 0.5 else 0 for _ in range(2)]
    blk = int(block_mbp * 1e6 * s)
    cen = [(cen_gaps[0], ("gap",)), (mono[0], ("alpha_mono", name + ".p", rng.uniform(0.08, 0.18))),
           (hor, ("alpha_hor", name)), (mono[1], ("alpha_mono", name + ".q", rng.uniform(0.08, 0.18))),
           (hsat, ("hsat", name + ".cen")), (cen_gaps[1], ("gap",))]
    blk_parts = block(rng, name, blk, s) if blk else []
    pter = [(tel_gap, ("gap",)), (tel, ("telomere", name, "p"))]
    qter = [(tel, ("telomere", name, "q")), (tel_gap, ("gap",))]
    if name == "chrY" and par == "mask":
        pter = [(tel_gap + tel + int(PAR1 * s), ("gap",))]
    elif name in ("chrX", "chrY"):
        pter.append((int(PAR1 * s), ("par", "PAR1", 0.40)))
    cen_at = int(cen_mbp * 1e6 * L / grch38_len)
    fixed_p = sum(x for x, _ in pter) + (sum(x for x, _ in blk_parts) if where == "p" else 0)
    cen_len = sum(x for x, _ in cen)
    p_arm = max(0, cen_at - cen_len // 2 - fixed_p)
    parts = pter + (blk_parts if where == "p" else []) + [(p_arm, ("arm",))] + cen
    parts += blk_parts if where == "q" else []
    rest = L - sum(x for x, _ in parts) - sum(x for x, _ in qter) - (sum(x for x, _ in blk_parts) if where == "qter" else 0)
    if rest < 0:
        raise ValueError(f"{name}: {L} bp too short for its structure")
    parts.append((rest, ("arm",)))
    parts += (blk_parts if where == "qter" else []) + qter
    merged = []  # adjacent gaps become one, as an N run is one gap
    for x, sp in parts:
        if x > 0 and merged and sp[0] == "gap" == merged[-1][1][0]:
            merged[-1] = (merged[-1][0] + x, sp)
        elif x > 0:
            merged.append((x, sp))
    return merged


def contig_lengths(rng, total, n_unplaced):
    """[(name, length)]: chromosomes in GRCh38's proportions, chrM, unplaced; sum == total."""
    unplaced = [min(300_000, max(1_000, rng.lognormvariate(math.log(40_000), 1.0))) for _ in range(n_unplaced)]
    budget = 0.004 * total
    if sum(unplaced) > budget:
        unplaced = [x * budget / sum(unplaced) for x in unplaced]
    unplaced = [max(50, int(x)) for x in unplaced]
    chrm = min(CHRM, max(50, total // 1000))
    left = total - chrm - sum(unplaced)
    ref = sum(r[1] for r in GRCH38)
    chroms = [left * r[1] // ref for r in GRCH38]
    for i in range(left - sum(chroms)):
        chroms[i] += 1
    names = [r[0] for r in GRCH38] + ["chrM"] + [f"chrUn_syn{i + 1:04d}" for i in range(n_unplaced)]
    return list(zip(names, chroms + [chrm] + unplaced))


def place_gaps(rng, arms, occ, L, per_mbp):
    """Assembly gaps: Poisson per arm, log-normal sizes (median 50 kbp) in [10 kbp, 3 Mbp]."""
    out = []
    for a, b in arms:
        for _ in range(poisson(rng, per_mbp * (b - a) / 1e6)):
            size = int(min(MAX_GAP, max(10_000, rng.lognormvariate(math.log(50_000), 1.0)), FEATURE_CAP * L))
            if size < 1 or b - a < size + 2:
                continue
            x = rng.randrange(a + 1, b - size)
            if occ.free(x, x + size):
                occ.add(x, x + size)
                out.append((x, size, ("gap",)))
    return out


def place_segdups(rng, chroms, total, o):
    """SD families until o.sd_frac of the genome is covered: [(chrom index, start, length, spec)]."""
    out, covered, fam, tries = [], 0, 0, 0
    weights = [L for _, L, _, _ in chroms]
    while covered < o.sd_frac * total and tries < 20 * (fam + 10):
        tries += 1
        n = rng.choices((2, 3, 4, 5), weights=(70, 20, 6, 4))[0]
        first = rng.choices(range(len(chroms)), weights=weights)[0]
        where = [first] + [first if rng.random() < 0.6 else rng.choices(range(len(chroms)), weights=weights)[0]
                           for _ in range(n - 1)]
        size = math.exp(rng.uniform(math.log(o.sd_min), math.log(o.sd_max)))
        size = int(min(size, FEATURE_CAP * min(chroms[c][1] for c in where)))
        if size < 100:
            continue
        spots = []
        for c in where:
            _, L, arms, occ = chroms[c]
            for _ in range(20):
                a, b = rng.choices(arms, weights=[y - x for x, y in arms])[0]
                if b - a < size + 2:
                    continue
                if rng.random() < 0.5:  # near the arm's end: a centromere or a telomere
                    near = min(b - a - size - 1, int(0.05 * L))
                    x = a + 1 + rng.randrange(near + 1) if rng.random() < 0.5 else b - size - 1 - rng.randrange(near + 1)
                else:
                    x = rng.randrange(a + 1, b - size)
                if occ.free(x, x + size) and all(not (cc == c and abs(xx - x) < size + 1) for cc, xx in spots):
                    spots.append((c, x))
                    break
        if len(spots) < 2:
            continue
        gc, half = draw_gc(rng), rng.uniform(o.sd_div[0], o.sd_div[1]) / 2
        for k, (c, x) in enumerate(spots):
            chroms[c][3].add(x, x + size)
            strand = "-" if rng.random() < 0.4 else "+"
            out.append((c, x, size, ("segdup", fam, k, size, gc, half, strand)))
        covered += size * len(spots)
        fam += 1
    return out


def fill_isochores(rng, a, b, key):
    """Euchromatin over [a, b): isochores of log-normal length (median 300 kbp, 50 kbp-3 Mbp)."""
    out = []
    while a < b:
        n = int(min(3e6, max(5e4, rng.lognormvariate(math.log(3e5), 0.7))))
        n = b - a if b - a < n + 5e4 else n
        out.append((a, n, ("eu", f"{key}.{a}", draw_gc(rng))))
        a += n
    return out


def make_plan(seed, total, o):
    """[(contig, length, [(start, length, spec)])] covering every base exactly once."""
    rng = rng_for(seed, "plan")
    n_unplaced = o.unplaced if o.unplaced is not None else max(20, round(170 * total / HUMAN_BP))
    lengths = contig_lengths(rng, total, n_unplaced)
    s = total / HUMAN_BP
    table = {r[0]: r for r in GRCH38}
    plan, chroms = [], []
    for name, L in lengths:
        if name == "chrM":
            plan.append((name, L, [(0, L, ("mito", name, 0.44))]))
            continue
        if name not in table:
            spec = sat_island(rng, name, L) if rng.random() < 0.5 else ("eu", name, draw_gc(rng))
            plan.append((name, L, [(0, L, spec)]))
            continue
        _, ref_len, cen, blk, where = table[name]
        feats, arms, x = [], [], 0
        for n, spec in skeleton(rng, name, L, ref_len, cen, blk, where, s, o.par):
            (arms if spec[0] == "arm" else feats).append((x, n) if spec[0] == "arm" else (x, n, spec))
            x += n
        occ = Occupancy()
        feats += place_gaps(rng, arms, occ, L, o.gaps_per_mbp)
        plan.append((name, L, feats))
        chroms.append((name, L, [(a, a + n) for a, n in arms], occ))
    by_name = {p[0]: p for p in plan}
    for c, x, size, spec in place_segdups(rng, chroms, total, o):
        by_name[chroms[c][0]][2].append((x, size, spec))
    for name, L, arms, occ in chroms:
        feats = by_name[name][2]
        for a, b in arms:
            for s0, e0 in zip([a] + occ.ends, occ.starts + [b]):
                lo, hi = max(a, s0), min(b, e0)
                if lo < hi:
                    feats += fill_isochores(rng, lo, hi, name)
        feats.sort(key=lambda f: f[0])
    for name, L, feats in plan:
        assert sum(f[1] for f in feats) == L and all(
            f[0] + f[1] == g[0] for f, g in zip(feats, feats[1:])), name
    return plan


def feature_record(seed, contig, start, n, spec):
    kind, strand, div = spec[0], "+", "."
    if kind == "gap":
        name = "N"
    elif kind == "telomere":
        name = "(CCCTAA)n" if spec[2] == "p" else "(TTAGGG)n"
    elif kind == "alpha_hor":
        name, div = spec[1] + "_HOR", "%.4f" % make_hor(seed, spec[1])[1]
    elif kind == "alpha_mono":
        name, div = "alpha_monomer", "%.4f" % spec[2]
    elif kind == "hsat":
        name = "HSat"
    elif kind == "segdup":
        name, strand, div = f"SD{spec[1]}.{spec[2]}", spec[6], "%.4f" % (2 * spec[5])
    elif kind in ("eu", "mito", "par"):
        kind, name = ("par" if kind == "par" else "isochore"), "gc=%.4f" % spec[2]
    else:
        raise ValueError(kind)
    return f"{contig}\t{start}\t{start + n}\t{kind}\t{name}\t{strand}\t{div}\t.\t.\n"


def tasks(seed, plan, width, annotate):
    """(contig header or None, BED line of the feature or None, task) in output order."""
    for name, L, feats in plan:
        header = f">{name} synthetic human-like seed={seed}\n".encode()
        for start, n, spec in feats:
            key = "PAR1" if spec[0] == "par" else f"{name}:{start}"
            bed = feature_record(seed, name, start, n, spec)
            for off in range(0, n, UNIT):
                yield header, bed, (seed, width, L, start + off, spec, off, min(UNIT, n - off), (key, off), annotate)
                header = bed = None


def record_line(contig_of, r):
    pos, length, name, strand, div, cs, ce = r
    cons = ("%d\t%d" % (cs, ce)) if cs >= 0 else ".\t."
    return f"{contig_of}\t{pos}\t{pos + length}\trepeat\t{name}\t{strand}\t{div:.4f}\t{cons}\n"


def generate(o):
    """Writes o.out (FASTA), o.bed and o.library if given."""
    total = o.total
    plan = make_plan(o.seed, total, o)
    if o.library:
        with open(o.library, "wb") as f:
            f.write(library_fasta(o.seed, plan))
    annotate = bool(o.bed and o.bed_repeats)
    fa = open(o.out, "wb", buffering=1 << 22)
    bed = open(o.bed, "w", buffering=1 << 20) if o.bed else None
    contig = None

    def emit(header, bed_line, result):
        nonlocal contig
        if header:
            fa.write(header)
            contig = header[1:].split()[0].decode()
        fa.write(result[0])
        if bed:
            if bed_line:
                bed.write(bed_line)
            bed.writelines(record_line(contig, r) for r in result[1])

    if bed:
        bed.write("#contig\tstart\tend\tkind\tname\tstrand\tdivergence\tcons_start\tcons_end\n")
    if o.procs <= 1:
        for header, bed_line, task in tasks(o.seed, plan, o.width, annotate):
            emit(header, bed_line, make_unit(task))
    else:
        with multiprocessing.Pool(o.procs) as pool:
            pending = collections.deque()
            for header, bed_line, task in tasks(o.seed, plan, o.width, annotate):
                pending.append((header, bed_line, pool.apply_async(make_unit, (task,))))
                if len(pending) >= 3 * o.procs:
                    h, b, r = pending.popleft()
                    emit(h, b, r.get())
            while pending:
                h, b, r = pending.popleft()
                emit(h, b, r.get())
    fa.close()
    if bed:
        bed.close()
    print(f"human: {total} bp in {len(plan)} contigs, seed {o.seed} -> {o.out}", file=sys.stderr)
