#!/usr/bin/env python3
"""Tests of bench/roc.py on a hand-made truth and tool output whose answers are worked out below
(ctest: BenchRoc; or `python3 -m unittest -v test_roc` in bench/)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roc  # noqa: E402

HEADER = "@HD\tVN:1.6\n@SQ\tSN:c1\tLN:10000\n@SQ\tSN:c2\tLN:10000\n"


def record(name, flag, contig, pos, mapq, cigar):
    length = sum(int(n) for n, op in roc.CIGAR_OP.findall(cigar) if op in "MIS=X") if cigar != "*" else 10
    return "\t".join([name, str(flag), contig, str(pos), str(mapq), cigar, "*", "0", "0", "A" * length, "*"]) + "\n"


# Truth: name -> (flag, contig, 1-based POS, CIGAR). Intervals are 0-based half-open.
TRUTH = {
    "exact": (0, "c1", 101, "100M"),           # [100, 200)
    "reverse": (16, "c1", 501, "100M"),        # [500, 600), reverse strand
    "other_contig": (0, "c1", 1001, "100M"),
    "clip_at_ratio": (0, "c1", 2001, "100M"),  # [2000, 2100)
    "clip_above": (0, "c1", 3001, "100M"),     # [3000, 3100)
    "true_deletion": (0, "c2", 101, "10M200D10M"),  # [100, 320): D consumes the reference
    "tool_deletion": (0, "c2", 1101, "100M"),  # [1100, 1200)
    "true_insertion": (16, "c2", 2001, "50M3I47M"),  # [2000, 2097), an indel read
    "unmapped": (0, "c2", 3001, "100M"),
    "missing": (0, "c2", 4001, "100M"),
    "secondary_right": (0, "c2", 5001, "100M"),  # the primary is wrong, a secondary right
    "capped": (0, "c2", 6001, "100M"),         # MAPQ 255 counts as 60
}

TOOL = [
    record("exact", 0, "c1", 101, 60, "100M"),                  # correct, Q60
    record("reverse", 0, "c1", 501, 40, "100M"),                # wrong strand, Q40
    record("other_contig", 0, "c2", 1001, 20, "100M"),          # wrong contig, Q20
    # [2000, 2010) against [2000, 2100): overlap 10 / union 100 = 0.1, not > 0.1: wrong, Q10
    record("clip_at_ratio", 0, "c1", 2001, 10, "10M90S"),
    # [3000, 3011): 11 / 100 > 0.1: correct, Q5
    record("clip_above", 0, "c1", 3001, 5, "11M89S"),
    # [300, 330) against [100, 320): 20 / 230 < 0.1: wrong, Q1 (without the truth's D: no overlap either)
    record("true_deletion", 0, "c2", 301, 1, "30M"),
    # [1000, 1210) (the D counted) against [1100, 1200): 100 / 210: correct; without the D,
    # [1000, 1060) would miss it. Q0.
    record("tool_deletion", 0, "c2", 1001, 0, "10M150D50M"),
    # the indel read: [2000, 2097) on the reverse strand: correct, Q60
    record("true_insertion", 16, "c2", 2001, 60, "50M3I47M"),
    record("unmapped", 4, "*", 0, 0, "*"),
    # "missing" has no record.
    record("secondary_right", 0, "c1", 9001, 60, "100M"),        # wrong, Q60
    record("secondary_right", 0x100, "c2", 5001, 0, "100M"),     # ignored
    record("secondary_right", 0x800, "c2", 5001, 0, "100M"),     # ignored
    record("capped", 0, "c2", 6001, 255, "100M"),                # correct, Q60
    record("stranger", 0, "c1", 1, 60, "100M"),                  # not in the truth
]


class SamFiles(unittest.TestCase):
    """A temporary truth.sam and tool.sam of the class's TRUTH_LINES and TOOL_LINES."""
    TRUTH_LINES = TOOL_LINES = ()

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="test_roc.")
        cls.truth = os.path.join(cls.dir, "truth.sam")
        cls.tool = os.path.join(cls.dir, "tool.sam")
        for path, lines in ((cls.truth, cls.TRUTH_LINES), (cls.tool, cls.TOOL_LINES)):
            with open(path, "w") as f:
                f.write(HEADER + "".join(lines))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)


