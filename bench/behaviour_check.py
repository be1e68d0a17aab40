#!/usr/bin/env python3
"""Is a change behaviour-neutral? Runs a dozen configurations (one process, 1d, 2d, hybrid, a
route, a codec, rma, overlap on and off, cuda-host, pruning, SSSP) with two zbfs binaries and
compares what must not change: the first key's levels, parents and distances, byte for byte,
and each search's levels, reached vertices, traversed edges, steps (direction, frontier,
discovered) and wire traffic (messages, id, raw and wire bytes per phase).

    python3 bench/behaviour_check.py --baseline /tmp/zbfs-before --binary build/bin/zbfs

The baseline runs three times (--baseline-runs): a field that differs between its own runs (an
RMA exchange's validation bytes, say) is reported as "varies" and not compared.
Exit status 0 when every configuration matches.

With --times, it compares speed instead: interleaved runs of both binaries (1d, 2d and hybrid
BFS and 1d SSSP at one thread a rank; one process's BFS and SSSP on every core; no validation)
and each one's median over the rounds of the median search time, as the issue's "times unchanged within noise" asks:

    python3 bench/behaviour_check.py --baseline /tmp/zbfs-before --times --scale 20 --ranks 4 --rounds 5
"""
import argparse
import filecmp
import statistics
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, mpirun_command, run_record  # noqa: E402

# (name, ranks, arguments): small graphs, one thread, so a run is deterministic where the
# algorithm is.
CONFIGS = [
    ("shared", 1, ["--partition", "shared"]),
    ("shared sssp", 1, ["--partition", "shared", "--kernels", "sssp"]),
    ("shared prune", 1, ["--partition", "shared", "--prune"]),
    ("1d", 2, ["--partition", "1d"]),
    ("1d overlap off", 2, ["--partition", "1d", "--overlap", "off"]),
    ("1d rma", 4, ["--partition", "1d", "--transport", "rma"]),
    ("1d grid2", 4, ["--partition", "1d", "--route", "grid2"]),
    ("1d prune", 2, ["--partition", "1d", "--prune"]),
    ("1d sssp", 2, ["--partition", "1d", "--kernels", "sssp"]),
    ("2d", 4, ["--partition", "2d"]),
    ("2d bitpack", 4, ["--partition", "2d", "--codec", "bitpack"]),
    ("2d sssp rma", 4, ["--partition", "2d", "--kernels", "bfs,sssp", "--transport", "rma"]),
    ("hybrid", 4, ["--partition", "hybrid", "--ranks-per-node", "2"]),
    ("1d cuda-host", 2, ["--partition", "1d", "--backend", "cuda-host"]),
    ("2d cuda-host bitpack", 4, ["--partition", "2d", "--backend", "cuda-host", "--codec", "bitpack"]),
    ("shared cuda-host", 1, ["--partition", "shared", "--backend", "cuda-host"]),
]

TRAFFIC = ("messages", "id_bytes", "raw_bytes", "wire_bytes", "host_to_device_bytes", "device_to_host_bytes")


def facts(record):
    """The fields of a record that a behaviour-neutral change keeps, flattened to name -> value."""
    out = {}
    for kind in ("searches", "sssp_searches"):
        for i, s in enumerate(record.get(kind) or []):
            base = f"{kind}[{i}]"
            for key in ("root", "levels", "reached_vertices", "traversed_edges"):
                if key in s:
                    out[f"{base}.{key}"] = s[key]
            for j, step in enumerate(s.get("steps") or []):
                out[f"{base}.step[{j}]"] = (step.get("direction"), step.get("frontier_vertices"),
                                            step.get("discovered_vertices"))
            for phase, figures in (s.get("phases") or {}).items():
                for key in TRAFFIC:
                    if key in figures:
                        out[f"{base}.{phase}.{key}"] = figures[key]["sum"]
    return out


def run(binary, ranks, args, scale, roots, folder):
    kernels = args[args.index("--kernels") + 1] if "--kernels" in args else "bfs"
    outputs = {}
    if "bfs" in kernels.split(","):
        outputs["levels"] = folder / "levels.txt"
        outputs["parents"] = folder / "parents.txt"
    if "sssp" in kernels:
        outputs["distances"] = folder / "distances.txt"
    command = [binary, "run", "--scale", str(scale), "--roots", str(roots), "--threads", "1", "--quiet",
               "--network", "1gbe", *args]
    for name, path in outputs.items():
        command += [f"--write-{name}", str(path)]
    if ranks > 1:
        command = mpirun_command(("mpirun", "--oversubscribe"), ranks, command)
    record = run_record(command, timeout_s=300)
    return facts(record), outputs


