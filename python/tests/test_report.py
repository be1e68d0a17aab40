import json
import math
import shutil
import tempfile
import unittest
from pathlib import Path

from fixtures import record, write_results
from zbfs_lab import report, results


class ReportFromFixtures(unittest.TestCase):
    """Plot and table code on records whose numbers the test chose."""

    @classmethod
    def setUpClass(cls):  # drawing the figures takes seconds: once for every test here
        self = cls
        self.dir = Path(tempfile.mkdtemp(prefix="zbfs-lab-report-"))
        points, params = {}, {}
        for ranks in (1, 2, 4):
            for codec in ("none", "bitpack"):
                wire = 1000.0 if codec == "none" else 100.0 * ranks
                pid = f"ranks-{ranks}_codec-{codec}"
                points[pid] = [record(ranks, 10 + int(math.log2(ranks)), codec, teps=t * 1e6, wire=wire,
                                      phase_time=0.004 * ranks) for t in (ranks, 2 * ranks, 6 * ranks)]
                params[pid] = {"ranks": ranks, "codec": codec}
        write_results(self.dir / "res", points, params)
        self.results = results.load(self.dir / "res")
        self.data = report.write(self.results, self.dir / "out")

    def test_loads_points_and_parameters(self):
        self.assertEqual(len(self.results.points), 6)
        self.assertEqual(self.results.varying(), ["ranks", "scale", "codec"])
        self.assertEqual(self.results.fixed()["network"], "1gbe")
        self.assertEqual(self.results.software(), "zbfs 0.1.0")

    def test_summary_is_the_median_of_the_repetitions(self):
        rows = {r[0]: r for r in self.data["tables"]["summary"]["rows"]}
        self.assertEqual(rows["ranks=4 scale=12 codec=bitpack"][1:3], [3, 8.0])  # median of 4, 8, 24 MTEPS
        self.assertEqual(rows["ranks=1 scale=10 codec=none"][2], 2.0)

    def test_breakdown_is_per_search_on_the_slowest_rank(self):
        rows = {r[0]: r for r in self.data["tables"]["time_breakdown"]["rows"]}
        # 0.004 * ranks s per phase over 4 searches: 1 ms per phase per rank.
        self.assertAlmostEqual(rows["ranks=2 scale=11 codec=none"][1], 2.0)

    def test_traffic_and_reduction(self):
        rows = [r for r in self.data["tables"]["traffic"]["rows"]
                if r[0] == "ranks=2 scale=11 codec=bitpack" and r[1] == "row_exchange"]
        self.assertEqual(len(rows), 1)
        raw, wire, reduction = rows[0][2], rows[0][3], rows[0][4]
        self.assertAlmostEqual(raw, 1000.0 * 3 / 4)  # sum over ranks (3x max in the fixture) per search
        self.assertAlmostEqual(wire, 200.0 * 3 / 4)
        self.assertAlmostEqual(reduction, 80.0)

    def test_model_table(self):
        rows = {r[0]: r for r in self.data["tables"]["model"]["rows"]}
        self.assertAlmostEqual(rows["ranks=1 scale=10 codec=none"][4], 2.0)  # the fixture's model: 2x MPI time

    def test_figures_tables_and_index(self):
        out = self.dir / "out"
        # Strong scaling needs one scale at several rank counts; this fixture is weak scaling.
        self.assertEqual(self.data["figures"],
                         ["time_breakdown", "teps_vs_ranks", "teps_weak_scaling", "teps_vs_scale", "traffic",
                          "model_vs_measured"])
        for stem in self.data["figures"]:
            self.assertTrue((out / f"{stem}.png").read_bytes().startswith(b"\x89PNG"))
            self.assertIn(b"<svg", (out / f"{stem}.svg").read_bytes()[:400])
        index = (out / "index.html").read_text()
        for stem in self.data["figures"]:
            self.assertIn(f'src="{stem}.png"', index)
        self.assertIn("<table>", index)
        self.assertIn("| ranks=4 scale=12 codec=bitpack | 3 | 8 |", (out / "summary.md").read_text())
        self.assertEqual(json.loads((out / "report.json").read_text())["varying"], ["ranks", "scale", "codec"])

    def test_codec_benchmark_table(self):
        bench = {"benchmarks": [
            {"name": "zipf gaps/bitpack/encode", "run_type": "iteration", "ratio": 0.2, "bits/id": 12.8,
             "entropy": 4.5, "Mids/s": 900.0},
            {"name": "zipf gaps/bitpack/decode", "run_type": "iteration", "ratio": 0.2, "bits/id": 12.8,
             "entropy": 4.5, "Mids/s": 1500.0},
            {"name": "zipf gaps/bitpack/decode_mean", "run_type": "aggregate"},
        ]}
        folder = self.dir / "with_bench"
        shutil.copytree(self.dir / "res", folder)
        (folder / "codec_bench.json").write_text(json.dumps(bench))
        data = report.write(results.load(folder), self.dir / "out2")
        self.assertEqual(data["tables"]["codecs"]["rows"], [["zipf gaps", "bitpack", 0.2, 12.8, 4.5, 900.0, 1500.0]])
        self.assertIn("codecs", data["figures"])

    def test_bad_folders(self):
        with self.assertRaisesRegex(results.ResultsError, "no such folder"):
            results.load(self.dir / "nothing")
        (self.dir / "plain").mkdir()
        with self.assertRaisesRegex(results.ResultsError, "no runs/ folder"):
            results.load(self.dir / "plain")
        bad = self.dir / "bad"
        (bad / "runs" / "p").mkdir(parents=True)
        (bad / "runs" / "p" / "rep-1.json").write_text("{not json")
        with self.assertRaisesRegex(results.ResultsError, "not valid JSON"):
            results.load(bad)
        (bad / "runs" / "p" / "rep-1.json").write_text('{"schema": "other"}')
        with self.assertRaisesRegex(results.ResultsError, "not a zbfs run record"):
            results.load(bad)


if __name__ == "__main__":
    unittest.main()
