#!/usr/bin/env python3
"""The ROC plot of bench/run-gapped.sh (needs matplotlib; Debian's is /usr/bin/python3's).

  plot_roc.py GAPPED.json OUT.png

One panel per genome and read length: for each tool, the fraction of all reads mapped with MAPQ
>= q (y) against the fraction wrong among those (x), q running from 60 down to 0 through every
MAPQ the tool gave (bench/roc.py's mapq_counts), the thresholds 60, 40, 20, 10, 1, 0 marked. Up and
to the left is better. The x axis is logarithmic above one wrong read in the run and linear below.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"wtmap": "#1f77b4", "bwa_mem": "#2ca02c", "bowtie2": "#9467bd", "bwa_aln": "#ff7f0e"}
NAMES = {"wtmap": "wtmap", "bwa_mem": "bwa mem", "bowtie2": "bowtie2", "bwa_aln": "bwa aln"}
MARKED = (60, 40, 20, 10, 1, 0)


def curve(counts, reads):
    """Points (wrong fraction, mapped fraction, mapq) from MAPQ 60 down, cumulative."""
    mapped = wrong = 0
    points = []
    for q, m, w in counts:  # descending MAPQ
        mapped += m
        wrong += w
        points.append((wrong / mapped, mapped / reads, q))
    return points


def panel(ax, run):
    roc = run["roc"]
    meta = run["meta"]
    reads = roc["reads"]
    for tool, r in roc["tools"].items():
        pts = curve(r["mapq_counts"], reads)
        if not pts:
            continue
        color = COLORS.get(tool, "#555555")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color, linewidth=1.3, label=NAMES.get(tool, tool))
        for row in r["roc"]:  # the table's thresholds
            if row["mapq"] in MARKED and row["mapped"]:
                ax.plot(row["wrong_fraction"], row["mapped_fraction"], "o", color=color, markersize=3.5)
                if tool == "wtmap":
                    ax.annotate(str(row["mapq"]), (row["wrong_fraction"], row["mapped_fraction"]), xytext=(3, -9),
                                textcoords="offset points", fontsize=6, color=color)
    ax.set_xscale("symlog", linthresh=1 / reads)
    genome = "E. coli" if meta["genome"] == "ecoli" else f"{meta['genome_bp'] / 1e6:.0f} Mbp synthetic"
    ax.set_title(f"{genome}, {meta['read_len']} bp, {reads:,} reads", fontsize=9)
    ax.set_xlabel("fraction wrong among mapped (MAPQ >= q)", fontsize=8)
    ax.set_ylabel("fraction of reads mapped (MAPQ >= q)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.3, color="#dddddd")
    ax.spines[["top", "right"]].set_visible(False)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data = json.load(open(sys.argv[1]))
    runs = [run for run in data["runs"] if run.get("roc", {}).get("tools")]
    if not runs:
        sys.exit("plot_roc.py: no run with an evaluation in " + sys.argv[1])
    cols = min(2, len(runs))
    rows = (len(runs) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    for ax, run in zip(axes.flat, runs):
        panel(ax, run)
    for ax in list(axes.flat)[len(runs):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=8, frameon=False, loc="lower right")
    fig.suptitle("Mapped against wrong by MAPQ threshold (mason reads; wtmap's thresholds labelled)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(sys.argv[2], dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main()
