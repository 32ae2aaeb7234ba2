#!/usr/bin/env python3
"""Tables of bench/run-gapped.sh and its section for bench/RESULTS.md (standard library only).

  report_gapped.py WORK OUT           WORK/gapped-*/ (meta.json, measure.tsv, search.json, roc.json)
  report_gapped.py --section GAPPED.json [--command CMD]

The first form prints the speeds, the accuracy (bench/roc.py's ROC table) and issue 25's targets of
every run (the harness tees them to gapped.txt) and writes OUT/gapped.json and OUT/gapped-section.md.
The second prints that Markdown section again from a gapped.json, e.g. with the command line that
produced the run. Speeds are time ratios on the same reads and host: `x bwa mem` = the wall time
of `bwa mem -t T` over the run's (search only: the median pass of bench_gapped_search; wtmap align
and its I/O floor: the median of their repeats); `x bowtie2` the same against bowtie2-align-s -p T.
"""
import argparse
import glob
import json
import os
import sys

from report import fmt, ok, read_tsv, spread, table, with_medians

# Issue 25's targets.
GOALS = {"e2e_x_bwa_mem": 5.0, "search_x_bwa_mem": 50.0, "e2e_share_of_io_floor": 0.70, "indel_correct": 0.98}
TOOLS = ("wtmap", "bwa_mem", "bowtie2", "bwa_aln")
TOOL_NAMES = {"wtmap": "wtmap", "bwa_mem": "bwa mem", "bowtie2": "bowtie2", "bwa_aln": "bwa aln"}
GENOME_NAMES = {"ecoli": "E. coli"}


