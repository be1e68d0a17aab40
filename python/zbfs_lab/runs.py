"""One zbfs run and its JSON record, for the scripts under bench/ that are not experiment files.

    from zbfs_lab.runs import RunFailed, run_record
    record = run_record(["mpirun", "-np", "4", "build/bin/zbfs", "run", "--scale", "16"])

run_output runs a command that writes no record (zbfs generate, zbfs model) the same way.

The command is run in its own process group (an mpirun's ranks are ended with it on a timeout or
an interrupt, as in a sweep), with `--json` and a temporary path appended; the record comes back
parsed. A run that fails, times out or writes no record raises RunFailed with zbfs's last error
line. A script that runs them wraps its work in `with interruptible():`, so that SIGINT, SIGTERM and
SIGHUP end the run in progress (its whole group) before the script ends, instead of leaving it
running on its own."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from zbfs_lab.sweep import Interrupted, interruptible, mpirun_command, run_command

__all__ = ["Interrupted", "RunFailed", "interruptible", "mpirun_command", "run_command", "run_output", "run_record",
           "until_signal"]


class RunFailed(Exception):
    """A zbfs run that gave no record; str() is one line."""


def _last_line(text: str) -> str:
    """zbfs's last line of its own ("zbfs: error: ..."), else the last line: under mpirun the
    launcher's notice of the failed rank comes after zbfs's error."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    own = [line for line in lines if line.startswith("zbfs: ")]
    return own[-1] if own else (lines[-1] if lines else "")


def run_output(command: list[str], timeout_s: float | None = None, env: dict | None = None) -> str:
    """Runs `command` (a zbfs command that writes no record: generate, model, or zbfs-lab
    simulate) as run_record does; returns its standard output."""
    status, out, err = run_command(command, timeout_s, None if env is None else {**os.environ, **env})
    if status is None:
        raise RunFailed(f"{' '.join(command)}: no result after {timeout_s} s")
    if status != 0:
        raise RunFailed(f"{' '.join(command)}: exit {status}: {_last_line(err) or 'no message'}")
    return out


def _read_record(command: list[str], path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RunFailed(f"{' '.join(command)}: no readable record ({e})") from None


def run_record(command: list[str], timeout_s: float | None = None, env: dict | None = None,
               keep: str | Path | None = None) -> dict:
    """Runs `command` (a zbfs run, under its launcher if any) with `--json` appended; returns the record.
    `env`: variables added to this process's environment for the run. `keep`: where the record
    stays (zbfs writes it there once complete); else a temporary file."""
    if keep is not None:
        run_output([*command, "--json", str(keep)], timeout_s, env)
        return _read_record(command, Path(keep))
    with tempfile.TemporaryDirectory(prefix="zbfs-run-") as tmp:
        path = Path(tmp) / "run.json"
        run_output([*command, "--json", str(path)], timeout_s, env)
        return _read_record(command, path)


def until_signal(name: str, work) -> int:
    """work()'s exit status, or 128 + the signal's number when SIGINT, SIGTERM or SIGHUP stopped it:
    the run in progress is ended (its whole group) first, and one line says so on stderr."""
    try:
        with interruptible():
            return work()
    except Interrupted as e:
        print(f"{name}: interrupted ({e}): the run in progress was ended", file=sys.stderr)
        return 128 + e.signum
