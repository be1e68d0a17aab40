#!/usr/bin/env python3
"""Runs `mpirun -np P zbfs run` for each rank count, partitioning and scale, and prints
one line per configuration: harmonic-mean TEPS (median over repetitions, with the
spread), then the per-phase breakdown of the median run (the slowest rank's time per
phase, summed over the run's searches, and the bytes all ranks sent). Numbers come from
each run's JSON record. Rank counts above the core count run oversubscribed.

    python3 bench/mpi_sweep.py --ranks 1 2 4 --partitions 1d 2d --scales 16 22 --repeats 2
    python3 bench/mpi_sweep.py --ranks 4 --scales 20 20 -- --column-gather union
"""
import argparse
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record  # noqa: E402

PHASES = ["local_expansion", "column_exchange", "row_exchange", "termination_check", "predecessor_reduction"]


def mpirun_prefix(ranks, mpirun):
    # No binding: a rank alone on the machine should use every core for its threads
    # (zbfs splits the cores among the ranks of a node itself).
    cmd = [mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def run_once(args, ranks, partition, scale):
    cmd = mpirun_prefix(ranks, args.mpirun) + [
        args.binary, "run", "--scale", str(scale), "--roots", str(args.roots), "--partition", partition, "--quiet"]
    if not args.validate:
        cmd.append("--no-validate")
    cmd += args.extra
    try:
        return run_record(cmd)
    except RunFailed as e:
        sys.exit(f"mpi_sweep: {e}")


def phase_cells(run):
    phases = run.get("phases", {})
    cells = []
    for name in PHASES:
        p = phases.get(name)
        cells.append(f"{p['time_s']['max']:.3f}" if p else "-")
    sent = sum(p["raw_bytes"]["sum"] for name, p in phases.items() if name in PHASES)
    cells.append(f"{sent / 2**20:.1f}")
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bin/zbfs")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--partitions", nargs="+", default=["1d", "2d"], choices=["1d", "2d"])
    parser.add_argument("--scales", type=int, nargs=2, default=[16, 22], metavar=("FIRST", "LAST"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--validate", action="store_true", help="also validate (much slower)")
    parser.add_argument("extra", nargs="*", help="further zbfs run flags, after --")
    args = parser.parse_args()
    if shutil.which(args.mpirun) is None:
        sys.exit(f"mpi_sweep: {args.mpirun} not found")

    header = ["ranks", "part", "grid", "scale", "hmean GTEPS", "min..max", "median GTEPS", "BFS s"]
    header += [name.replace("_", " ")[:11] + " s" for name in PHASES] + ["sent MiB"]
    print(" | ".join(header))
    for ranks in args.ranks:
        for partition in args.partitions:
            for scale in range(args.scales[0], args.scales[1] + 1):
                runs = [run_once(args, ranks, partition, scale) for _ in range(args.repeats)]
                runs.sort(key=lambda r: r["summary"]["teps"]["harmonic_mean"])
                teps = [r["summary"]["teps"]["harmonic_mean"] / 1e9 for r in runs]
                median_run = runs[len(runs) // 2]
                bfs_s = sum(s["time_s"] for s in median_run["searches"])
                row = [str(ranks), partition, median_run["config"]["grid"], str(scale),
                       f"{statistics.median(teps):.3g}", f"{min(teps):.3g}..{max(teps):.3g}",
                       f"{median_run['summary']['teps']['median'] / 1e9:.3g}", f"{bfs_s:.3f}"]
                print(" | ".join(row + phase_cells(median_run)), flush=True)


if __name__ == "__main__":
    main()
