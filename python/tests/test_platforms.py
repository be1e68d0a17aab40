"""Simulated platforms (zbfs_lab.platforms) and the simulate command's smpirun line
(zbfs_lab.simulate), without running SimGrid: the SMPI run itself is tested by
tests/simgrid/check_simulated_run.py."""
import io
import re
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from zbfs_lab import platforms, simulate


def cluster(platform):
    root = ET.fromstring(platforms.xml(platform))
    return root.find("zone").find("cluster").attrib


class PlatformTest(unittest.TestCase):
    def test_a_host_has_a_core_for_each_of_its_ranks(self):
        # With one core a host's ranks would compute one after another (SimGrid shares a
        # core's speed among its actors).
        self.assertEqual(cluster(platforms.make("fattree", 16, "ib-hdr"))["core"], "1")
        platform = platforms.make("fattree", 16, "ib-hdr", cores=4)
        self.assertEqual(cluster(platform)["core"], "4")
        self.assertEqual(platform.describe()["cores_per_host"], 4)
        with self.assertRaises(platforms.PlatformError):
            platforms.make("fattree", 16, "ib-hdr", cores=0)

    def test_every_topology_holds_its_hosts(self):
        for topology, hosts in (("fattree", 64), ("fattree3", 512), ("torus", 60), ("tofu", 96),
                                ("dragonfly", 256)):
            with self.subTest(topology=topology):
                platform = platforms.make(topology, hosts, "10gbe")
                attrib = cluster(platform)
                self.assertEqual(attrib["radical"], f"0-{hosts - 1}")
                fields = attrib["topo_parameters"]
                if topology.startswith("fattree"):
                    children = [int(c) for c in fields.split(";")[1].split(",")]
                    product = 1
                    for c in children:
                        product *= c
                    self.assertEqual(product, hosts)
                elif topology == "dragonfly":
                    parts = fields.split(";")
                    counts = [int(parts[0].split(",")[0]), int(parts[1].split(",")[0]),
                              int(parts[2].split(",")[0]), int(parts[3])]
                    self.assertEqual(counts[0] * counts[1] * counts[2] * counts[3], hosts)
                else:
                    dims = [int(d) for d in fields.split(",")]
                    product = 1
                    for d in dims:
                        product *= d
                    self.assertEqual(product, hosts)
                    if topology == "tofu":
                        self.assertEqual(dims[-3:], [2, 3, 2])
                    self.assertNotIn(1, dims)  # SimGrid would link a host to itself

    def test_links_follow_the_zbfs_presets(self):
        platform = platforms.make("fattree", 16, "1gbe")
        attrib = cluster(platform)
        self.assertAlmostEqual(float(attrib["bw"].removesuffix("Bps")), 117.5e6)
        # Four links between hosts under different leaves carry the preset's 50 us.
        self.assertAlmostEqual(float(attrib["lat"].removesuffix("s")) * 4, 50e-6)
        self.assertAlmostEqual(float(attrib["loopback_bw"].removesuffix("Bps")), 10e9)

    def test_oversubscription_thins_the_uplinks(self):
        full = platforms.make("fattree", 64, "ib-hdr", 1.0).parameters.split(";")
        thin = platforms.make("fattree", 64, "ib-hdr", 4.0).parameters.split(";")
        self.assertEqual(full[2], "1,8")
        self.assertEqual(thin[2], "1,2")

    def test_impossible_platforms_are_refused(self):
        with self.assertRaisesRegex(platforms.PlatformError, "multiple of 12"):
            platforms.make("tofu", 16, "tofu-d")
        with self.assertRaisesRegex(platforms.PlatformError, "unknown links"):
            platforms.make("torus", 8, "100gbe")
        with self.assertRaisesRegex(platforms.PlatformError, "at least 1"):
            platforms.make("fattree", 16, "1gbe", 0.5)
        with self.assertRaisesRegex(platforms.PlatformError, "at least 2 hosts"):
            platforms.make("torus", 1, "1gbe")
        with self.assertRaisesRegex(platforms.PlatformError, "unknown topology"):
            platforms.make("ring", 8, "1gbe")

    def test_hostfile_places_ranks_in_blocks(self):
        platform = platforms.make("torus", 4, "10gbe")
        self.assertEqual(platforms.hostfile(platform, 2).split(), ["node-0", "node-0", "node-1", "node-1", "node-2",
                                                                  "node-2", "node-3", "node-3"])


