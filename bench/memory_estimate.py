#!/usr/bin/env python3
"""The memory estimate against the measured peak (issue 56): for each rank count,
partition, scale and kernel choice, one run's JSON record gives the estimated peak per
rank (what the memory check compares with each rank's share of the available memory) and
the largest rank's peak: its part of the node's memory (peak_share_bytes: the peak
resident size less the MPI shared-memory pages it maps beyond its share, which every
rank on the node counts again) and, beside it, the plain peak resident size. The estimate
must never be below the share, and at most 1.3 times it. Prints a table and the worst
ratios; exits 1 when a run is outside [1, --most].

    python3 bench/memory_estimate.py --ranks 1 4 16 --scales 12 16 20 22
    python3 bench/memory_estimate.py --ranks 128 --scales 12 14 --partitions 1d 2d \\
        --mpirun-args=--oversubscribe

Weak scaling (--weak V: 2^V vertices a rank, the scale growing with the ranks, a power of
two; --square-grid: 2D on the most square grid, as a cluster of one rank a node would
run, rather than one node's P x 1) also prints each peak against the first rank count's:

    python3 bench/memory_estimate.py --weak 14 --ranks 16 32 64 128 --partitions 2d \\
        --square-grid --kernels bfs

A run under --force, so that the check never refuses one (the point is to measure it).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record  # noqa: E402

PARTITIONS = ["shared", "1d", "2d", "hybrid"]
KERNELS = ["bfs", "bfs,sssp"]


def most_square(ranks):
    rows = max(r for r in range(1, ranks + 1) if ranks % r == 0 and r * r <= ranks)
    return f"{rows}x{ranks // rows}"


def run_once(args, ranks, partition, scale, kernels, extra):
    cmd = [args.binary, "run", "--scale", str(scale), "--partition", partition, "--roots", str(args.roots),
           "--kernels", kernels, "--quiet", "--force"] + extra
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.square_grid and partition == "2d":
        cmd += ["--grid", most_square(ranks)]
    if ranks > 1 or partition != "shared":
        cmd = [args.mpirun, "-np", str(ranks)] + args.mpirun_args.split() + cmd
    try:
        memory = run_record(cmd)["memory"]
    except RunFailed as e:
        return None, [str(e)]
    return (memory["estimated_peak_bytes"], memory["peak_share_bytes"], memory["peak_rss_bytes"]), None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bin/zbfs")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--mpirun-args", default="--oversubscribe" + (" --allow-run-as-root" if os.geteuid() == 0 else ""))
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--scales", type=int, nargs="+", default=[12, 16, 20])
    parser.add_argument("--partitions", nargs="+", default=PARTITIONS, choices=PARTITIONS)
    parser.add_argument("--kernels", nargs="+", default=KERNELS, choices=KERNELS)
    parser.add_argument("--roots", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--most", type=float, default=1.3, help="the largest estimate / peak allowed")
    parser.add_argument("--extra", default="", help="more zbfs run options, e.g. '--prune'")
    parser.add_argument("--weak", type=int, default=None,
                        help="2^WEAK vertices a rank: each rank count's scale is WEAK + log2(ranks)")
    parser.add_argument("--square-grid", action="store_true", help="2D on the most square grid (--grid)")
    args = parser.parse_args()
    if args.weak is not None:
        if any(r & (r - 1) for r in args.ranks):
            parser.error("--weak needs rank counts that are powers of two")
        args.scales = [None]
    first_peak = {}
    print(f"{'ranks':>5} {'partition':>9} {'scale':>5} {'kernels':>8} {'estimate MiB':>13} {'peak MiB':>9} "
          f"{'ratio':>6} {'peak RSS MiB':>13}")
    worst = []
    for ranks in args.ranks:
        for partition in args.partitions:
            if partition == "shared" and ranks != 1:
                continue
            for scale in args.scales:
                if scale is None:
                    scale = args.weak + ranks.bit_length() - 1
                for kernels in args.kernels:
                    got, error = run_once(args, ranks, partition, scale, kernels, args.extra.split())
                    if got is None:
                        print(f"{ranks:>5} {partition:>9} {scale:>5} {kernels:>8}  failed: {error}")
                        continue
                    estimate, peak, rss = got
                    ratio = estimate / peak
                    worst.append((ratio, ranks, partition, scale, kernels))
                    flag = "" if 1.0 <= ratio <= args.most else "  <-- outside [1, %.2f]" % args.most
                    growth = ""
                    if args.weak is not None:
                        first = first_peak.setdefault((partition, kernels), peak)
                        growth = f"  peak x{peak / first:.3f} of the first"
                    print(f"{ranks:>5} {partition:>9} {scale:>5} {kernels:>8} {estimate / 2**20:>13.1f} "
                          f"{peak / 2**20:>9.1f} {ratio:>6.2f} {rss / 2**20:>13.1f}{flag}{growth}", flush=True)
    if not worst:
        return 1
    worst.sort()
    print(f"lowest ratio {worst[0][0]:.2f} {worst[0][1:]}; highest {worst[-1][0]:.2f} {worst[-1][1:]}")
    return 0 if worst[0][0] >= 1.0 and worst[-1][0] <= args.most else 1


if __name__ == "__main__":
    sys.exit(main())
