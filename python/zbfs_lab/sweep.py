"""Runs an experiment's matrix: every point, `repetitions` times, each run's JSON record stored under
OUTPUT/runs/POINT/rep-K.json. A run whose record exists is not run again, so an interrupted sweep
resumes where it stopped; a failed run leaves OUTPUT/failures/POINT/rep-K.txt (command, exit status,
stderr) and the sweep goes on (a later sweep tries it again).

Every run is a process group of its own (mpirun and its ranks). When the sweep ends early (SIGINT,
SIGTERM, SIGHUP: the signal raises Interrupted), the running group is ended, its partial record is
removed, and the run is done again by the next sweep. Files appear only complete (zbfs_lab.files).

Layout of OUTPUT:
    experiment.toml           the experiment file as it was run
    sweep.json                the points, their parameters and what became of each run
    runs/POINT/rep-K.json     zbfs run --json records
    failures/POINT/rep-K.txt  why a run failed
    codec_bench.json          Google Benchmark JSON of zbfs_codec_bench, when the experiment asks for it
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from zbfs_lab import __version__, files
from zbfs_lab.experiment import Experiment, Point
from zbfs_lab.progress import Progress


@dataclass
class Outcome:
    ok: bool
    seconds: float
    detail: str = ""


def record_path(output: Path, point: Point, rep: int) -> Path:
    return output / "runs" / point.id / f"rep-{rep}.json"


def failure_path(output: Path, point: Point, rep: int) -> Path:
    return output / "failures" / point.id / f"rep-{rep}.txt"


def is_record(path: Path, schema: str | None = "zbfs.run") -> bool:
    """Whether `path` holds a complete JSON object (with that `schema`, unless None)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and (schema is None or data.get("schema") == schema)


class Interrupted(Exception):
    """The sweep was asked to stop by a signal (SIGINT, SIGTERM, SIGHUP)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def interruptible():
    """While inside, SIGINT, SIGTERM and SIGHUP raise Interrupted, so that the `finally` blocks on
    the way out end the running job and remove its partial files (the default SIGTERM would end
    this process at once and leave mpirun and its ranks running in their own group)."""
    def stop(signum, _frame):
        raise Interrupted(signum)

    caught = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    try:
        before = {s: signal.signal(s, stop) for s in caught}
    except ValueError:  # not the main thread: signals stay as they are
        yield
        return
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _end_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Ends the process group `proc` leads: SIGTERM (mpirun passes it to its ranks), then SIGKILL to
    whatever is left after `grace_s`."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            if _group_gone(proc.pid, 1.0):
                break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


def _group_gone(pgid: int, wait_s: float) -> bool:
    """Whether no process is left in group `pgid` (ranks may outlive mpirun by a moment)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def run_command(cmd: list[str], timeout_s: float | None, env: dict | None = None) -> tuple[int | None, str, str]:
    """Runs cmd in its own process group; on timeout the whole group is killed (mpirun's ranks too),
    and so it is when this process is interrupted (the exception goes on). `env`: the whole
    environment (None: this process's). Returns (exit status or None on timeout, stdout, stderr)."""
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, env=env)
    except OSError as e:
        return 127, "", f"cannot start {cmd[0]}: {e.strerror}"
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err
    except BaseException:
        _end_group(proc)
        raise


def mpirun_command(mpirun: tuple[str, ...], ranks: int | None, binary: list[str]) -> list[str]:
    """`binary` under mpirun with `ranks` ranks, or alone when ranks is None."""
    if ranks is None:
        return binary
    cmd = list(mpirun)
    if os.geteuid() == 0 and "--allow-run-as-root" not in cmd:
        cmd.insert(1, "--allow-run-as-root")
    return cmd + ["-np", str(ranks), *binary]


