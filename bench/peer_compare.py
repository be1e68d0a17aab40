#!/usr/bin/env python3
"""Runs zbfs and peer Graph500 codes built from their own sources, interleaved, at the same
scale, rank and thread counts, and prints TEPS ratios (zbfs / peer).

Peers are built outside this repository and given by path:
  --riken  RIKEN-RCCS/Graph500-BFS `runnable` (run as `runnable S -v 1 -n 64`: only the
           first tree is validated, so no search waits on its 10 s pause of `-v 0`);
           with --riken-prune also as `runnable S -v 1 -n 64 -C` (its SC24 forest
           pruning), a peer of its own ("riken -C")
  --gapbs  GAPBS `bfs` (shared memory only: one rank, `-g S -n 64`)
  --reference  the Graph500 reference `graph500_reference_bfs` (MPI, `S 16`)

--kernel sssp compares single-source shortest paths instead: zbfs `--kernels sssp` (shared
at one rank, the other partitions under mpirun), GAPBS `sssp -g S -n 64 -d D` (--gapbs
then names GAPBS's sssp; its integer weights in [1, 255] take --gapbs-delta, 2 as in
GAPBS's own benchmark of kron), and the reference `graph500_reference_bfs_sssp` (its sssp
mean_time), e.g.

  bench/peer_compare.py --kernel sssp --reference /tmp/g500ref/src/graph500_reference_bfs_sssp \
      --scales 20 --layouts 4x1 --partitions 1d '2d --grid 2x2' --repeats 3

TEPS is 2^S * 16 / mean search time for every code, so that the codes' different edge
counts (and RIKEN's shared edge count under -v 1) do not enter. Each (scale, layout) runs
every code once per repeat, codes interleaved, and the table shows medians. A second
table gives each code's peak resident memory on its largest rank (the most of the
repeats) and zbfs's against each peer's, and a third each code's kernel 1 time (median;
construction_time, GAPBS's Build Time) and how many times faster zbfs's is.

  bench/peer_compare.py --riken /tmp/riken/mpi/runnable --scales 20 22 \\
      --layouts 1x2 2x1 4x1 --repeats 3
"""
import argparse
import os
import re
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from zbfs_lab.runs import mpirun_command, run_command  # noqa: E402
MEAN_TIME = re.compile(r"^(?:bfs\s+)?mean_time:\s+([0-9.eE+-]+)\s*$", re.M)
SSSP_MEAN_TIME = re.compile(r"^sssp\s+mean_time:\s+([0-9.eE+-]+)\s*$", re.M)
GAPBS_AVERAGE = re.compile(r"^Average Time:\s+([0-9.eE+-]+)", re.M)
# Kernel 1: the Graph500 block's construction_time (zbfs, RIKEN, the reference), GAPBS's
# Build Time.
CONSTRUCTION = re.compile(r"^(?:construction_time:|Build Time:)\s+([0-9.eE+-]+)", re.M)


def mpirun(ranks, threads):
    return mpirun_command(("mpirun", "--oversubscribe", "--bind-to", "none", "-x", f"OMP_NUM_THREADS={threads}"),
                          ranks, [])


