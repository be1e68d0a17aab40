#!/usr/bin/env python3
"""The same BFS on an emulated cluster (scripts/netcluster) with shaped and unshaped links.

For each link setting (default: 1gbit and unshaped) the script brings up HOSTS emulated
hosts, runs `zbfs run` across them REPEATS times with each codec, and prints per run the
harmonic-mean TEPS, the BFS time, and the row + column exchange time as measured and as
modelled by the run's own measured network (`--network measure`). It then asks whether the
model predicts the slow network from the fast one: the traffic of the unshaped run,
priced at the shaped links' measured latency and bandwidth (`zbfs model`), against what
the shaped run measured.

With --time-waits each run times a barrier before every collective (zbfs run
--time-waits): the time the slowest rank spends waiting for the others is then reported
apart (wait), and "in MPI" is the collectives themselves, which is what the model prices.
A second table gives the model against the time in MPI for each exchange on its own.

What the emulation can measure depends on the machine: with more hosts than cores the
hosts' ranks take turns on the cores, and an exchange waits for its partner to be
scheduled (milliseconds), which no network model prices. tbf's bucket (--burst) lets a
message smaller than it pass unshaped after an idle gap, which a real wire does not; a
bucket of 8000 B keeps the links faithful for the small compressed messages. On a 2-core
machine, the faithful check of the model is 2 hosts with each grid:

  sudo python3 bench/netcluster_bench.py --hosts 2 --scale 20 --rates 1gbit --burst 8000 --time-waits --grid 1x2
  sudo python3 bench/netcluster_bench.py --hosts 2 --scale 20 --rates 1gbit --burst 8000 --time-waits --grid 2x1

Needs root (network namespaces, tc). Without it the script says why and exits 1.

  sudo python3 bench/netcluster_bench.py --scale 18 --repeats 2
  sudo python3 bench/netcluster_bench.py --scale 20 --rates 1gbit --time-waits
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NETCLUSTER = ROOT / "scripts" / "netcluster"
EXCHANGES = ("row_exchange", "column_exchange")


def sh(args: list[str], check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, text=True, capture_output=True)


def codecs_supported(binary: Path) -> bool:
    return "--codec" in sh([str(binary), "run", "--help"]).stdout


def most_square(ranks: int) -> str:
    rows = max(r for r in range(1, ranks + 1) if ranks % r == 0 and r * r <= ranks)
    return f"{rows}x{ranks // rows}"


def run_once(binary: Path, name: str, args: argparse.Namespace, codec: str, out: Path) -> dict:
    command = [str(NETCLUSTER), "run", "--name", name, "--", str(binary), "run", "--scale", str(args.scale),
               "--partition", args.partition, "--threads", str(args.threads), "--no-validate", "-q",
               "--network", "measure"]
    if codec != "none":
        command += ["--codec", codec]
    if args.partition == "2d":
        # The emulated hosts share one machine, where zbfs's own default would be a
        # hosts x 1 grid with no row exchange; the cluster's grid is the most square.
        command += ["--grid", args.grid or most_square(args.hosts)]
    if args.time_waits:
        command.append("--time-waits")
    command += args.zbfs_args.split()
    # A launch on the emulated hosts very rarely loses a daemon (mpirun then gives up after
    # netcluster's startup timeout); such a run is tried once more, and said so.
    for attempt in (1, 2):
        try:
            record = run_record(command, timeout_s=args.timeout)
            out.write_text(json.dumps(record))
            return record
        except RunFailed as e:
            failure = str(e)
        if attempt == 1:
            print(f"   run failed ({failure}); trying it once more", flush=True)
    sys.exit(f"netcluster_bench: run failed twice ({failure})")


def exchange_seconds(record: dict, key: str) -> float:
    return sum(record["phases"].get(p, {}).get(key, {}).get("max", 0.0) for p in EXCHANGES)


def predicted_exchange_seconds(binary: Path, record_path: Path, latency: float, bandwidth: float) -> float:
    """Row + column time of a recorded run re-priced at the given inter-node figures."""
    record = json.loads(record_path.read_text())
    done = sh([str(binary), "model", str(record_path), "--ranks", str(record["num_mpi_processes"]),
               "--network", "1gbe", "--network-latency", f"{latency}", "--network-bandwidth", f"{bandwidth}",
               "--ranks-per-node", "1"])
    searches = len(record["searches"])
    total = 0.0
    for line in done.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] in EXCHANGES:
            total += float(fields[-1]) * searches
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=Path, default=ROOT / "build" / "bin" / "zbfs")
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--scale", type=int, default=18)
    parser.add_argument("--partition", default="2d")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rates", nargs="+", default=["1gbit", "none"], help="tc rates; none: unshaped")
    parser.add_argument("--codecs", nargs="+", default=None, help="default: none, plus auto when zbfs has codecs")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--name", default="zbfsb")
    parser.add_argument("--burst", type=int, default=None,
                        help="tbf bucket of the shaped links in bytes (netcluster up --burst; default its own)")
    parser.add_argument("--grid", default=None, help="2D process grid RxC (zbfs run --grid; default the most square)")
    parser.add_argument("--zbfs-args", default="", help="further `zbfs run` arguments, e.g. '--transport rma'")
    parser.add_argument("--time-waits", action="store_true",
                        help="separate waiting for late ranks from time in the collectives (zbfs run --time-waits)")
    args = parser.parse_args()

    check = sh([str(NETCLUSTER), "check"], check=False)
    if check.returncode != 0:
        print(check.stdout.strip() or check.stderr.strip(), file=sys.stderr)
        return 1
    if not args.binary.exists():
        sys.exit(f"netcluster_bench: no binary at {args.binary} (build first)")
    codecs = args.codecs or (["none", "auto"] if codecs_supported(args.binary) else ["none"])
    if codecs == ["none"]:
        print("note: this zbfs has no --codec yet, so only uncompressed runs are measured", file=sys.stderr)

    work = Path(tempfile.mkdtemp(prefix="netcluster_bench_"))
    results: dict[tuple[str, str], list[dict]] = {}
    paths: dict[tuple[str, str], list[Path]] = {}
    for rate in args.rates:
        sh([str(NETCLUSTER), "down", "--name", args.name], check=False)
        up_args = [str(NETCLUSTER), "up", str(args.hosts), "--rate", rate, "--name", args.name]
        if args.burst and rate != "none":
            up_args += ["--burst", str(args.burst)]
        up = sh(up_args, check=False)
        if up.returncode != 0:
            sys.exit(f"netcluster_bench: {up.stderr.strip()}")
        try:
            for codec in codecs:
                for r in range(args.repeats):
                    out = work / f"{rate}_{codec}_{r}.json"
                    record = run_once(args.binary, args.name, args, codec, out)
                    results.setdefault((rate, codec), []).append(record)
                    paths.setdefault((rate, codec), []).append(out)
                    print(f"  {rate:>6} {codec:>6} run {r + 1}: "
                          f"{record['summary']['teps']['harmonic_mean'] / 1e6:.1f} MTEPS", file=sys.stderr)
        finally:
            sh([str(NETCLUSTER), "down", "--name", args.name], check=False)

    burst = f", tbf burst {args.burst} B" if args.burst else ""
    grid = f" {args.grid}" if args.grid else ""
    grid += f" {args.zbfs_args}" if args.zbfs_args else ""
    print(f"\n{args.hosts} emulated hosts, scale {args.scale}, {args.partition}{grid}, {args.threads} thread(s) per rank, "
          f"{args.repeats} runs each (medians){burst}\n")
    print("Row + column exchanges of the slowest rank, summed over the searches: the phases' time, the part of it"
          " inside MPI calls, the part spent waiting for late ranks before collectives (with --time-waits; not"
          " part of 'in MPI' then), and the model's time for their traffic on the run's measured network.\n")
    print("| links | codec | hmean MTEPS | BFS s (64 keys) | row+col phase s | row+col in MPI s | row+col wait s | "
          "row+col modelled s | model/MPI | wire MiB (row+col) | link latency | link bandwidth |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (rate, codec), records in results.items():
        med = lambda f: statistics.median(f(x) for x in records)  # noqa: E731
        measured = med(lambda x: exchange_seconds(x, "time_s"))
        in_mpi = med(lambda x: exchange_seconds(x, "mpi_time_s"))
        waiting = med(lambda x: exchange_seconds(x, "wait_time_s"))
        modelled = med(lambda x: exchange_seconds(x, "modelled_time_s"))
        wire = med(lambda x: sum(x["phases"].get(p, {}).get("wire_bytes", {}).get("sum", 0) for p in EXCHANGES))
        inter = records[0]["network"]["inter_node"]
        print(f"| {rate} | {codec} | {med(lambda x: x['summary']['teps']['harmonic_mean']) / 1e6:.1f} | "
              f"{med(lambda x: sum(s['time_s'] for s in x['searches'])):.3f} | {measured:.3f} | {in_mpi:.3f} | {waiting:.3f} | "
              f"{modelled:.3f} | {modelled / in_mpi if in_mpi else float('nan'):.2f} | {wire / 2**20:.1f} | "
              f"{inter['latency_s'] * 1e6:.1f} us | {inter['bandwidth_bytes_per_s'] / 1e6:.1f} MB/s |")

    print("\nEach exchange on its own (slowest rank, medians; exchanges a grid does not have are left out):\n")
    print("| links | codec | exchange | in MPI s | modelled s | model/MPI (each run) |")
    print("|---|---|---|---|---|---|")
    for (rate, codec), records in results.items():
        for phase in EXCHANGES:
            in_mpi = [x["phases"].get(phase, {}).get("mpi_time_s", {}).get("max", 0.0) for x in records]
            modelled = [x["phases"].get(phase, {}).get("modelled_time_s", {}).get("max", 0.0) for x in records]
            if max(in_mpi) <= 0:
                continue
            ratios = ", ".join(f"{m / t:.2f}" if t > 0 else "n/a" for m, t in zip(modelled, in_mpi))
            print(f"| {rate} | {codec} | {phase.replace('_', ' ')} | {statistics.median(in_mpi):.3f} | "
                  f"{statistics.median(modelled):.3f} | {ratios} |")

    shaped = [k for k in results if k[0] != "none"]
    predictable = [k for k in shaped if ("none", k[1]) in paths]
    if predictable:
        print("\nPrediction of the shaped links from the unshaped run (its traffic priced at the shaped links'"
              " measured figures):")
        for key in predictable:
            inter = results[key][0]["network"]["inter_node"]
            predicted = statistics.median(
                predicted_exchange_seconds(args.binary, p, inter["latency_s"], inter["bandwidth_bytes_per_s"])
                for p in paths[("none", key[1])])
            measured = statistics.median(exchange_seconds(x, "mpi_time_s") for x in results[key])
            base = statistics.median(exchange_seconds(x, "mpi_time_s") for x in results[("none", key[1])])
            base_model = statistics.median(exchange_seconds(x, "modelled_time_s") for x in results[("none", key[1])])
            print(f"  {key[0]} {key[1]}: predicted row+col {predicted:.3f} s, measured in MPI {measured:.3f} s "
                  f"({(predicted - measured) / measured * 100:+.0f}%); time the slower links add: predicted "
                  f"{predicted - base_model:.3f} s, measured {measured - base:.3f} s")
    for (rate, codec) in shaped:
        if codec != "none" and (rate, "none") in results:
            slow = statistics.median(exchange_seconds(x, "time_s") for x in results[(rate, "none")])
            fast = statistics.median(exchange_seconds(x, "time_s") for x in results[(rate, codec)])
            slow_mpi = statistics.median(exchange_seconds(x, "mpi_time_s") for x in results[(rate, "none")])
            fast_mpi = statistics.median(exchange_seconds(x, "mpi_time_s") for x in results[(rate, codec)])
            print(f"  {rate}: {codec} cuts row+col time {slow / fast:.1f}x against none "
                  f"({slow_mpi / fast_mpi:.1f}x inside MPI)")
    print(f"\nrecords: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
