#!/usr/bin/env python3
"""Accuracy of aligners on simulated reads whose names carry the truth (bench/gen_data.py art2fq:
<index>|<contig>|<1-based leftmost forward position>|<+/->|<mismatches, -1 with indels>).

  evaluate.py --k K [--tol 5] [--json OUT.json] TOOL=FILE.sam|FILE.bam [TOOL=FILE ...]

Per tool, over the primary records (flags 0x100 and 0x800 skipped; BAM is read through
`samtools view`): mapped fraction; correct fraction (same contig, same strand, leftmost position
within --tol bp of the truth); for MAPQ >= 0, 1, 10, 20, 30 the fractions of all reads reported
and reported correctly at that MAPQ; and the recall of the reads whose true placement has at
most K mismatches and no indel: found = the primary record is correct, or the truth is listed
in XA, or the primary hit has at most as many mismatches (NM) as the truth (an equally good
placement elsewhere: a repeat). Expected correct removes the luck of tie-breaking: a primary with
X0 > 1 (equally good best hits, one reported by a random or hash choice) counts p = (correct best
hits) / X0 instead of its 0/1 outcome, the best hits being the primary and the XA entries with its
NM when they number X0, else p = 1/X0 if the truth's mismatch count equals NM and 0 if not; every
other record counts its 0/1 outcome. It is reported with its SD in reads, sqrt(sum p(1-p)), and the
number of tie reads (X0 > 1). Standard library only.
"""
import argparse
import json
import math
import sys
from multiprocessing import Pool

from roc import sam_lines as records  # SAM lines, BAM/CRAM through samtools view

MAPQS = (0, 1, 10, 20, 30)


def tag(tags, key):
    """The value of the optional field `key` ("NM:i:") in a record's tab-separated optional fields, or None."""
    i = tags.find(key)
    return None if i < 0 else tags[i + len(key):].split("\t", 1)[0].rstrip("\n")


def expected_ok(ok, hit, nm, x0, xa, truth, tmm, tol):
    """Expected correctness of a primary record under a uniform choice among its X0 best hits.

    ok: the record's 0/1 outcome; hit: its (contig, reverse, leftmost pos); truth: the same for the
    true placement; tmm: the true mismatch count (-1 with indels). X0 <= 1 or no X0: ok."""
    if x0 is None or x0 <= 1:
        return float(ok)
    hits = {hit}
    if xa is not None and nm is not None:
        for alt in xa.split(";"):
            a = alt.split(",")  # chr,+-pos,CIGAR,NM
            if len(a) >= 4 and a[1] and int(a[3]) == nm:
                hits.add((a[0], a[1][0] == "-", int(a[1][1:])))
    if len(hits) >= x0:  # XA lists every best hit (more than X0 would be inconsistent tags: trust the list)
        return sum(c == truth[0] and r == truth[1] and abs(q - truth[2]) <= tol for c, r, q in hits) / len(hits)
    # XA absent or incomplete: the truth is one of the best hits exactly when its mismatch count equals
    # theirs, and then it is the only correct one (a brute-force search of the genome confirmed this on
    # the E. coli ART reads for every tie read but 2 of 18,062: bench/history/RESULTS-2026-11-26.md,
    # "The correct fraction without tie-break luck"), so p = 1/X0, else 0. Indel reads (tmm -1) and records
    # without NM are unknown: their actual outcome.
    if tmm < 0 or nm is None:
        return float(ok)
    return 1 / x0 if tmm == nm else 0.0


