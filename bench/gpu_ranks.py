#!/usr/bin/env python3
"""Several ranks on one device: the distributed device search with its ranks sharing a GPU.

For 2 and 4 ranks, each partition (1d, 2d, hybrid) and each id encoding on the staged
exchange (--codec none and bitpack), runs

  MPIRUN -np N zbfs run --backend cuda --gpus-per-node 1 -p P --codec C --scale S --roots R

and the same with --prune for the codecs of --prune-codecs (none), with every tree
validated, and prints one table: the harmonic-mean TEPS, the mean search time, the
slowest rank's time in each phase of the searches (summed over them), kernel 1's time
(its lists built on the device), the bytes copied between host and device memory, and
whether every tree validated. Exit status 1 when a run failed or a tree did not
validate.

  bench/gpu_ranks.py --binary /tmp/zbfs-gpu-build-mpi/bin/zbfs --mpirun "mpirun --oversubscribe"
  bench/gpu_ranks.py --binary build/bin/zbfs --backend cuda-host --scale 12   # no GPU: the host launcher
"""
import argparse
import os
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record, until_signal  # noqa: E402

PHASES = ("local_expansion", "column_exchange", "row_exchange", "termination_check", "predecessor_reduction")


def phase_max_s(record, name):
    phase = record["phases"].get(name) or {}
    return (phase.get("time_s") or {}).get("max", 0.0)


def row(record, ranks, partition, codec, prune):
    searches = record["searches"]
    device = record.get("device") or {}
    return {
        "ranks": ranks,
        "partition": partition,
        "grid": record["config"]["grid"],
        "codec": codec,
        "prune": prune,
        "kernel1_s": record["construction_time_s"],
        "gteps": record["summary"]["teps"]["harmonic_mean"] / 1e9,
        "search_ms": record["summary"]["bfs_time_s"]["mean"] * 1e3,
        "phases": [phase_max_s(record, p) * 1e3 / max(1, len(searches)) for p in PHASES],
        "to_device_mib": device.get("host_to_device_bytes", 0) / 2**20,
        "to_host_mib": device.get("device_to_host_bytes", 0) / 2**20,
        "validated": all(s.get("validate_time_s") is not None for s in searches) and bool(searches),
    }


def table_lines(rows):
    """The ranks' table: one row per run, the phase columns the slowest rank's per search."""
    header = ["ranks", "partition", "grid", "codec", "prune", "GTEPS", "search ms"] + [f"{p} ms" for p in PHASES]
    header += ["kernel1 s", "H2D MiB", "D2H MiB", "validated"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [str(r["ranks"]), r["partition"], r["grid"], r["codec"], "yes" if r["prune"] else "no",
                 f"{r['gteps']:.3f}", f"{r['search_ms']:.3f}"]
        cells += [f"{v:.3f}" for v in r["phases"]]
        cells += [f"{r['kernel1_s']:.2f}", f"{r['to_device_mib']:.1f}", f"{r['to_host_mib']:.1f}",
                  "yes" if r["validated"] else "NO"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ranks_command(launcher, binary, backend, ranks, partition, codec, prune, scale, roots):
    command = list(launcher) + ["--bind-to", "none", "-np", str(ranks), binary, "run", "--backend", backend, "-p",
                                partition, "--codec", codec, "--scale", str(scale), "--roots", str(roots), "-q"]
    if backend == "cuda":
        command += ["--gpus-per-node", "1"]
    if prune:
        command += ["--prune"]
    return command


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="zbfs built with MPI and CUDA")
    parser.add_argument("--mpirun", default="mpirun --oversubscribe", help="the launcher and its flags")
    parser.add_argument("--backend", default="cuda", choices=["cuda", "cuda-host"])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--partitions", default="1d,2d,hybrid")
    parser.add_argument("--codecs", default="none,bitpack")
    parser.add_argument("--prune-codecs", default="none", help="the codecs also run with --prune (empty: none)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one run may take (default 600)")
    args = parser.parse_args()
    return until_signal("gpu_ranks", lambda: measure(args))


def measure(args):
    launcher = shlex.split(args.mpirun)
    rows, failures = [], []
    for ranks in [int(r) for r in args.ranks.split(",") if r]:
        for partition in [p for p in args.partitions.split(",") if p]:
            runs = [(c, False) for c in args.codecs.split(",") if c]
            runs += [(c, True) for c in args.prune_codecs.split(",") if c]
            for codec, prune in runs:
                command = ranks_command(launcher, args.binary, args.backend, ranks, partition, codec, prune,
                                        args.scale, args.roots)
                label = f"{ranks} ranks, {partition}, --codec {codec}" + (" --prune" if prune else "")
                try:
                    record = run_record(command, timeout_s=args.timeout)
                except RunFailed as e:
                    failures.append(f"{label}: {e}")
                    continue
                rows.append(row(record, ranks, partition, codec, prune))
                print(f"gpu_ranks: {label}: {rows[-1]['gteps']:.3f} GTEPS", file=sys.stderr, flush=True)

    print("\n".join(table_lines(rows)))
    print("\nphase columns: the slowest rank's time in the phase, per search (ms)")
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures or not all(r["validated"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