class RocTest(SamFiles):
    TRUTH_LINES = [record(n, *t[:3], 255, t[3]) for n, t in TRUTH.items()]
    TOOL_LINES = TOOL

    def test_reference_length(self):
        self.assertEqual(roc.reference_length("10M200D10M"), 220)
        self.assertEqual(roc.reference_length("5S50M3I47M2H"), 97)
        self.assertEqual(roc.reference_length("3=1X2N4M"), 10)
        self.assertEqual(roc.reference_length("*"), 0)

    def test_overlap_rule(self):
        self.assertFalse(roc.overlaps(0, 100, 0, 10, 0.1))  # exactly 0.1
        self.assertTrue(roc.overlaps(0, 100, 0, 11, 0.1))
        self.assertFalse(roc.overlaps(0, 100, 100, 200, 0.0))  # touching, no overlap
        self.assertTrue(roc.overlaps(0, 100, 99, 200, 0.0))

    def test_truth(self):
        truth, fragments = roc.read_truth(self.truth)
        self.assertEqual(len(truth), len(TRUTH))
        self.assertEqual(fragments, [])  # single reads: no mate 1
        self.assertEqual(truth[("true_deletion", 0)], ("c2", False, 100, 320, True))
        self.assertEqual(truth[("true_insertion", 0)], ("c2", True, 2000, 2097, True))
        self.assertEqual(truth[("exact", 0)], ("c1", False, 100, 200, False))

    def check(self, r):
        n = len(TRUTH)
        self.assertEqual(r["reads"], n)
        self.assertEqual(r["records"], n - 1)  # every truth read but "missing", each once
        self.assertEqual(r["missing"], 1)
        self.assertEqual(r["unknown"], 1)  # "stranger"
        self.assertEqual(r["duplicates"], 0)
        # mapped: all but "unmapped" and "missing"; correct: exact, clip_above, tool_deletion,
        # true_insertion, capped
        self.assertEqual(r["mapped"], n - 2)
        self.assertEqual(r["correct"], 5)
        self.assertAlmostEqual(r["mapped_fraction"], (n - 2) / n)
        self.assertAlmostEqual(r["correct_fraction"], 5 / n)
        # indel reads: true_deletion (wrong), true_insertion (correct)
        self.assertEqual((r["indel_reads"], r["indel_correct"]), (2, 1))
        self.assertAlmostEqual(r["indel_correct_fraction"], 0.5)
        # By MAPQ: 60 exact, true_insertion, capped (correct) and secondary_right (wrong); 40 reverse
        # (wrong); 20 other_contig (wrong); 10 clip_at_ratio (wrong); 5 clip_above (correct); 1
        # true_deletion (wrong); 0 tool_deletion (correct). Cumulative (mapped, wrong) at >= q:
        expected = {60: (4, 1), 40: (5, 2), 20: (6, 3), 10: (7, 4), 1: (9, 5), 0: (10, 5)}
        self.assertEqual([row["mapq"] for row in r["roc"]], [60, 40, 20, 10, 1, 0])
        for row in r["roc"]:
            mapped, wrong = expected[row["mapq"]]
            self.assertEqual((row["mapped"], row["wrong"]), (mapped, wrong), row["mapq"])
            self.assertAlmostEqual(row["mapped_fraction"], mapped / n)
            self.assertAlmostEqual(row["wrong_fraction"], wrong / mapped)
        self.assertEqual(r["mapq_counts"], [[60, 4, 1], [40, 1, 1], [20, 1, 1], [10, 1, 1], [5, 1, 0], [1, 1, 1],
                                            [0, 1, 0]])

    def test_sam(self):
        res = roc.evaluate_all(self.truth, [("tool", self.tool)], 0.1)
        self.assertEqual((res["reads"], res["indel_reads"]), (len(TRUTH), 2))
        self.check(res["tools"]["tool"])

    def test_bam_and_parallel(self):
        if shutil.which("samtools") is None:
            self.skipTest("samtools not on PATH")
        bam = os.path.join(self.dir, "tool.bam")
        subprocess.run(["samtools", "view", "-b", "-o", bam, self.tool], check=True)
        res = roc.evaluate_all(self.truth, [("sam", self.tool), ("bam", bam)], 0.1)
        self.assertEqual(list(res["tools"]), ["sam", "bam"])
        self.check(res["tools"]["sam"])
        self.check(res["tools"]["bam"])

    def test_perfect_tool(self):
        """The truth against itself: every read mapped and correct, no wrong read at any MAPQ."""
        res = roc.evaluate_all(self.truth, [("truth", self.truth)], 0.1)
        self.assertNotIn("pairs", res)
        r = res["tools"]["truth"]
        self.assertNotIn("paired", r)
        self.assertEqual((r["mapped"], r["correct"], r["indel_correct"]), (len(TRUTH), len(TRUTH), 2))
        self.assertTrue(all(row["wrong"] == 0 for row in r["roc"]))

    def test_command_line(self):
        out = os.path.join(self.dir, "roc.json")
        p = subprocess.run([sys.executable, roc.__file__, "--truth", self.truth, "--json", out, f"tool={self.tool}"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 reads without a primary record", p.stdout)
        import json
        with open(out) as f:
            self.check(json.load(f)["tools"]["tool"])
        bad = subprocess.run([sys.executable, roc.__file__, "--truth", self.truth, "nofile"], capture_output=True)
        self.assertNotEqual(bad.returncode, 0)


def paired(name, flag, contig, pos, mapq, cigar, tlen):
    """A mate's record: record() with its TLEN (mate fields as a tool writes them)."""
    f = record(name, flag, contig, pos, mapq, cigar).split("\t")
    f[6], f[8] = ("=" if contig != "*" else "*"), str(tlen)
    return "\t".join(f)


# Paired truth as mason writes it: both mates under one name, 0x40/0x80 telling them apart; the
# truth's fragments are the |TLEN| of its mate-1 records. (name, flag, contig, POS, CIGAR, TLEN).
PAIRED_TRUTH = [
    ("p_ok", 99, "c1", 101, "100M", 300), ("p_ok", 147, "c1", 301, "100M", -300),
    ("p_one_wrong", 99, "c1", 1001, "100M", 300), ("p_one_wrong", 147, "c1", 1201, "100M", -300),
    # mate 1 on the reverse strand, to the right; its TLEN negative
    ("p_swapped", 83, "c1", 2201, "100M", -300), ("p_swapped", 163, "c1", 2001, "100M", 300),
    ("p_unmapped_mate", 99, "c2", 101, "100M", 300), ("p_unmapped_mate", 147, "c2", 301, "100M", -300),
    ("p_wide", 99, "c2", 1001, "100M", 400), ("p_wide", 147, "c2", 1301, "100M", -400),
    ("p_half", 73, "c1", 5001, "100M", 500),  # mate 2 not in the truth: no pair
]
# Simulated fragments: 300 x 4, 400, 500: mean 350, sample variance (4 * 50^2 + 50^2 + 150^2) / 5 = 7000.

PAIRED_TOOL = [
    paired("p_ok", 99, "c1", 101, 60, "100M", 300), paired("p_ok", 147, "c1", 301, 60, "100M", -300),
    # mate 1 right and flagged proper, mate 2 on the other contig without 0x2: not properly paired
    paired("p_one_wrong", 67, "c1", 1001, 60, "100M", 0), paired("p_one_wrong", 129, "c2", 1201, 20, "100M", 0),
    # each mate where the other mate belongs: both wrong (right if the mates were confused), proper
    paired("p_swapped", 99, "c1", 2001, 0, "100M", 300), paired("p_swapped", 147, "c1", 2201, 0, "100M", -300),
    paired("p_unmapped_mate", 73, "c2", 101, 60, "100M", 0), paired("p_unmapped_mate", 133, "c2", 101, 0, "*", 0),
    paired("p_wide", 99, "c2", 1001, 60, "100M", 400), paired("p_wide", 147, "c2", 1301, 60, "100M", -400),
    paired("p_half", 73, "c1", 5001, 60, "100M", 0),
    paired("p_half", 133, "c1", 5001, 0, "*", 0),  # mate 2: not in the truth
]


class PairedRocTest(SamFiles):
    """Mates told apart by 0x40/0x80; the pair statistics worked out by hand in the comments."""
    TRUTH_LINES = [paired(n, flag, c, pos, 255, cigar, tlen) for n, flag, c, pos, cigar, tlen in PAIRED_TRUTH]
    TOOL_LINES = PAIRED_TOOL

    def test_truth(self):
        truth, fragments = roc.read_truth(self.truth)
        self.assertEqual(len(truth), 11)
        self.assertEqual(truth[("p_swapped", 1)], ("c1", True, 2200, 2300, False))
        self.assertEqual(truth[("p_swapped", 2)], ("c1", False, 2000, 2100, False))
        self.assertEqual(sorted(fragments), [300, 300, 300, 300, 400, 500])

    def test_pairs(self):
        res = roc.evaluate_all(self.truth, [("tool", self.tool)], 0.1)
        self.assertEqual(res["pairs"], 6)  # the truth's mate-1 records
        self.assertAlmostEqual(res["insert_mean"], 350)
        self.assertAlmostEqual(res["insert_sd"], 7000 ** 0.5)
        r = res["tools"]["tool"]
        # every mate is a read: 11 in the truth, 11 of them with a record, p_half's mate 2 unknown
        self.assertEqual((r["reads"], r["records"], r["missing"], r["unknown"], r["duplicates"]), (11, 11, 0, 1, 0))
        # mapped: all but p_unmapped_mate's mate 2; wrong: p_one_wrong mate 2 (Q20), p_swapped (Q0 twice)
        self.assertEqual((r["mapped"], r["correct"]), (10, 7))
        rows = {row["mapq"]: (row["mapped"], row["wrong"]) for row in r["roc"]}
        self.assertEqual((rows[60], rows[20], rows[0]), ((7, 0), (8, 1), (10, 3)))
        p = r["paired"]
        # pairs: the five with both mates in the truth (not p_half)
        self.assertEqual(p["pairs"], 5)
        # mate 1 correct: p_ok, p_one_wrong, p_unmapped_mate, p_wide, p_half of 6; mate 2: p_ok, p_wide of 5
        self.assertEqual((p["mate_reads"], p["mate_correct"]), ([6, 5], [5, 2]))
        self.assertAlmostEqual(p["mate_correct_fraction"][0], 5 / 6)
        self.assertAlmostEqual(p["mate_correct_fraction"][1], 2 / 5)
        # properly paired (0x2 on both): p_ok, p_swapped, p_wide; p_one_wrong has it on mate 1 only
        self.assertEqual(p["properly_paired"], 3)
        self.assertAlmostEqual(p["properly_paired_fraction"], 3 / 5)
        # both mates correct: p_ok, p_wide
        self.assertEqual(p["both_correct"], 2)
        self.assertAlmostEqual(p["both_correct_fraction"], 2 / 5)
        # insert sizes of the proper pairs' mate 1: 300, 300, 400 (p_one_wrong's lone 0x2 left out)
        self.assertAlmostEqual(p["insert_mean"], 1000 / 3)
        self.assertAlmostEqual(p["insert_sd"], 100 / 3 ** 0.5)

    def test_perfect_tool(self):
        """The truth against itself: every mate correct, every pair both correct; mason's truth flags
        its pairs proper (99/147, 83/163) but p_half (73) has no mate."""
        r = roc.evaluate_all(self.truth, [("truth", self.truth)], 0.1)["tools"]["truth"]
        p = r["paired"]
        self.assertEqual((r["correct"], p["both_correct"], p["properly_paired"]), (11, 5, 5))
        self.assertEqual(p["mate_correct"], [6, 5])
        self.assertAlmostEqual(p["insert_mean"], 320)  # 300 x 4, 400: p_half is no pair

    def test_command_line(self):
        p = subprocess.run([sys.executable, roc.__file__, "--truth", self.truth, f"tool={self.tool}"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("6 pairs, simulated insert size 350.0 +- 83.7", p.stdout)
        line = next(l for l in p.stdout.splitlines() if l.startswith("tool") and "333.3" in l)
        self.assertEqual(line.split()[1:], ["83.333", "40.000", "60.00", "40.000", "333.3", "57.7"])


if __name__ == "__main__":
    unittest.main()