def evaluate(args):
    tool, path, k, tol = args
    n = mapped = correct = le_k_total = le_k_found = tie_reads = 0
    expected = variance = 0.0
    rep = dict.fromkeys(MAPQS, 0)
    cor = dict.fromkeys(MAPQS, 0)
    seen = set()
    for line in records(path):
        f = line.split("\t", 11)
        flag = int(f[1])
        if flag & 0x900:
            continue
        name = f[0]
        if name in seen:
            continue
        seen.add(name)
        contig, tpos, tstrand, tmm = name.split("|", 1)[1].rsplit("|", 3)
        tpos, tmm = int(tpos), int(tmm)
        n += 1
        is_mapped = not flag & 4
        ok = False
        nm = None
        p = 0.0
        tags = f[11] if len(f) > 11 else ""
        if is_mapped:
            mapped += 1
            rev = bool(flag & 16)
            pos = int(f[3])
            ok = f[2] == contig and rev == (tstrand == "-") and abs(pos - tpos) <= tol
            mapq = int(f[4])
            for q in MAPQS:
                if mapq >= q:
                    rep[q] += 1
                    cor[q] += ok
            correct += ok
            nm = tag(tags, "NM:i:")
            nm = None if nm is None else int(nm)
            x0 = tag(tags, "X0:i:")
            x0 = None if x0 is None else int(x0)
            tie_reads += x0 is not None and x0 > 1
            p = expected_ok(ok, (f[2], rev, pos), nm, x0, tag(tags, "XA:Z:"), (contig, tstrand == "-", tpos), tmm, tol)
        expected += p
        variance += p * (1 - p)
        if 0 <= tmm <= k:
            le_k_total += 1
            found = ok
            if not found and is_mapped:
                i = tags.find("XA:Z:")
                if i >= 0:
                    for alt in tags[i + 5:].split("\t", 1)[0].rstrip("\n").split(";"):
                        p = alt.split(",")
                        if len(p) >= 2 and p[0] == contig and p[1] and (p[1][0] == "-") == (tstrand == "-") \
                                and abs(int(p[1][1:]) - tpos) <= tol:
                            found = True
                            break
                if not found and nm is not None and nm <= tmm:
                    found = True
            le_k_found += found
    d = max(n, 1)
    return tool, {
        "file": path, "reads": n, "mapped": mapped / d, "correct": correct / d,
        "by_mapq": {str(q): {"fraction": rep[q] / d, "correct": cor[q] / d,
                             "precision": cor[q] / rep[q] if rep[q] else None} for q in MAPQS},
        "le_k_total": le_k_total, "le_k_found": le_k_found,
        "recall_le_k": le_k_found / le_k_total if le_k_total else None,
        "expected_correct": expected / d, "expected_correct_sd_reads": math.sqrt(variance), "tie_reads": tie_reads,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--tol", type=int, default=5)
    p.add_argument("--json", default=None)
    p.add_argument("runs", nargs="+", help="TOOL=FILE")
    a = p.parse_args()
    jobs = [(r.split("=", 1)[0], r.split("=", 1)[1], a.k, a.tol) for r in a.runs]
    with Pool(min(len(jobs), 8)) as pool:
        results = dict(pool.map(evaluate, jobs))
    reads = max(r["reads"] for r in results.values())
    out = {"k": a.k, "tolerance": a.tol, "reads": reads, "tools": results}
    recs = {tool: "-" if r["recall_le_k"] is None else f"{100 * r['recall_le_k']:.3f}% ({r['le_k_found']}/{r['le_k_total']})"
            for tool, r in results.items()}
    w = max(len(f"recall<={a.k}mm"), *map(len, recs.values()))
    # expected correct (ties counted as correct best hits / X0) next to the actual count, both in reads
    hdr = f"{'tool':10} {'reads':>9} {'mapped%':>8} {'correct%':>9} " + " ".join(f"q>={q:<2} c/r%".rjust(14) for q in MAPQS) + f"  {f'recall<={a.k}mm':{w}}" \
        + f"  {'correct_n':>9} {'expected_n':>10} {'sd_n':>6} {'expected%':>9} {'tie_reads':>9}"
    print(hdr)
    for tool, r in results.items():
        cols = " ".join(f"{100 * r['by_mapq'][str(q)]['correct']:.2f}/{100 * r['by_mapq'][str(q)]['fraction']:.2f}".rjust(14) for q in MAPQS)
        exp = f"{round(r['correct'] * r['reads']):>9} {r['expected_correct'] * r['reads']:>10.1f} {r['expected_correct_sd_reads']:>6.1f} " \
            f"{100 * r['expected_correct']:>9.4f} {r['tie_reads']:>9}"
        print(f"{tool:10} {r['reads']:>9} {100 * r['mapped']:>8.2f} {100 * r['correct']:>9.2f} {cols}  {recs[tool]:{w}}  {exp}")
        if r["reads"] != reads:
            print(f"  warning: {tool} has {r['reads']} primary records, expected {reads}", file=sys.stderr)
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
