#!/usr/bin/env python3
"""Tests of check_regressions.py on hand-made harness JSONs whose answers are worked out here."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_regressions as cr  # noqa: E402


def run(dir_, walls, correct=None, wrong=None):
    """A run folder's record: step label -> wall seconds; wtmap's roc results if given."""
    r = {"dir": dir_, "measure": {k: {"wall_s": v, "rc": "0"} for k, v in walls.items()}}
    if correct is not None:
        r["roc"] = {"tools": {"wtmap": {"correct": correct, "roc": [{"mapq": q, "wrong": w} for q, w in wrong.items()]}}}
    return r


class CheckRegressions(unittest.TestCase):
    def test_ratio_to_the_same_runs_baseline(self):
        # bwa mem 10 s, wtmap 2 s: 5x. New host twice as fast for both: still 5x, no regression.
        old = {"runs": [run("r", {"align/bwa_mem": 10, "align/wtmap_e2e": 2})]}
        new = {"runs": [run("r", {"align/bwa_mem": 5, "align/wtmap_e2e": 1})]}
        lines, bad = cr.compare(old, new, 0.15)
        self.assertFalse(bad)
        self.assertIn("5x -> 5x", lines[0])

    def test_a_slower_step_beyond_the_tolerance_regresses(self):
        old = {"runs": [run("r", {"align/bwa_mem": 10, "align/wtmap_e2e": 2, "search/wtmap": 1})]}
        # e2e 10/2.5 = 4x, -20 %: regression; search 10/1.1 = 9.09x, -9.1 %: within 15 %.
        new = {"runs": [run("r", {"align/bwa_mem": 10, "align/wtmap_e2e": 2.5, "search/wtmap": 1.1})]}
        lines, bad = cr.compare(old, new, 0.15)
        self.assertTrue(bad)
        e2e = next(l for l in lines if "align/wtmap_e2e" in l)
        search = next(l for l in lines if "search/wtmap" in l)
        self.assertIn("-20.0%", e2e)
        self.assertIn("REGRESSION", e2e)
        self.assertNotIn("REGRESSION", search)

    def test_bwa_aln_is_the_baseline_without_bwa_mem(self):
        old = {"runs": [run("r", {"align/bwa_aln": 8, "align/wtmap_e2e": 1})]}
        new = {"runs": [run("r", {"align/bwa_aln": 8, "align/wtmap_e2e": 0.5})]}
        lines, bad = cr.compare(old, new, 0.15)
        self.assertFalse(bad)
        self.assertIn("8x -> 16x align/bwa_aln (+100.0%)", lines[0])

    def test_fewer_correct_or_more_wrong_reads_regress(self):
        walls = {"align/bwa_mem": 10, "align/wtmap_e2e": 2}
        old = {"runs": [run("r", walls, 990, {60: 0, 20: 3})]}
        _, bad = cr.compare(old, {"runs": [run("r", walls, 991, {60: 0, 20: 2})]}, 0.15)
        self.assertFalse(bad)
        lines, bad = cr.compare(old, {"runs": [run("r", walls, 989, {60: 0, 20: 3})]}, 0.15)
        self.assertTrue(bad)
        self.assertTrue(any("correct reads: 990 -> 989  REGRESSION" in l for l in lines))
        lines, bad = cr.compare(old, {"runs": [run("r", walls, 990, {60: 1, 20: 3})]}, 0.15)
        self.assertTrue(bad)
        self.assertTrue(any("wrong at MAPQ >= 60: 0 -> 1  REGRESSION" in l for l in lines))

    def test_unmatched_runs_steps_and_failed_steps_are_not_judged(self):
        old = {"runs": [run("a", {"align/bwa_mem": 10, "align/wtmap_e2e": 2}), run("gone", {"align/bwa_mem": 1})]}
        failed = run("a", {"align/bwa_mem": 10, "align/wtmap_e2e": 9})
        failed["measure"]["align/wtmap_e2e"]["rc"] = "1"  # a failed step has no time to compare
        new = {"runs": [failed, run("fresh", {"align/bwa_mem": 1})]}
        lines, bad = cr.compare(old, new, 0.15)
        self.assertFalse(bad)
        self.assertTrue(any(l.startswith("a align/wtmap_e2e: only one side") for l in lines))
        self.assertIn("fresh: not in the recorded file (not judged)", lines)
        self.assertIn("gone: only in the recorded file (not judged)", lines)

    def test_command_line_exit_status(self):
        with tempfile.TemporaryDirectory() as d:
            old, new = os.path.join(d, "old.json"), os.path.join(d, "new.json")
            json.dump({"runs": [run("r", {"align/bwa_mem": 10, "align/wtmap_e2e": 2})]}, open(old, "w"))
            json.dump({"runs": [run("r", {"align/bwa_mem": 10, "align/wtmap_e2e": 4})]}, open(new, "w"))
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_regressions.py")
            self.assertEqual(subprocess.run([sys.executable, script, old, old], capture_output=True).returncode, 0)
            p = subprocess.run([sys.executable, script, old, new], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn("regressions found", p.stdout)


if __name__ == "__main__":
    unittest.main()
