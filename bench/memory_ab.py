#!/usr/bin/env python3
"""Interleaved runs of the one-process benchmark with what it holds in memory set two
ways, and optionally an older binary beside them, per scale: the median over rounds of
generation time, kernel 1's time, the median validation time per key, harmonic-mean
TEPS, the searches' top-down and bottom-up seconds, the graph's list bytes and peak
resident memory, from each run's JSON record. The questions of issue 38:

  --compare edge-list   the generated edge list kept or produced again
                        (`--edge-list keep|regenerate`): what does not holding it cost
                        in validation time, and what does it save?
  --compare adjacency   plain or compressed lists (`--adjacency plain|compressed`):
                        what do compressed lists cost in kernel 1 and search time, and
                        what do they save?

    python3 bench/memory_ab.py --scales 20 22 24 --rounds 2 --roots 8 --threads 2
    python3 bench/memory_ab.py --compare adjacency --scales 20 22 --rounds 3 --no-validate
    python3 bench/memory_ab.py --scales 22 --baseline /tmp/old/build/bin/zbfs

A baseline binary runs with its own defaults (an older zbfs has neither flag).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record  # noqa: E402


def run_once(binary, scale, threads, roots, extra):
    cmd = [binary, "run", "--scale", str(scale), "--partition", "shared", "--roots", str(roots), "--quiet"] + extra
    if threads:
        cmd += ["--threads", str(threads)]
    try:
        return run_record(cmd)
    except RunFailed as e:
        sys.exit(f"memory_ab: {e}")


def summary(runs):
    def med(values):
        return statistics.median(values)

    return {
        "generation": med(r["generation_time_s"] for r in runs),
        "kernel1": med(r["construction_time_s"] for r in runs),
        "validate": med(statistics.median(s.get("validate_time_s", 0.0) for s in r["searches"]) for r in runs),
        "teps": med(r["summary"]["teps"]["harmonic_mean"] for r in runs),
        "top_down": med(sum(s["phases_s"]["top_down"] for s in r["searches"]) for r in runs),
        "bottom_up": med(sum(s["phases_s"]["bottom_up"] for s in r["searches"]) for r in runs),
        "lists": med(r["memory"].get("adjacency_bytes", 0) for r in runs) / 2**20,
        "rss": med(r["memory"]["peak_rss_bytes"] for r in runs) / 2**30,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bin/zbfs")
    parser.add_argument("--baseline", help="an older zbfs binary to run beside them, with its defaults")
    parser.add_argument("--scales", type=int, nargs="+", default=[20, 22])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--compare", choices=["edge-list", "adjacency"], default="edge-list")
    parser.add_argument("--no-validate", action="store_true", help="searches only (validation time shows 0)")
    args = parser.parse_args()
    if args.rounds < 1 or args.roots < 1:
        sys.exit("memory_ab: --rounds and --roots must be at least 1")

    flag = "--" + args.compare
    settings = ["keep", "regenerate"] if args.compare == "edge-list" else ["plain", "compressed"]
    common = ["--no-validate"] if args.no_validate else []
    variants = [(setting, args.binary, [flag, setting] + common) for setting in settings]
    if args.baseline:
        variants.insert(0, ("baseline", args.baseline, common))
    validated = "not validated" if args.no_validate else "validated"
    print(f"one process, {args.threads or 'default'} threads, {args.roots} keys {validated}, "
          f"medians of {args.rounds} interleaved rounds")
    print(f"{'scale':>5} {'variant':<11} {'gen_s':>8} {'kernel1_s':>10} {'validate_s':>11} {'hmean TEPS':>11} "
          f"{'vs first':>9} {'top-down_s':>11} {'bottom-up_s':>12} {'lists':>11} {'peak RSS':>10}")
    for scale in args.scales:
        runs = {name: [] for name, _, _ in variants}
        for _ in range(args.rounds):
            for name, binary, extra in variants:
                runs[name].append(run_once(binary, scale, args.threads, args.roots, extra))
        first = None
        for name, _, _ in variants:
            s = summary(runs[name])
            first = first or s
            ratio = s["teps"] / first["teps"] if first["teps"] > 0 else float("nan")
            print(f"{scale:>5} {name:<11} {s['generation']:>8.2f} {s['kernel1']:>10.2f} {s['validate']:>11.3f} "
                  f"{s['teps']:>11.3g} {ratio:>8.2f}x {s['top_down']:>11.3f} {s['bottom_up']:>12.3f} "
                  f"{s['lists']:>7.0f} MiB {s['rss']:>6.2f} GiB")


if __name__ == "__main__":
    main()
