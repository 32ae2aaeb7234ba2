#!/usr/bin/env python3
"""The plots of bench/RESULTS.md, drawn from bench/results/current.json (needs matplotlib).

  plot_results.py [--data bench/results/current.json] [--out bench/plots]

Writes speedup-search.png, speedup-end-to-end.png, io-floor.png and accuracy.png. The JSON holds
the current numbers, each with the run it comes from; edit it, not the pictures, when a run
replaces one.
"""
import argparse
import json
import os

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GENOME_LABEL = {"ecoli": "E. coli 4.9 Mbp", "synth": "synthetic 1 Gbp"}
COLORS = {"wtmap": "#1f77b4", "bwa aln": "#ff7f0e", "bwa mem": "#2ca02c", "bowtie2": "#9467bd"}
TARGET_STYLE = dict(color="#d62728", linestyle="--", linewidth=1.2)


def case_label(row):
    return f"{GENOME_LABEL[row['key']]}\n{row['read_length']} bp"


def label_bars(ax, bars, fmt):
    for b in bars:
        h = b.get_height()
        ax.annotate(fmt(h), (b.get_x() + b.get_width() / 2, h), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8)


def finish(fig, ax, path, title, ylabel, cases, note=None):
    ax.set_title(title, fontsize=11)
    ax.set_ylabel(ylabel)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(cases, fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    handles = ax.get_legend_handles_labels()[0]
    ax.legend(fontsize=8, frameon=False, loc="upper center", ncol=len(handles))
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.05 if note else 0, 1, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_search(rows, goal, path):
    """Search only against bwa aln: reads on the GPU (the target's measure) and pipelined."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    width = 0.36
    resident = [r["bwa_aln_s"] / r["search_resident_s"] for r in rows]
    pipelined = [r["bwa_aln_s"] / r["search_pipelined_s"] for r in rows]
    xs = range(len(rows))
    b1 = ax.bar([x - width / 2 for x in xs], resident, width, color=COLORS["wtmap"], label="reads on the GPU (target)")
    b2 = ax.bar([x + width / 2 for x in xs], pipelined, width, color="#aec7e8", label="pipelined from host memory")
    label_bars(ax, b1, lambda v: f"{v:.0f}x")
    label_bars(ax, b2, lambda v: f"{v:.0f}x")
    ax.axhline(goal, **TARGET_STYLE, label=f"target {goal}x")
    ax.set_ylim(0, max(resident) * 1.25)
    finish(fig, ax, path, "wtmap search only: speedup over bwa aln -o 0 -n 4 -t 16", "bwa aln time / wtmap time",
           [case_label(r) for r in rows],
           "1 Gbp, reads on the GPU: main's search (d07103f) in an A/B on the harness's host; "
           "pipelined: the harness binary 4d8e2c5. H100, 16 cores.")


def plot_end_to_end(rows, goal, path):
    """wtmap align FASTQ.gz -> BAM against each baseline's whole run."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    baselines = [("bwa_aln_samse_s", "bwa aln + samse"), ("bwa_mem_s", "bwa mem"), ("bowtie2_s", "bowtie2")]
    width = 0.26
    colors = [COLORS["bwa aln"], COLORS["bwa mem"], COLORS["bowtie2"]]
    top = 0
    for j, ((field, name), color) in enumerate(zip(baselines, colors)):
        values = [r[field] / r["wtmap_e2e_bam_s"] for r in rows]
        top = max(top, max(values))
        bars = ax.bar([x + (j - 1) * width for x in range(len(rows))], values, width, color=color, label=f"vs {name}")
        label_bars(ax, bars, lambda v: f"{v:.1f}x")
    ax.axhline(goal, **TARGET_STYLE, label=f"target {goal}x (vs bwa aln + samse)")
    ax.set_ylim(0, top * 1.25)
    finish(fig, ax, path, "wtmap align end to end (FASTQ.gz -> BAM): speedup over each baseline",
           "baseline time / wtmap time", [case_label(r) for r in rows],
           "bwa mem and bowtie2 write SAM, wtmap BAM; no target against them. H100, 16 cores.")


def plot_io_floor(rows, goal, path):
    """The share of the I/O floor: floor time / end-to-end time (100 % = no cost above reading and writing)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    shares = [100 * r["io_floor_s"] / r["wtmap_e2e_bam_s"] for r in rows]
    bars = ax.bar(range(len(rows)), shares, 0.5, color=COLORS["wtmap"], label="wtmap align")
    label_bars(ax, bars, lambda v: f"{v:.1f} %")
    ax.axhline(goal, **TARGET_STYLE, label=f"target {goal} %")
    ax.axhline(100, color="#888888", linewidth=0.8, linestyle=":")
    ax.set_ylim(0, 125)
    finish(fig, ax, path, "End to end as a share of the I/O floor (wtmap align --io-only)",
           "floor time / end-to-end time (%)", [case_label(r) for r in rows],
           "1 Gbp: the harness binary 4d8e2c5; at 150 bp its runs 2-5 shared the GPU (the first, alone: 89.2 %).")


def plot_accuracy(rows, path):
    """Correct fraction per tool (same contig and strand, leftmost position within 5 bp), one
    panel per genome and read length, with wtmap's and bwa aln's expected fraction where ties
    are shared out instead of drawn (+- one SD of the draw)."""
    tools = ["wtmap", "bwa aln", "bwa mem", "bowtie2"]
    fig, axes = plt.subplots(1, len(rows), figsize=(10, 3.6), sharey=True)
    for ax, r in zip(axes, rows):
        values = {t: 100 * r["correct"][t] / r["reads"] for t in tools if t in r["correct"]}
        middle = sum(values.values()) / len(values)
        ax.set_xlim(middle - 0.06, middle + 0.08)
        for y, t in enumerate(tools):
            if t not in values:
                ax.annotate("not recorded", (middle - 0.055, y), va="center", fontsize=8, color="#888888")
                continue
            ax.barh(y, values[t], 0.6, color=COLORS[t])
            label_at = values[t]
            if t in r.get("expected_correct", {}):
                e = 100 * r["expected_correct"][t] / r["reads"]
                sd = 100 * r["expected_sd"] / r["reads"]
                ax.errorbar(e, y, xerr=sd, fmt="|", color="black", markersize=14, capsize=3)
                label_at = max(label_at, e + sd)
            ax.annotate(f"{values[t]:.3f}", (label_at, y), xytext=(4, 0), textcoords="offset points", va="center",
                        fontsize=8)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
        ax.set_title(case_label(r).replace("\n", ", "), fontsize=9)
        ax.set_yticks(range(len(tools)))
        ax.set_yticklabels(tools, fontsize=9)
        ax.invert_yaxis()
        ax.tick_params(axis="x", labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Correct reads (%) of 10^6 ART HS25 reads, k = 4; black: expected with ties shared out, +- SD",
                 fontsize=10)
    fig.text(0.01, 0.01, "Each panel's axis spans 0.14 points of 100. 1 Gbp: the harness binary 4d8e2c5 (at 150 bp it "
             "maps one read more than main). E. coli: the run kept no bwa mem or bowtie2 counts.", fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(HERE, "results", "current.json"))
    parser.add_argument("--out", default=os.path.join(HERE, "plots"))
    args = parser.parse_args()
    data = json.load(open(args.data))
    rows = data["aligner"]
    goals = data["aligner_goals"]
    os.makedirs(args.out, exist_ok=True)
    plot_search(rows, goals["search_only_vs_bwa_aln"], os.path.join(args.out, "speedup-search.png"))
    plot_end_to_end(rows, goals["e2e_vs_bwa_aln_samse"], os.path.join(args.out, "speedup-end-to-end.png"))
    plot_io_floor(rows, goals["e2e_share_of_io_floor_pct"], os.path.join(args.out, "io-floor.png"))
    plot_accuracy(rows, os.path.join(args.out, "accuracy.png"))


if __name__ == "__main__":
    main()
