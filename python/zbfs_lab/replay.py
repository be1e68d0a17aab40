"""`zbfs-lab replay`: a P-rank job's searches by trace replay, for rank counts no online
simulation can hold. `zbfs trace` (the normal build) plans the job's searches on this one
process from the whole graph and writes each rank's SimGrid time-independent trace (what
it sends to whom in every exchange, and with --compute counted its counted work priced at
calibrated costs); `smpirun -replay` then replays them on the same platforms and SMPI
settings as `simulate`, holding a fraction of a MiB a rank instead of the rank's data.

The record (written complete or not at all) keeps the plan's summary (each search's levels
and its per-phase messages and bytes, booked as a run's record books them), the replay's
simulated time and mean search time, and the wall time and peak memory of both steps.

With --phases the replay also logs every action with its simulated duration (SMPI's
smpi_replay category, to a file the run reads and removes) and the record gets, per phase,
the slowest rank's and the mean rank's time a search: each message, wait and probe by its
exchange's tag, allreduces as the termination check, and every `compute` (the counted
work, the exchanges' own byte handling included) as computation. At a few million actions
(1,024 ranks) the log is some hundreds of MB while it lasts.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from zbfs_lab import files, platforms, simulate

# `compute`: none replays the messages alone (SMPI's simulate-computation:no, as
# `simulate --compute none`); counted charges each rank's counted work between them.
COMPUTE_MODES = ("none", "counted")

# The phase of each trace tag (src/zbfs/replay/search_calls.cpp's Tag; a hop's messages
# take its tag + 1).
TAG_PHASES = {1: "column_exchange", 2: "row_exchange", 3: "column_exchange", 4: "row_exchange",
              5: "predecessor_reduction", 6: "predecessor_reduction", 7: "predecessor_reduction",
              8: "predecessor_reduction", 9: "column_exchange", 10: "column_exchange", 11: "column_exchange",
              12: "row_exchange", 13: "row_exchange"}
PHASES = ("computation", "column_exchange", "row_exchange", "predecessor_reduction", "termination_check")
ACTION_LOG = "actions.log"


@dataclass
class Replay:
    platform: platforms.Platform
    ranks: int
    ranks_per_host: int
    binary: str  # the normal build's zbfs (zbfs trace runs on this machine, not simulated)
    smpirun: str = "smpirun"
    compute: str = "none"
    work_costs: str | None = None
    keep_traces: str | None = None  # a new folder to leave the traces in
    phases: bool = False  # time each action and add them up per phase

    def settings(self) -> list[str]:
        extra = ["smpi/simulate-computation:no"] if self.compute == "none" else []
        return list(simulate.SMPI_CONFIG) + extra

    def trace_command(self, zbfs_args: list[str], folder: Path, summary: Path) -> list[str]:
        args = [self.binary, "trace", "-P", str(self.ranks), *zbfs_args, "--trace-dir", str(folder), "--json",
                str(summary), "--host-speed", f"{platforms.HOST_SPEED_FLOPS:g}", "--probe-cost", f"{simulate.PROBE_S:g}"]
        if self.compute == "counted":
            args += ["--work-costs", str(Path(self.work_costs).resolve())]
        if not any(a == "--ranks-per-node" or a.startswith("--ranks-per-node=") for a in zbfs_args):
            # The platform's hosts are the job's nodes (a hybrid grid's, and the default grid's).
            args += ["--ranks-per-node", str(self.ranks_per_host)]
        return args

    def replay_command(self, folder: Path) -> list[str]:
        xml = folder / "platform.xml"
        hosts = folder / "hostfile"
        xml.write_text(platforms.xml(self.platform))
        hosts.write_text(platforms.hostfile(self.platform, self.ranks_per_host))
        cmd = [self.smpirun, "-np", str(self.ranks), "-platform", str(xml), "-hostfile", str(hosts), "-replay",
               "traces.txt"]
        cmd += [f"--cfg={setting}" for setting in self.settings()]
        if self.phases:
            # One line an action, "RANK ACTION ARGS... SECONDS", to a file.
            cmd += ["--log=smpi_replay.thres:verbose", "--log=smpi_replay.fmt:%m%n",
                    f"--log=smpi_replay.app:file:{(folder / ACTION_LOG).resolve()}"]
        return cmd


def phase_times(log: Path, ranks: int, searches: int) -> dict:
    """Per phase, the slowest rank's and the mean rank's simulated seconds a search, from
    the replay's action log; a wait or probe belongs to the exchange before it."""
    totals = [dict.fromkeys(PHASES, 0.0) for _ in range(ranks)]
    current: list[str | None] = [None] * ranks
    with open(log) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) < 3 or not fields[0].isdigit():
                continue
            rank, action = int(fields[0]), fields[1]
            if not 0 <= rank < ranks:
                continue
            phase = None
            if action in ("isend", "irecv") and len(fields) >= 6:
                phase = TAG_PHASES.get(int(fields[3]))
            elif action == "wait" and len(fields) >= 6:
                phase = TAG_PHASES.get(int(fields[4]))
            elif action == "allreduce":
                phase = "termination_check"
            elif action == "compute":
                totals[rank]["computation"] += float(fields[-1])
                continue
            elif action in ("waitall", "sleep"):
                phase = current[rank]
            if phase is None:
                continue
            current[rank] = phase
            totals[rank][phase] += float(fields[-1])
    per = max(1, searches)
    return {phase: {"max_s": max(t[phase] for t in totals) / per,
                    "mean_s": sum(t[phase] for t in totals) / ranks / per} for phase in PHASES}


