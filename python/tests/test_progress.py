import io
import unittest

from zbfs_lab.progress import Progress, clock


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class ProgressTest(unittest.TestCase):
    def test_clock(self):
        self.assertEqual([clock(7), clock(245), clock(3723)], ["0:07", "4:05", "1:02:03"])

    def test_eta_counts_only_runs_made_now(self):
        now = FakeClock()
        out = io.StringIO()
        p = Progress(5, out, width=10, now=now)
        p.skip("a")  # done by an earlier sweep: no time, no part of the estimate
        self.assertIsNone(p.eta())
        now.t += 10
        p.finish_run("b", 10.0, True)
        self.assertEqual(p.eta(), 30.0)  # 3 runs left at 10 s each
        now.t += 2
        p.finish_run("c", 2.0, False)
        self.assertEqual(p.eta(), 12.0)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 3)  # not a terminal: one line per run
        self.assertIn("1/5", lines[0])
        self.assertIn("done before: a", lines[0])
        self.assertIn("[####......] 2/5  40% elapsed 0:10 eta 0:30 | ok in 10.0 s: b", lines[1])
        self.assertIn("failed 1 | FAILED in 2.0 s: c", lines[2])


if __name__ == "__main__":
    unittest.main()