class Launch:
    """How one run's command line is made: mpirun (or the plain binary when the matrix has no
    `ranks`), the emulated cluster's `netcluster run`, or `zbfs-lab simulate` (simgrid)."""

    def __init__(self, experiment: Experiment):
        self.experiment = experiment
        self.launcher = experiment.launcher
        self.cluster_up: tuple | None = None
        self.cluster_error = ""

    def command(self, point: Point, args: list[str]) -> list[str]:
        binary = [self.experiment.binary, *args]
        ranks = point.get("ranks")
        if self.launcher.kind == "simgrid":
            return self.simulate_command(point, args)
        if self.launcher.kind == "netcluster":
            cmd = [self.launcher.netcluster, "run", "--name", self.launcher.cluster_name]
            if ranks is not None:
                cmd += ["--np", str(ranks)]
            if self.launcher.ranks_per_host is not None:
                cmd += ["--ranks-per-host", str(self.launcher.ranks_per_host)]
            return cmd + ["--", *binary]
        return mpirun_command(self.launcher.mpirun, ranks, binary)

    def simulate_command(self, point: Point, args: list[str]) -> list[str]:
        """zbfs-lab simulate with the point's platform: it runs the SMPI zbfs under smpirun
        and writes the record, marked simulated, where `--json` names it."""
        if "--json" not in args or args[:1] != ["run"]:
            raise ValueError("a simulated run's arguments are `run ... --json RECORD`")
        at = args.index("--json")
        record, rest = args[at + 1], args[1:at] + args[at + 2:]
        launcher = self.launcher
        return [sys.executable, "-m", "zbfs_lab", "simulate", "-np", str(point.get("ranks")),
                "--topology", str(point.get("topology", launcher.topology)),
                "--links", str(point.get("links", launcher.links)),
                "--oversubscription", str(point.get("oversubscription", launcher.oversubscription)),
                "--ranks-per-host", str(point.get("ranks_per_host", launcher.ranks_per_host or 1)),
                "--smpirun", launcher.smpirun, "--binary", self.experiment.binary,
                *self.compute_args(point), "-o", record, "--", *rest]

    def compute_args(self, point: Point) -> list[str]:
        """zbfs-lab simulate's --compute (and its costs) for the point."""
        compute = str(point.get("compute", self.launcher.compute))
        out = ["--compute", compute]
        if compute == "counted":
            out += ["--work-costs", str(self.launcher.work_costs)]
        return out

    def prepare(self, point: Point, timeout_s: float) -> str:
        """Brings up the emulated cluster the point needs (once per link setting); "" or why not."""
        if self.launcher.kind != "netcluster":
            return ""
        links = (point.get("link_rate", "none"), point.get("link_delay"))
        if links == self.cluster_up:
            return self.cluster_error
        self.close(timeout_s)
        cmd = [self.launcher.netcluster, "up", str(self.launcher.hosts), "--rate", str(links[0]),
               "--name", self.launcher.cluster_name]
        if links[1] is not None:
            cmd += ["--delay", str(links[1])]
        status, _, err = run_command(cmd, timeout_s)
        self.cluster_up = links
        self.cluster_error = "" if status == 0 else f"{' '.join(cmd)} failed: {err.strip() or status}"
        return self.cluster_error

    def close(self, timeout_s: float = 120) -> None:
        if self.launcher.kind == "netcluster" and self.cluster_up is not None:
            run_command([self.launcher.netcluster, "down", "--name", self.launcher.cluster_name], timeout_s)
            self.cluster_up = None


def run_point(experiment: Experiment, launch: Launch, point: Point, rep: int) -> Outcome:
    output = experiment.output
    target = record_path(output, point, rep)
    failure = failure_path(output, point, rep)
    start = time.monotonic()
    problem = launch.prepare(point, experiment.timeout_s)
    if problem:
        return _failed(failure, [], None, problem, start)
    target.parent.mkdir(parents=True, exist_ok=True)
    # The record appears only once complete: zbfs writes a temporary name (itself through its own
    # .partial), renamed on success. What an earlier, killed sweep left there goes first.
    partial = files.partial_path(target)
    _remove_partials(target)
    cmd = launch.command(point, experiment.zbfs_args(point) + ["--json", str(partial)])
    try:
        status, _, err = run_command(cmd, experiment.timeout_s)
        if status == 0 and is_record(partial):
            files.publish(target)
            _forget(failure)
            return Outcome(True, time.monotonic() - start)
    finally:
        _remove_partials(target)
    if status == 0:
        err += "\nzbfs-lab: the run exited 0 but left no complete JSON record"
    return _failed(failure, cmd, status, err, start, experiment.timeout_s)


def _remove_partials(target: Path) -> None:
    """Removes TARGET.partial and zbfs's own TARGET.partial.partial."""
    for stale in target.parent.glob(target.name + ".partial*"):
        stale.unlink(missing_ok=True)


def _forget(failure: Path) -> None:
    """A run that now succeeded drops its old failure note (and the point's folder, once empty)."""
    failure.unlink(missing_ok=True)
    try:
        failure.parent.rmdir()
    except OSError:
        pass


