"""zbfs-lab replay: `zbfs trace` plans, `smpirun -replay` replays in the traces' folder,
and the record joins the two; what fails says why and leaves no record (fake zbfs and
smpirun: the real pair is tests/simgrid/check_replay.py's)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from zbfs_lab import platforms, replay, simulate

FAKE_ZBFS = """#!{python}
import json, os, sys
a = sys.argv
if {fail}:
    print("zbfs: error: zbfs trace: plans exchanges without a codec", file=sys.stderr)
    sys.exit(2)
folder = a[a.index("--trace-dir") + 1]
os.mkdir(folder)
open(os.path.join(folder, "traces.txt"), "w").write("rank-0.trace\\n")
open(os.path.join(folder, "args"), "w").write(json.dumps(a))
plan = {{"schema": "zbfs.trace", "ranks": int(a[a.index("-P") + 1]), "searches": [{{"root": 1}}, {{"root": 2}}]}}
open(a[a.index("--json") + 1], "w").write(json.dumps(plan))
"""

FAKE_SMPIRUN = """#!{python}
import json, os, sys
assert os.path.isfile("traces.txt"), "not run in the traces' folder"
assert sys.argv[sys.argv.index("-replay") + 1] == "traces.txt"
open("smpirun-args", "w").write(json.dumps(sys.argv))
for a in sys.argv:
    if a.startswith("--log=smpi_replay.app:file:"):
        open(a.split(":file:", 1)[1], "w").write("0 isend 1 2 8 0.000000\\n0 waitall 0.000004\\n")