class SimulateCommandTest(unittest.TestCase):
    def test_the_run_prices_the_platforms_links_unless_told(self):
        platform = platforms.make("fattree", 8, "ib-hdr")
        sim = simulate.Simulation(platform, 16, 2, "/x/zbfs")
        with tempfile.TemporaryDirectory() as tmp:
            cmd = sim.command(Path(tmp), ["--scale", "8"], Path(tmp) / "r.json")
            self.assertTrue((Path(tmp) / "platform.xml").is_file())
            self.assertEqual(len((Path(tmp) / "hostfile").read_text().split()), 16)
        self.assertEqual(cmd[:3], ["smpirun", "-np", "16"])
        self.assertIn("--cfg=smpi/host-speed:1e+09f", cmd)
        tail = cmd[cmd.index("/x/zbfs"):]
        self.assertEqual(tail, ["/x/zbfs", "run", "--scale", "8", "--network", "ib-hdr", "--ranks-per-node", "2",
                                "--json", str(Path(tmp) / "r.json")])
        with tempfile.TemporaryDirectory() as tmp:
            cmd = sim.command(Path(tmp), ["--network", "shm"], Path(tmp) / "r.json")
        self.assertNotIn("ib-hdr", cmd)

    def test_measured_links_replace_the_presets_figures_in_platform_and_model(self):
        platform = platforms.make("fattree", 2, "1gbe", latency_s=13.2e-6, bandwidth_bytes_per_s=117.4e6)
        self.assertTrue(platform.custom_links)
        self.assertFalse(platforms.make("fattree", 2, "1gbe").custom_links)
        self.assertEqual(platform.describe()["latency_s"], 13.2e-6)
        cluster = ET.fromstring(platforms.xml(platform)).find("zone/cluster")
        self.assertEqual(cluster.get("bw"), "117400000Bps")
        self.assertEqual(cluster.get("lat"), f"{13.2e-6 / platforms.LINKS_ACROSS['fattree']:.9g}s")
        sim = simulate.Simulation(platform, 2, 1, "/x/zbfs")
        with tempfile.TemporaryDirectory() as tmp:
            cmd = sim.command(Path(tmp), ["--scale", "8"], Path(tmp) / "r.json")
        tail = cmd[cmd.index("/x/zbfs"):]
        self.assertEqual(tail[tail.index("--network"):tail.index("--json")],
                         ["--network", "1gbe", "--ranks-per-node", "1", "--network-latency", "13.2us",
                          "--network-bandwidth", "0.1174GB/s"])
        for latency, bandwidth in ((-1.0, None), (float("nan"), None), (None, 0.0), (None, float("inf"))):
            with self.assertRaises(platforms.PlatformError):
                platforms.make("fattree", 2, "1gbe", latency_s=latency, bandwidth_bytes_per_s=bandwidth)

    def test_a_simulation_past_its_time_ends_with_its_children(self):
        # smpirun starts the simulator as its child: a timeout must end both.
        with tempfile.TemporaryDirectory() as tmp:
            child_pid = Path(tmp) / "child.pid"
            fake = Path(tmp) / "smpirun"
            fake.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {child_pid}\nwait\n")
            fake.chmod(0o755)
            sim = simulate.Simulation(platforms.make("torus", 2, "1gbe"), 2, 1, sys.executable, smpirun=str(fake))
            started = time.monotonic()
            with self.assertRaisesRegex(simulate.SimulationError, "ran past"):
                simulate.run(sim, ["--scale", "6"], Path(tmp) / "r.json", timeout_s=1.0)
            self.assertLess(time.monotonic() - started, 30)
            pid = int(child_pid.read_text())
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and \
                    "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]:
                time.sleep(0.05)
            alive = Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
            self.assertFalse(alive, "the simulator's process outlived the timeout")
            self.assertFalse((Path(tmp) / "r.json").exists())

    def test_the_log_has_every_progress_line_after_its_wall_time(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "smpirun"
            fake.write_text(
                f"#!{sys.executable}\n"
                "import json, sys, time\n"
                "print('kernel 1: distributing the graph', file=sys.stderr, flush=True)\n"
                "time.sleep(0.3)\n"
                "print('search 1 of 1', file=sys.stderr, flush=True)\n"
                "print('the result block')\n"
                "record = sys.argv[sys.argv.index('--json') + 1]\n"
                "open(record, 'w').write(json.dumps({'simulated': {'simulator': 'fake'}}))\n")
            fake.chmod(0o755)
            sim = simulate.Simulation(platforms.make("torus", 2, "1gbe"), 2, 1, sys.executable, smpirun=str(fake))
            log = io.StringIO()
            data = simulate.run(sim, ["--scale", "6"], Path(tmp) / "r.json", timeout_s=60, log=log)
            self.assertEqual(data["simulated"]["simulator"], "fake")
            lines = log.getvalue().splitlines()
            self.assertEqual(len(lines), 2, lines)
            stamps = [float(re.match(r"\[\s*([0-9.]+) s\] ", line).group(1)) for line in lines]
            self.assertTrue(lines[0].endswith("kernel 1: distributing the graph"))
            self.assertTrue(lines[1].endswith("search 1 of 1"))
            self.assertGreaterEqual(stamps[1] - stamps[0], 0.2)

    def test_the_record_has_the_simulators_peak_memory(self):
        # The simulator is smpirun's child: its peak is what the record keeps.
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "smpirun"
            fake.write_text(
                "#!/bin/sh\n"
                f"{sys.executable} -c \"b = bytearray(b'x') * (96 << 20)\"\n"
                f"{sys.executable} -c \"import json, sys; a = sys.argv; "
                "open(a[a.index('--json') + 1], 'w').write(json.dumps({'simulated': {'simulator': 'fake'}}))\" \"$@\"\n")
            fake.chmod(0o755)
            sim = simulate.Simulation(platforms.make("torus", 2, "1gbe"), 2, 1, sys.executable, smpirun=str(fake))
            data = simulate.run(sim, ["--scale", "6"], Path(tmp) / "r.json", timeout_s=60)
            peak = data["simulated"]["simulator_peak_rss_bytes"]
            self.assertGreaterEqual(peak, 96 << 20)
            self.assertLess(peak, 1 << 30)

    def test_a_missing_build_is_named(self):
        sim = simulate.Simulation(platforms.make("torus", 2, "1gbe"), 2, 1, "/nonexistent/zbfs", smpirun="true")
        with self.assertRaisesRegex(simulate.SimulationError, "make smpi"):
            simulate.run(sim, ["--scale", "6"], "/tmp/never.json")




class SimgridLauncherTest(unittest.TestCase):
    """A sweep whose launcher is simgrid runs each point through zbfs-lab simulate."""

    def experiment(self, text):
        from zbfs_lab.experiment import load
        tmp = tempfile.mkdtemp()
        path = Path(tmp) / "e.toml"
        path.write_text(text)
        return load(str(path), str(Path(tmp) / "out"), None)

    def test_points_become_simulate_commands(self):
        from zbfs_lab.sweep import Launch
        e = self.experiment('name = "w"\n[zbfs]\nbinary = "build-smpi/bin/zbfs"\n'
                            '[launcher]\nkind = "simgrid"\nlinks = "10gbe"\n'
                            '[matrix]\nranks = [16, 64]\ntopology = ["fattree", "torus"]\nscale = [12]\n')
        self.assertEqual(len(e.points), 4)
        point = e.points[-1]
        cmd = Launch(e).command(point, e.zbfs_args(point) + ["--json", "/r/rep-0.json"])
        at = cmd.index("simulate")
        self.assertEqual(cmd[at:at + 5], ["simulate", "-np", "64", "--topology", "torus"])
        self.assertEqual(cmd[cmd.index("--links") + 1], "10gbe")
        self.assertEqual(cmd[cmd.index("-o") + 1], "/r/rep-0.json")
        self.assertEqual(cmd[cmd.index("--binary") + 1], "build-smpi/bin/zbfs")
        self.assertEqual(cmd[cmd.index("--") + 1:], ["--scale", "12"])

    def test_bad_platforms_are_refused(self):
        from zbfs_lab.experiment import ExperimentError
        with self.assertRaisesRegex(ExperimentError, "needs matrix.ranks"):
            self.experiment('name = "w"\n[launcher]\nkind = "simgrid"\n[matrix]\nscale = [12]\n')
        with self.assertRaisesRegex(ExperimentError, "topology 'ring'"):
            self.experiment('name = "w"\n[launcher]\nkind = "simgrid"\n[matrix]\nranks = [4]\ntopology = ["ring"]\n')
        with self.assertRaisesRegex(ExperimentError, "needs launcher.kind"):
            self.experiment('name = "w"\n[launcher]\nkind = "simgrid"\n[matrix]\nranks = [4]\nlink_rate = ["1gbit"]\n')


class SimgridComputeTest(unittest.TestCase):
    """The simulated computation's mode, as a launcher setting or a matrix key (issue 78)."""

    experiment = SimgridLauncherTest.experiment

    def test_compute_modes_reach_simulate(self):
        from zbfs_lab.sweep import Launch
        e = self.experiment('name = "w"\n[launcher]\nkind = "simgrid"\nwork_costs = "costs.json"\n'
                            '[matrix]\nranks = [16]\ncompute = ["counted", "none"]\nscale = [12]\n')
        self.assertEqual(len(e.points), 2)
        commands = [Launch(e).command(p, e.zbfs_args(p) + ["--json", "/r/rep-0.json"]) for p in e.points]
        counted = next(c for c in commands if "counted" in c)
        self.assertEqual(counted[counted.index("--compute") + 1], "counted")
        costs = counted[counted.index("--work-costs") + 1]
        self.assertTrue(Path(costs).is_absolute() and costs.endswith("costs.json"), costs)
        none = next(c for c in commands if "none" in c)
        self.assertNotIn("--work-costs", none)
        self.assertEqual(none[none.index("--") + 1:], ["--scale", "12"])

    def test_counted_needs_costs_and_modes_are_known(self):
        from zbfs_lab.experiment import ExperimentError
        with self.assertRaisesRegex(ExperimentError, "needs launcher.work_costs"):
            self.experiment('name = "w"\n[launcher]\nkind = "simgrid"\ncompute = "counted"\n[matrix]\nranks = [4]\n')
        with self.assertRaisesRegex(ExperimentError, "compute 'timed'"):
            self.experiment('name = "w"\n[launcher]\nkind = "simgrid"\n[matrix]\nranks = [4]\ncompute = ["timed"]\n')


if __name__ == "__main__":
    unittest.main()
