#!/usr/bin/env python3
"""Tests of bench/trace_summary.py on a hand-made trace whose answers are worked out below
(ctest: BenchTraceSummary; or `python3 -m unittest -v test_trace_summary` in bench/)."""
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_summary  # noqa: E402

# Microseconds. Thread 1: seeds [0, 100), extension [100, 300) with device calls A [120, 180) and
# B [200, 290). Thread 2: seeds [50, 130), extension [130, 250) with device call C [130, 190).
# The parse stage and the writer's rescue are not mapping threads.
TRACKS = {
    "parse": [(0, 400, "batch 1")],
    "GPU 0 mapping thread 1": [(0, 100, "seeds"), (100, 300, "extension"), (120, 180, "extension: device call"),
                               (200, 290, "extension: device call")],
    "GPU 0 mapping thread 2": [(50, 130, "seeds"), (130, 250, "extension"), (130, 190, "extension: device call")],
    "GPU 0 writer's rescue": [(500, 900, "rescue")],
}


def trace_json(tracks):
    events = []
    for tid, (name, spans) in enumerate(tracks.items(), start=1):
        events.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_name", "args": {"name": name}})
        for begin, end, step in spans:
            events.append({"ph": "X", "pid": 1, "tid": tid, "name": step, "ts": begin, "dur": end - begin})
    return {"displayTimeUnit": "ms", "traceEvents": events}


class TraceSummaryTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "trace.json")
        with open(self.path, "w") as f:
            json.dump(trace_json(TRACKS), f)

    def tearDown(self):
        self.dir.cleanup()

    def test_tracks_read_back(self):
        tracks = trace_summary.load_tracks(self.path)
        self.assertEqual(set(tracks), set(TRACKS))
        self.assertEqual(sorted(tracks["GPU 0 mapping thread 2"]), sorted(TRACKS["GPU 0 mapping thread 2"]))

    def test_union_and_percentile(self):
        self.assertEqual(trace_summary.union_length([(0, 10, ""), (5, 20, ""), (30, 40, ""), (32, 35, "")]), 30)
        self.assertEqual(trace_summary.union_length([]), 0)
        self.assertEqual(trace_summary.percentile([3, 1, 2], 0.9), 3)  # nearest rank: ceil(2.7) = 3rd
        self.assertEqual(trace_summary.percentile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.9), 9)

    def test_threads_busy_share_of_the_mapping(self):
        s = trace_summary.summarize(trace_summary.load_tracks(self.path))
        # The mapping runs from 0 to 300 us; the writer's rescue (500-900) is not a mapping thread.
        self.assertAlmostEqual(s["mapping_seconds"], 300e-6)
        self.assertEqual(sorted(s["threads"]), ["GPU 0 mapping thread 1", "GPU 0 mapping thread 2"])
        one, two = s["threads"]["GPU 0 mapping thread 1"], s["threads"]["GPU 0 mapping thread 2"]
        self.assertAlmostEqual(one["busy_seconds"], 300e-6)  # device calls inside extension add nothing
        self.assertAlmostEqual(one["busy_share"], 1.0)
        self.assertAlmostEqual(two["busy_seconds"], 200e-6)
        self.assertAlmostEqual(two["busy_share"], 200 / 300)
        self.assertAlmostEqual(one["seconds"]["extension: device call"], 150e-6)

    def test_durations_by_concurrency(self):
        steps = trace_summary.summarize(trace_summary.load_tracks(self.path))["steps"]
        device = steps["extension: device call"]
        # A (60 us, midpoint 150: C runs too) and C (60 us, midpoint 160: A runs too) at 2; B alone.
        self.assertEqual(device["count"], 3)
        self.assertAlmostEqual(device["seconds"], 210e-6)
        self.assertAlmostEqual(device["median_ms"], 0.06)
        self.assertAlmostEqual(device["p90_ms"], 0.09)
        self.assertEqual(set(device["median_ms_by_concurrency"]), {"1", "2"})
        self.assertAlmostEqual(device["median_ms_by_concurrency"]["1"], 0.09)
        self.assertAlmostEqual(device["median_ms_by_concurrency"]["2"], 0.06)
        # Both seeds overlap at either midpoint (50 and 90); both extensions too (200 and 190).
        self.assertEqual(set(steps["seeds"]["median_ms_by_concurrency"]), {"2"})
        self.assertAlmostEqual(steps["seeds"]["median_ms"], 0.09)
        self.assertAlmostEqual(steps["extension"]["median_ms_by_concurrency"]["2"], 0.16)
        self.assertNotIn("rescue", steps)
        self.assertNotIn("batch 1", steps)

    def test_command_line_prints_and_writes_json(self):
        out_json = os.path.join(self.dir.name, "summary.json")
        stdout = io.StringIO()
        real = sys.stdout
        sys.stdout = stdout
        try:
            self.assertEqual(trace_summary.main([self.path, "--json", out_json]), 0)
        finally:
            sys.stdout = real
        text = stdout.getvalue()
        self.assertIn("mapping: 0.000 s", text)
        self.assertIn("GPU 0 mapping thread 2", text)
        self.assertIn("extension: device call", text)
        with open(out_json) as f:
            self.assertEqual(json.load(f)["steps"]["extension: device call"]["count"], 3)

    def test_a_trace_without_mapping_threads(self):
        with open(self.path, "w") as f:
            json.dump(trace_json({"parse": [(0, 10, "batch 1")]}), f)
        s = trace_summary.summarize(trace_summary.load_tracks(self.path))
        self.assertEqual(s, {"mapping_seconds": 0.0, "threads": {}, "steps": {}})


if __name__ == "__main__":
    unittest.main()
