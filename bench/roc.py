#!/usr/bin/env python3
"""Mapping accuracy against a read simulator's truth alignments (mason_simulator -oa), measured as
minimap2's `paftools.js mapeval` measures it; standard library only.

  roc.py --truth TRUTH.sam [--overlap 0.1] [--json OUT.json] TOOL=FILE.sam|FILE.bam [TOOL=FILE ...]

Truth: TRUTH.sam holds one record per simulated read (mason's alignment of the read to the
reference it was simulated from, through the variants), found by read name: its contig, strand
(flag 0x10) and reference interval [POS, POS + the CIGAR's reference length), where M, D, N, =
and X consume the reference. A read carries an indel when its truth CIGAR holds an I or a D
(a small indel of mason_variator or a sequencing indel of mason_simulator).

Tools: primary records only (flag 0x100, secondary, and 0x800, supplementary, are skipped), BAM
and CRAM read through `samtools view`. A read of the truth without a primary record in a tool's
file counts as unmapped; records of reads the truth lacks are counted (`unknown`) and ignored.

Correct, as mapeval's is_correct: mapped (flag 0x4 clear, RNAME not '*') to the truth's contig
on its strand, with the aligned reference interval [POS, POS + the CIGAR's reference length)
overlapping the true interval by more than OVERLAP (default 0.1, mapeval's -r) of the two
intervals' union. Wrong: mapped and not correct. MAPQ above 60 counts as 60, as in mapeval.
(mapeval's default, -m 0, judges a read by the longest of its non-secondary records; here it is
the primary, the record that carries the read's MAPQ.)

Per tool, over all N reads of the truth: mapped and correct fractions; for each MAPQ threshold q
in 60, 40, 20, 10, 1, 0 the fraction of the N reads mapped with MAPQ >= q and the fraction wrong
among those (the ROC table); the correct fraction of the reads that carry an indel; and the count
of mapped and wrong reads at every MAPQ (for the ROC curve of plot_roc.py).
"""
import argparse
import json
import multiprocessing
import re
import subprocess
import sys

THRESHOLDS = (60, 40, 20, 10, 1, 0)
MAX_MAPQ = 60
CIGAR_OP = re.compile(r"(\d+)([MIDNSHP=X])")

_reference_lengths = {}


def reference_length(cigar):
    """Reference bases a CIGAR spans (M, D, N, = and X); 0 for '*'. Memoised: reads of one length
    share few CIGARs."""
    n = _reference_lengths.get(cigar)
    if n is None:
        n = sum(int(k) for k, op in CIGAR_OP.findall(cigar) if op in "MDN=X")
        _reference_lengths[cigar] = n
    return n


def sam_lines(path):
    """The alignment lines of a SAM file, or of a BAM/CRAM file through `samtools view`."""
    if path.endswith((".bam", ".cram")):
        with subprocess.Popen(["samtools", "view", path], stdout=subprocess.PIPE, text=True, bufsize=1 << 20) as proc:
            yield from proc.stdout
        if proc.returncode != 0:
            raise RuntimeError(f"samtools view {path} failed")
    else:
        with open(path, buffering=1 << 20) as f:
            for line in f:
                if not line.startswith("@"):
                    yield line


def read_truth(path):
    """{read name: (contig, reverse, begin, end, carries an indel)} of TRUTH.sam's primary records."""
    truth = {}
    for line in sam_lines(path):
        f = line.split("\t", 6)
        flag = int(f[1])
        if flag & 0x904:
            continue
        begin = int(f[3]) - 1
        truth[f[0]] = (sys.intern(f[2]), bool(flag & 0x10), begin, begin + reference_length(f[5]),
                       "I" in f[5] or "D" in f[5])
    return truth


def overlaps(true_begin, true_end, begin, end, ratio):
    """mapeval's test: the intervals' overlap is more than `ratio` of their union."""
    overlap = min(true_end, end) - max(true_begin, begin)
    if overlap <= 0:
        return False
    return overlap / (max(true_end, end) - min(true_begin, begin)) > ratio


