#!/usr/bin/env python3
"""Tables for bench/run-fmindex.sh and bench/run-aligner.sh (standard library only).

  report.py fmindex DIR NPATTERNS LENS OUT     DIR/measure.tsv, DIR/sdsl.json, DIR/host.txt
  report.py aligner WORK OUT                   WORK/aligner-*/ (measure.tsv, eval.json, meta.json)

Writes OUT/fmindex.json or OUT/aligner.json and prints the table (the scripts tee it to .txt).
"""
import glob
import json
import os
import statistics
import sys


def read_tsv(path):
    rows = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4:
                wall = None if f[1] == "NA" else float(f[1])
                rss = None if f[2] == "NA" else float(f[2])
                cpu = float(f[4]) if len(f) >= 5 and f[4] != "NA" else None  # (older TSVs lack CPU seconds)
                rows[f[0]] = {"wall_s": wall, "max_rss_mb": rss, "rc": f[3], "cpu_s": cpu}
    return rows


def with_medians(rows):
    """Folds the repeated runs of a step ('label@2', 'label@3', ...) into the step's row: the median
    wall time of the runs that succeeded, with their count, fastest and slowest. A failed run fails
    the step; a run skipped for lack of time is left out."""
    groups = {}
    for label, r in rows.items():
        groups.setdefault(label.split("@", 1)[0], []).append(r)
    out = {}
    for label, runs in groups.items():
        good = [r for r in runs if ok(r)]
        failed = [r for r in runs if not ok(r) and r["rc"] != "skipped"]
        if len(runs) == 1 or not good:
            out[label] = runs[0] if not failed else failed[0]
            continue
        walls = sorted(r["wall_s"] for r in good)
        rss = [r["max_rss_mb"] for r in good if r["max_rss_mb"] is not None]
        cpu = [r["cpu_s"] for r in good if r.get("cpu_s") is not None]
        out[label] = {"wall_s": statistics.median(walls), "max_rss_mb": max(rss) if rss else None,
                      "rc": failed[0]["rc"] if failed else "0", "runs": len(walls), "min_s": walls[0], "max_s": walls[-1],
                      "cpu_s": statistics.median(cpu) if cpu else None}
    return out


def fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    ax = abs(x)
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if ax >= div:
            return f"{x / div:.{digits}g}{unit}"
    return f"{x:.{digits}g}"


def ratio(a, b):
    return f"{a / b:.3g}x" if a and b else "-"


def spread(runs, low, high):
    """The label of a median over several runs: ' [median of N: low-high]'."""
    return f" [median of {runs}: {low:.3f}-{high:.3f}]"