print("[0.002] [smpi_utils/INFO] Simulated time: 0.002 seconds. ", file=sys.stderr)
"""


ACTION_LOG = """0 barrier 0.000002
1 barrier 0.000002
0 allreduce 8 0 0.000004
1 allreduce 8 0 0.000004
0 isend 1 1 80 0.000000
0 irecv 1 1 16 0.000000
0 wait 1 0 1 0.000003
0 sleep 1e-06 0.000001
0 waitall 0.000002
1 isend 0 2 8 0.000000
1 irecv 0 2 8 0.000000
1 waitall 0.000007
1 compute 5000 0.000005
0 isend 1 7 24 0.000000
0 waitall 0.000001
1 isend 0 12 48 0.000001
1 waitall 0.000002
"""


class PhaseTimesTest(unittest.TestCase):
    def test_each_action_counts_in_its_exchange_by_tag(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "actions.log"
            log.write_text(ACTION_LOG)
            got = replay.phase_times(log, 2, 1)
        # Rank 0: the column gather's wait, probe and waitall; rank 1: two row exchanges.
        self.assertAlmostEqual(got["column_exchange"]["max_s"], 6e-6)
        self.assertAlmostEqual(got["column_exchange"]["mean_s"], 3e-6)
        self.assertAlmostEqual(got["row_exchange"]["max_s"], 10e-6)
        self.assertAlmostEqual(got["predecessor_reduction"]["max_s"], 1e-6)
        self.assertAlmostEqual(got["termination_check"]["max_s"], 4e-6)
        self.assertAlmostEqual(got["computation"]["max_s"], 5e-6)
        self.assertAlmostEqual(got["computation"]["mean_s"], 2.5e-6)
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "actions.log"
            log.write_text(ACTION_LOG)
            halved = replay.phase_times(log, 2, 2)
        self.assertAlmostEqual(halved["row_exchange"]["max_s"], 5e-6)

    def test_the_replay_logs_actions_only_when_asked(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = replay.Replay(platforms.make("fattree", 4, "ib-hdr"), 4, 1, "zbfs")
            self.assertFalse(any(a.startswith("--log=") for a in run.replay_command(Path(tmp))))
            run.phases = True
            logs = [a for a in run.replay_command(Path(tmp)) if a.startswith("--log=")]
            self.assertIn(f"--log=smpi_replay.app:file:{Path(tmp).resolve() / replay.ACTION_LOG}", logs)


class ReplayTest(unittest.TestCase):
    def fakes(self, tmp, fail=False):
        zbfs = Path(tmp) / "zbfs"
        zbfs.write_text(FAKE_ZBFS.format(python=sys.executable, fail=fail))
        zbfs.chmod(0o755)
        smpirun = Path(tmp) / "smpirun"
        smpirun.write_text(FAKE_SMPIRUN.format(python=sys.executable))
        smpirun.chmod(0o755)
        return str(zbfs), str(smpirun)

    def test_phases_come_from_the_action_log_which_goes(self):
        with tempfile.TemporaryDirectory() as tmp:
            zbfs, smpirun = self.fakes(tmp)
            kept = Path(tmp) / "kept"
            run = replay.Replay(platforms.make("fattree", 4, "ib-hdr"), 4, 1, zbfs, smpirun, keep_traces=str(kept),
                                phases=True)
            data = replay.run(run, ["--scale", "8", "--overlap", "off"], Path(tmp) / "r.json", timeout_s=60)
            # One row exchange of 4 us over the plan's two searches.
            self.assertAlmostEqual(data["simulated"]["phases"]["row_exchange"]["max_s"], 2e-6)
            self.assertFalse((kept / replay.ACTION_LOG).exists())

    def test_the_record_joins_the_plan_and_the_replay(self):
        with tempfile.TemporaryDirectory() as tmp:
            zbfs, smpirun = self.fakes(tmp)
            kept = Path(tmp) / "kept"
            run = replay.Replay(platforms.make("fattree", 4, "ib-hdr"), 4, 1, zbfs, smpirun, keep_traces=str(kept))
            data = replay.run(run, ["--scale", "8", "--overlap", "off"], Path(tmp) / "r.json", timeout_s=60)
            self.assertEqual(data["plan"]["ranks"], 4)
            self.assertAlmostEqual(data["simulated"]["time_s"], 0.002)
            self.assertAlmostEqual(data["simulated"]["mean_search_s"], 0.001)
            self.assertEqual(data["simulated"]["compute"], "none")
            self.assertIn("smpi/simulate-computation:no", data["simulated"]["smpi_config"])
            self.assertEqual(json.loads((Path(tmp) / "r.json").read_text()), data)
            # The plan's flags: the job's ranks, the platform's hosts as its nodes, the
            # probe's price; the replay on the platform written beside the traces.
            args = json.loads((kept / "args").read_text())
            self.assertEqual(args[args.index("--ranks-per-node") + 1], "1")
            self.assertEqual(float(args[args.index("--probe-cost") + 1]), simulate.PROBE_S)
            replayed = json.loads((kept / "smpirun-args").read_text())
            self.assertEqual(replayed[replayed.index("-np") + 1], "4")
            self.assertTrue((kept / "platform.xml").is_file())

    def test_counted_compute_passes_the_costs_and_keeps_computation(self):
        with tempfile.TemporaryDirectory() as tmp:
            zbfs, smpirun = self.fakes(tmp)
            costs = Path(tmp) / "costs.json"
            costs.write_text(json.dumps({"seconds_per_unit": {"steps": 1e-6}}))
            kept = Path(tmp) / "kept"
            run = replay.Replay(platforms.make("fattree", 4, "ib-hdr"), 4, 1, zbfs, smpirun, "counted", str(costs),
                                str(kept))
            data = replay.run(run, ["--scale", "8", "--ranks-per-node", "2"], Path(tmp) / "r.json", timeout_s=60)
            self.assertNotIn("smpi/simulate-computation:no", data["simulated"]["smpi_config"])
            self.assertEqual(data["simulated"]["work_costs"]["seconds_per_unit"], {"steps": 1e-6})
            args = json.loads((kept / "args").read_text())
            self.assertEqual(args[args.index("--work-costs") + 1], str(costs.resolve()))
            self.assertEqual(args.count("--ranks-per-node"), 1)  # the user's, not added again

    def test_a_failed_plan_says_why_and_leaves_no_record(self):
        with tempfile.TemporaryDirectory() as tmp:
            zbfs, smpirun = self.fakes(tmp, fail=True)
            run = replay.Replay(platforms.make("fattree", 4, "ib-hdr"), 4, 1, zbfs, smpirun)
            with self.assertRaisesRegex(simulate.SimulationError, "zbfs trace failed .*without a codec"):
                replay.run(run, ["--scale", "8", "--codec", "bitpack"], Path(tmp) / "r.json", timeout_s=60)
            self.assertFalse((Path(tmp) / "r.json").exists())

    def test_the_flags_it_gives_itself_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            zbfs, smpirun = self.fakes(tmp)
            run = replay.Replay(platforms.make("fattree", 4, "ib-hdr"), 4, 1, zbfs, smpirun)
            for flag in ("--json", "--trace-dir", "-P", "--probe-cost"):
                with self.assertRaisesRegex(simulate.SimulationError, flag):
                    replay.run(run, ["--scale", "8", flag, "x"], Path(tmp) / "r.json")

    def test_the_command_line_refuses_counted_without_costs(self):
        done = subprocess.run([sys.executable, "-m", "zbfs_lab", "replay", "-np", "4", "--compute", "counted", "-o",
                               "/tmp/never.json", "--", "--scale", "8"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertIn("--work-costs", done.stderr)


if __name__ == "__main__":
    unittest.main()
