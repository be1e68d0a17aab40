#!/usr/bin/env python3
"""Runs `zbfs run` at each of the scales given and prints one line per scale: harmonic-mean
TEPS (median over repetitions, with the spread), the median of the per-search median
TEPS, construction and generation time, and peak resident memory. Numbers come from
each run's JSON record.

Graph500 samples search keys among all vertices with an edge, so about 4% of 64-key runs
draw a key in a tiny component (a few edges, searched in microseconds); one such search
dominates the harmonic mean. The "small" column counts those searches over all
repetitions, so that such a harmonic mean is recognised for what it is.

    python3 bench/scale_sweep.py --scales 16 18 20 22 24 --repeats 3 --threads 2
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record  # noqa: E402


def run_once(binary, scale, threads, roots, validate, extra):
    cmd = [binary, "run", "--scale", str(scale), "--roots", str(roots), "--quiet"]
    if threads:
        cmd += ["--threads", str(threads)]
    if not validate:
        cmd.append("--no-validate")
    cmd += extra
    try:
        return run_record(cmd)
    except RunFailed as e:
        sys.exit(f"scale_sweep: {e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bin/zbfs")
    parser.add_argument("--scales", type=int, nargs="+", default=list(range(16, 25)),
                        help="the scales to run, each once (default 16 to 24)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0, help="OpenMP threads (0: default)")
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--validate", action="store_true", help="also validate (slower)")
    parser.add_argument("extra", nargs="*", help="further zbfs run flags, after --")
    args = parser.parse_args()

    print(f"{'scale':>5} {'hmean GTEPS':>12} {'min..max GTEPS':>16} {'median GTEPS':>13} {'small':>5} "
          f"{'construct s':>12} {'generate s':>11} {'peak RSS GiB':>13}")
    for scale in dict.fromkeys(args.scales):  # in the order given, each once
        runs = [run_once(args.binary, scale, args.threads, args.roots, args.validate, args.extra)
                for _ in range(args.repeats)]
        teps = [r["summary"]["teps"]["harmonic_mean"] / 1e9 for r in runs]
        construct = statistics.median(r["construction_time_s"] for r in runs)
        generate = statistics.median(r["generation_time_s"] for r in runs)
        rss = max(r["memory"]["peak_rss_bytes"] for r in runs) / 2**30
        median_teps = statistics.median(r["summary"]["teps"]["median"] / 1e9 for r in runs)
        small = sum(1 for r in runs for s in r["searches"]
                    if s["traversed_edges"] < r["summary"]["nedge"]["max"] / 2)
        print(f"{scale:>5} {statistics.median(teps):>12.3g} {min(teps):>7.3g}..{max(teps):<7.3g} "
              f"{median_teps:>13.3f} {small:>5} {construct:>12.3f} {generate:>11.3f} {rss:>13.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