def table(header, rows):
    w = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    out = ["  ".join(str(h).ljust(w[i]) for i, h in enumerate(header))]
    out.append("  ".join("-" * x for x in w))
    out += ["  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)) for r in rows]
    return "\n".join(out)


def ok(row):
    return row is not None and row.get("rc") == "0" and row.get("wall_s") is not None


def fmindex(d, npat, lens, out):
    npat = int(npat)
    m = read_tsv(os.path.join(d, "measure.tsv"))
    host = open(os.path.join(d, "host.txt")).read() if os.path.exists(os.path.join(d, "host.txt")) else ""
    sdsl = {}
    if os.path.exists(os.path.join(d, "sdsl.json")):
        sdsl = json.load(open(os.path.join(d, "sdsl.json")))
    res = {"host": host, "index": {}, "count": [], "sdsl": sdsl}
    print(host.rstrip())
    print()
    rows = []
    device = host.split("device: ", 1)[1].split(";")[0] if "device: " in host else "?"
    names = {"wtmap_dev": f"wtmap index --device {device}", "wtmap_cpu": "wtmap index --device cpu",
             "wtmap_blockwise": f"wtmap index --device {device} --sa-builder blockwise",
             "bwa": "bwa index", "bowtie2": "bowtie2-build-s --threads N"}
    for tool in ("wtmap_dev", "wtmap_cpu", "wtmap_blockwise", "bwa", "bowtie2"):
        r = m.get(f"index/{tool}")
        if r is None:
            continue
        res["index"][tool] = r
        rows.append([names[tool], fmt(r["wall_s"]), fmt(r["max_rss_mb"]), "ok" if r["rc"] == "0" else f"rc={r['rc']}"])
    if sdsl.get("build_s") is not None:
        rows.append(["sdsl csa_wt<> (construct_im, in the count run)", fmt(sdsl["build_s"]), "-", "ok"])
    print("Index construction (seconds, peak RSS MiB)")
    print(table(["tool", "wall_s", "max_rss_mb", "status"], rows))
    print()
    load = m.get("count/wtmap/load")
    load_s = load["wall_s"] if ok(load) else None
    runs = {os.path.basename(r["patterns"]): r for r in sdsl.get("runs", [])}
    rows = []
    for L in lens.split(","):
        sd = next((r for k, r in runs.items() if f"-{L}bp-" in k), None)
        sd_rate = sd["patterns_per_s"] if sd else None
        for mode, label in (("count", f"count/wtmap/len={L}"), ("locate --max-hits 1", f"locate1/wtmap/len={L}")):
            r = m.get(label)
            rate = rate_nl = None
            if ok(r):
                rate = npat / r["wall_s"]
                if load_s is not None and r["wall_s"] > load_s:
                    rate_nl = npat / (r["wall_s"] - load_s)
            entry = {"len": int(L), "mode": mode, "wall_s": r and r["wall_s"], "patterns_per_s": rate,
                     "patterns_per_s_minus_load": rate_nl, "sdsl_patterns_per_s": sd_rate,
                     "x_sdsl": rate / sd_rate if rate and sd_rate else None,
                     "x_sdsl_minus_load": rate_nl / sd_rate if rate_nl and sd_rate else None,
                     "sdsl_check_mismatches": sd and sd.get("check_mismatches")}
            res["count"].append(entry)
            rows.append([L, f"wtmap {mode}", fmt(r and r["wall_s"]), fmt(rate), fmt(rate_nl), fmt(sd_rate),
                         ratio(rate, sd_rate), ratio(rate_nl, sd_rate),
                         "-" if not sd or mode != "count" or sd.get("check_mismatches") is None or sd["check_mismatches"] < 0
                         else ("same" if sd["check_mismatches"] == 0 else f"{sd['check_mismatches']} differ")])
    print(f"Count throughput ({npat} patterns per length; wtmap: whole command, FASTA in, TSV out;"
          f" index load {fmt(load_s)} s measured on an empty file; SDSL: count loop over patterns in memory, {sdsl.get('threads', '?')} threads)")
    print(table(["len", "tool", "wall_s", "patterns/s", "minus load", "sdsl pat/s", "x_sdsl", "x_sdsl (minus load)", "counts vs sdsl"], rows))
    print()
    best = [e["x_sdsl_minus_load"] for e in res["count"] if e["mode"] == "count" and e["x_sdsl_minus_load"]]
    print(f"Target: count >= 100x SDSL csa_wt on all cores: worst x_sdsl (minus load) = "
          f"{min(best):.3g}x -> {'met' if min(best) >= 100 else 'NOT met'}" if best else "Target: count >= 100x SDSL: not measured")
    json.dump(res, open(os.path.join(out, "fmindex.json"), "w"), indent=1)


def aligner(work, out):
    res = {"runs": []}
    hosts = []
    for d in sorted(glob.glob(os.path.join(work, "aligner-*"))):
        meta_p = os.path.join(d, "meta.json")
        if not os.path.exists(meta_p):
            continue
        meta = json.load(open(meta_p))
        m = with_medians(read_tsv(os.path.join(d, "measure.tsv")))
        ev = json.load(open(os.path.join(d, "eval.json"))) if os.path.exists(os.path.join(d, "eval.json")) else {}
        # Search only: the run with the median time of search.json, search@2.json, ... (their times
        # in search_runs_s).
        runs_s = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, "search*.json")))]
        runs_s = sorted((r for r in runs_s if r.get("search_s") is not None), key=lambda r: r["search_s"])
        search = dict(runs_s[(len(runs_s) - 1) // 2]) if runs_s else {}
        if runs_s:
            search["search_runs_s"] = [r["search_s"] for r in runs_s]
            search["resident_runs_s"] = sorted(r["resident_s"] for r in runs_s if r.get("resident_s"))
        beside_p = os.path.join(d, "beside.txt")  # run-aligner.sh, WTMAP_BENCH_OVERLAP=1
        beside = open(beside_p).read().strip() if os.path.exists(beside_p) else None
        res["runs"].append({"dir": os.path.basename(d), "meta": meta, "measure": m, "eval": ev, "search": search,
                            "beside": beside})
        if os.path.exists(os.path.join(d, "host.txt")):
            hosts.append(open(os.path.join(d, "host.txt")).read().rstrip())
    if hosts:
        print(hosts[-1])
        print()
    targets = []
    for run in res["runs"]:
        meta, m, ev, search = run["meta"], run["measure"], run["eval"], run["search"]
        n = meta["reads"]
        k = meta["k"]
        print(f"== {meta['genome']} ({meta['genome_desc']}), {n} reads x {meta['read_len']} bp "
              f"(ART {meta['art_profile']}), k = {k}")
        if run["beside"]:
            print(f"   ({run['beside']})")
        base = m.get("align/bwa_aln")
        base_s = base["wall_s"] if ok(base) else None
        base_e2e = None
        if ok(base) and ok(m.get("align/bwa_samse")):
            base_e2e = base["wall_s"] + m["align/bwa_samse"]["wall_s"]
        rows = []

        def add(label, what, wall, vs):
            rate = n / wall if wall else None
            rows.append([label, what, fmt(wall), fmt(rate), ratio(vs, wall)])
            return rate

        s_wall = search.get("search_s")
        s_what = "GPU batches, reads in memory" if meta["device"] == "gpu" else "--device cpu"
        s_runs = search.get("search_runs_s", [])
        if len(s_runs) > 1:
            s_what += spread(len(s_runs), min(s_runs), max(s_runs))
        add("wtmap search only (bench_align_search)", s_what, s_wall, base_s)
        # Reads already on the GPU (--resident: one batch, device time): the definition.
        r_runs = search.get("resident_runs_s", [])
        r_wall = r_runs[(len(r_runs) - 1) // 2] if r_runs else None
        if r_wall:
            r_what = "reads on the GPU, one batch, device time (CUDA events)"
            if len(r_runs) > 1:
                r_what += spread(len(r_runs), min(r_runs), max(r_runs))
            add("wtmap search only, resident", r_what, r_wall, base_s)
        for label, what in (("align/wtmap_e2e", "FASTQ.gz -> BAM"), ("align/wtmap_sam", "FASTQ.gz -> SAM"),
                            ("io/floor", meta.get("io_floor_desc", "I/O floor")),
                            ("align/bwa_aln", "bwa aln -o 0 -n k (.sai)"), ("align/bwa_samse", "bwa samse (.sai -> SAM)"),
                            ("align/bwa_mem", "bwa mem (SAM)"), ("align/bowtie2", "bowtie2-align-s (SAM)")):
            r = m.get(label)
            wall = r["wall_s"] if ok(r) else None
            note = what if r is None or ok(r) else f"{what} [rc={r['rc']}]"
            if r is not None and r.get("runs", 1) > 1:
                note += spread(r["runs"], r["min_s"], r["max_s"])
            add(label.split("/", 1)[1], note, wall, base_s)
        if base_e2e:
            add("bwa aln + samse", "end to end", base_e2e, base_s)
        print(table(["run", "what", "wall_s", "reads/s", "x bwa aln (time ratio)"], rows))
        e2e = m.get("align/wtmap_e2e")
        floor = m.get("io/floor")
        t = {"run": run["dir"]}
        if s_wall and base_s:
            t["search_x_bwa_aln"] = base_s / s_wall
        if r_wall and base_s:
            t["resident_search_x_bwa_aln"] = base_s / r_wall
        if ok(e2e) and base_e2e:
            t["e2e_x_bwa_aln_samse"] = base_e2e / e2e["wall_s"]
        if ok(e2e) and base_s:
            t["e2e_x_bwa_aln"] = base_s / e2e["wall_s"]
        if ok(e2e) and ok(floor):
            t["e2e_fraction_of_io_floor"] = floor["wall_s"] / e2e["wall_s"]
        if ev:
            print()
            rows = []
            for tool, e in ev.get("tools", {}).items():
                byq = e["by_mapq"]
                rows.append([tool, f"{100 * e['mapped']:.2f}", f"{100 * e['correct']:.2f}"]
                            + [f"{100 * byq[q]['correct']:.2f}/{100 * byq[q]['fraction']:.1f}" for q in ("0", "1", "10", "20", "30")]
                            + [f"{100 * e['recall_le_k']:.3f} ({e['le_k_found']}/{e['le_k_total']})"])
            print(f"Accuracy ({ev.get('reads')} reads; correct = same contig, strand, leftmost position within "
                  f"{ev.get('tolerance')} bp; MAPQ>=q columns: correct %/reported %, of all reads)")
            print(table(["tool", "mapped %", "correct %", "q>=0", "q>=1", "q>=10", "q>=20", "q>=30",
                         f"recall <= {k} mm (%)"], rows))
            tools = ev.get("tools", {})
            if "wtmap" in tools:
                t["recall_le_k"] = tools["wtmap"]["recall_le_k"]
                if "bwa_aln" in tools:
                    t["correct_minus_bwa_aln"] = tools["wtmap"]["correct"] - tools["bwa_aln"]["correct"]
                    # The same without the luck of tie-breaking (evaluate.py's expected correct fraction).
                    if "expected_correct" in tools["wtmap"] and "expected_correct" in tools["bwa_aln"]:
                        t["expected_correct_minus_bwa_aln"] = (tools["wtmap"]["expected_correct"] -
                                                               tools["bwa_aln"]["expected_correct"])
        targets.append(t)
        print()
    print("Targets (per run)")
    rows = []
    for t in targets:
        def chk(key, goal, pct=False):
            v = t.get(key)
            if v is None:
                return "-"
            s = f"{100 * v:.2f}%" if pct else f"{v:.3g}x"
            return f"{s} {'met' if v >= goal else 'NOT met'}"
        def pts(key):
            v = t.get(key)
            return "-" if v is None else f"{100 * v:+.3f} pts {'met' if v >= 0 else 'NOT met'}"
        rows.append([t["run"], chk("resident_search_x_bwa_aln", 200), chk("search_x_bwa_aln", 200), chk("e2e_x_bwa_aln_samse", 10), chk("e2e_fraction_of_io_floor", 0.7, True),
                     chk("recall_le_k", 1.0, True), pts("correct_minus_bwa_aln"), pts("expected_correct_minus_bwa_aln")])
    print(table(["run", "search (reads on the GPU) >= 200x bwa aln", "search (pipelined from host memory)",
                 "e2e >= 10x bwa aln+samse", "e2e >= 70% of I/O floor",
                 "recall <= k mm = 100%", "correct >= bwa aln", "expected correct (no tie luck)"], rows))
    res["targets"] = targets
    json.dump(res, open(os.path.join(out, "aligner.json"), "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "fmindex" and len(sys.argv) == 6:
        fmindex(*sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "aligner" and len(sys.argv) == 4:
        aligner(*sys.argv[2:])
    else:
        sys.exit(__doc__)
