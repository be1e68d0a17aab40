#!/usr/bin/env python3
"""Three views of one search's exchanges at 1 Gbit/s (issue 57 item 5): the emulated
cluster (scripts/netcluster: hosts as network namespaces on this machine, links shaped by
tc), SimGrid (zbfs-lab simulate: the SMPI build on a fat tree of 1gbe links) and zbfs's
own alpha-beta model (`modelled_time_s` of the emulated run's record: its own traffic
priced at the links zbfs's ping-pong measured). SimGrid runs twice: on the 1gbe preset's
links, and on links of the emulated cluster's measured latency and bandwidth. Each point
runs the same `zbfs run` (no validation, codec none, one rank a host, one thread)
REPEATS times on each and prints, per exchange phase, the median of the slowest rank's
time in MPI (--time-waits: waiting for late ranks is left out on all) and the ratios to
the emulated figure.

    sudo python3 bench/simgrid_compare.py --hosts 2 4 --scale 18 --partitions 1d 2d

Needs root for the emulated cluster (network namespaces, tc) and the SMPI build
(make smpi). On a 2-core machine 4 emulated hosts take turns on the cores: their
exchanges then include scheduling waits that neither SimGrid nor the model price.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from zbfs_lab.runs import RunFailed, run_output, run_record  # noqa: E402
NETCLUSTER = ROOT / "scripts" / "netcluster"
PHASES = ("row_exchange", "column_exchange", "predecessor_reduction", "termination_check")


def sh(args: list[str], check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, text=True, capture_output=True, timeout=timeout)


def most_square(ranks: int) -> str:
    rows = max(r for r in range(1, ranks + 1) if ranks % r == 0 and r * r <= ranks)
    return f"{rows}x{ranks // rows}"


def zbfs_args(args: argparse.Namespace, hosts: int, partition: str) -> list[str]:
    out = ["--scale", str(args.scale), "--partition", partition, "--roots", str(args.roots), "--no-validate",
           "--quiet", "--codec", "none", "--threads", "1", "--time-waits"]
    if partition == "2d":
        # One host per rank: the cluster's grid is the most square (on one machine zbfs
        # would take hosts x 1).
        out += ["--grid", most_square(hosts)]
    return out + args.zbfs_args.split()


def phase_seconds(record: dict, key: str) -> dict[str, float]:
    return {p: record["phases"].get(p, {}).get(key, {}).get("max", 0.0) for p in PHASES}


def emulated(args: argparse.Namespace, hosts: int, partition: str, out: Path) -> dict:
    # --network measure: the run's model prices the links as zbfs's ping-pong finds them.
    command = [str(NETCLUSTER), "run", "--name", args.name, "--", str(args.binary), "run",
               *zbfs_args(args, hosts, partition), "--network", "measure"]
    try:
        return run_record(command, args.timeout, keep=out)
    except RunFailed as e:
        sys.exit(f"simgrid_compare: emulated run failed: {e}")


def simulated(args: argparse.Namespace, hosts: int, partition: str, out: Path, links: dict | None) -> dict:
    """On the 1gbe preset's links, or (links: a record's network.inter_node) on links of
    the figures zbfs measured."""
    command = [str(args.lab), "simulate", "-np", str(hosts), "--topology", "fattree", "--links", "1gbe",
               "--ranks-per-host", "1", "--binary", str(args.smpi_binary), "-o", str(out)]
    if links is not None:
        command += ["--latency", f"{links['latency_s']:.9g}", "--bandwidth", f"{links['bandwidth_bytes_per_s']:.9g}"]
    command += ["--", *zbfs_args(args, hosts, partition)]
    try:
        run_output(command, args.timeout)
    except RunFailed as e:
        sys.exit(f"simgrid_compare: simulated run failed: {e}")
    return json.loads(out.read_text())


def median_by_phase(records: list[dict], key: str) -> dict[str, float]:
    return {p: statistics.median(phase_seconds(r, key)[p] for r in records) for p in PHASES}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=Path, default=ROOT / "build" / "bin" / "zbfs")
    parser.add_argument("--smpi-binary", type=Path, default=ROOT / "build-smpi" / "bin" / "zbfs")
    parser.add_argument("--lab", type=Path, default=ROOT / ".venv" / "bin" / "zbfs-lab",
                        help="the zbfs-lab command (make lab installs it in .venv)")
    parser.add_argument("--hosts", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--partitions", nargs="+", default=["1d", "2d"])
    parser.add_argument("--scale", type=int, default=18)
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--burst", type=int, default=8000, help="tbf bucket in bytes (netcluster up --burst)")
    parser.add_argument("--name", default="zbsg")
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--zbfs-args", default="", help="more zbfs run arguments for every run")
    args = parser.parse_args()

    check = sh([str(NETCLUSTER), "check"], check=False)
    if check.returncode != 0:
        print(check.stdout.strip() or check.stderr.strip(), file=sys.stderr)
        return 1
    for binary in (args.binary, args.smpi_binary, args.lab):
        if not binary.exists():
            sys.exit(f"simgrid_compare: no {binary} (make build, make smpi, make lab)")

    work = Path(tempfile.mkdtemp(prefix="simgrid_compare_"))
    print("emulated: netcluster at 1 Gbit/s; SimGrid: a fat tree of the 1gbe preset's links (50 us, 117.5 MB/s) and\n"
          "of the emulated links' measured figures; model: the emulated run's traffic priced at those figures")
    print(f"{'hosts':>5} {'part':>4} {'phase':>21} {'emulated s':>11} {'SG 1gbe s':>10} {'SG meas s':>10} "
          f"{'model s':>9} {'SG1gbe/emu':>10} {'SGmeas/emu':>10} {'model/emu':>9}")
    for hosts in args.hosts:
        sh([str(NETCLUSTER), "down", "--name", args.name], check=False)
        sh([str(NETCLUSTER), "up", str(hosts), "--rate", "1gbit", "--burst", str(args.burst), "--name", args.name])
        try:
            for partition in args.partitions:
                emu = [emulated(args, hosts, partition, work / f"emu-{hosts}-{partition}-{i}.json")
                       for i in range(args.repeats)]
                links = emu[0]["network"]["inter_node"]
                print(f"      emulated links measured: {links['latency_s'] * 1e6:.1f} us, "
                      f"{links['bandwidth_bytes_per_s'] / 1e6:.1f} MB/s", flush=True)
                preset = [simulated(args, hosts, partition, work / f"sim-{hosts}-{partition}-{i}.json", None)
                          for i in range(args.repeats)]
                matched = [simulated(args, hosts, partition, work / f"simm-{hosts}-{partition}-{i}.json", links)
                           for i in range(args.repeats)]
                tables = [median_by_phase(emu, "mpi_time_s"), median_by_phase(preset, "mpi_time_s"),
                          median_by_phase(matched, "mpi_time_s"), median_by_phase(emu, "modelled_time_s")]
                for table in tables:
                    table["all"] = sum(table[p] for p in PHASES)
                for phase in list(PHASES) + ["all"]:
                    e, s1, s2, m = (table[phase] for table in tables)
                    if e == 0 and s1 == 0 and s2 == 0 and m == 0:
                        continue
                    ratio = (lambda x: f"{x / e:.2f}" if e > 0 else "-")
                    print(f"{hosts:>5} {partition:>4} {phase:>21} {e:>11.4f} {s1:>10.4f} {s2:>10.4f} {m:>9.4f} "
                          f"{ratio(s1):>10} {ratio(s2):>10} {ratio(m):>9}", flush=True)
        finally:
            sh([str(NETCLUSTER), "down", "--name", args.name], check=False)
    print(f"records in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
