"""`zbfs-lab replay`: a P-rank job's searches by trace replay, for rank counts no online
simulation can hold. `zbfs trace` (the normal build) plans the job's searches on this one
process from the whole graph and writes each rank's SimGrid time-independent trace (what
it sends to whom in every exchange, and with --compute counted its counted work priced at
calibrated costs); `smpirun -replay` then replays them on the same platforms and SMPI
settings as `simulate`, holding a fraction of a MiB a rank instead of the rank's data.

The record (written complete or not at all) keeps the plan's summary (each search's levels
and its per-phase messages and bytes, booked as a run's record books them), the replay's
simulated time and mean search time, and the wall time and peak memory of both steps.
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
        return cmd + [f"--cfg={setting}" for setting in self.settings()]


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
    files.write_text(output, json.dumps(data, indent=2) + "\n")
    return data
