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


class RocTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="test_roc.")
        cls.truth = os.path.join(cls.dir, "truth.sam")
        with open(cls.truth, "w") as f:
            f.write(HEADER + "".join(record(n, *t[:3], 255, t[3]) for n, t in TRUTH.items()))
        cls.tool = os.path.join(cls.dir, "tool.sam")
        with open(cls.tool, "w") as f:
            f.write(HEADER + "".join(TOOL))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

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
        truth = roc.read_truth(self.truth)
        self.assertEqual(len(truth), len(TRUTH))
        self.assertEqual(truth["true_deletion"], ("c2", False, 100, 320, True))
        self.assertEqual(truth["true_insertion"], ("c2", True, 2000, 2097, True))
        self.assertEqual(truth["exact"], ("c1", False, 100, 200, False))

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
        r = res["tools"]["truth"]
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


if __name__ == "__main__":
    unittest.main()