def _failed(failure: Path, cmd: list[str], status, err: str, start: float, timeout_s: float = 0) -> Outcome:
    failure.parent.mkdir(parents=True, exist_ok=True)
    how = f"timed out after {timeout_s:g} s" if status is None and cmd else f"exit status {status}"
    files.write_text(failure, f"command: {' '.join(cmd) if cmd else '(not started)'}\n{how}\nstderr:\n{err}")
    # The line that says what went wrong: zbfs's own error, else the last that is not mpirun's rule.
    lines = [line.strip() for line in err.splitlines() if line.strip() and not set(line.strip()) <= {"-"}]
    last = next((line for line in lines if "error" in line.lower()), lines[-1] if lines else how)
    return Outcome(False, time.monotonic() - start, last.strip()[:200])


def run_codec_bench(experiment: Experiment) -> Outcome:
    """Records the frontiers of one small run (under mpirun, whatever the experiment's launcher) and
    benchmarks every codec on them."""
    bench = experiment.codec_bench
    target = experiment.output / "codec_bench.json"
    failure = experiment.output / "failures" / "codec_bench.txt"
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="zbfs-lab-dump-") as dump:
        cmd = mpirun_command(experiment.launcher.mpirun, bench.dump_ranks,
                             [experiment.binary, "run", "--scale", str(bench.dump_scale), "--roots", "4",
                              "--no-validate", "--quiet", "--dump-frontiers", dump])
        status, _, err = run_command(cmd, experiment.timeout_s)
        if status != 0:
            return _failed(failure, cmd, status, err, start, experiment.timeout_s)
        partial = files.partial_path(target)
        cmd = [bench.binary, "--dump", dump, *bench.args, "--benchmark_format=json", f"--benchmark_out={partial}"]
        try:
            status, _, err = run_command(cmd, experiment.timeout_s)
            if status != 0 or not is_record(partial, schema=None):
                return _failed(failure, cmd, status, err, start, experiment.timeout_s)
            files.publish(target)
        finally:
            partial.unlink(missing_ok=True)
        _forget(failure)
    return Outcome(True, time.monotonic() - start)


def sweep(experiment: Experiment, stream=None) -> dict:
    """Runs what is not done yet; returns (and writes to sweep.json) the state of every run."""
    output = experiment.output
    output.mkdir(parents=True, exist_ok=True)
    if experiment.path.resolve() != (output / "experiment.toml").resolve():
        files.write_with(output / "experiment.toml", lambda partial: shutil.copyfile(experiment.path, partial))
    runs = [(point, rep) for point in experiment.points for rep in range(1, experiment.repetitions + 1)]
    bench_step = experiment.codec_bench is not None
    progress = Progress(len(runs) + (1 if bench_step else 0), stream)
    launch = Launch(experiment)
    state = {"experiment": experiment.name, "zbfs_lab_version": __version__, "points": []}
    with interruptible():
        results = _run_all(experiment, launch, runs, progress, bench_step)
    for point in experiment.points:
        state["points"].append({"id": point.id, "params": dict(point.params), "runs": results.get(point.id, [])})
    state["done"] = sum(r == "done" for p in state["points"] for r in p["runs"])
    state["failed"] = sum(r == "failed" for p in state["points"] for r in p["runs"])
    files.write_text(output / "sweep.json", json.dumps(state, indent=1))
    return state


def _run_all(experiment: Experiment, launch: Launch, runs: list, progress: Progress, bench_step: bool) -> dict:
    """Runs what is not done yet; returns each point's list of outcomes ("done" or "failed")."""
    output = experiment.output
    results: dict[str, list] = {}
    try:
        if bench_step:
            if is_record(output / "codec_bench.json", schema=None):
                progress.skip("codec benchmark")
            else:
                outcome = run_codec_bench(experiment)
                progress.finish_run("codec benchmark" + ("" if outcome.ok else f" ({outcome.detail})"),
                                    outcome.seconds, outcome.ok)
        order = runs
        if experiment.launcher.kind == "netcluster":
            # Points that share a link setting run together (one emulated cluster each).
            order = sorted(runs, key=lambda r: (str(r[0].get("link_rate", "")), str(r[0].get("link_delay", ""))))
        for point, rep in order:
            label = f"{point.describe()} rep {rep}/{experiment.repetitions}"
            if is_record(record_path(output, point, rep)):
                progress.skip(label)
                results.setdefault(point.id, []).append("done")
                continue
            outcome = run_point(experiment, launch, point, rep)
            progress.finish_run(label + ("" if outcome.ok else f" ({outcome.detail})"), outcome.seconds, outcome.ok)
            results.setdefault(point.id, []).append("done" if outcome.ok else "failed")
    finally:
        launch.close()
    return results
