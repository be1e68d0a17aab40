"""A sweep's records, loaded and summarised: one Point per matrix point with the medians of its
repetitions. Every number a report shows comes from here, straight from the zbfs JSON records."""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

# The phases of one BFS, in the order they happen in a step (the breakdown's stacking order).
BFS_PHASES = ["local_expansion", "column_exchange", "row_exchange", "predecessor_reduction", "termination_check"]
# Phases that move data between ranks (traffic figures and tables).
EXCHANGE_PHASES = ["column_exchange", "row_exchange", "predecessor_reduction", "termination_check", "validation"]
# The exchanges a network model prices (model against measurement).
MODELLED_PHASES = ["column_exchange", "row_exchange", "predecessor_reduction"]


class ResultsError(Exception):
    pass


@dataclass
class Run:
    record: dict

    @property
    def searches(self) -> int:
        return len(self.record.get("searches", [])) or int(self.record["config"]["roots"])

    def phase(self, name: str, counter: str, over: str = "max") -> float:
        """A phase counter over ranks (`max`, `min` or `sum`), 0 when the phase is absent."""
        return float(self.record.get("phases", {}).get(name, {}).get(counter, {}).get(over, 0.0))


def kernel_summary(record: dict) -> dict:
    """The run's headline kernel figures: time_s, teps and validate_time_s of the BFS, or
    of the SSSP when only it ran (JSON schema 8)."""
    summary = record["summary"]
    if summary.get("teps") is None and summary.get("sssp"):
        return summary["sssp"]
    return {"time_s": summary["bfs_time_s"], "teps": summary["teps"],
            "validate_time_s": summary.get("validate_time_s")}


@dataclass
class PointResult:
    """One matrix point: its parameters and its runs (the repetitions that completed)."""

    point_id: str
    params: dict
    runs: list[Run] = field(default_factory=list)

    def median(self, get) -> float:
        return statistics.median(get(r) for r in self.runs)

    # Figures per point, medians over the repetitions: the BFS's, or the SSSP's in a run
    # of --kernels sssp alone (whose summary has no BFS figures).
    def teps(self) -> float:
        return self.median(lambda r: kernel_summary(r.record)["teps"]["harmonic_mean"])

    def phase_per_search(self, phase: str, counter: str, over: str = "max") -> float:
        return self.median(lambda r: r.phase(phase, counter, over) / r.searches)

    def bfs_time_per_search(self) -> float:
        return self.median(lambda r: kernel_summary(r.record)["time_s"]["mean"])


@dataclass
class Results:
    folder: Path
    experiment: str
    points: list[PointResult]
    codec_bench: dict | None
    failures: list[str]

    @property
    def runs(self) -> list[Run]:
        return [r for p in self.points for r in p.runs]

    def values(self, key: str) -> list:
        """The distinct values of a parameter, sorted."""
        return sorted({p.params.get(key) for p in self.points if key in p.params}, key=sort_key)

    def varying(self) -> list[str]:
        """Parameters with more than one value across the points, in a stable order."""
        return [k for k in _all_keys(self.points) if len(self.values(k)) > 1]

    def fixed(self) -> dict:
        return {k: self.values(k)[0] for k in _all_keys(self.points) if len(self.values(k)) == 1}

    def software(self) -> str:
        versions = sorted({r.record.get("software", {}).get("version", "?") for r in self.runs})
        return "zbfs " + ", ".join(versions) if versions else "zbfs ?"


def _all_keys(points: list[PointResult]) -> list[str]:
    keys = []
    for p in points:
        keys += [k for k in p.params if k not in keys]
    return keys


def sort_key(value):
    return (0, value, "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0, str(value))


def label(params: dict, keys: list[str]) -> str:
    return " ".join(f"{k}={params[k]}" for k in keys if k in params) or "all runs"


def params_of_record(record: dict) -> dict:
    """What every record says about itself: the parameters figures are drawn against."""
    config = record.get("config", {})
    params = {"ranks": int(record.get("num_mpi_processes", 1)), "scale": int(config.get("scale", 0))}
    for key in ("partition", "codec", "route", "direction"):
        if config.get(key) is not None:
            params[key] = config[key]
    params["network"] = record.get("network", {}).get("name", "?")
    return params


def load(folder: str | Path) -> Results:
    """Reads RESULTS_DIR as `zbfs-lab sweep` leaves it (or any folder of runs/POINT/rep-K.json)."""
    folder = Path(folder)
    runs_dir = folder / "runs"
    if not folder.is_dir():
        raise ResultsError(f"{folder}: no such folder")
    if not runs_dir.is_dir():
        raise ResultsError(f"{folder}: no runs/ folder (is this a zbfs-lab sweep's output?)")
    declared = {}
    experiment = folder.name
    sweep_file = folder / "sweep.json"
    if sweep_file.exists():
        state = _read_json(sweep_file)
        experiment = state.get("experiment", experiment)
        declared = {p["id"]: p["params"] for p in state.get("points", [])}
    points = []
    for point_dir in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        result = None
        for path in sorted(point_dir.glob("rep-*.json"), key=lambda p: _rep_of(p)):
            record = _read_json(path)
            if record.get("schema") != "zbfs.run":
                raise ResultsError(f"{path}: not a zbfs run record (schema {record.get('schema')!r})")
            # The record's own view first, the matrix's values on top (they name what was varied).
            params = {**params_of_record(record), **declared.get(point_dir.name, {})}
            if result is None:
                result = PointResult(point_dir.name, params)
            result.runs.append(Run(record))
        if result is not None:
            points.append(result)
    if not points:
        raise ResultsError(f"{folder}: no run records under runs/")
    bench_file = folder / "codec_bench.json"
    codec_bench = _read_json(bench_file) if bench_file.exists() else None
    failures = sorted(str(p.relative_to(folder)) for p in (folder / "failures").rglob("*.txt")) \
        if (folder / "failures").is_dir() else []
    return Results(folder, experiment, points, codec_bench, failures)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a folder, not a run record") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot be read: {e.strerror}") from None
    except ValueError as e:  # UnicodeDecodeError (a binary file) is one too
        raise ResultsError(f"{path}: not valid JSON ({e})") from None


def _rep_of(path: Path) -> int:
    try:
        return int(path.stem.split("-", 1)[1])
    except (IndexError, ValueError):
        return 0


@dataclass
class CodecRow:
    dataset: str
    codec: str
    ratio: float
    bits_per_id: float
    entropy: float
    encode_mids: float
    decode_mids: float


def codec_rows(bench: dict) -> list[CodecRow]:
    """zbfs_codec_bench's Google Benchmark JSON as one row per dataset and codec."""
    rows: dict[tuple[str, str], dict] = {}
    for b in bench.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        try:
            dataset, codec, op = b["name"].rsplit("/", 2)
        except ValueError:
            continue
        entry = rows.setdefault((dataset, codec), {})
        entry.update(ratio=b.get("ratio", math.nan), bits=b.get("bits/id", math.nan), entropy=b.get("entropy", math.nan))
        entry[op] = b.get("Mids/s", math.nan)
    return [CodecRow(d, c, e["ratio"], e["bits"], e["entropy"], e.get("encode", math.nan), e.get("decode", math.nan))
            for (d, c), e in rows.items()]
