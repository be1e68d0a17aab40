"""Run records shaped like `zbfs run --json` output (schema zbfs.run), with numbers the tests choose."""
from __future__ import annotations

import json
from pathlib import Path

PHASES = ["local_expansion", "column_exchange", "row_exchange", "predecessor_reduction", "termination_check",
          "validation"]


def counter(value: float) -> dict:
    return {"min": value / 2, "max": value, "sum": value * 3}


def record(ranks: int, scale: int, codec: str, teps: float, roots: int = 4, network: str = "1gbe",
           phase_time: float = 0.01, raw: float = 1000.0, wire: float = 250.0, version: str = "0.1.0") -> dict:
    """Every phase takes `phase_time` s on the slowest rank; every exchange sends `raw` bytes
    (sum over ranks: raw * 3) of which `wire` on the wire; the model says twice the MPI time."""
    phases = {}
    for name in PHASES:
        phases[name] = {
            "time_s": counter(phase_time), "mpi_time_s": counter(phase_time / 2),
            "modelled_time_s": counter(phase_time), "wait_time_s": counter(0.0),
            "raw_bytes": counter(raw if name != "local_expansion" else 0.0),
            "wire_bytes": counter(wire if name != "local_expansion" else 0.0),
            "id_bytes": counter(raw if name != "local_expansion" else 0.0),
            "messages": counter(8.0), "encode_time_s": counter(0.001), "decode_time_s": counter(0.002),
        }
    return {
        "schema": "zbfs.run", "schema_version": 8, "software": {"name": "zbfs", "version": version},
        "num_mpi_processes": ranks, "threads": 1,
        "config": {"scale": scale, "roots": roots, "partition": "2d", "codec": codec, "route": None,
                   "direction": "auto"},
        "network": {"name": network},
        "searches": [{"root": i, "time_s": 0.1} for i in range(roots)],
        "summary": {"teps": {"harmonic_mean": teps}, "bfs_time_s": {"mean": 0.1 * ranks},
                    "validate_time_s": {"mean": 0.2}},
        "phases": phases,
    }


def write_results(folder: Path, points: dict[str, list[dict]], params: dict[str, dict] | None = None) -> Path:
    """A sweep's output folder: runs/POINT/rep-K.json, and sweep.json naming the points' parameters."""
    for point, records in points.items():
        for k, rec in enumerate(records, start=1):
            path = folder / "runs" / point / f"rep-{k}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rec))
    if params is not None:
        state = {"experiment": "fixture", "points": [{"id": p, "params": v, "runs": []} for p, v in params.items()]}
        (folder / "sweep.json").write_text(json.dumps(state))
    return folder
