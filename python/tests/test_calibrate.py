"""zbfs-lab calibrate's fit (issue 78): non-negative least squares recovers known prices,
a rank that lost its core for a while does not move them, a record's steps become samples,
and bad arguments end in one line."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

from zbfs_lab import calibrate


class NonNegativeLeastSquares(unittest.TestCase):
    def test_recovers_non_negative_prices(self):
        rng = np.random.default_rng(7)
        a = rng.uniform(0, 1000, size=(200, 5))
        truth = np.array([2e-8, 0.0, 5e-9, 1e-7, 0.0])
        x = calibrate.nnls(a, a @ truth)
        np.testing.assert_allclose(x, truth, rtol=1e-6, atol=1e-15)

    def test_a_price_that_would_be_negative_is_zero(self):
        a = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
        b = np.array([3.0, 2.0, 1.0])  # falls with the first column: its least-squares price is negative
        x = calibrate.nnls(a, b)
        self.assertTrue((x >= 0).all())
        self.assertEqual(x[0], 0.0)
        self.assertAlmostEqual(x[1], 2.0)


def step(work: dict, time_s: float, mpi_s: float = 0.0) -> dict:
    return {"local_expansion": {"time_s": {"max": time_s, "mean": time_s}, "mpi_time_s": {"max": mpi_s, "mean": mpi_s},
                                "work": {k: {"max": v, "mean": v, "imbalance": 1.0} for k, v in work.items()}}}


class Fit(unittest.TestCase):
    def test_prices_from_samples_with_an_outlier(self):
        rng = np.random.default_rng(3)
        prices = {"steps": 1e-6, "list_entries": 4e-9, "bitmap_words": 1e-8}
        searches = []
        for _ in range(20):
            steps = []
            for _ in range(6):
                work = {"steps": 3, "list_entries": float(rng.integers(0, 50000)),
                        "bitmap_words": float(rng.integers(16, 4096))}
                steps.append({"work": step(work, sum(prices[k] * v for k, v in work.items()))})
            searches.append({"steps": steps})
        searches[0]["steps"][0]["work"]["local_expansion"]["time_s"]["mean"] += 0.05  # a lost core
        rows, seconds = calibrate.samples({"num_mpi_processes": 2, "searches": searches})
        self.assertEqual(len(rows), 120)
        result = calibrate.fit(rows, seconds)
        for kind, price in prices.items():
            self.assertAlmostEqual(result["seconds_per_unit"][kind] / price, 1.0, places=4)
        self.assertEqual(result["fit"]["outliers"], 1)
        self.assertGreater(result["fit"]["r2"], 0.999)

    def test_too_few_samples(self):
        with self.assertRaises(calibrate.CalibrationError):
            calibrate.fit([[1.0] * len(calibrate.WORK_KINDS)], [1.0])


def lab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zbfs_lab", *args], capture_output=True, text=True, timeout=120)


class Arguments(unittest.TestCase):
    def expect_one_line(self, done, command, mention):
        self.assertEqual(done.returncode, 2, done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith(f"zbfs-lab {command}: error: "), lines[0])
        self.assertIn(mention, lines[0])

    def test_bad_calibration_arguments(self):
        out = str(Path(tempfile.mkdtemp()) / "c.json")
        self.expect_one_line(lab("calibrate", "-o", out, "--ranks", "0,2"), "calibrate", "--ranks")
        self.expect_one_line(lab("calibrate", "-o", out, "--partitions", "3d"), "calibrate", "--partitions")
        self.expect_one_line(lab("calibrate", "-o", out, "--binary", "/nonexistent/zbfs"), "calibrate", "not found")

    def test_counted_compute_needs_costs(self):
        out = str(Path(tempfile.mkdtemp()) / "r.json")
        self.expect_one_line(lab("simulate", "-np", "2", "--compute", "counted", "-o", out), "simulate",
                             "--work-costs")
        self.expect_one_line(lab("simulate", "-np", "2", "--work-costs", "c.json", "-o", out), "simulate",
                             "--compute counted")


if __name__ == "__main__":
    unittest.main()
