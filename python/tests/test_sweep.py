import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from zbfs_lab import report, results
from zbfs_lab.experiment import load
from zbfs_lab.sweep import sweep

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_zbfs.py"


class SweepWithAFakeZbfs(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="zbfs-lab-sweep-"))
        self.log = self.dir / "calls.log"
        os.environ["FAKE_ZBFS_LOG"] = str(self.log)

    def experiment(self, codecs: str, timeout: float = 60):
        path = self.dir / "exp.toml"
        path.write_text(f'name = "fake"\nrepetitions = 2\ntimeout_s = {timeout}\n'
                        f'[zbfs]\nbinary = "{FAKE}"\n'
                        f'[matrix]\nscale = [10, 11]\ncodec = [{codecs}]\n')
        return load(path, output=self.dir / "out")

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def test_runs_stores_records_and_resumes(self):
        exp = self.experiment('"none", "auto"')
        out = io.StringIO()
        state = sweep(exp, out)
        self.assertEqual((state["done"], state["failed"]), (8, 0))
        self.assertEqual(len(self.calls()), 8)
        record = json.loads((exp.output / "runs" / "scale-11_codec-auto" / "rep-2.json").read_text())
        self.assertEqual((record["config"]["scale"], record["config"]["codec"]), (11, "auto"))
        self.assertTrue((exp.output / "experiment.toml").exists())
        self.assertIn("8/8 100%", out.getvalue())
        # Again: nothing left to do, nothing run.
        state = sweep(exp, io.StringIO())
        self.assertEqual((state["done"], len(self.calls())), (8, 8))
        # A lost record (an interrupted sweep) is the only run made again.
        (exp.output / "runs" / "scale-10_codec-none" / "rep-2.json").unlink()
        sweep(exp, io.StringIO())
        self.assertEqual(len(self.calls()), 9)
        self.assertIn("--scale 10 --codec none", self.calls()[-1])

    def test_failures_are_recorded_and_the_sweep_goes_on(self):
        exp = self.experiment('"broken", "none"')
        out = io.StringIO()
        state = sweep(exp, out)
        self.assertEqual((state["done"], state["failed"]), (4, 4))
        note = (exp.output / "failures" / "scale-10_codec-broken" / "rep-1.txt").read_text()
        self.assertIn("exit status 1", note)
        self.assertIn("zbfs: error: injected failure for codec broken", note)
        self.assertIn("--codec broken", note)
        self.assertIn("(zbfs: error: injected failure for codec broken)", out.getvalue())
        self.assertFalse((exp.output / "runs" / "scale-10_codec-broken" / "rep-1.json").exists())
        states = {p["id"]: p["runs"] for p in json.loads((exp.output / "sweep.json").read_text())["points"]}
        self.assertEqual(states["scale-10_codec-broken"], ["failed", "failed"])
        self.assertEqual(states["scale-10_codec-none"], ["done", "done"])
        # Failed runs are tried again by the next sweep.
        sweep(exp, io.StringIO())
        self.assertEqual(sum("--codec broken" in c for c in self.calls()), 8)

    def test_a_run_past_its_time_is_killed_and_recorded(self):
        exp = self.experiment('"hang"', timeout=1)
        exp.points = exp.points[:1]
        exp.repetitions = 1
        state = sweep(exp, io.StringIO())
        self.assertEqual(state["failed"], 1)
        self.assertIn("timed out after 1 s",
                      (exp.output / "failures" / "scale-10_codec-hang" / "rep-1.txt").read_text())

    def test_a_signal_ends_the_running_job_and_a_resumed_sweep_redoes_it(self):
        path = self.dir / "exp.toml"
        path.write_text(f'name = "fake"\nrepetitions = 1\ntimeout_s = 300\n[zbfs]\nbinary = "{FAKE}"\n'
                        f'[matrix]\nscale = [10]\ncodec = ["none"]\n')
        record = self.dir / "out" / "runs" / "scale-10_codec-none" / "rep-1.json"
        for sig in (signal.SIGTERM, signal.SIGINT):
            pids_file = self.dir / f"pids-{sig.name}"
            lab = subprocess.Popen([sys.executable, "-m", "zbfs_lab", "sweep", str(path), "-o", str(self.dir / "out")],
                                   env={**os.environ, "FAKE_ZBFS_PIDS": str(pids_file)}, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            pids = wait_for_pids(pids_file, lab)
            lab.send_signal(sig)
            _, err = lab.communicate(timeout=60)
            self.assertEqual(lab.returncode, 128 + sig, err)
            self.assertIn(f"interrupted ({sig.name})", err)
            for pid in pids:  # the job and its "rank", in the job's process group
                self.assertTrue(gone(pid), f"process {pid} outlived the sweep ({sig.name})")
            self.assertEqual(list((self.dir / "out").rglob("*.partial*")), [], sig.name)
            self.assertFalse(record.exists())
        # Resumed: the interrupted run is the one made again.
        state = sweep(load(path, output=self.dir / "out"), io.StringIO())
        self.assertEqual((state["done"], state["failed"]), (1, 0))
        self.assertEqual(json.loads(record.read_text())["schema"], "zbfs.run")

    def test_a_matrix_key_that_is_not_a_flag_is_refused(self):
        path = self.dir / "exp.toml"
        path.write_text(f'name = "typo"\n[zbfs]\nbinary = "{FAKE}"\n[matrix]\nsclae = [10]\nranks = [1]\n')
        for extra in (["--dry-run"], []):
            done = subprocess.run([sys.executable, "-m", "zbfs_lab", "sweep", str(path), "-o", str(self.dir / "o"),
                                   *extra], capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn("matrix key 'sclae' is not a flag of zbfs run (--sclae is unknown", done.stderr)
            self.assertEqual(done.stdout, "")
        self.assertEqual(self.calls(), [])


def wait_for_pids(pids_file: Path, lab: subprocess.Popen, timeout_s: float = 60) -> list[int]:
    """The process ids a running job wrote (see fake_zbfs.py)."""
    deadline = time.monotonic() + timeout_s
    while not pids_file.exists():
        if lab.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the job never started: {lab.communicate()[1]}")
        time.sleep(0.05)
    return [int(p) for p in pids_file.read_text().split()]


def gone(pid: int, wait_s: float = 10) -> bool:
    """Whether process `pid` has ended (a zombie awaiting its reaper counts as ended)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@unittest.skipUnless(os.environ.get("ZBFS_BINARY"), "ZBFS_BINARY is not set (ctest sets it to build/bin/zbfs)")
class TinySweepEndToEnd(unittest.TestCase):
    """The real zbfs under mpirun: a scale-10 sweep on 1 and 2 ranks, then its report, whose numbers
    must be the records' own."""

    def test_sweep_and_report(self):
        folder = Path(tempfile.mkdtemp(prefix="zbfs-lab-e2e-"))
        path = folder / "tiny.toml"
        path.write_text(f'name = "tiny"\nrepetitions = 2\ntimeout_s = 300\n'
                        f'[zbfs]\nbinary = "{os.environ["ZBFS_BINARY"]}"\n'
                        f'args = ["--roots", "4", "--threads", "1", "--network", "1gbe"]\n'
                        f'[matrix]\nranks = [1, 2]\nscale = [10]\ncodec = ["none", "bitpack"]\n')
        exp = load(path, output=folder / "results")
        state = sweep(exp, io.StringIO())
        failures = list((folder / "results" / "failures").rglob("*.txt"))
        self.assertEqual(state["failed"], 0, failures[0].read_text() if failures else "")
        self.assertEqual(state["done"], 8)

        loaded = results.load(folder / "results")
        data = report.write(loaded, folder / "report")
        for stem in ["time_breakdown", "teps_vs_ranks", "traffic", "model_vs_measured"]:
            self.assertIn(stem, data["figures"])
            for ext in ("png", "svg"):
                self.assertGreater((folder / "report" / f"{stem}.{ext}").stat().st_size, 1000)
        html = (folder / "report" / "index.html").read_text()
        self.assertIn('src="time_breakdown.png"', html)

        # The summary's TEPS: the median (of two: the mean) of the records' harmonic means.
        rows = {r[0]: r for r in data["tables"]["summary"]["rows"]}
        for ranks in (1, 2):
            for codec in ("none", "bitpack"):
                recs = [json.loads((folder / "results" / "runs" / f"ranks-{ranks}_scale-10_codec-{codec}" /
                                    f"rep-{k}.json").read_text()) for k in (1, 2)]
                want = sum(r["summary"]["teps"]["harmonic_mean"] for r in recs) / 2 / 1e6
                self.assertAlmostEqual(rows[f"ranks={ranks} codec={codec}"][2], want, places=6)
        # Traffic: bitpack's row exchange on 2 ranks, wire against raw, as the records have it.
        recs = [json.loads((folder / "results" / "runs" / "ranks-2_scale-10_codec-bitpack" / f"rep-{k}.json")
                           .read_text()) for k in (1, 2)]
        per_search = lambda r, c: r["phases"]["row_exchange"][c]["sum"] / len(r["searches"])  # noqa: E731
        row = next(r for r in data["tables"]["traffic"]["rows"]
                   if r[0] == "ranks=2 codec=bitpack" and r[1] == "row_exchange")
        self.assertAlmostEqual(row[2], sum(per_search(r, "raw_bytes") for r in recs) / 2)
        self.assertAlmostEqual(row[3], sum(per_search(r, "wire_bytes") for r in recs) / 2)
        self.assertLess(row[3], row[2])  # bitpack compresses

    def test_sigterm_ends_the_mpirun_job_and_its_ranks(self):
        folder = Path(tempfile.mkdtemp(prefix="zbfs-lab-signal-"))
        path = folder / "long.toml"
        path.write_text(f'name = "long"\nrepetitions = 1\ntimeout_s = 600\n'
                        f'[zbfs]\nbinary = "{os.environ["ZBFS_BINARY"]}"\nargs = ["--threads", "1"]\n'
                        f'[matrix]\nranks = [2]\nscale = [22]\n')
        lab = subprocess.Popen([sys.executable, "-m", "zbfs_lab", "sweep", str(path), "-o", str(folder / "out")],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(processes_naming(folder)) < 3:  # mpirun and two ranks
            self.assertIsNone(lab.poll(), lab.communicate()[1] if lab.poll() is not None else "")
            self.assertLess(time.monotonic(), deadline, "the ranks never started")
            time.sleep(0.1)
        lab.send_signal(signal.SIGTERM)
        _, err = lab.communicate(timeout=60)
        self.assertEqual(lab.returncode, 128 + signal.SIGTERM, err)
        deadline = time.monotonic() + 15
        while processes_naming(folder) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(processes_naming(folder), [], "mpirun or a rank outlived the sweep")
        self.assertEqual(list((folder / "out").rglob("*.partial*")), [])
        self.assertEqual(list((folder / "out" / "runs").rglob("*.json")), [])


def processes_naming(folder: Path) -> list[int]:
    """Live processes whose command line names `folder` (the sweep's mpirun and ranks do: --json)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(folder) in cmdline and state != "Z" and "zbfs_lab" not in cmdline:
            found.append(int(entry.name))
    return found


if __name__ == "__main__":
    unittest.main()
