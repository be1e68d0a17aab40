"""Every zbfs-lab command ends as zbfs does on bad input: one `zbfs-lab COMMAND: error:` line and a
non-zero exit, never a traceback, and no partial file left (issue 77)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from fixtures import record

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_zbfs.py"


def lab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zbfs_lab", *args], capture_output=True, text=True, timeout=120)


class CommandsAnswerBadInputInOneLine(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="zbfs-lab-errors-"))

    def expect_error(self, done: subprocess.CompletedProcess, command: str, mention: str, status: int):
        self.assertEqual(done.returncode, status, done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith(f"zbfs-lab {command}: error: "), lines[0])
        self.assertIn(mention, lines[0])
        self.assertEqual(list(self.dir.rglob("*.partial")), [])

    def test_sweep_files_that_are_not_experiments(self):
        folder = self.dir / "a-folder.toml"
        folder.mkdir()
        self.expect_error(lab("sweep", str(folder)), "sweep", "is a folder, not an experiment file", 2)
        binary = self.dir / "binary.toml"
        binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\xd0\xff\xfe" * 20)
        self.expect_error(lab("sweep", str(binary)), "sweep", "not a text file", 2)
        self.expect_error(lab("sweep", str(self.dir / "missing.toml")), "sweep", "no such file", 2)

    def test_a_matrix_value_that_is_not_a_list(self):
        path = self.dir / "scalar.toml"
        path.write_text(f'name = "scalar"\n[zbfs]\nbinary = "{FAKE}"\n[matrix]\nscale = "notalist"\n')
        for extra in (["--dry-run"], []):
            done = lab("sweep", str(path), "-o", str(self.dir / "out"), *extra)
            self.expect_error(done, "sweep", "matrix.scale must be a list of values", 2)
            self.assertEqual(done.stdout, "")

    def test_report_of_a_record_that_is_a_folder_and_an_output_that_cannot_be(self):
        (self.dir / "res" / "runs" / "point").mkdir(parents=True)
        (self.dir / "res" / "runs" / "point" / "rep-1.json").mkdir()
        self.expect_error(lab("report", str(self.dir / "res"), "-o", str(self.dir / "rep")), "report",
                          "is a folder, not a run record", 2)
        (self.dir / "res" / "runs" / "point" / "rep-1.json").rmdir()
        (self.dir / "res" / "runs" / "point" / "rep-1.json").write_bytes(b"\xff\xfe\x00binary")
        self.expect_error(lab("report", str(self.dir / "res"), "-o", str(self.dir / "rep")), "report",
                          "not valid JSON", 2)
        (self.dir / "a-file").write_text("x")
        (self.dir / "res" / "runs" / "point" / "rep-1.json").write_text(json.dumps(record(1, 10, "none", 1e6)))
        self.expect_error(lab("report", str(self.dir / "res"), "-o", str(self.dir / "a-file" / "out")), "report",
                          "cannot make the report folder", 1)


if __name__ == "__main__":
    unittest.main()
