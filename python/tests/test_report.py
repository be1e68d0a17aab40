import json
import math
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from fixtures import counter, record, write_results
from zbfs_lab import figures, report, results


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

    def test_runs_without_validation_show_a_dash(self):
        # --no-validate records carry no validation time (null): the report must not fail.
        folder = Path(tempfile.mkdtemp(prefix="zbfs-lab-report-"))
        runs = [record(2, 10, "none", teps=1e6) for _ in range(2)]
        for run in runs:
            run["summary"]["validate_time_s"] = None
        write_results(folder / "res", {"ranks-2": runs}, {"ranks-2": {"ranks": 2}})
        data = report.write(results.load(folder / "res"), folder / "out")
        row = data["tables"]["summary"]["rows"][0]
        self.assertTrue(math.isnan(row[4]))
        self.assertIn("| - |", (folder / "out" / "summary.md").read_text())
        shutil.rmtree(folder)

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


class FiguresReadWell(unittest.TestCase):
    """What a reader sees: titles inside the figure, no legend over a bar or a line, integer
    parameters with integer ticks, 2^k written as a power, byte panels in units that read easily,
    and one number format per table column. Checked on the drawn figures, before they are saved."""

    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="zbfs-lab-figures-"))
        points, params = {}, {}
        for ranks in (1, 2, 4):
            for scale in (10, 11):
                pid = f"ranks-{ranks}_scale-{scale}"
                # Traffic of a few hundred bytes to a few MiB: the panels need different units.
                rec = record(ranks, scale, "bitpack", teps=ranks * scale * 1e6, raw=300.0 * scale,
                             wire=90.0 * ranks, phase_time=0.003)  # equal bars: no free corner
                rec["phases"]["validation"]["raw_bytes"] = counter(2e6 * scale)  # MiB beside hundreds of bytes
                points[pid] = [rec]
                params[pid] = {"ranks": ranks, "scale": scale}
        write_results(cls.dir / "res", points, params)
        cls.drawn = {}
        save = figures._save

        def inspect(fig, out, stem):
            fig.tight_layout(rect=(0, 0.04, 1, 1))
            fig.canvas.draw()
            cls.drawn[stem] = cls.measure(fig)
            return save(fig, out, stem)

        with mock.patch.object(figures, "_save", inspect):
            cls.data = report.write(results.load(cls.dir / "res"), cls.dir / "out")

    @staticmethod
    def measure(fig) -> dict:
        renderer = fig.canvas.get_renderer()
        found = {"width": fig.bbox.width, "axes": []}
        for ax in fig.axes:
            legend = ax.get_legend()
            found["axes"].append({
                "title": ax.title.get_window_extent(renderer),
                "legend": legend.get_window_extent(renderer) if legend else None,
                "legend_texts": [t.get_text() for t in legend.get_texts()] if legend else [],
                "bars": [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0],
                "points": [pt for line in ax.get_lines() for pt in line.get_transform().transform(line.get_xydata())],
                "xticks": [t.get_text() for t in ax.get_xticklabels() if t.get_text()],
                "xscale": ax.get_xscale(),
                "ylabel": ax.get_ylabel(),
                "tallest": max((p.get_height() for p in ax.patches), default=0.0),
            })
        return found

    def test_every_figure_is_drawn(self):
        self.assertEqual(sorted(self.drawn), sorted(self.data["figures"]))
        self.assertIn("traffic", self.drawn)
        self.assertIn("teps_vs_scale", self.drawn)

    def test_titles_fit_and_legends_cover_nothing(self):
        for stem, fig in self.drawn.items():
            for ax in fig["axes"]:
                title = ax["title"]
                self.assertGreaterEqual(title.x0, 0, stem)
                self.assertLessEqual(title.x1, fig["width"], f"{stem}: the title runs off the figure")
                legend = ax["legend"]
                if legend is None:
                    continue
                self.assertLessEqual(legend.x1, fig["width"], f"{stem}: the legend runs off the figure")
                for bar in ax["bars"]:
                    self.assertFalse(legend.overlaps(bar), f"{stem}: the legend covers a bar")
                for x, y in ax["points"]:
                    self.assertFalse(legend.contains(x, y), f"{stem}: the legend covers a line's point")

    def test_integer_parameters_get_integer_ticks(self):
        for stem in ("teps_vs_ranks", "teps_vs_scale", "teps_weak_scaling"):
            if stem not in self.drawn:
                continue
            ticks = self.drawn[stem]["axes"][0]["xticks"]
            self.assertTrue(ticks, stem)
            for tick in ticks:
                self.assertRegex(tick.replace("\N{MINUS SIGN}", "-"), r"^\d+$", f"{stem}: tick {tick!r}")
        self.assertEqual(self.drawn["teps_vs_ranks"]["axes"][0]["xticks"], ["1", "2", "4"])

    def test_powers_of_two_are_superscripts(self):
        texts = self.drawn["teps_weak_scaling"]["axes"][0]["legend_texts"]
        self.assertTrue(texts)
        for text in texts:
            self.assertRegex(text, r"^\$2\^\{\d+\}\$ vertices/rank")

    def test_traffic_panels_choose_readable_units(self):
        units = []
        for ax in self.drawn["traffic"]["axes"]:
            units.append(ax["ylabel"])
            self.assertIn(ax["ylabel"], [name for name, _ in figures.BYTE_UNITS])
            self.assertGreaterEqual(ax["tallest"], 1.0, ax["ylabel"])
            self.assertLess(ax["tallest"], 1024.0, ax["ylabel"])
        self.assertGreater(len(set(units)), 1, "the fixture's panels span more than one unit")

    def test_each_table_column_has_one_number_format(self):
        index = (self.dir / "out" / "index.html").read_text()
        for table in re.findall(r"<tbody>(.*?)</tbody>", index):
            rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table)]
            for column in zip(*rows):
                numbers = [c for c in column if re.fullmatch(r"-?[\d,]+(\.\d+)?", c)]
                decimals = {len(c.split(".")[1]) if "." in c else 0 for c in numbers}
                self.assertLessEqual(len(decimals), 1, f"mixed formats in one column: {column}")

    def test_column_format(self):
        fmt = report.column_format([0.0123, 12.5, 1500.0, math.nan, "x"])
        self.assertEqual([fmt(v) for v in (0.0123, 12.5, 1500.0, math.nan, "x")],
                         ["0.0123", "12.5000", "1,500.0000", "-", "x"])
        self.assertEqual(report.column_format([3, 4.0, 12000])(12000), "12,000")


if __name__ == "__main__":
    unittest.main()


class KernelSummary(unittest.TestCase):
    """A run of --kernels sssp alone has no BFS figures in its summary: the SSSP's stand in."""

    def test_bfs_figures_first_then_sssp_alone(self):
        both = record(ranks=1, scale=10, codec="none", teps=5e8)
        both["summary"]["sssp"] = {"time_s": {"mean": 0.3}, "teps": {"harmonic_mean": 1e8},
                                   "validate_time_s": None}
        self.assertEqual(results.kernel_summary(both)["teps"]["harmonic_mean"], 5e8)
        alone = record(ranks=1, scale=10, codec="none", teps=5e8)
        alone["summary"].update({"teps": None, "bfs_time_s": None, "validate_time_s": None})
        alone["summary"]["sssp"] = both["summary"]["sssp"]
        self.assertEqual(results.kernel_summary(alone)["teps"]["harmonic_mean"], 1e8)
        self.assertEqual(results.kernel_summary(alone)["time_s"]["mean"], 0.3)
