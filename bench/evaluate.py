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
placement elsewhere: a repeat). Standard library only.
"""
import argparse
import json
import subprocess
import sys
from multiprocessing import Pool

MAPQS = (0, 1, 10, 20, 30)


def records(path):
    if path.endswith(".bam") or path.endswith(".cram"):
        proc = subprocess.Popen(["samtools", "view", path], stdout=subprocess.PIPE, text=True, bufsize=1 << 20)
        yield from proc.stdout
        if proc.wait() != 0:
            raise RuntimeError(f"samtools view {path} failed")
    else:
        with open(path, buffering=1 << 20) as f:
            for line in f:
                if not line.startswith("@"):
                    yield line


def evaluate(args):
    tool, path, k, tol = args
    n = mapped = correct = le_k_total = le_k_found = 0
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
        tags = f[11] if len(f) > 11 else ""
        if is_mapped:
            mapped += 1
            rev = bool(flag & 16)
            ok = f[2] == contig and rev == (tstrand == "-") and abs(int(f[3]) - tpos) <= tol
            mapq = int(f[4])
            for q in MAPQS:
                if mapq >= q:
                    rep[q] += 1
                    cor[q] += ok
            correct += ok
            i = tags.find("NM:i:")
            if i >= 0:
                nm = int(tags[i + 5:].split("\t", 1)[0])
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
    hdr = f"{'tool':10} {'reads':>9} {'mapped%':>8} {'correct%':>9} " + " ".join(f"q>={q:<2} c/r%".rjust(14) for q in MAPQS) + f"  recall<={a.k}mm"
    print(hdr)
    for tool, r in results.items():
        cols = " ".join(f"{100 * r['by_mapq'][str(q)]['correct']:.2f}/{100 * r['by_mapq'][str(q)]['fraction']:.2f}".rjust(14) for q in MAPQS)
        rec = "-" if r["recall_le_k"] is None else f"{100 * r['recall_le_k']:.3f}% ({r['le_k_found']}/{r['le_k_total']})"
        print(f"{tool:10} {r['reads']:>9} {100 * r['mapped']:>8.2f} {100 * r['correct']:>9.2f} {cols}  {rec}")
        if r["reads"] != reads:
            print(f"  warning: {tool} has {r['reads']} primary records, expected {reads}", file=sys.stderr)
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
