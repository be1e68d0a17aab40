"""An experiment file (TOML): what to run, over which parameter matrix, how often, and where the
records go. See experiments/*.toml for examples and docs/lab.md for every key.

    name = "codecs"
    repetitions = 3
    output = "results/codecs"
    [zbfs]
    binary = "build/bin/zbfs"
    args = ["--roots", "8"]
    [launcher]
    kind = "mpirun"                  # or "netcluster", or "simgrid" (docs/simulation.md)
    [matrix]
    ranks = [1, 2, 4]
    scale = [12, 14]
    codec = ["none", "bitpack", "auto"]

Every matrix key other than the launcher's own (`ranks`, for netcluster `link_rate`,
`link_delay`, for simgrid `topology`, `links`, `oversubscription`, `ranks_per_host`, `compute`) is a
`zbfs run` flag: `key = value` becomes `--key value` (underscores become
dashes), `true` becomes `--key` and `false` leaves the flag out.
"""
from __future__ import annotations

import itertools
import dataclasses
import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from zbfs_lab import platforms

LAUNCHER_KEYS = {"mpirun": {"ranks"}, "netcluster": {"ranks", "link_rate", "link_delay"},
                 "simgrid": {"ranks", "topology", "links", "oversubscription", "ranks_per_host", "compute"}}
TOP_KEYS = {"name", "description", "output", "repetitions", "timeout_s", "zbfs", "launcher", "matrix", "codec_bench"}


class ExperimentError(Exception):
    """A malformed experiment file: the message names the file and what is wrong."""


@dataclass(frozen=True)
class Point:
    """One combination of the matrix's values, in the matrix's key order."""

    params: tuple[tuple[str, object], ...]

    @property
    def id(self) -> str:
        """A folder name: ranks-4_scale-14_codec-bitpack."""
        parts = []
        for key, value in self.params:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            parts.append(f"{key}-{re.sub(r'[^A-Za-z0-9.+=-]', '_', text)}")
        return "_".join(parts) or "default"

    def get(self, key: str, default=None):
        return dict(self.params).get(key, default)

    def describe(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.params)


@dataclass(frozen=True)
class Launcher:
    kind: str = "mpirun"
    mpirun: tuple[str, ...] = ("mpirun", "--oversubscribe", "--bind-to", "none")
    netcluster: str = "scripts/netcluster"
    hosts: int = 2
    ranks_per_host: int | None = None
    cluster_name: str = "zbfslab"
    # simgrid: zbfs-lab simulate's platform (a matrix key of the same name overrides it).
    smpirun: str = "smpirun"
    topology: str = "fattree"
    links: str = "ib-hdr"
    oversubscription: float = 1.0
    # simgrid: how simulated computation takes time (zbfs-lab simulate --compute) and, for
    # "counted", the per-unit costs zbfs-lab calibrate wrote (relative to the file).
    compute: str = "measured"
    work_costs: str | None = None


@dataclass(frozen=True)
class CodecBench:
    """The codec benchmark step: zbfs_codec_bench on the frontiers of one recorded run."""

    binary: str = "build/bin/zbfs_codec_bench"
    dump_scale: int = 14
    dump_ranks: int = 2
    args: tuple[str, ...] = ("--benchmark_min_time=0.05",)


@dataclass
class Experiment:
    path: Path
    name: str
    description: str
    output: Path
    repetitions: int
    timeout_s: float
    binary: str
    args: tuple[str, ...]
    launcher: Launcher
    matrix: dict[str, list]
    codec_bench: CodecBench | None = None
    points: list[Point] = field(default_factory=list)

    def zbfs_args(self, point: Point) -> list[str]:
        """The `zbfs run` arguments of a point (its launcher keys left out)."""
        args = ["run", *self.args]
        for key, value in point.params:
            if key in LAUNCHER_KEYS[self.launcher.kind]:
                continue
            flag = "--" + key.replace("_", "-")
            if value is True:
                args.append(flag)
            elif value is not False:
                args += [flag, str(value)]
        return args


def _fail(path: Path, message: str):
    raise ExperimentError(f"{path}: {message}")


def _expect(path: Path, table: dict, key: str, kinds, default, what: str):
    value = table.get(key, default)
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    # bool is an int to Python; `repetitions = true` is still wrong.
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        _fail(path, f"{what} must be {_kind_name(kinds)}, not {value!r}")
    return value