# Runs the command in a fresh process whose descendants are only this command's, and
# prints the largest resident set any of them reached: with mpirun, the busiest rank.
PEAK_RSS_WRAPPER = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[1:])
print("peer_compare peak rss kib:", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""
PEAK_RSS = re.compile(r"^peer_compare peak rss kib: (\d+)$", re.M)


def run(command, pattern, env=None, timeout=1800):
    """(mean BFS time in s, peak resident bytes of the largest rank, kernel 1's time in s or
    None where the code prints none). Every code, zbfs and its
    peers alike, runs through zbfs_lab's runner (its own process group, ended whole on a
    timeout) and is read from its printed result block, so all are measured the same way."""
    wrapped = [sys.executable, "-c", PEAK_RSS_WRAPPER] + command
    status, out, err = run_command(wrapped, timeout, env)
    if status is None:
        sys.exit(f"peer_compare: {' '.join(command)}: no result after {timeout} s")
    if status != 0:
        sys.exit(f"peer_compare: {' '.join(command)} failed ({status}):\n{err[-2000:]}")
    found = pattern.search(out)
    if not found:
        sys.exit(f"peer_compare: no mean BFS time in the output of {' '.join(command)}")
    rss = PEAK_RSS.search(err)
    built = CONSTRUCTION.search(out)
    return float(found.group(1)), int(rss.group(1)) * 1024 if rss else 0, float(built.group(1)) if built else None


def codes(args, scale, ranks, threads):
    """(name, command, pattern) for every code that runs at this layout."""
    zbfs = [args.zbfs, "run", "--scale", str(scale), "--roots", str(args.roots), "-q", "--threads", str(threads)]
    if args.no_validate:
        zbfs.append("--no-validate")
    out = []
    if args.kernel == "sssp":
        zbfs += ["--kernels", "sssp"]
        if args.reference:
            out.append(("reference", mpirun(ranks, threads) + [args.reference, str(scale), "16"], SSSP_MEAN_TIME))
        if args.gapbs and ranks == 1:
            out.append(("gapbs", [args.gapbs, "-g", str(scale), "-n", str(args.roots), "-d", str(args.gapbs_delta)],
                        GAPBS_AVERAGE))
        for partition in args.partitions:
            name, *flags = partition.split()
            if name == "shared":
                if ranks == 1:
                    out.append(("zbfs shared", zbfs + ["--partition", "shared"], SSSP_MEAN_TIME))
            elif ranks > 1:
                out.append((f"zbfs {partition}", mpirun(ranks, threads) + zbfs + ["--partition", name] + flags,
                            SSSP_MEAN_TIME))
        return out
    if args.riken:
        riken = mpirun(ranks, threads) + [args.riken, str(scale), "-v", "1", "-n", str(args.roots)]
        out.append(("riken", riken, MEAN_TIME))
        if args.riken_prune:
            out.append(("riken -C", riken + ["-C"], MEAN_TIME))
    if args.reference:
        out.append(("reference", mpirun(ranks, threads) + [args.reference, str(scale), "16"], MEAN_TIME))
    if args.gapbs and ranks == 1:
        out.append(("gapbs", [args.gapbs, "-g", str(scale), "-n", str(args.roots)], GAPBS_AVERAGE))
    for partition, extra in zbfs_variants(args):
        if partition == "shared":
            if ranks == 1:
                out.append((f"zbfs shared{extra}", zbfs + ["--partition", "shared"] + extra.split(), MEAN_TIME))
            continue
        out.append((f"zbfs {partition}{extra}", mpirun(ranks, threads) + zbfs + ["--partition"] + partition.split() +
                    extra.split(), MEAN_TIME))
    return out


def zbfs_variants(args):
    """(partition, extra flags) of every zbfs column: each partition, and with --prune its pruned run."""
    return [(p, extra) for p in args.partitions for extra in ([""] + ([" --prune"] if args.prune else []))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zbfs", default=os.path.join(HERE, "..", "build", "bin", "zbfs"))
    parser.add_argument("--riken", help="path of RIKEN Graph500-BFS's runnable")
    parser.add_argument("--riken-prune", action="store_true", help="also run RIKEN's code with its pruning (-C)")
    parser.add_argument("--gapbs", help="path of GAPBS's bfs")
    parser.add_argument("--reference", help="path of the Graph500 reference's graph500_reference_bfs")
    parser.add_argument("--scales", type=int, nargs="+", default=[20])
    parser.add_argument("--layouts", nargs="+", default=["1x2", "2x1", "4x1"], help="RANKSxTHREADS")
    parser.add_argument("--partitions", nargs="+", default=["1d", "2d", "shared"],
                        help="zbfs partitions, each with any flags of its own: '2d --grid 2x2'")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--no-validate", action="store_true", help="zbfs skips validation (its BFS time is unchanged)")
    parser.add_argument("--prune", action="store_true", help="also run every zbfs partition with --prune")
    parser.add_argument("--kernel", choices=["bfs", "sssp"], default="bfs", help="which kernel the codes run")
    parser.add_argument("--gapbs-delta", type=float, default=2, help="GAPBS sssp's -d (its weights are 1..255)")
    args = parser.parse_args()
    if not (args.riken or args.gapbs or args.reference):
        sys.exit("peer_compare: name at least one peer (--riken, --gapbs, --reference)")
    for path in [args.zbfs] + [p for p in (args.riken, args.gapbs, args.reference) if p]:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)) and not shutil.which(path):
            sys.exit(f"peer_compare: '{path}' is not an executable")
    layouts = []
    for text in args.layouts:
        match = re.fullmatch(r"(\d+)x(\d+)", text)
        if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
            sys.exit(f"peer_compare: layout '{text}' is not RANKSxTHREADS")
        layouts.append((int(match.group(1)), int(match.group(2))))

    rows = []
    for scale in args.scales:
        for ranks, threads in layouts:
            plan = codes(args, scale, ranks, threads)
            times = {name: [] for name, _, _ in plan}
            peaks = {name: [] for name, _, _ in plan}
            builds = {name: [] for name, _, _ in plan}
            for repeat in range(args.repeats):
                for name, command, pattern in plan:
                    seconds, peak, built = run(command, pattern)
                    times[name].append(seconds)
                    peaks[name].append(peak)
                    if built is not None:
                        builds[name].append(built)
                    print(f"scale {scale} {ranks}x{threads} repeat {repeat + 1}: {name} "
                          f"{seconds * 1e3:.3f} ms, peak rss per rank {peak / 2**20:.0f} MiB", file=sys.stderr,
                          flush=True)
            teps = {name: (2 ** scale) * 16 / statistics.median(t) for name, t in times.items()}
            memory = {name: max(p) for name, p in peaks.items()}
            kernel1 = {name: statistics.median(b) for name, b in builds.items() if b}
            rows.append((scale, f"{ranks} x {threads}", teps, memory, kernel1))

    peers = [p for p in ("riken", "riken -C", "gapbs", "reference") if any(p in r[2] for r in rows)]
    mine = ([f"zbfs {p}{extra}" for p, extra in zbfs_variants(args)] if args.kernel == "bfs" else
            [f"zbfs {p}" for p in args.partitions])
    print_table(rows, 2, peers, mine, "TEPS", lambda v: f"{v:.3g}", lambda m, p: m / p)
    # Peak resident memory of the largest rank, the highest of the repeats.
    print()
    print_table(rows, 3, peers, mine, "peak MiB", lambda v: f"{v / 2**20:.0f}", lambda m, p: m / p if p > 0 else None,
                " memory")
    # Kernel 1's time (median), and how many times faster zbfs builds the graph.
    print()
    print_table(rows, 4, peers, mine, "kernel 1 s", lambda v: f"{v:.3g}", lambda m, p: p / m if m > 0 else None,
                " kernel 1 speed")


def print_table(rows, column, peers, mine, unit, show, ratio, suffix=""):
    """One markdown table: each peer's values (rows[i][column][peer]) and zbfs / peer."""
    header = ["scale", "ranks x threads"] + [f"{p} {unit}" for p in peers]
    header += [f"{m} / {p}{suffix}" for p in peers for m in mine]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        values = row[column]
        cells = [str(row[0]), row[1]] + [show(values[p]) if p in values else "" for p in peers]
        for p in peers:
            for m in mine:
                r = ratio(values[m], values[p]) if m in values and p in values else None
                cells.append(f"{r:.2f}" if r is not None else "")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
