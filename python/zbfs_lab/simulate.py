"""`zbfs-lab simulate`: one zbfs run on a simulated cluster. Builds the platform
(zbfs_lab.platforms) and a hostfile, runs the SMPI build of zbfs (make smpi:
build-smpi/bin/zbfs) under smpirun with the ordinary `zbfs run` arguments, and writes the
ordinary JSON record with its `simulated` object completed: the simulator (zbfs's own),
the platform, hosts, ranks per host and SMPI's settings. The record appears only complete
(zbfs_lab.files); a failed run leaves none and says why.

Unless the arguments name a `--network`, the run's model prices the preset the links
follow (so that `zbfs model` and the simulation price the same links), with the platform's
ranks per host as its ranks per node.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from zbfs_lab import files, platforms

# SMPI's settings: the simulating machine computes at the hosts' speed (a rank's
# computation takes its measured time), SMPI's calibrated factors are off, so that a link
# delivers the preset's latency and bandwidth, the collectives follow Open MPI's
# algorithms (zbfs's MPI), not SMPI's defaults, and an MPI_Iprobe or MPI_Test costs 1 us,
# not SMPI's default 100 us (which it charges so that polling loops advance the clock).
# At 2 simulated hosts on the emulated links' figures, scale 18 in 2D: a search's
# termination checks (small allreduces) took 0.43 ms, not 1.0, and its row exchanges
# (probed messages) 9.0 ms, not 11.5 (emulated cluster: 0.4 and 7.5).
#
# Sends are never detached (smpi/send-is-detached-thresh:0): SimGrid 3.32 keeps a detached
# (eager) send in its actors' lists of communications after it ends, and removes every
# later one by walking those lists, so that a message costs the simulator more the more
# came before (measured: each rank trading a word with 62 others 20 times took 27 s of
# wall time at 256 simulated ranks and 10 s without detached sends; at 1,024 ranks, 47 s).
# A small message's sender then completes when it is received, as a large one's does.
#
# The collectives are Open MPI's algorithms for the sizes zbfs sends, named one by one:
# SMPI's `ompi` selector picks the same ones but first studies each new communicator in
# time quadratic in its members (measured: 13-16 s of wall time for the first allreduce
# on 512 ranks, 0.4 s with the algorithm named).
OPEN_MPI_COLLECTIVES = ("smpi/allreduce:rdb", "smpi/allgather:bruck", "smpi/allgatherv:ompi_bruck",
                        "smpi/alltoall:bruck", "smpi/alltoallv:ompi_basic_linear", "smpi/bcast:binomial_tree",
                        "smpi/barrier:ompi_recursivedoubling", "smpi/reduce:ompi_binomial",
                        "smpi/reduce_scatter:ompi_basic_recursivehalving", "smpi/gather:ompi_binomial",
                        "smpi/scatter:ompi_binomial")
# What an MPI_Iprobe (and an MPI_Test) costs the simulated clock; a replay charges the
# probes of zbfs's probed exchanges at the same price (zbfs trace --probe-cost).
PROBE_S = 1e-6
SMPI_CONFIG = (f"smpi/host-speed:{platforms.HOST_SPEED_FLOPS:g}f", "smpi/bw-factor:0:1", "smpi/lat-factor:0:1",
               *OPEN_MPI_COLLECTIVES, f"smpi/iprobe:{PROBE_S:g}", f"smpi/test:{PROBE_S:g}", "smpi/send-is-detached-thresh:0",
               "smpi/grow-injected-times:no", "smpi/display-timing:yes")


class SimulationError(Exception):
    """A simulated run that could not be made or failed; the message says why."""


@dataclass
class Simulation:
    platform: platforms.Platform
    ranks: int
    ranks_per_host: int
    binary: str
    smpirun: str = "smpirun"
    # SMPI's copy of the program per rank (dlopen privatization). zbfs keeps no mutable
    # global state, so its simulated ranks can share one: at 256 ranks a run held 245 MB
    # instead of 860 and started in a fraction of the time (1,024 copies of the 5 MB
    # program took 7 minutes to load). True: one copy a rank, for a program that needs it.
    privatize: bool = False
    # How a rank's computation takes simulated time (COMPUTE_MODES), and for "counted" the
    # per-unit costs of counted work (zbfs-lab calibrate's file).
    compute: str = "measured"
    work_costs: str | None = None

    def settings(self) -> list[str]:
        """SMPI's settings for this simulation."""
        extra = [] if self.compute == "measured" else ["smpi/simulate-computation:no"]
        return list(SMPI_CONFIG) + extra

    def command(self, folder: Path, zbfs_args: list[str], record: Path) -> list[str]:
        xml = folder / "platform.xml"
        hosts = folder / "hostfile"
        xml.write_text(platforms.xml(self.platform))
        hosts.write_text(platforms.hostfile(self.platform, self.ranks_per_host))
        cmd = [self.smpirun, "-np", str(self.ranks), "-platform", str(xml), "-hostfile", str(hosts)]
        if not self.privatize:
            cmd.append("-no-privatize")
        for setting in self.settings():
            cmd.append(f"--cfg={setting}")
        args = list(zbfs_args)
        if self.compute == "counted":
            args += ["--work-costs", str(Path(self.work_costs).resolve())]
        if not any(a == "--network" or a.startswith("--network=") for a in args) and \
                self.platform.preset in ZBFS_NETWORKS:
            args += ["--network", self.platform.preset, "--ranks-per-node", str(self.ranks_per_host)]
            if self.platform.custom_links:
                # The model prices the links the simulation has.
                args += ["--network-latency", f"{self.platform.latency_s * 1e6:.9g}us",
                         "--network-bandwidth", f"{self.platform.bandwidth_bytes_per_s / 1e9:.9g}GB/s"]
        return cmd + [self.binary, "run", *args, "--json", str(record)]