def _kind_name(kinds) -> str:
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "a table", bool: "true/false"}
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _string_list(path: Path, table: dict, key: str, default, what: str) -> tuple[str, ...]:
    value = _expect(path, table, key, list, list(default), what)
    if not all(isinstance(v, str) for v in value):
        _fail(path, f"{what} must be a list of strings")
    return tuple(value)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def load(path: str | Path, output: str | Path | None = None, binary: str | None = None) -> Experiment:
    """Reads and checks an experiment file; `output` and `binary` override the file's."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ExperimentError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ExperimentError(f"{path}: is a folder, not an experiment file") from None
    except UnicodeDecodeError:
        raise ExperimentError(f"{path}: not a text file (an experiment file is TOML)") from None
    except OSError as e:
        raise ExperimentError(f"{path}: cannot be read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(f"{path}: not valid TOML ({e})") from None
    unknown = set(data) - TOP_KEYS
    if unknown:
        _fail(path, f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(TOP_KEYS))})")

    name = _expect(path, data, "name", str, path.stem, "name")
    repetitions = _expect(path, data, "repetitions", int, 1, "repetitions")
    if repetitions < 1:
        _fail(path, "repetitions must be at least 1")
    timeout_s = _expect(path, data, "timeout_s", (int, float), 1800, "timeout_s")
    if timeout_s <= 0:
        _fail(path, "timeout_s must be positive")

    zbfs = _expect(path, data, "zbfs", dict, {}, "[zbfs]")
    unknown = set(zbfs) - {"binary", "args"}
    if unknown:
        _fail(path, f"[zbfs] has unknown key(s) {', '.join(sorted(unknown))} (known: args, binary)")
    launcher_table = _expect(path, data, "launcher", dict, {}, "[launcher]")
    kind = _expect(path, launcher_table, "kind", str, "mpirun", "launcher.kind")
    if kind not in LAUNCHER_KEYS:
        _fail(path, f"launcher.kind must be one of {', '.join(LAUNCHER_KEYS)}, not {kind!r}")
    unknown = set(launcher_table) - {"kind", "mpirun", "netcluster", "hosts", "ranks_per_host", "cluster_name",
                                     "smpirun", "topology", "links", "oversubscription", "compute", "work_costs"}
    if unknown:
        _fail(path, f"[launcher] has unknown key(s) {', '.join(sorted(unknown))}")
    defaults = Launcher()
    launcher = Launcher(
        kind=kind,
        mpirun=_string_list(path, launcher_table, "mpirun", defaults.mpirun, "launcher.mpirun"),
        netcluster=_expect(path, launcher_table, "netcluster", str, defaults.netcluster, "launcher.netcluster"),
        hosts=_expect(path, launcher_table, "hosts", int, defaults.hosts, "launcher.hosts"),
        ranks_per_host=_expect(path, launcher_table, "ranks_per_host", (int, type(None)), None,
                               "launcher.ranks_per_host"),
        cluster_name=_expect(path, launcher_table, "cluster_name", str, defaults.cluster_name,
                             "launcher.cluster_name"),
        smpirun=_expect(path, launcher_table, "smpirun", str, defaults.smpirun, "launcher.smpirun"),
        topology=_expect(path, launcher_table, "topology", str, defaults.topology, "launcher.topology"),
        links=_expect(path, launcher_table, "links", str, defaults.links, "launcher.links"),
        oversubscription=float(_expect(path, launcher_table, "oversubscription", (int, float),
                                       defaults.oversubscription, "launcher.oversubscription")),
        compute=_expect(path, launcher_table, "compute", str, defaults.compute, "launcher.compute"),
        work_costs=_expect(path, launcher_table, "work_costs", (str, type(None)), None, "launcher.work_costs"),
    )
    if launcher.work_costs is not None and not Path(launcher.work_costs).is_absolute():
        launcher = dataclasses.replace(launcher, work_costs=str((Path(path).parent / launcher.work_costs).resolve()))
    if launcher.hosts < 1:
        _fail(path, "launcher.hosts must be at least 1")

    # A file without [matrix] ran one default point without a word: a forgotten or
    # misspelt table then looked like an experiment that measured something.
    if "matrix" not in data:
        _fail(path, "has no [matrix] table: say what the experiment varies, e.g. [matrix] scale = [16] "
                    "(one value for a single point)")
    matrix = _expect(path, data, "matrix", dict, {}, "[matrix]")
    for key, values in matrix.items():
        if not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            _fail(path, f"matrix key {key!r} is not a flag name (lowercase letters, digits, underscores)")
        if not isinstance(values, list):
            # A bare value was taken as a list of one, so `scale = "notalist"` dry-ran
            # `--scale notalist`: a matrix lists its values, one or more.
            _fail(path, f"matrix.{key} must be a list of values ({key} = [{_toml_value(values)}] for one), "
                        f"not {values!r}")
        if not values:
            _fail(path, f"matrix.{key} is empty")
        for v in values:
            if not isinstance(v, (str, int, float, bool)):
                _fail(path, f"matrix.{key} holds {v!r}: values must be strings, numbers or true/false")
        if len(set(map(repr, values))) != len(values):
            _fail(path, f"matrix.{key} repeats a value")
    for v in matrix.get("ranks", []):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            _fail(path, f"matrix.ranks values must be positive integers, not {v!r}")
    if kind != "netcluster":
        for key in ("link_rate", "link_delay"):
            if key in matrix:
                _fail(path, f"matrix.{key} needs launcher.kind = \"netcluster\"")
    if kind == "simgrid":
        if "ranks" not in matrix:
            _fail(path, "launcher.kind = \"simgrid\" needs matrix.ranks (the simulated ranks)")
        for key, known in (("topology", platforms.TOPOLOGIES), ("links", tuple(platforms.LINK_PRESETS)),
                           ("compute", ("measured", "counted", "none"))):
            for v in matrix.get(key, [getattr(launcher, key)]):
                if v not in known:
                    _fail(path, f"{key} {v!r} is not one of {', '.join(known)}")
        computes = matrix.get("compute", [launcher.compute])
        if "counted" in computes and launcher.work_costs is None:
            _fail(path, "compute \"counted\" needs launcher.work_costs (the file zbfs-lab calibrate writes)")

    codec_bench = None
    if "codec_bench" in data:
        table = _expect(path, data, "codec_bench", dict, {}, "[codec_bench]")
        unknown = set(table) - {"binary", "dump_scale", "dump_ranks", "args"}
        if unknown:
            _fail(path, f"[codec_bench] has unknown key(s) {', '.join(sorted(unknown))}")
        d = CodecBench()
        codec_bench = CodecBench(
            binary=_expect(path, table, "binary", str, d.binary, "codec_bench.binary"),
            dump_scale=_expect(path, table, "dump_scale", int, d.dump_scale, "codec_bench.dump_scale"),
            dump_ranks=_expect(path, table, "dump_ranks", int, d.dump_ranks, "codec_bench.dump_ranks"),
            args=_string_list(path, table, "args", d.args, "codec_bench.args"),
        )

    experiment = Experiment(
        path=path,
        name=name,
        description=_expect(path, data, "description", str, "", "description"),
        output=Path(output if output is not None else _expect(path, data, "output", str, f"results/{name}",
                                                               "output")),
        repetitions=repetitions,
        timeout_s=float(timeout_s),
        binary=binary or _expect(path, zbfs, "binary", str, "build/bin/zbfs", "zbfs.binary"),
        args=_string_list(path, zbfs, "args", (), "zbfs.args"),
        launcher=launcher,
        matrix=matrix,
        codec_bench=codec_bench,
    )
    keys = list(matrix)
    experiment.points = [Point(tuple(zip(keys, combo))) for combo in itertools.product(*matrix.values())]
    return experiment


def check_flags(experiment: Experiment) -> None:
    """Refuses a matrix key that is not a flag of the binary's `zbfs run` (a typo such as `sclae`
    would otherwise fail every run of the sweep, or print commands that cannot work)."""
    keys = [k for k in experiment.matrix if k not in LAUNCHER_KEYS[experiment.launcher.kind]]
    if not keys or experiment.launcher.kind == "simgrid":
        return  # the SMPI build runs only under smpirun; a bad flag fails its runs, each with the reason
    command = [experiment.binary, "run", "--help"]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ExperimentError(f"cannot run '{' '.join(command)}' to check the matrix keys: "
                              f"{getattr(e, 'strerror', None) or e}") from None
    if done.returncode != 0:
        raise ExperimentError(f"'{' '.join(command)}' failed (exit status {done.returncode}), so the matrix keys "
                              f"cannot be checked: {done.stderr.strip()[:200]}")
    flags = set(re.findall(r"--[a-z][a-z0-9-]*", done.stdout))
    for key in keys:
        flag = "--" + key.replace("_", "-")
        if flag not in flags:
            _fail(experiment.path, f"matrix key {key!r} is not a flag of zbfs run ({flag} is unknown to "
                                   f"{experiment.binary}; see '{experiment.binary} run --help')")
