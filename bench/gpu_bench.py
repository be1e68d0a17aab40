#!/usr/bin/env python3
"""The device backend against the CPU backend, one process, on this machine.

For each scale and backend it runs zbfs_gpu_bench (the one-process benchmark without MPI)
`--repeats` times and prints one table: the device, scale, backend, harmonic-mean TEPS
(the median of the runs), the median search's time and its phases (init, top-down,
bottom-up, conversion), kernel 1's time, the bytes copied between host and device
memory, and the searches' mean power and TEPS per watt (the Green Graph500 figure, from
the record's energy: the GPU board's counter through NVML, and the host's RAPL counters
where the kernel lets them be read; "-" where not measured, with the reason below the
table). Then issue 60's targets: at least 400 GTEPS at scale 26 on one H100, the device's
searches at least 20x the CPU backend's at scale 24, and kernel 1 at scale 26 within 3 s.

  bench/gpu_bench.py --scales 20,24,26 --cpu-scales 20,24 [--repeats 3] [--roots 64] [--no-validate]
                     [--timeout 900] [-- more zbfs_gpu_bench flags]

`--scales` are the device's (`--device-backend`, default cuda), `--cpu-scales` the CPU
backend's (the 20x target is at scale 24; a CPU run at scale 26 takes minutes). A
backend that cannot run here (cuda without a GPU) is reported as such and skipped. A run
that outlasts `--timeout` seconds is ended (its whole process group) and reported as
failed; SIGINT, SIGTERM and SIGHUP end the run in progress before the script exits.
scripts/gpu-check --run (bench/gpu_check.py) uses the functions below for its rows.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zbfs_lab.runs import RunFailed, run_record, until_signal  # noqa: E402

HEADER = ("device", "scale", "backend", "runs", "GTEPS", "search ms", "init", "top-down", "bottom-up", "conv",
          "kernel1 s", "H2D MiB", "D2H MiB", "power W", "MTEPS/W")


def bench_command(binary, scale, backend, roots, validate, extra):
    command = [binary, "--scale", str(scale), "--backend", backend, "--roots", str(roots)]
    if not validate:
        command.append("--no-validate")
    return command + list(extra)


def run_once(binary, scale, backend, roots, validate, extra, timeout_s=None):
    try:
        return run_record(bench_command(binary, scale, backend, roots, validate, extra), timeout_s), None
    except RunFailed as e:
        return None, str(e)


def median_phase(record, name):
    return statistics.median(s["phases_s"][name] for s in record["searches"])


def energy_columns(record):
    """(mean power in W, TEPS per W) of the record's BFS searches, or None where the run's
    energy was not measured, and the reason."""
    energy = record.get("energy") or {}
    figure = energy.get("bfs")
    if not figure:
        return None, None, energy.get("why_not") or "the counters did not move"
    return figure["mean_power_w"], figure["teps_per_w"], None


def summarize(records):
    """The median run (by harmonic-mean TEPS) and the median TEPS over runs."""
    records = sorted(records, key=lambda r: r["summary"]["teps"]["harmonic_mean"])
    middle = records[len(records) // 2]
    return middle, statistics.median(r["summary"]["teps"]["harmonic_mean"] for r in records)


def validated(record):
    """Whether the record's every search was validated (a tree that fails ends the run)."""
    searches = record.get("searches") or []
    return bool(searches) and all(s.get("validate_time_s") is not None for s in searches)


def bench_row(records, scale, backend, extra):
    """One table row of a scale's and backend's runs (the median run's figures)."""
    middle, hmean = summarize(records)
    device = middle.get("device") or {}
    power, per_watt, why = energy_columns(middle)
    joules = ((middle.get("energy") or {}).get("joules") or {}).get("bfs") or {}
    return {
        "device": device.get("name", "cpu ({} threads)".format(middle["threads"])),
        "scale": scale,
        # The run's extra flags beside its backend: tables of --prune or --level-loop runs
        # say so in every row.
        "backend": " ".join([backend] + list(extra)),
        "runs": len(records),
        "gteps": hmean / 1e9,
        "search_ms": middle["summary"]["bfs_time_s"]["median"] * 1e3,
        "searches_s": sum(s["time_s"] for s in middle["searches"]),
        "init_ms": median_phase(middle, "init") * 1e3,
        "top_down_ms": median_phase(middle, "top_down") * 1e3,
        "bottom_up_ms": median_phase(middle, "bottom_up") * 1e3,
        "conversion_ms": median_phase(middle, "conversion") * 1e3,
        "kernel1_s": middle["construction_time_s"],
        "kernel1_stages": device.get("kernel1"),
        "device_open_s": device.get("open_s"),
        "to_device_mib": device.get("host_to_device_bytes", 0) / 2**20,
        "to_host_mib": device.get("device_to_host_bytes", 0) / 2**20,
        "power_w": "-" if power is None else f"{power:.1f}",
        "mteps_per_w": "-" if per_watt is None else f"{per_watt / 1e6:.1f}",
        "searches_j": joules.get("total"),
        "energy_why_not": why,
        "validated": all(validated(r) for r in records),
    }


