#!/usr/bin/env python3
"""Routes side by side: the access patterns of the aggregation literature, and the 1D BFS.

`patterns` runs build/bin/zbfs_route_patterns (bench/route_patterns.cpp) for every graph,
pattern, rank count, route and dedup setting, and prints per run the slowest rank's time
(median of the repeats), start-ups per rank (max, mean), bytes sent over all hops and
items merged away. It ends with the cost model's projection to --project ranks (default
4096) for each route: per rank, start-ups times the network's latency, plus the bytes per
rank measured at the largest rank count, scaled by the ratio of hop counts, over its
bandwidth (weak scaling: items per rank fixed). Start-ups: where the busiest rank's grew
between the two largest rank counts measured, they grow as the route's peer count does (at
most both directions to every peer: an upper bound when a rank has fewer reads than peers,
as in pointer doubling); where they did not (a local pattern: geometric graphs), they stay
as measured, since a rank's neighbourhood does not grow with P. --from-json FILE projects
the rows an earlier --json wrote.

`bfs` runs `zbfs run --partition 1d --route R` (and without a route) at one rank count and
prints the row exchange (the update exchange) of each: bytes, messages, start-ups per
rank, merged items, bytes per hop, measured and modelled time, and harmonic-mean TEPS.

Rank counts above the core count run oversubscribed: times are then a sanity check, the
counts and bytes are exact.

    python3 bench/route_bench.py patterns --ranks 4 8 16 --scale 14
    python3 bench/route_bench.py bfs --ranks 16 --scale 18 --direction top-down --routes direct grid2 hypercube
"""
import argparse
import json
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from zbfs_lab.runs import RunFailed, mpirun_command, run_output, run_record  # noqa: E402
ROUTES = ["direct", "sparse", "grid2", "gridk", "hypercube"]
NETWORKS = {"1gbe": (50.0e-6, 117.5e6), "10gbe": (12.0e-6, 1.175e9), "ib-hdr": (1.0e-6, 24.0e9)}


def mpirun(ranks, binary_args):
    return mpirun_command(("mpirun", "--oversubscribe", "--bind-to", "none"), ranks, binary_args)


# Start-ups per rank of one exchange (one direction) and its hops, by the route's shape.
def startups(route, p):
    if p == 1:
        return 0
    if route in ("direct", "sparse"):
        return p - 1
    if route == "grid2":
        m = math.ceil(math.sqrt(p))
        return m - 1 + math.ceil(p / m) - 1
    if route == "gridk":
        dims = balanced_dims(p, 3)
        return sum(d - 1 for d in dims)
    return math.ceil(math.log2(p))


def hops(route, p):
    if route in ("direct", "sparse"):
        return 1
    if route == "grid2":
        return 2
    if route == "gridk":
        return 3
    return int(math.log2(p)) + (0 if p & (p - 1) == 0 else 2)


def balanced_dims(p, count):
    primes, n, f = [], p, 2
    while n > 1:
        if f * f > n:
            primes.append(n)
            break
        if n % f == 0:
            primes.append(f)
            n //= f
        else:
            f += 1
    dims = [1] * count
    for q in sorted(primes, reverse=True):
        dims[dims.index(min(dims))] *= q
    return sorted(dims, reverse=True)


def projected_startups(rows, r, route, project):
    """The busiest rank's start-ups (requests and replies) at `project` ranks, from run r."""
    smaller = [x for x in rows if x["graph"] == r["graph"] and x["pattern"] == r["pattern"] and x["route"] == route
               and x["dedup"] == r["dedup"] and x["ranks"] < r["ranks"]]
    if smaller:
        previous = max(smaller, key=lambda x: x["ranks"])
        if r["startups_max"] <= 1.1 * previous["startups_max"]:
            return r["startups_max"]  # local: the neighbourhood stays as it is
    grown = r["startups_max"] * startups(route, project) / max(1, startups(route, r["ranks"]))
    return int(round(min(2 * startups(route, project), max(grown, r["startups_max"]))))


def sweep_patterns(args, binary):
    """Runs the patterns: one launch per graph and rank count; returns every run's row."""
    rows = []
    for graph in args.graphs:
        for p in args.ranks:
            # One launch per graph and rank count: the graph is built once for every run.
            cmd = mpirun(p, [binary, "--graph", graph, "--scale", str(args.scale), "--pattern",
                             ",".join(args.patterns), "--route", ",".join(args.routes), "--dedup", "both",
                             "--repeats", str(args.repeats)])
            for line in run_output(cmd, args.timeout).strip().splitlines():
                r = json.loads(line)
                rows.append(r)
                print(f"{graph:<10} {r['pattern']:<10} {p:>3} {r['route']:<9} {str(r['dedup']).lower():<5} "
                      f"{r['reads']:>9} {r['time_s']:>9.4f} {r['startups_max']:>8} {r['startups_mean']:>6.1f} "
                      f"{r['bytes']:>11} {r['merged']:>9}", flush=True)
    return rows