def evaluate(path, truth, ratio):
    """Counts of one tool's file against the truth (see the module's docstring)."""
    n = len(truth)
    seen = set()
    mapped_at = [0] * (MAX_MAPQ + 1)  # mapped reads by MAPQ
    wrong_at = [0] * (MAX_MAPQ + 1)
    unknown = duplicates = indel_correct = 0
    for line in sam_lines(path):
        f = line.split("\t", 6)
        flag = int(f[1])
        if flag & 0x900:
            continue
        t = truth.get(f[0])
        if t is None:
            unknown += 1
            continue
        if f[0] in seen:
            duplicates += 1
            continue
        seen.add(f[0])
        if flag & 0x4 or f[2] == "*":
            continue
        q = min(int(f[4]), MAX_MAPQ)
        begin = int(f[3]) - 1
        ok = f[2] == t[0] and bool(flag & 0x10) == t[1] and \
            overlaps(t[2], t[3], begin, begin + reference_length(f[5]), ratio)
        mapped_at[q] += 1
        wrong_at[q] += not ok
        indel_correct += ok and t[4]
    indel_reads = sum(1 for t in truth.values() if t[4])
    mapped = sum(mapped_at)
    wrong = sum(wrong_at)
    roc = []
    for q in THRESHOLDS:
        m, w = sum(mapped_at[q:]), sum(wrong_at[q:])
        roc.append({"mapq": q, "mapped": m, "wrong": w, "mapped_fraction": m / n if n else None,
                    "wrong_fraction": w / m if m else None})
    return {
        "file": path, "reads": n, "records": len(seen), "missing": n - len(seen), "unknown": unknown,
        "duplicates": duplicates, "mapped": mapped, "correct": mapped - wrong,
        "mapped_fraction": mapped / n if n else None, "correct_fraction": (mapped - wrong) / n if n else None,
        "indel_reads": indel_reads, "indel_correct": indel_correct,
        "indel_correct_fraction": indel_correct / indel_reads if indel_reads else None,
        "roc": roc,
        "mapq_counts": [[q, mapped_at[q], wrong_at[q]] for q in range(MAX_MAPQ, -1, -1) if mapped_at[q]],
    }


_TRUTH = None  # the truth of a run, shared with the workers by fork


def _evaluate_job(job):
    tool, path, ratio = job
    return tool, evaluate(path, _TRUTH, ratio)


def evaluate_all(truth_path, runs, ratio):
    """{'reads', 'indel_reads', 'overlap', 'tools': {tool: evaluate(...)}} for runs [(tool, path)]."""
    global _TRUTH
    _TRUTH = read_truth(truth_path)
    jobs = [(tool, path, ratio) for tool, path in runs]
    if len(jobs) > 1 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(min(len(jobs), 8)) as pool:
            results = dict(pool.map(_evaluate_job, jobs))
    else:
        results = dict(map(_evaluate_job, jobs))
    indel_reads = sum(1 for t in _TRUTH.values() if t[4])
    return {"truth": truth_path, "reads": len(_TRUTH), "indel_reads": indel_reads, "overlap": ratio,
            "tools": {tool: results[tool] for tool, _ in runs}}


def percent(x, digits=2):
    return "-" if x is None else f"{100 * x:.{digits}f}"


def print_table(res, out=sys.stdout):
    tools = res["tools"]
    print(f"{res['reads']} reads ({res['indel_reads']} with an indel in their truth); correct = truth's contig and "
          f"strand, reference intervals overlapping by > {res['overlap']} of their union (mapeval)", file=out)
    head = f"{'tool':10} {'mapped%':>8} {'correct%':>9} {'indel correct%':>15}"
    head += "".join(f" {f'Q>={q} mapped%/wrong%':>22}" for q in THRESHOLDS)
    print(head, file=out)
    for tool, r in tools.items():
        line = f"{tool:10} {percent(r['mapped_fraction']):>8} {percent(r['correct_fraction'], 3):>9} " \
               f"{percent(r['indel_correct_fraction']):>15}"
        for row in r["roc"]:
            line += f" {percent(row['mapped_fraction']) + '/' + percent(row['wrong_fraction'], 4):>22}"
        print(line, file=out)
        if r["missing"] or r["unknown"] or r["duplicates"]:
            print(f"  {tool}: {r['missing']} reads without a primary record (unmapped), {r['unknown']} records of "
                  f"reads not in the truth, {r['duplicates']} extra primary records", file=out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--truth", required=True, help="the simulator's SAM (mason_simulator -oa)")
    p.add_argument("--overlap", type=float, default=0.1, help="mapeval's -r [0.1]")
    p.add_argument("--json", default=None)
    p.add_argument("runs", nargs="+", help="TOOL=FILE.sam|FILE.bam")
    a = p.parse_args()
    runs = []
    for r in a.runs:
        tool, sep, path = r.partition("=")
        if not sep or not tool or not path:
            p.error(f"not TOOL=FILE: {r}")
        runs.append((tool, path))
    res = evaluate_all(a.truth, runs, a.overlap)
    print_table(res)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
