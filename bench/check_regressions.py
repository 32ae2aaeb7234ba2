#!/usr/bin/env python3
"""Did a change make wtmap slower or less accurate? Compares a harness run's JSON with a recorded
one (run-aligner.sh's aligner.json, run-gapped.sh's gapped.json / paired.json; the recorded ones
live in bench/results/).

  check_regressions.py RECORDED.json NEW.json [--tolerance 0.15]

Runs are matched by their folder name (genome, read length, read count: the same reads). Hosts
differ from run to run, so speed is compared as a ratio to a baseline timed in the same run on the
same host: for each wtmap step (labels search/wtmap*, align/wtmap*, io/floor) its speed against
`bwa mem` where the run has it, else `bwa aln`; a step whose ratio fell by more than the tolerance
is a regression. Accuracy, where the run holds roc.py's results (run-gapped.sh): wtmap's correct
reads and, at every MAPQ threshold, its wrong reads, compared as counts (the same reads): fewer
correct or more wrong is a regression. Steps or runs only one side has are listed, not judged.
Exit status 1 if anything regressed. Standard library only.
"""
import argparse
import json
import sys

BASELINES = ("align/bwa_mem", "align/bwa_aln")


def is_wtmap_step(label):
    return label.startswith(("search/wtmap", "align/wtmap", "io/floor"))


def wall(measure, label):
    m = measure.get(label)
    if not m or str(m.get("rc", "0")) != "0":
        return None
    w = m.get("wall_s")
    return float(w) if w else None


def ratios(measure):
    """{wtmap step: baseline wall / step wall} against the first baseline the run timed."""
    base = next((b for b in BASELINES if wall(measure, b)), None)
    if base is None:
        return None, {}
    b = wall(measure, base)
    return base, {label: b / wall(measure, label) for label in measure if is_wtmap_step(label) and wall(measure, label)}


def accuracy(run):
    """(correct, {mapq: wrong}) of wtmap from roc.py's results, or None."""
    tool = ((run.get("roc") or {}).get("tools") or {}).get("wtmap")
    if not tool:
        return None
    return tool.get("correct"), {r["mapq"]: r["wrong"] for r in tool.get("roc", [])}


def compare(recorded, new, tolerance):
    """Lines of the report, and whether anything regressed."""
    lines, regressed = [], False
    old_runs = {r["dir"]: r for r in recorded.get("runs", [])}
    for run in new.get("runs", []):
        old = old_runs.pop(run["dir"], None)
        if old is None:
            lines.append(f"{run['dir']}: not in the recorded file (not judged)")
            continue
        base_old, before = ratios(old.get("measure", {}))
        base_new, after = ratios(run.get("measure", {}))
        for label in sorted(set(before) | set(after)):
            if label not in before or label not in after or base_old != base_new:
                lines.append(f"{run['dir']} {label}: only one side has it against {base_new or base_old} (not judged)")
                continue
            change = after[label] / before[label] - 1
            bad = change < -tolerance
            regressed |= bad
            lines.append(f"{run['dir']} {label}: {before[label]:.3g}x -> {after[label]:.3g}x {base_new} "
                         f"({change:+.1%}){'  REGRESSION' if bad else ''}")
        acc_old, acc_new = accuracy(old), accuracy(run)
        if acc_old and acc_new:
            bad = acc_new[0] < acc_old[0]
            regressed |= bad
            lines.append(f"{run['dir']} correct reads: {acc_old[0]} -> {acc_new[0]}{'  REGRESSION' if bad else ''}")
            for q in sorted(set(acc_old[1]) & set(acc_new[1]), reverse=True):
                bad = acc_new[1][q] > acc_old[1][q]
                regressed |= bad
                if bad or acc_new[1][q] != acc_old[1][q]:
                    lines.append(f"{run['dir']} wrong at MAPQ >= {q}: {acc_old[1][q]} -> {acc_new[1][q]}"
                                 f"{'  REGRESSION' if bad else ''}")
    for d in old_runs:
        lines.append(f"{d}: only in the recorded file (not judged)")
    return lines, regressed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("recorded")
    p.add_argument("new")
    p.add_argument("--tolerance", type=float, default=0.15,
                   help="a speed ratio may fall by this share before it counts (default 0.15: runs of one "
                        "command on one host spread by up to about that, bench/history/RESULTS-2026-11-26.md)")
    a = p.parse_args(argv)
    with open(a.recorded) as f:
        recorded = json.load(f)
    with open(a.new) as f:
        new = json.load(f)
    lines, regressed = compare(recorded, new, a.tolerance)
    print("\n".join(lines))
    print("regressions found" if regressed else "no regression")
    return 1 if regressed else 0


if __name__ == "__main__":
    sys.exit(main())
