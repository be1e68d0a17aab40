#!/usr/bin/env python3
"""Interleaved A/B runs of `zbfs run` with different codecs on the same graph.

Each round runs every codec once, in turn, so that slow spells of a noisy machine fall on
all codecs alike. Per codec the script prints the median over rounds of the BFS time (the
sum of the searches' times), the harmonic-mean TEPS, the row + column wire bytes against
their raw volume, and the predecessor reduction's wire share; then each codec's median
BFS time relative to the first codec's, and the median of the per-round ratios (paired:
robust to slow spells that last a round). The question: does auto cost time where
compression does not pay?

    python3 bench/codec_ab.py --ranks 4 --scale 20 --rounds 5 --codecs none auto bitpack
    python3 bench/codec_ab.py --ranks 4 --scale 18 -- --network 1gbe

--vary names another `zbfs run` flag to take the values instead of --codec, for the same
interleaved comparison of anything else (the transports of issue 37):

    python3 bench/codec_ab.py --ranks 4 --scale 20 --partition 1d --vary transport --codecs two-sided rma
    python3 bench/codec_ab.py --ranks 2 --scale 20 --partition 1d --vary overlap --codecs off on -- --threads 1

--netcluster HOSTS runs the job on an emulated cluster instead (scripts/netcluster, root
only): HOSTS hosts, --ranks / HOSTS ranks each, over links shaped to --rate (tbf bucket
--burst). The overlap target of issue 37, a core per host on 1 Gbit/s links:

    sudo python3 bench/codec_ab.py --netcluster 2 --ranks 2 --scale 20 --partition 1d --rounds 7 \
        --vary overlap --codecs off on -- --threads 1 --codec none

--kernel sssp times SSSP's searches instead (`--kernels sssp`; the phases are summed over
its searches) and the wire-bytes table gives each exchange phase's bytes against the
first value's. The wire-bytes target of issue 39 (relaxation requests: row_exchange):

    python3 bench/codec_ab.py --kernel sssp --ranks 4 --scale 20 --partition 1d --rounds 3 -- --roots 8 --network 1gbe

Besides the phases, the overlap table gives, where folds were pipelined, their modelled
time, the time they held the slowest rank, and the modelled time hidden under computation.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record  # noqa: E402

EXCHANGES = ("row_exchange", "column_exchange")
# The phases whose wire bytes are set against the first value's.
WIRE_PHASES = ("row_exchange", "column_exchange", "termination_check", "predecessor_reduction")
SEARCH_PHASES = ("local_expansion", "column_exchange", "row_exchange", "termination_check", "predecessor_reduction")


def mpirun_prefix(ranks: int, mpirun: str) -> list[str]:
    cmd = [mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


NETCLUSTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "netcluster")


def launcher(args: argparse.Namespace) -> list[str]:
    if args.netcluster:
        return [NETCLUSTER, "run", "--name", "codecab", "--ranks-per-host", str(args.ranks // args.netcluster),
                "--np", str(args.ranks), "--"]
    return mpirun_prefix(args.ranks, args.mpirun)


def run_once(args: argparse.Namespace, codec: str, out: str) -> dict:
    cmd = launcher(args) + [os.path.abspath(args.binary), "run", "--scale", str(args.scale), "--partition", args.partition,
                            "--kernels", args.kernel, "--no-validate", "-q", f"--{args.vary}", codec] + args.extra
    try:
        record = run_record(cmd, timeout_s=args.timeout)
    except RunFailed as e:
        sys.exit(f"codec_ab: {e}")
    with open(out, "w") as f:
        json.dump(record, f)
    return record


def phase_sum(record: dict, phases, key: str, stat: str = "sum") -> float:
    return sum(record["phases"].get(p, {}).get(key, {}).get(stat, 0.0) for p in phases)


def sssp_phases(record: dict) -> dict:
    """The run's phases as SSSP's searches saw them: each counter summed over the searches."""
    phases: dict = {}
    for search in record["sssp_searches"]:
        for name, counters in search["phases"].items():
            into = phases.setdefault(name, {})
            for key, value in counters.items():
                if isinstance(value, dict) and "sum" in value:
                    kept = into.setdefault(key, {"sum": 0.0, "max": 0.0})
                    kept["sum"] += value["sum"]
                    kept["max"] += value["max"]
    return phases


def summarise(record: dict, kernel: str) -> dict:
    if kernel == "sssp":
        searches = record["sssp_searches"]
        record = dict(record, phases=sssp_phases(record))
        teps = record["summary"]["sssp"]["teps"]["harmonic_mean"]
    else:
        searches = record["searches"]
        teps = record["summary"]["teps"]["harmonic_mean"]
    raw = phase_sum(record, EXCHANGES, "raw_bytes")
    pred_raw = phase_sum(record, ["predecessor_reduction"], "raw_bytes")
    return {
        "bfs_s": sum(s["time_s"] for s in searches),
        "teps": teps,
        "wire": {p: phase_sum(record, [p], "wire_bytes") for p in WIRE_PHASES},
        "rowcol_wire": phase_sum(record, EXCHANGES, "wire_bytes") / raw if raw else 1.0,
        "pred_wire": phase_sum(record, ["predecessor_reduction"], "wire_bytes") / pred_raw if pred_raw else 1.0,
        "phases": {p: record["phases"].get(p, {}).get("time_s", {}).get("max", 0.0) for p in SEARCH_PHASES},
        "stream": [phase_sum(record, ["row_exchange"], key) for key in
                   ("stream_modelled_time_s", "stream_held_time_s", "overlap_time_s")],
        # --codec auto's trial (records before schema 9 have none): the path it kept.
        "trial": (record.get("codec_trial") or {}).get("chosen"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "zbfs"))
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--partition", default="2d")
    parser.add_argument("--kernel", choices=["bfs", "sssp"], default="bfs", help="the searches timed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--codecs", nargs="+", default=["none", "auto"], help="the values compared")
    parser.add_argument("--vary", default="codec", help="the `zbfs run` flag the values are given to (no dashes)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--netcluster", type=int, default=0, metavar="HOSTS",
                        help="run on an emulated cluster of this many hosts (scripts/netcluster; root)")
    parser.add_argument("--rate", default="1gbit", help="--netcluster: the links' rate")
    parser.add_argument("--burst", default="8000", help="--netcluster: tbf's bucket in bytes")
    parser.add_argument("extra", nargs="*", help="further `zbfs run` arguments, after --")
    args = parser.parse_args()

    results: dict[str, list[dict]] = {c: [] for c in args.codecs}
    if args.netcluster:
        if args.ranks % args.netcluster != 0:
            sys.exit("codec_ab: --ranks must be a multiple of --netcluster")
        up = subprocess.run([NETCLUSTER, "up", str(args.netcluster), "--rate", args.rate, "--burst", args.burst,
                             "--name", "codecab"], text=True, capture_output=True)
        if up.returncode != 0:
            sys.exit(f"codec_ab: netcluster up failed: {up.stderr.strip()}")
    try:
        rounds(args, results)
    finally:
        if args.netcluster:
            subprocess.run([NETCLUSTER, "down", "--name", "codecab"], capture_output=True)
    report(args, results)


def rounds(args: argparse.Namespace, results: dict[str, list[dict]]) -> None:
    # The emulated cluster's hosts see /tmp; a file written there by rank 0 is read here.
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for codec in args.codecs:
                row = summarise(run_once(args, codec, os.path.join(tmp, f"{codec}-{r}.json")), args.kernel)
                results[codec].append(row)
                trial = f"  trial kept the {row['trial']} path" if row["trial"] else ""
                print(f"round {r + 1}/{args.rounds} {codec:12s} {args.kernel} {row['bfs_s']:.3f} s  "
                      f"TEPS {row['teps']:.4g}{trial}", file=sys.stderr, flush=True)


def report(args: argparse.Namespace, results: dict[str, list[dict]]) -> None:
    where = f"netcluster {args.netcluster} hosts at {args.rate}" if args.netcluster else "shared memory"

    print(f"{args.ranks} ranks ({where}), scale {args.scale}, {args.partition}, {args.rounds} rounds "
          f"{' '.join(args.extra)}".rstrip())
    print(f"{args.vary:12s} {args.kernel + '_s(med)':>10s} {'min':>8s} {'max':>8s} {'TEPS(med)':>10s} "
          f"{'row+col wire%':>13s} {'pred wire%':>10s} {'vs first':>9s} {'paired':>8s}")
    base = None
    for codec in args.codecs:
        rows = results[codec]
        times = [r["bfs_s"] for r in rows]
        median = statistics.median(times)
        base = base or median
        print(f"{codec:12s} {median:10.3f} {min(times):8.3f} {max(times):8.3f} "
              f"{statistics.median(r['teps'] for r in rows):10.4g} "
              f"{100 * statistics.median(r['rowcol_wire'] for r in rows):12.1f}% "
              f"{100 * statistics.median(r['pred_wire'] for r in rows):9.1f}% "
              f"{100 * (median / base - 1):+8.1f}% "
              f"{100 * (statistics.median(r['bfs_s'] / f['bfs_s'] for r, f in zip(rows, results[args.codecs[0]])) - 1):+7.1f}%")
    for codec in args.codecs:
        kept = [r["trial"] for r in results[codec] if r["trial"]]
        if kept:
            print(f"{codec}: the codec trial kept the coded path in {kept.count('coded')} of {len(kept)} rounds")
    print(f"\nwire bytes per phase (MB, summed over ranks), median over rounds, and against {args.codecs[0]}'s:")
    print(f"{args.vary:12s} " + " ".join(f"{p[:18]:>18s}" for p in WIRE_PHASES))
    first = results[args.codecs[0]]
    for codec in args.codecs:
        rows = results[codec]
        cells = []
        for p in WIRE_PHASES:
            mb = statistics.median(r["wire"][p] for r in rows) / 1e6
            against = statistics.median(r["wire"][p] / f["wire"][p] for r, f in zip(rows, first) if f["wire"][p])\
                if any(f["wire"][p] for f in first) else 0.0
            cells.append(f"{mb:9.2f} {100 * against:6.1f}%" if against else f"{mb:9.2f} {'-':>7s}")
        print(f"{codec:12s} " + " ".join(f"{c:>18s}" for c in cells))
    print("\nslowest rank's time per phase, median over rounds (s):")
    print(f"{args.vary:12s} " + " ".join(f"{p[:18]:>18s}" for p in SEARCH_PHASES))
    for codec in args.codecs:
        rows = results[codec]
        print(f"{codec:12s} " + " ".join(f"{statistics.median(r['phases'][p] for r in rows):18.3f}"
                                         for p in SEARCH_PHASES))
    if any(r["stream"][0] + r["stream"][1] > 0 for rows in results.values() for r in rows):
        print("\npipelined folds (row exchange), summed over ranks, median over rounds (s):")
        print(f"{args.vary:12s} {'model_s':>10s} {'held_s':>10s} {'overlap_s':>10s} {'hidden%':>8s}  "
              "(held: in MPI calls and blocked at the ends)")
        for codec in args.codecs:
            rows = results[codec]
            model, held, hidden = (statistics.median(r["stream"][k] for r in rows) for k in range(3))
            if model + held == 0:
                continue
            print(f"{codec:12s} {model:10.4f} {held:10.4f} {hidden:10.4f} "
                  f"{100 * hidden / model if model else 0:7.1f}%")


if __name__ == "__main__":
    main()
