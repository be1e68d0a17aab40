import os
import sys
import tempfile
import unittest
from pathlib import Path

from zbfs_lab.runs import RunFailed, run_output, run_record

HERE = Path(__file__).resolve().parent
FAKE = [sys.executable, str(HERE / "fake_zbfs.py")]


class RunRecordWithAFakeZbfs(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="zbfs-lab-runs-"))
        os.environ["FAKE_ZBFS_LOG"] = str(self.dir / "calls.log")

    def test_returns_the_record_and_leaves_no_file(self):
        record = run_record([*FAKE, "run", "--scale", "12"])
        self.assertEqual(record["config"]["scale"], 12)
        call = (self.dir / "calls.log").read_text().split()
        self.assertEqual(call[:3], ["run", "--scale", "12"])
        self.assertEqual(call[3], "--json")
        self.assertFalse(Path(call[4]).exists())

    def test_a_failed_run_says_zbfs_last_line(self):
        with self.assertRaises(RunFailed) as caught:
            run_record([*FAKE, "run", "--codec", "broken"])
        self.assertIn("exit 1: zbfs: error: injected failure for codec broken", str(caught.exception))

    def test_a_run_past_its_time_is_ended(self):
        with self.assertRaises(RunFailed) as caught:
            run_record([*FAKE, "run", "--codec", "hang"], timeout_s=0.5)
        self.assertIn("no result after 0.5 s", str(caught.exception))

    def test_variables_reach_the_run(self):
        record = run_record([*FAKE, "run", "--scale", "11"], env={"FAKE_ZBFS_LOG": str(self.dir / "other.log")})
        self.assertEqual(record["config"]["scale"], 11)
        self.assertTrue((self.dir / "other.log").exists())

    def test_a_kept_record_stays_where_it_was_asked(self):
        kept = self.dir / "kept.json"
        record = run_record([*FAKE, "run", "--scale", "13"], keep=kept)
        self.assertEqual(record["config"]["scale"], 13)
        self.assertTrue(kept.exists())

    def test_a_kept_record_of_a_failed_run_is_not_there(self):
        kept = self.dir / "kept.json"
        with self.assertRaises(RunFailed):
            run_record([*FAKE, "run", "--codec", "broken"], keep=kept)
        self.assertFalse(kept.exists())

    def test_a_command_without_a_record_gives_its_output(self):
        self.assertIn("predicted TEPS: 4e+06", run_output([*FAKE, "model", "r.json", "--ranks", "4"]))
        with self.assertRaises(RunFailed) as caught:
            run_output([*FAKE, "run", "--codec", "broken"])
        self.assertIn("injected failure for codec broken", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
