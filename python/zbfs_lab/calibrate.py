"""`zbfs-lab calibrate -o COSTS.json`: the per-unit costs of zbfs's counted work on this
host, for `zbfs-lab simulate --compute counted`.

It runs real zbfs searches (one thread a rank, at most as many ranks as the host has cores,
so that no rank waits for a core), reads every search's steps from the records (each
phase's counted work and its time outside MPI, the mean over ranks) and fits, by
non-negative least squares, one price a unit for each kind of work (lists opened, list
entries read, bitmap words, ...). The file says how well the fit explains the measured
compute (its R^2 and the relative error of the runs' total compute), the runs it came from
and the host. The arguments after `--` are added to every run (`--partition 2d --route
grid2`): calibrate on the paths the simulation will take.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zbfs_lab import files

# The kinds zbfs counts (metrics/work_counts.hpp), in its order.
WORK_KINDS = ("steps", "lists", "list_entries", "hub_checks", "bitmap_words", "claimed", "queued", "arrivals",
              "exchanged_bytes", "codec_bytes", "routed_bytes")
# The phases of a search whose computation is priced: their time outside MPI.
SEARCH_PHASES = ("local_expansion", "column_exchange", "row_exchange", "termination_check")


class CalibrationError(Exception):
    """A calibration that could not run or fit; the message says why."""


@dataclass
class Calibration:
    binary: str = "build/bin/zbfs"
    mpirun: str = "mpirun"
    ranks: list[int] = field(default_factory=lambda: [1, 2])
    vertices_per_rank_log2: list[int] = field(default_factory=lambda: [10, 12, 14])
    partitions: list[str] = field(default_factory=lambda: ["1d", "2d"])
    roots: int = 8
    extra_args: list[str] = field(default_factory=list)
    timeout_s: float = 600

    def runs(self) -> list[list[str]]:
        """Each run's zbfs arguments (its record's name aside)."""
        out = []
        for ranks in self.ranks:
            for per_rank in self.vertices_per_rank_log2:
                scale = per_rank + max(0, (ranks - 1).bit_length())
                for partition in self.partitions:
                    out.append(["-np", str(ranks), "--scale", str(scale), "--partition", partition, "--roots",
                                str(self.roots), "--threads", "1", "--no-validate", "--network", "10gbe", "-q",
                                *self.extra_args])
        return out

    def command(self, run: list[str], record: Path) -> list[str]:
        ranks, zbfs = run[1], run[2:]
        launcher = [self.mpirun, "-np", ranks]
        if Path(self.mpirun).name.startswith("mpirun") or Path(self.mpirun).name.startswith("orterun"):
            launcher += ["--oversubscribe", "--bind-to", "none"]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                launcher.append("--allow-run-as-root")
        return [*launcher, self.binary, "run", *zbfs, "--json", str(record)]


def samples(record: dict) -> tuple[list[list[float]], list[float]]:
    """Every step's phases of every search in `record`: the mean rank's counted work and
    its compute (time less time inside MPI), one sample a (step, phase) with any work; the
    predecessor reductions as one sample a search."""
    rows: list[list[float]] = []
    seconds: list[float] = []
    ranks = record.get("num_mpi_processes", 1)

    def add(work: dict, compute_s: float) -> None:
        if not work:
            return
        rows.append([float(work.get(k, {}).get("mean", 0.0)) for k in WORK_KINDS])
        seconds.append(max(0.0, compute_s))

    for search in record.get("searches", []):
        for step in search.get("steps", []):
            for phase, counts in (step.get("work") or {}).items():
                if phase not in SEARCH_PHASES:
                    continue
                add(counts.get("work", {}), counts["time_s"]["mean"] - counts["mpi_time_s"]["mean"])
        reduction = (search.get("phases") or {}).get("predecessor_reduction")
        if reduction and reduction.get("work"):
            work = {k: {"mean": v["sum"] / ranks} for k, v in reduction["work"].items()}
            add(work, (reduction["time_s"]["sum"] - reduction["mpi_time_s"]["sum"]) / ranks)
    return rows, seconds


def nnls(a: np.ndarray, b: np.ndarray, iterations: int = 500) -> np.ndarray:
    """min |a x - b| over x >= 0 (Lawson and Hanson's active-set method)."""
    n = a.shape[1]
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    gradient = a.T @ (b - a @ x)
    tolerance = 1e-12 * max(1.0, float(np.abs(gradient).max(initial=0.0)))
    for _ in range(iterations):
        if passive.all() or gradient[~passive].max(initial=-1.0) <= tolerance:
            break
        candidates = np.where(~passive, gradient, -np.inf)
        passive[int(np.argmax(candidates))] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            shrinking = passive & (z <= 0) & (x - z > 0)
            if not shrinking.any():
                x = np.where(passive, np.maximum(z, 0.0), 0.0)
                break
            step = np.min(x[shrinking] / (x[shrinking] - z[shrinking]))
            x = x + step * (z - x)
            passive &= x > 1e-300
            x[~passive] = 0.0
        gradient = a.T @ (b - a @ x)
    return x


def fit(rows: list[list[float]], seconds: list[float]) -> dict:
    """The per-unit costs and how well they explain the samples."""
    if len(rows) < len(WORK_KINDS):
        raise CalibrationError(f"{len(rows)} samples of counted work: too few to price {len(WORK_KINDS)} kinds "
                               f"(give more runs or search keys)")
    a = np.asarray(rows, dtype=float)
    b = np.asarray(seconds, dtype=float)
    # Columns scaled to one, so that bytes and steps weigh alike in the solver.
    scale = np.where(a.max(axis=0) > 0, a.max(axis=0), 1.0)
    kept = np.ones(len(b), dtype=bool)
    # A sample far off every other one's fit is a rank that lost its core for a while (or
    # paid a first touch): fit, leave out what lies beyond ten median deviations, refit.
    for _ in range(3):
        x = nnls(a[kept] / scale, b[kept]) / scale
        residual = np.abs(b - a @ x)
        bound = 10 * float(np.median(residual[kept])) + 1e-7
        now = residual <= bound
        if (now == kept).all():
            break
        kept = now
    a, b = a[kept], b[kept]
    predicted = a @ x
    residual = float(((b - predicted) ** 2).sum())
    total = float(((b - b.mean()) ** 2).sum())
    return {
        "seconds_per_unit": {k: float(v) for k, v in zip(WORK_KINDS, x)},
        "fit": {"samples": int(kept.sum()), "outliers": int(len(kept) - kept.sum()),
                "r2": 1.0 - residual / total if total > 0 else 1.0,
                "measured_compute_s": float(b.sum()), "priced_compute_s": float(predicted.sum()),
                "total_relative_error": float(abs(predicted.sum() - b.sum()) / b.sum()) if b.sum() > 0 else 0.0},
    }


def run(calibration: Calibration, output: str | Path, log=None) -> dict:
    """Runs the calibration's searches, fits the costs and writes them to `output`."""
    if not Path(calibration.binary).is_file():
        raise CalibrationError(f"{calibration.binary} not found: build zbfs first (make build)")
    rows: list[list[float]] = []
    seconds: list[float] = []
    runs = []
    with tempfile.TemporaryDirectory(prefix="zbfs-calibrate-") as tmp:
        for i, args in enumerate(calibration.runs()):
            record = Path(tmp) / f"run-{i}.json"
            cmd = calibration.command(args, record)
            env = dict(os.environ, OMP_NUM_THREADS="1")
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env,
                                      timeout=calibration.timeout_s)
            except subprocess.TimeoutExpired:
                raise CalibrationError(f"a calibration run ran past {calibration.timeout_s:g} s: "
                                       f"{' '.join(cmd)}") from None
            except OSError as e:
                raise CalibrationError(f"cannot start {cmd[0]}: {e.strerror}") from None
            if done.returncode != 0 or not record.is_file():
                why = [line for line in done.stderr.splitlines() if "error" in line.lower()]
                raise CalibrationError(f"a calibration run failed (exit {done.returncode}): "
                                       f"{why[-1] if why else done.stderr.strip()[-300:]}: {' '.join(cmd)}")
            data = json.loads(record.read_text())
            got_rows, got_seconds = samples(data)
            rows += got_rows
            seconds += got_seconds
            runs.append({"args": args, "samples": len(got_rows)})
            if log is not None:
                print(f"zbfs-lab calibrate: {' '.join(args)}: {len(got_rows)} samples", file=log)
    result = fit(rows, seconds)
    result = {"zbfs_work_costs": 1, **result, "host": {"name": platform.node(), "machine": platform.machine(),
                                                       "cores": os.cpu_count()},
              "runs": runs}
    files.write_text(output, json.dumps(result, indent=2) + "\n")
    return result