def table_lines(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        lines.append("| {device} | {scale} | {backend} | {runs} | {gteps:.3f} | {search_ms:.3f} | {init_ms:.3f} | "
                     "{top_down_ms:.3f} | {bottom_up_ms:.3f} | {conversion_ms:.3f} | {kernel1_s:.2f} | "
                     "{to_device_mib:.1f} | {to_host_mib:.1f} | {power_w} | {mteps_per_w} |".format(**r))
    return lines


def stage_line(row):
    """Kernel 1 on the device: where its time went (the median run's), and the rest of it
    (the search's set-up: hubs, uploads, the warm-up search); None without stages."""
    stages = row["kernel1_stages"]
    if not stages:
        return None
    rest = row["kernel1_s"] - sum(stages.values())
    line = "kernel 1 on the device, scale {}: send {:.2f} s, order {:.2f} s, lists {:.2f} s, fetch {:.2f} s, " \
           "search set-up {:.2f} s".format(row["scale"], stages["send_s"], stages["order_s"], stages["lists_s"],
                                          stages["fetch_s"], rest)
    if row.get("device_open_s") is not None:
        line += " (opening the device, outside kernel 1: {:.2f} s)".format(row["device_open_s"])
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin",
                                                         "zbfs_gpu_bench"))
    parser.add_argument("--scales", default="20,24,26", help="the device backend's scales")
    parser.add_argument("--cpu-scales", default="20,24", help="the CPU backend's scales (empty: none)")
    parser.add_argument("--device-backend", default="cuda", choices=["cuda", "cuda-host"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--no-validate", action="store_true", help="skip validation (faster; TEPS unchanged)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one run may take (default 900)")
    parser.add_argument("--json", help="write every run's summary here")
    parser.add_argument("extra", nargs="*", help="more flags for zbfs_gpu_bench (after --)")
    args = parser.parse_args()
    return until_signal("gpu_bench", lambda: bench(args))


def bench(args):
    device_scales = [int(s) for s in args.scales.split(",") if s]
    cpu_scales = [int(s) for s in args.cpu_scales.split(",") if s]
    runs = [(scale, "cpu") for scale in cpu_scales] + [(scale, args.device_backend) for scale in device_scales]
    runs.sort()

    rows = []
    teps = {}
    kernel1 = {}
    skipped = {}
    for scale, backend in runs:
        if backend in skipped:
            continue
        records = []
        for _ in range(args.repeats):
            record, error = run_once(args.binary, scale, backend, args.roots, not args.no_validate, args.extra,
                                     args.timeout)
            if record is None:
                skipped[backend] = error
                break
            records.append(record)
        if not records:
            continue
        rows.append(bench_row(records, scale, backend, args.extra))
        kind = "cuda" if backend != "cpu" else "cpu"
        teps[(scale, kind)] = rows[-1]["gteps"] * 1e9
        kernel1[(scale, kind)] = rows[-1]["kernel1_s"]

    print("\n".join(table_lines(rows)))
    for r in rows:
        line = stage_line(r)
        if line:
            print(line)
    for backend, error in skipped.items():
        print(f"{backend}: not run here: {error}")
    for note in sorted({f"{r['backend']}: energy not measured: {r['energy_why_not']}" for r in rows
                        if r["energy_why_not"]}):
        print(note)

    print()
    # A device measured through the host launcher is not a GPU: say so rather than judge.
    if args.device_backend != "cuda":
        print("targets: judged on --device-backend cuda only")
        return 0
    # Runs with more flags (--prune) say so in every target line.
    target = "target" + (" (with " + " ".join(args.extra) + ")" if args.extra else "")
    if (26, "cuda") in teps:
        value = teps[(26, "cuda")] / 1e9
        print(f"{target}: scale 26 on the device >= 400 GTEPS: {value:.2f} GTEPS: {'met' if value >= 400 else 'NOT met'}")
        seconds = kernel1[(26, "cuda")]
        print(f"{target}: kernel 1 at scale 26 <= 3 s: {seconds:.2f} s: {'met' if seconds <= 3 else 'NOT met'}")
    else:
        print(f"{target}: scale 26 on the device >= 400 GTEPS: not measured (no cuda run at scale 26)")
    if (24, "cuda") in teps and (24, "cpu") in teps:
        ratio = teps[(24, "cuda")] / teps[(24, "cpu")]
        print(f"{target}: scale 24 device / cpu >= 20x: {ratio:.1f}x: {'met' if ratio >= 20 else 'NOT met'}")
    elif not args.extra:
        print(f"{target}: scale 24 device / cpu >= 20x: not measured (needs cpu and cuda runs at scale 24)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if skipped and not rows else 0


if __name__ == "__main__":
    sys.exit(main())
