#!/usr/bin/env python3
"""Reading a graph file: zbfs's binary edge list against text, on one rank count.

Writes the scale-S Kronecker graph once per format with `zbfs generate` (into --dir, kept
between runs unless --fresh), then runs `zbfs run --input FILE --roots 1 --no-validate`
--repeats times per format and takes the reading time from the run's JSON record
(generation_time_s: the slowest rank's time to read and parse its share, and to pack its
edges for kernel 1). Prints per format the median (min, max) read time, the file's size,
bytes and edges per second, and the time against the binary file's.

The files stay in the page cache between repeats (the first read warms it): this measures
parsing and decoding, not the disk. Rank counts above the core count run oversubscribed.

    python3 bench/input_bench.py --scale 22 --ranks 4
"""
import argparse
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from zbfs_lab.runs import RunFailed, mpirun_command, run_output, run_record  # noqa: E402
SUFFIX = {"binary": ".zel", "edgelist": ".txt", "mtx": ".mtx"}


def mpirun(ranks, args):
    return mpirun_command(("mpirun", "--oversubscribe", "--bind-to", "none"), ranks, args)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--formats", nargs="+", default=["binary", "edgelist"], choices=sorted(SUFFIX))
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "zbfs_input_bench"))
    parser.add_argument("--fresh", action="store_true", help="write the files again even if present")
    parser.add_argument("--zbfs", default=os.path.join(ROOT, "build", "bin", "zbfs"))
    args = parser.parse_args()
    if args.repeats < 1:
        sys.exit("input_bench: --repeats must be at least 1")
    os.makedirs(args.dir, exist_ok=True)

    rows = []
    for fmt in args.formats:
        path = os.path.join(args.dir, f"kronecker-s{args.scale}-e{args.edgefactor}{SUFFIX[fmt]}")
        if args.fresh or not os.path.exists(path):
            print(f"input_bench: writing {path}", file=sys.stderr)
            run_output(mpirun(args.ranks, [args.zbfs, "generate", path, "--scale", str(args.scale),
                                           "--edgefactor", str(args.edgefactor), "--to", fmt]), 3600)
        times = []
        edges = 0
        for rep in range(args.repeats):
            j = run_record(mpirun(args.ranks, [args.zbfs, "run", "--input", path, "--format", fmt, "--roots", "1",
                                               "--no-validate", "-q"]), 3600)
            times.append(j["generation_time_s"])
            edges = j["graph"]["num_input_edges"]
            print(f"input_bench: {fmt} repeat {rep + 1}: {times[-1]:.3f} s", file=sys.stderr)
        rows.append((fmt, os.path.getsize(path), edges, times))

    print(f"reading a scale-{args.scale} Kronecker edge list (edgefactor {args.edgefactor}) on {args.ranks} ranks, "
          f"{args.repeats} repeats; time: the slowest rank, median (min, max)")
    print(f"{'format':<10}{'file MB':>10}{'median s':>10}{'min s':>8}{'max s':>8}{'MB/s':>9}{'M edges/s':>11}"
          f"{'vs binary':>11}")
    binary = next((statistics.median(t) for f, _, _, t in rows if f == "binary"), None)
    for fmt, size, edges, times in rows:
        med = statistics.median(times)
        ratio = f"{med / binary:.1f}x" if binary else "-"
        print(f"{fmt:<10}{size / 1e6:>10.1f}{med:>10.3f}{min(times):>8.3f}{max(times):>8.3f}"
              f"{size / 1e6 / med:>9.0f}{edges / 1e6 / med:>11.1f}{ratio:>11}")


if __name__ == "__main__":
    try:
        main()
    except RunFailed as e:
        sys.exit(f"input_bench: {e}")