# measured: a rank's computation takes the time this machine takes to run it while it
# simulates (SMPI's default: every rank's data in one process, so its caches are cold at
# hundreds of ranks); counted: SMPI times nothing, and zbfs charges each rank's counted
# work at calibrated per-unit costs (zbfs run --work-costs); none: computation takes no
# simulated time at all, the communication's floor.
COMPUTE_MODES = ("measured", "counted", "none")

# The link presets zbfs's own model knows by the same name (zbfs run --network).
ZBFS_NETWORKS = {"1gbe", "10gbe", "ib-qdr", "ib-hdr", "tofu-d"}


def _run_as_group(cmd: list[str], timeout_s: float | None, log: TextIO | None = None,
                  cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs `cmd` in a process group of its own and, when it runs past `timeout_s` or
    this process is interrupted, ends the whole group: smpirun starts the simulator
    (smpimain) as its child, which would outlive a kill of smpirun alone. With `log`,
    every line of the run's error stream (zbfs's progress, SimGrid's messages) is also
    written there as it comes, after the wall seconds since the start: a long simulation
    shows where its time goes while it runs."""
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               text=True, start_new_session=True, cwd=cwd)
    started = time.monotonic()
    lines: list[str] = []

    def follow_errors() -> None:
        for line in process.stderr:
            lines.append(line)
            if log is not None:
                log.write(f"[{time.monotonic() - started:9.1f} s] {line}")
                log.flush()

    follower = threading.Thread(target=follow_errors, daemon=True)
    follower.start()
    try:
        stdout = process.stdout.read() if timeout_s is None else _read_within(process, timeout_s)
        peak_rss_bytes = _wait_for_peak(process)
        follower.join()
    except subprocess.TimeoutExpired:
        _end_group(process)
        raise SimulationError(f"the simulation ran past {timeout_s:g} s: {' '.join(cmd)}") from None
    except BaseException:
        _end_group(process)
        raise
    process.stdout.close()
    process.stderr.close()
    done = subprocess.CompletedProcess(cmd, process.returncode, stdout, "".join(lines))
    done.peak_rss_bytes = peak_rss_bytes
    return done


def _wait_for_peak(process: subprocess.Popen) -> int:
    """Waits for `process` and returns the largest resident size it or any descendant it
    waited for reached (Linux's wait4 reports the most of the child and its reaped
    children: the simulator, smpirun's child, holds every simulated rank)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss * 1024


def _read_within(process: subprocess.Popen, timeout_s: float) -> str:
    """The run's standard output, read whole; TimeoutExpired past `timeout_s`."""
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(process.stdout.read()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    if reader.is_alive():
        raise subprocess.TimeoutExpired(process.args, timeout_s)
    return out[0]


def _end_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _costs_of(path: str | None) -> dict | None:
    """The per-unit costs a counted simulation ran at, as its record keeps them."""
    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise SimulationError(f"cannot read the work costs {path}: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("seconds_per_unit"), dict):
        raise SimulationError(f"{path} has no \"seconds_per_unit\" object (zbfs-lab calibrate writes one)")
    return {"file": str(path), "seconds_per_unit": data["seconds_per_unit"], "host": data.get("host")}


def run(simulation: Simulation, zbfs_args: list[str], output: str | Path, timeout_s: float | None = None,
        log: TextIO | None = None) -> dict:
    """Runs it and writes the completed record to `output`; returns the record. `log`:
    where the run's progress goes as it comes, each line stamped with the wall time."""
    if shutil.which(simulation.smpirun) is None:
        raise SimulationError(f"{simulation.smpirun} not found (Debian's libsimgrid-dev has it; scripts/bootstrap "
                              f"installs it)")
    if not Path(simulation.binary).is_file():
        raise SimulationError(f"{simulation.binary} not found: build the SMPI zbfs with `make smpi`")
    if any(a == "--json" or a.startswith("--json=") for a in zbfs_args):
        raise SimulationError("give the record's name with -o/--json of zbfs-lab simulate, not in the zbfs arguments")
    costs = _costs_of(simulation.work_costs)
    with tempfile.TemporaryDirectory(prefix="zbfs-sim-") as tmp:
        folder = Path(tmp)
        record = folder / "run.json"
        cmd = simulation.command(folder, zbfs_args, record)
        started = time.monotonic()
        done = _run_as_group(cmd, timeout_s, log)
        wall_s = time.monotonic() - started
        if done.returncode != 0 or not record.is_file():
            why = [line for line in done.stderr.splitlines() if line.startswith("zbfs: error")]
            why = why or [line for line in done.stderr.splitlines() if "CRITICAL" in line or "error" in line.lower()]
            raise SimulationError(f"the simulated run failed (exit {done.returncode}): "
                                  f"{why[-1] if why else done.stderr.strip()[-300:]}")
        data = json.loads(record.read_text())
    simulated = data.get("simulated") or {}
    if not simulated.get("simulator"):
        raise SimulationError(f"{simulation.binary} is not the SMPI build (its record is not marked simulated)")
    simulated.update({
        "platform": simulation.platform.describe(),
        "ranks_per_host": simulation.ranks_per_host,
        "smpi_config": simulation.settings() + ([] if simulation.privatize else ["smpi/privatization:no"]),
        "compute": simulation.compute,
        "work_costs": costs,
        "wall_s": wall_s,
        # The simulator's peak resident size: every simulated rank's memory together.
        "simulator_peak_rss_bytes": done.peak_rss_bytes,
    })
    data["simulated"] = simulated
    files.write_text(output, json.dumps(data, indent=2) + "\n")
    return data
