import tempfile
import unittest
from pathlib import Path

from zbfs_lab.experiment import ExperimentError, load

REPO = Path(__file__).resolve().parents[2]


def write(text: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="zbfs-lab-test-"))
    path = folder / "exp.toml"
    path.write_text(text)
    return path


class ExperimentTest(unittest.TestCase):
    def test_examples_load(self):
        files = sorted((REPO / "experiments").glob("*.toml"))
        self.assertGreaterEqual(len(files), 4)
        for f in files:
            with self.subTest(f.name):
                exp = load(f)
                self.assertGreater(len(exp.points), 0)

    def test_matrix_expands_in_key_order(self):
        exp = load(write('repetitions = 2\n[matrix]\nranks = [1, 2]\nscale = [10]\ncodec = ["none", "auto"]\n'))
        self.assertEqual([p.describe() for p in exp.points],
                         ["ranks=1 scale=10 codec=none", "ranks=1 scale=10 codec=auto",
                          "ranks=2 scale=10 codec=none", "ranks=2 scale=10 codec=auto"])
        self.assertEqual(exp.points[1].id, "ranks-1_scale-10_codec-auto")
        self.assertEqual(exp.repetitions, 2)
        self.assertEqual(exp.output, Path("results/exp"))

    def test_flags(self):
        exp = load(write('[zbfs]\nargs = ["--roots", "4"]\n[matrix]\nranks = [2]\nroute = ["grid2"]\n'
                         'no_dedup = [true, false]\ntime_waits = [false]\n'))
        self.assertEqual(exp.zbfs_args(exp.points[0]), ["run", "--roots", "4", "--route", "grid2", "--no-dedup"])
        self.assertEqual(exp.zbfs_args(exp.points[1]), ["run", "--roots", "4", "--route", "grid2"])

    def test_overrides(self):
        exp = load(write('output = "a"\n[zbfs]\nbinary = "b"\n[matrix]\nscale = [10]\n'), output="x", binary="y")
        self.assertEqual((exp.output, exp.binary), (Path("x"), "y"))
        self.assertEqual(len(exp.points), 1)  # one value: one run

    def test_errors_name_the_problem(self):
        cases = {
            "repetitions = 0\n": "repetitions must be at least 1",
            "repetitions = true\n": "repetitions must be an integer",
            "colour = 1\n": "unknown key(s) colour",
            "[matrix]\nscale = []\n": "matrix.scale is empty",
            "[matrix]\nranks = [0]\n": "matrix.ranks values must be positive integers",
            "[matrix]\nscale = [10, 10]\n": "matrix.scale repeats a value",
            "[matrix]\nScale = [10]\n": "is not a flag name",
            "[matrix]\nlink_rate = [\"1gbit\"]\n": "needs launcher.kind = \"netcluster\"",
            "[launcher]\nkind = \"slurm\"\n": "launcher.kind must be one of",
            "[zbfs]\nargs = [1]\n[matrix]\nscale = [10]\n": "zbfs.args must be a list of strings",
            "[matrix\n": "not valid TOML",
            "[zbfs]\nargs = [\"--roots\", \"4\"]\n": "has no [matrix] table",
        }
        for text, message in cases.items():
            with self.subTest(text):
                with self.assertRaises(ExperimentError) as caught:
                    load(write(text))
                self.assertIn(message, str(caught.exception))
                self.assertIn("exp.toml", str(caught.exception))
        with self.assertRaises(ExperimentError):
            load("/nonexistent/experiment.toml")


if __name__ == "__main__":
    unittest.main()