def load_run(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    measure = with_medians(read_tsv(os.path.join(d, "measure.tsv")))
    def optional(name):
        p = os.path.join(d, name)
        return json.load(open(p)) if os.path.exists(p) else {}
    left_out = os.path.join(d, "left-out.txt")  # tools skipped, not found or without an index
    return {"dir": os.path.basename(d), "meta": meta, "measure": measure, "search": optional("search.json"),
            "roc": optional("roc.json"),
            "left_out": open(left_out).read().strip() if os.path.exists(left_out) else ""}


def wall(m, label):
    r = m.get(label)
    return r["wall_s"] if ok(r) else None


def speeds(run):
    """{name: seconds} of the run's timed steps that succeeded (bwa aln + samse summed)."""
    m = run["measure"]
    s = {"search": run["search"].get("search_s"), "e2e": wall(m, "align/wtmap_e2e"), "sam": wall(m, "align/wtmap_sam"),
         "floor": wall(m, "io/floor"), "bwa_mem": wall(m, "align/bwa_mem"), "bowtie2": wall(m, "align/bowtie2"),
         "bwa_aln": wall(m, "align/bwa_aln"), "bwa_samse": wall(m, "align/bwa_samse")}
    s["bwa_aln_samse"] = s["bwa_aln"] + s["bwa_samse"] if s["bwa_aln"] and s["bwa_samse"] else None
    return s


def targets(run, s):
    """Issue 25's targets for one run: {key: value} (None where a number is missing)."""
    tools = run["roc"].get("tools", {})
    w, b = tools.get("wtmap"), tools.get("bwa_mem")
    m = run["measure"]
    t = {"search_x_bwa_mem": s["bwa_mem"] / s["search"] if s["bwa_mem"] and s["search"] else None,
         "e2e_x_bwa_mem": s["bwa_mem"] / s["e2e"] if s["bwa_mem"] and s["e2e"] else None,
         "e2e_share_of_io_floor": s["floor"] / s["e2e"] if s["floor"] and s["e2e"] else None,
         "indel_correct": w and w["indel_correct_fraction"]}
    if w and b:
        t["correct_minus_bwa_mem"] = w["correct"] - b["correct"]
        wq, bq = (next(r for r in x["roc"] if r["mapq"] == 20) for x in (w, b))
        t["q20"] = {"wtmap_wrong": wq["wrong"], "bwa_mem_wrong": bq["wrong"], "wtmap_mapped": wq["mapped"],
                    "bwa_mem_mapped": bq["mapped"], "met": wq["wrong"] <= bq["wrong"] and wq["mapped"] >= bq["mapped"]}
    # CPU time per read against bwa mem's on the same threads: the CPU backend's target.
    e2e_cpu, mem_cpu = (m.get(k, {}).get("cpu_s") if ok(m.get(k)) else None for k in ("align/wtmap_e2e", "align/bwa_mem"))
    if e2e_cpu and mem_cpu:
        t["cpu_per_read_x_bwa_mem"] = e2e_cpu / mem_cpu
        t["cpu_target_applies"] = run["meta"]["device"] == "cpu"
    return t


def speed_table(run, s):
    m, n = run["measure"], run["meta"]["reads"]
    rows = []

    def add(name, what, seconds, label=None, cpu=None):
        r = m.get(label) if label else None
        if r and ok(r):
            cpu = r.get("cpu_s")
        if r is not None and not ok(r):
            what += f" [{r['rc']}]"
        elif r is not None and r.get("runs", 1) > 1:
            what += spread(r["runs"], r["min_s"], r["max_s"])
        rows.append([name, what, fmt(seconds), fmt(cpu), fmt(n / seconds if seconds else None),
                     f"{s['bwa_mem'] / seconds:.3g}x" if seconds and s["bwa_mem"] else "-",
                     f"{s['bowtie2'] / seconds:.3g}x" if seconds and s["bowtie2"] else "-"])

    runs = run["search"].get("search_runs_s", [])
    what = (f"{run['search'].get('mappers', '?')} mappers as wtmap align runs them, reads in host memory, "
            f"--device {run['meta']['device']}")
    if len(runs) > 1:
        what += spread(len(runs), min(runs), max(runs))
    add("search only", what, s["search"], cpu=run["search"].get("cpu_s"))
    add("wtmap align", "FASTQ.gz -> BAM", s["e2e"], "align/wtmap_e2e")
    add("wtmap align", "FASTQ.gz -> SAM", s["sam"], "align/wtmap_sam")
    add("I/O floor", run["meta"]["io_floor_desc"], s["floor"], "io/floor")
    add("bwa mem", "-t T, SAM", s["bwa_mem"], "align/bwa_mem")
    add("bowtie2", "bowtie2-align-s -p T, SAM", s["bowtie2"], "align/bowtie2")
    add("bwa aln", "-t T, defaults (gapped), .sai", s["bwa_aln"], "align/bwa_aln")
    add("bwa samse", ".sai -> SAM (one thread)", s["bwa_samse"], "align/bwa_samse")
    add("bwa aln + samse", "end to end", s["bwa_aln_samse"])
    return table(["run", "what", "wall_s", "cpu_s", "reads/s", "x bwa mem", "x bowtie2"], rows)


def roc_cell(row):
    if row["mapped_fraction"] is None:
        return "-"
    wrong = "-" if row["wrong_fraction"] is None else f"{100 * row['wrong_fraction']:.3f}"
    return f"{100 * row['mapped_fraction']:.2f}/{wrong}"


def accuracy_rows(roc):
    """(header, rows) of a run's ROC table: per tool the mapped, correct and indel-correct shares
    and, per MAPQ threshold, mapped % / wrong %."""
    rows = []
    for tool, r in roc.get("tools", {}).items():
        rows.append([TOOL_NAMES.get(tool, tool), f"{100 * r['mapped_fraction']:.2f}", f"{100 * r['correct_fraction']:.3f}",
                     "-" if r["indel_correct_fraction"] is None else f"{100 * r['indel_correct_fraction']:.2f}"]
                    + [roc_cell(row) for row in r["roc"]])
    thresholds = [row["mapq"] for row in next(iter(roc["tools"].values()))["roc"]] if roc.get("tools") else []
    return ["tool", "mapped %", "correct %", "indel reads correct %"] + [f"Q>={q}" for q in thresholds], rows


def verdict(value, goal, text):
    return "-" if value is None else f"{text} {'met' if value >= goal else 'NOT met'}"


def target_rows(runs):
    """[[run, cell per target]] of the text report."""
    rows = []
    for run in runs:
        t = run["targets"]
        q20 = t.get("q20")
        cpu = t.get("cpu_per_read_x_bwa_mem")
        rows.append([
            run["dir"],
            verdict(t.get("correct_minus_bwa_mem"), 0, f"{t.get('correct_minus_bwa_mem', 0):+d} reads"),
            "-" if not q20 else f"wrong {q20['wtmap_wrong']} vs {q20['bwa_mem_wrong']}, mapped {q20['wtmap_mapped']} vs "
                                f"{q20['bwa_mem_mapped']} {'met' if q20['met'] else 'NOT met'}",
            verdict(t["indel_correct"], GOALS["indel_correct"], f"{100 * (t['indel_correct'] or 0):.2f}%"),
            verdict(t["e2e_x_bwa_mem"], GOALS["e2e_x_bwa_mem"], f"{t['e2e_x_bwa_mem'] or 0:.3g}x"),
            verdict(t["e2e_share_of_io_floor"], GOALS["e2e_share_of_io_floor"], f"{100 * (t['e2e_share_of_io_floor'] or 0):.1f}%"),
            verdict(t["search_x_bwa_mem"], GOALS["search_x_bwa_mem"], f"{t['search_x_bwa_mem'] or 0:.3g}x"),
            "-" if cpu is None else f"{cpu:.3g}x bwa mem's" + (
                (" met" if cpu <= 1 else " NOT met") if t.get("cpu_target_applies") else " (GPU run: no target)"),
        ])
    return rows


TARGET_HEADER = ["run", "correct >= bwa mem", "Q>=20: wrong <= bwa mem's at >= its mapped", "indel reads >= 98% correct",
                 "e2e >= 5x bwa mem", "e2e >= 70% of I/O floor", "search only >= 50x bwa mem",
                 "CPU time per read <= bwa mem's (CPU backend)"]


def report(work, out):
    runs = [load_run(d) for d in sorted(glob.glob(os.path.join(work, "gapped-*")))
            if os.path.exists(os.path.join(d, "meta.json"))]
    host = ""
    if runs and os.path.exists(os.path.join(work, runs[-1]["dir"], "host.txt")):
        host = open(os.path.join(work, runs[-1]["dir"], "host.txt")).read().rstrip()
    print(host + "\n")
    for run in runs:
        s = run["speeds"] = speeds(run)
        run["targets"] = targets(run, s)
        meta = run["meta"]
        print(f"== {meta['genome']} ({meta['genome_desc']}), {meta['reads']} reads x {meta['read_len']} bp "
              f"({meta['simulator']}; {meta['variants']} variants)")
        if run["left_out"]:
            print(f"   (not run: {run['left_out']}: skipped, not found, or its index failed; see the log)")
        print(speed_table(run, s))
        steps = run["search"].get("steps_s")
        if steps:
            print(f"one GappedMapper alone: {fmt(run['search'].get('one_mapper_s'))} s, by step: " +
                  ", ".join(f"{name} {fmt(v)}" for name, v in steps.items()))
        if run["roc"]:
            print()
            print(f"Accuracy: {run['roc']['reads']} reads, {run['roc']['indel_reads']} with an indel in their truth; correct = "
                  f"the truth's contig and strand, reference intervals overlapping by > {run['roc']['overlap']} of their "
                  f"union (minimap2's mapeval); Q>=q: % of all reads mapped with MAPQ >= q / % wrong among those")
            print(table(*accuracy_rows(run["roc"])))
        print()
    print("Targets (issue 25)")
    print(table(TARGET_HEADER, target_rows(runs)))
    res = {"host": host, "goals": GOALS, "runs": runs}
    with open(os.path.join(out, "gapped.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(out, "gapped-section.md"), "w") as f:
        f.write(section(res))


def run_title(run):
    meta = run["meta"]
    genome = GENOME_NAMES.get(meta["genome"]) or f"{meta['genome_bp'] / 1e6:.0f} Mbp"
    return f"{genome} {meta['read_len']} bp"


def markdown_table(header, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] +
                     ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def section(res, command=None):
    """The Markdown section of a run for bench/RESULTS.md."""
    runs = res["runs"]
    host = dict(line.split(": ", 1) for line in res["host"].splitlines() if ": " in line)
    threads = runs[0]["meta"]["threads"] if runs else "T"
    out = ["### Gapped mode (issue 25): mason reads, the issue's targets", ""]
    out.append(f"{host.get('gpu', '?')}, {host.get('nproc', '?').split(';')[0]} cores, {host.get('date', '?')}, "
               f"`{host.get('commit', '?')}`, device `{host.get('device', '?').split(';')[0]}`: "
               f"`{command or 'bench/run-gapped.sh'}`. Reads: mason_variator (SNPs 1e-3, indels 2e-4 of 1-10 bp) then "
               "mason_simulator (Illumina, single-end) per genome and length, the same reads for every tool.")
    out.append("")

    def cells(fn):
        return [fn(run) for run in runs]

    def ratio_cell(key, num, den):
        def f(run):
            s, v = run["speeds"], run["targets"].get(key)
            return "-" if v is None else f"**{v:.3g}x** ({fmt(s[den])} s vs {fmt(s[num])} s)"
        return f

    def met(key, test):
        vals = [run["targets"].get(key) for run in runs]
        known = [v for v in vals if v is not None]
        if not known:
            return "not measured"
        good = sum(1 for v in known if test(v))
        return "met" if good == len(vals) else f"{good} of {len(vals)}"

    q20 = lambda run: run["targets"].get("q20")  # noqa: E731
    rows = [
        [f"end to end, FASTQ.gz -> BAM, >= 5x `bwa mem -t {threads}`"] + cells(ratio_cell("e2e_x_bwa_mem", "bwa_mem", "e2e"))
        + [met("e2e_x_bwa_mem", lambda v: v >= GOALS["e2e_x_bwa_mem"])],
        ["end to end >= 70 % of the I/O floor (`wtmap align --io-only`)"]
        + cells(lambda run: "-" if run["targets"]["e2e_share_of_io_floor"] is None else
                f"**{100 * run['targets']['e2e_share_of_io_floor']:.1f} %** ({fmt(run['speeds']['floor'])} s)")
        + [met("e2e_share_of_io_floor", lambda v: v >= GOALS["e2e_share_of_io_floor"])],
        [f"search only (wtmap align's mapping engine, reads in host memory) >= 50x `bwa mem -t {threads}`"]
        + cells(ratio_cell("search_x_bwa_mem", "bwa_mem", "search"))
        + [met("search_x_bwa_mem", lambda v: v >= GOALS["search_x_bwa_mem"])],
        ["correct reads >= `bwa mem`"]
        + cells(lambda run: "-" if "correct_minus_bwa_mem" not in run["targets"] else
                f"{run['roc']['tools']['wtmap']['correct']:,} vs {run['roc']['tools']['bwa_mem']['correct']:,}")
        + [met("correct_minus_bwa_mem", lambda v: v >= 0)],
        ["MAPQ >= 20: wrong reads <= `bwa mem`'s, mapped >= its"]
        + cells(lambda run: "-" if not q20(run) else f"{q20(run)['wtmap_wrong']:,} vs {q20(run)['bwa_mem_wrong']:,} wrong, "
                f"{q20(run)['wtmap_mapped']:,} vs {q20(run)['bwa_mem_mapped']:,} mapped")
        + [met("q20", lambda v: v["met"])],
        [">= 98 % of the reads with an indel correct"]
        + cells(lambda run: "-" if run["targets"]["indel_correct"] is None else
                f"**{100 * run['targets']['indel_correct']:.2f} %** (of {run['roc']['indel_reads']:,})")
        + [met("indel_correct", lambda v: v >= GOALS["indel_correct"])],
    ]
    out.append(markdown_table(["target"] + [run_title(run) for run in runs] + ["met?"], rows))
    out.append("")
    out.append("Accuracy (`bench/roc.py`, minimap2's mapeval rule: the truth's contig and strand, reference "
               "intervals overlapping by more than 0.1 of their union; primary records). Q>=q: % of all reads "
               "mapped with MAPQ >= q / % of those wrong.")
    for run in runs:
        if not run["roc"]:
            continue
        out += ["", f"{run_title(run)} ({run['roc']['reads']:,} reads, {run['roc']['indel_reads']:,} with an indel):", ""]
        out.append(markdown_table(*accuracy_rows(run["roc"])))
    out += ["", "![ROC: fraction mapped against fraction wrong, by MAPQ threshold](plots/gapped-roc.png)", ""]
    walls = []
    for run in runs:
        s = run["speeds"]
        walls.append(f"{run_title(run)}: bwa mem {fmt(s['bwa_mem'])} s, bowtie2 {fmt(s['bowtie2'])} s, "
                     f"bwa aln + samse {fmt(s['bwa_aln_samse'])} s, wtmap -> BAM {fmt(s['e2e'])} s")
    out.append("Wall times (all write SAM but wtmap): " + "; ".join(walls) + ".")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) == 3 and not sys.argv[1].startswith("-"):
        report(*sys.argv[1:])
        return
    if "--section" not in sys.argv:
        sys.exit(__doc__)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--section", required=True, metavar="GAPPED.json")
    p.add_argument("--command", default=None, help="the command line of the run, for the section's text")
    a = p.parse_args()
    sys.stdout.write(section(json.load(open(a.section)), a.command))


if __name__ == "__main__":
    main()