def _simulated_time(stderr: str) -> float:
    """SMPI's closing line: "Simulated time: T seconds." (smpi/display-timing)."""
    for line in reversed(stderr.splitlines()):
        if "Simulated time:" in line:
            return float(line.split("Simulated time:")[1].split()[0])
    raise simulate.SimulationError("the replay printed no simulated time")


def _failure(step: str, done) -> simulate.SimulationError:
    lines = done.stderr.splitlines()
    why = [line for line in lines if line.startswith("zbfs: error")] or \
          [line for line in lines if "CRITICAL" in line or "error" in line.lower()]
    return simulate.SimulationError(f"{step} failed (exit {done.returncode}): "
                                    f"{why[-1] if why else done.stderr.strip()[-300:]}")


def run(replay: Replay, zbfs_args: list[str], output: str | Path, timeout_s: float | None = None) -> dict:
    """Plans, writes the traces, replays them and writes the record to `output`."""
    if shutil.which(replay.smpirun) is None:
        raise simulate.SimulationError(f"{replay.smpirun} not found (Debian's libsimgrid-dev has it; "
                                       f"scripts/bootstrap installs it)")
    if not Path(replay.binary).is_file():
        raise simulate.SimulationError(f"{replay.binary} not found: build zbfs first (make build)")
    for flag in ("--json", "--trace-dir", "-P", "--ranks", "--host-speed", "--probe-cost"):
        if any(a == flag or a.startswith(flag + "=") for a in zbfs_args):
            raise simulate.SimulationError(f"zbfs-lab replay gives {flag} itself; leave it out of the zbfs arguments")
    if replay.keep_traces and Path(replay.keep_traces).exists():
        raise simulate.SimulationError(f"{replay.keep_traces} exists: --keep-traces makes a new folder")
    with tempfile.TemporaryDirectory(prefix="zbfs-replay-") as tmp:
        summary = Path(tmp) / "plan.json"
        folder = Path(replay.keep_traces) if replay.keep_traces else Path(tmp) / "traces"
        started = time.monotonic()
        planned = simulate._run_as_group(replay.trace_command(zbfs_args, folder, summary), timeout_s)
        trace_wall_s = time.monotonic() - started
        if planned.returncode != 0 or not summary.is_file():
            raise _failure("zbfs trace", planned)
        plan = json.loads(summary.read_text())
        left = None if timeout_s is None else max(1.0, timeout_s - trace_wall_s)
        started = time.monotonic()
        done = simulate._run_as_group(replay.replay_command(folder), left, cwd=folder)
        wall_s = time.monotonic() - started
        if done.returncode != 0:
            raise _failure("the replay", done)
        simulated_s = _simulated_time(done.stderr)
        phases = None
        if replay.phases:
            log = folder / ACTION_LOG
            if not log.is_file():
                raise simulate.SimulationError("the replay wrote no action log (--phases)")
            phases = phase_times(log, replay.ranks, len(plan.get("searches", [])))
            log.unlink()
    searches = plan.get("searches", [])
    keys = max(1, len(searches))
    traversed = sum(s.get("traversed_edges", 0) for s in searches)
    data = {
        "schema": "zbfs.replay",
        "plan": plan,
        "simulated": {
            "simulator": "SimGrid SMPI (trace replay)",
            "platform": replay.platform.describe(),
            "ranks": replay.ranks,
            "ranks_per_host": replay.ranks_per_host,
            "smpi_config": replay.settings(),
            "compute": replay.compute,
            "work_costs": simulate._costs_of(replay.work_costs),
            # The searches one after another, each after a barrier.
            "time_s": simulated_s,
            "mean_search_s": simulated_s / keys,
            # Every search's traversed edges over their simulated time together (the
            # replay times the searches as one).
            "teps": traversed / simulated_s if simulated_s > 0 else None,
            "trace_wall_s": trace_wall_s,
            "trace_peak_rss_bytes": planned.peak_rss_bytes,
            "wall_s": wall_s,
            "simulator_peak_rss_bytes": done.peak_rss_bytes,
        },
    }
    if phases is not None:
        data["simulated"]["phases"] = phases
    files.write_text(output, json.dumps(data, indent=2) + "\n")
    return data