def patterns(args):
    binary = os.path.join(args.build, "bin", "zbfs_route_patterns")
    print(f"{'graph':<10} {'pattern':<10} {'P':>3} {'route':<9} {'dedup':<5} {'reads':>9} {'time_s':>9} "
          f"{'startups':>8} {'mean':>6} {'bytes':>11} {'merged':>9}")
    if args.from_json:
        with open(args.from_json) as f:
            rows = json.load(f)
        args.ranks = sorted({r["ranks"] for r in rows})
    else:
        rows = sweep_patterns(args, binary)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    top = max(args.ranks)
    print(f"\nprojection to {args.project} ranks (weak scaling, from P = {top}; reads: requests and replies), "
          "seconds per rank:")
    print(f"{'graph':<10} {'pattern':<10} {'route':<9} {'startups':>8} " +
          " ".join(f"{n:>10}" for n in NETWORKS))
    for graph in args.graphs:
        for pattern in args.patterns:
            for route in args.routes:
                measured = [r for r in rows if r["graph"] == graph and r["pattern"] == pattern and r["ranks"] == top
                            and r["route"] == route and r["dedup"]]
                if not measured:
                    continue
                r = measured[0]
                per_rank = r["bytes"] / top * hops(route, args.project) / hops(route, top)
                s = projected_startups(rows, r, route, args.project)
                cells = " ".join(f"{s * a + per_rank / b:>10.4f}" for a, b in NETWORKS.values())
                print(f"{graph:<10} {pattern:<10} {route:<9} {s:>8} {cells}")


def bfs(args):
    binary = os.path.join(args.build, "bin", "zbfs")
    print(f"1D BFS, {args.ranks} ranks, scale {args.scale}, {args.roots} roots, direction {args.direction}, "
          f"codec {args.codec}; row exchange (the update exchange), medians of {args.repeats}")
    print(f"{'route':<10} {'dedup':<5} {'raw_bytes':>11} {'wire_bytes':>11} {'messages':>8} {'startups':>8} "
          f"{'merged':>9} {'mpi_s':>8} {'model_s':>8} {'MTEPS':>8}  bytes per hop")
    for route in ["none"] + args.routes:
        for dedup in ((True,) if route == "none" else (True, False)):
            runs = []
            for _ in range(args.repeats):
                cmd = [binary, "run", "--scale", str(args.scale), "--roots", str(args.roots), "--partition", "1d",
                       "--no-validate", "--quiet", "--direction", args.direction, "--network", args.network,
                       "--codec", args.codec, "--threads", "1"]
                if route != "none":
                    cmd += ["--route", route] + ([] if dedup else ["--no-dedup"])
                runs.append(run_record(mpirun(args.ranks, cmd), args.timeout))
            med = lambda get: statistics.median(get(j) for j in runs)
            row = lambda j: j["phases"]["row_exchange"]
            hop = row(runs[0]).get("route", {}).get("hop_bytes", [])
            print(f"{route:<10} {str(dedup).lower():<5} {med(lambda j: row(j)['raw_bytes']['sum']):>11.0f} "
                  f"{med(lambda j: row(j)['wire_bytes']['sum']):>11.0f} {med(lambda j: row(j)['messages']['sum']):>8.0f} "
                  f"{med(lambda j: row(j)['messages']['max']):>8.0f} "
                  f"{med(lambda j: row(j).get('route', {}).get('merged_items', {}).get('sum', 0)):>9.0f} "
                  f"{med(lambda j: row(j)['mpi_time_s']['max']):>8.4f} "
                  f"{med(lambda j: row(j)['modelled_time_s']['max']):>8.4f} "
                  f"{med(lambda j: j['summary']['teps']['harmonic_mean']) / 1e6:>8.1f}  "
                  f"{' '.join(f'{b:.0f}' for b in hop)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--repeats", type=int, default=3)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--routes", nargs="+", default=ROUTES, choices=ROUTES)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("patterns", parents=[common])
    p.add_argument("--graphs", nargs="+", default=["kronecker", "gnm", "geometric"])
    p.add_argument("--patterns", nargs="+", default=["neighbours", "doubling", "overload"])
    p.add_argument("--ranks", nargs="+", type=int, default=[4, 8, 16, 32, 64])
    p.add_argument("--scale", type=int, default=14)
    p.add_argument("--project", type=int, default=4096)
    p.add_argument("--json", help="also write every run's figures to this file")
    p.add_argument("--from-json", help="project the rows of an earlier --json instead of running")
    b = sub.add_parser("bfs", parents=[common])
    b.add_argument("--ranks", type=int, default=16)
    b.add_argument("--scale", type=int, default=18)
    b.add_argument("--roots", type=int, default=4)
    b.add_argument("--direction", default="auto", choices=["auto", "top-down"])
    b.add_argument("--network", default="1gbe")
    b.add_argument("--codec", default="none")
    args = parser.parse_args()
    patterns(args) if args.command == "patterns" else bfs(args)


if __name__ == "__main__":
    try:
        main()
    except RunFailed as e:
        sys.exit(f"route_bench: {e}")