def compare(name, ranks, args, baseline, binary, scale, roots, baseline_runs):
    with tempfile.TemporaryDirectory(prefix="zbfs-behaviour-") as tmp:
        tmp = Path(tmp)
        runs = []
        for i, exe in enumerate([baseline] * baseline_runs + [binary]):
            (tmp / str(i)).mkdir()
            runs.append(run(exe, ranks, args, scale, roots, tmp / str(i)))
        (first, first_files), others, (new, new_files) = runs[0], runs[1:-1], runs[-1]
        varies = {k for k in first for other, _ in others if first.get(k) != other.get(k)}
        differ = sorted(k for k in set(first) | set(new) if k not in varies and first.get(k) != new.get(k))
        files = [n for n, p in first_files.items() if not filecmp.cmp(p, new_files[n], shallow=False)]
        files_vary = [n for n, p in first_files.items()
                      if any(not filecmp.cmp(p, other_files[n], shallow=False) for _, other_files in others)]
    ok = not differ and not [f for f in files if f not in files_vary]
    line = f"{name:24} {ranks} rank(s)  {len(first) - len(varies):4} fields same"
    if varies:
        line += f", {len(varies)} vary run to run"
    if files_vary:
        line += f", files vary run to run: {','.join(files_vary)}"
    print(("ok    " if ok else "DIFF  ") + line)
    for key in differ[:8]:
        print(f"        {key}: {first.get(key)} -> {new.get(key)}")
    for f in files:
        if f not in files_vary:
            print(f"        {f}: files differ")
    return ok


TIMED = [
    ("1d bfs", ["--partition", "1d"], "searches"),
    ("2d bfs", ["--partition", "2d"], "searches"),
    ("hybrid bfs", ["--partition", "hybrid", "--ranks-per-node", "2"], "searches"),
    ("1d sssp", ["--partition", "1d", "--kernels", "sssp"], "sssp_searches"),
    # One process on every core (its own threads, no launcher).
    ("shared bfs", ["--partition", "shared"], "searches"),
    ("shared sssp", ["--partition", "shared", "--kernels", "sssp"], "sssp_searches"),
]


def compare_times(baseline, binary, scale, ranks, rounds, roots, only=None):
    """Interleaved runs; prints each configuration's median search time for both binaries.
    `only`: the names of the configurations to time (None: all)."""
    timed = [t for t in TIMED if only is None or t[0] in only]
    times = {(name, exe): [] for name, _, _ in timed for exe in (baseline, binary)}
    for _ in range(rounds):
        for name, args, kind in timed:
            for exe in (baseline, binary):
                run = [exe, "run", "--scale", str(scale), "--roots", str(roots), "--no-validate", "--quiet", *args]
                if "shared" not in args:
                    run = mpirun_command(("mpirun", "--oversubscribe"), ranks,
                                         [*run, "--threads", "1", "--network", "1gbe"])
                record = run_record(run, timeout_s=900)
                times[(name, exe)].append(statistics.median(s["time_s"] for s in record[kind]))
    print(f"median search time (ms), scale {scale}, {ranks} ranks, {rounds} interleaved rounds")
    for name, _, _ in timed:
        before = statistics.median(times[(name, baseline)]) * 1e3
        after = statistics.median(times[(name, binary)]) * 1e3
        print(f"  {name:12} before {before:8.2f}  after {after:8.2f}  ({(after / before - 1) * 100:+.1f}%)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="the zbfs binary from before the change")
    parser.add_argument("--binary", default="build/bin/zbfs")
    parser.add_argument("--scale", type=int, default=11)
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--baseline-runs", type=int, default=3,
                        help="runs of the baseline per configuration: what differs between them varies run to run")
    parser.add_argument("--only", nargs="*",
                        help="names of configurations to run, or with --times to time (default: all)")
    parser.add_argument("--times", action="store_true", help="compare search times instead (see above)")
    parser.add_argument("--ranks", type=int, default=4, help="--times: ranks of each run")
    parser.add_argument("--rounds", type=int, default=5, help="--times: interleaved rounds")
    args = parser.parse_args()
    if args.times:
        return compare_times(args.baseline, args.binary, args.scale, args.ranks, args.rounds, args.roots, args.only)
    failures = 0
    for name, ranks, extra in CONFIGS:
        if args.only and name not in args.only:
            continue
        try:
            failures += not compare(name, ranks, extra, args.baseline, args.binary, args.scale, args.roots,
                                    max(2, args.baseline_runs))
        except RunFailed as e:
            print(f"FAIL  {name}: {e}")
            failures += 1
    print(f"{failures} configuration(s) differ" if failures else "every configuration matches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
