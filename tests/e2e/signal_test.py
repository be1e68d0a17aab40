#!/usr/bin/env python3
"""SIGINT and SIGTERM end a zbfs run cleanly (issue 77): sent to a one-process run and to one
rank of a 4-rank job at random points (kernel 1, a search, a validation, the writes of
--write-parents, --write-levels and --json), `--count` times each, with the signal's default
disposition restored in the child (a shell's background jobs start with SIGINT ignored).
Every run must end within `--within` seconds of the signal with the shells' status (130 or
143; mpirun passes the rank's on), say so on one line (one process) and leave no `.partial`
file and no process behind. A run that ended before its signal came is drawn again. Then
`zbfs trace` is signalled 6 times while it writes its folder of traces: the same status and
line, and neither the folder nor any trace in it is left.

    signal_test.py --binary build/bin/zbfs --mpiexec "mpirun --oversubscribe" [--count 20] [--seed 1]
"""
import argparse
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TAG = "ZBFS_SIGNAL_TEST_TAG"


def tagged(tag, rank=None, binary=None):
    """The processes whose environment carries the tag (and, given `rank`, that MPI rank; given
    `binary`, only once they run it: between mpirun's fork and its exec a child is mpirun's
    code, whose signals are Open MPI's business, not zbfs's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"{TAG}={tag}".encode() not in env:
            continue
        if rank is not None and f"OMPI_COMM_WORLD_RANK={rank}".encode() not in env and \
                f"PMI_RANK={rank}".encode() not in env:
            continue
        if binary is not None:
            try:
                if os.path.realpath(entry / "exe") != os.path.realpath(binary):
                    continue
            except OSError:
                continue
        found.append(int(entry.name))
    return found


def default_signals():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start(command, folder, tag):
    env = {**os.environ, TAG: tag}
    return subprocess.Popen(command, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, preexec_fn=default_signals, start_new_session=True)


class Output:
    """A run's standard output and error, each read by a thread of its own as it comes (so that
    neither pipe fills); `writing` is set at the first "writing" line of its error."""

    def __init__(self, proc):
        self.lines = {"out": [], "err": []}
        self.first_out_at = None  # when the result block began (time.monotonic)
        self.writing = threading.Event()
        self.threads = [threading.Thread(target=self.read, args=(pipe, name), daemon=True)
                        for pipe, name in ((proc.stdout, "out"), (proc.stderr, "err"))]
        for thread in self.threads:
            thread.start()

    def read(self, pipe, name):
        for line in iter(pipe.readline, b""):
            if name == "out" and self.first_out_at is None:
                self.first_out_at = time.monotonic()
            self.lines[name].append(line)
            if name == "err" and line.startswith(b"zbfs: writing the "):
                self.writing.set()

    def text(self):
        """(stdout, stderr) once both pipes closed."""
        for thread in self.threads:
            thread.join(timeout=5)
        return tuple(b"".join(self.lines[name]).decode(errors="replace") for name in ("out", "err"))


def ended_cleanly(proc, output, signalled_at, sig, folder, tag, within, one_process):
    """Problems with how `proc` ended after its signal (empty: none)."""
    problems = []
    try:
        proc.wait(timeout=within + 10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return [f"still running {within + 10:.0f} s after the signal"]
    took = time.monotonic() - signalled_at
    out, err = output.text()
    want = 128 + sig
    if proc.returncode not in (want, -sig):
        problems.append(f"exit {proc.returncode}, not {want}")
    if took > within:
        problems.append(f"ended {took:.2f} s after the signal (the bar: {within} s)")
    text = err
    name = signal.Signals(sig).name
    if one_process and text.count(f"zbfs: interrupted by {name}") != 1:
        problems.append(f"stderr does not say once that {name} stopped it: {text[-300:]!r}")
    # A block that began before the signal belongs to a run that had finished its work (the
    # signal came in its teardown); one that began after it is a run that went on.
    printed_before = output.first_out_at is not None and output.first_out_at < signalled_at
    if "bfs  harmonic_mean_TEPS" in out and not printed_before:
        problems.append("an interrupted run printed its result block")
    deadline = time.monotonic() + 2
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    if tagged(tag):
        problems.append(f"left running: {tagged(tag)}")
        for pid in tagged(tag):
            os.kill(pid, signal.SIGKILL)
    partial = sorted(p.name for p in Path(folder).rglob("*.partial"))
    if partial:
        problems.append(f"partial files left: {partial}")
    return problems


def run_case(args, launcher, ranks, sig, duration, rng, index):
    """One run signalled at a random point (every other one while it writes its files, a window
    of milliseconds a uniform draw would seldom hit); (problems, when the signal went, or None
    if the run ended first)."""
    folder = tempfile.mkdtemp(prefix="zbfs-signal-")
    tag = f"{os.getpid()}-{index}-{rng.random()}"
    command = launcher + run_args(args)
    began = time.monotonic()
    proc = start(command, folder, tag)
    output = Output(proc)
    if index % 2 == 0:
        output.writing.wait(timeout=2 * duration + 5)
        time.sleep(rng.uniform(0, 0.004))
    else:
        # Not in the last moments, when the block is printed and the job is tearing down.
        time.sleep(rng.uniform(0.02, 0.85 * duration))
    delay = time.monotonic() - began
    if ranks == 1:
        target = proc.pid
    else:
        rank = rng.randrange(ranks)
        pids = tagged(tag, rank, args.binary)
        while not pids and proc.poll() is None:
            time.sleep(0.01)
            pids = tagged(tag, rank, args.binary)
        target = pids[0] if pids else None
    if proc.poll() is not None or target is None:
        proc.wait()
        output.text()
        subprocess.run(["rm", "-rf", folder])
        return [], None
    signalled_at = time.monotonic()
    try:
        os.kill(target, sig)
    except ProcessLookupError:
        proc.wait()
        output.text()
        subprocess.run(["rm", "-rf", folder])
        return [], None
    problems = ended_cleanly(proc, output, signalled_at, sig, folder, tag, args.within, ranks == 1)
    subprocess.run(["rm", "-rf", folder])
    return problems, delay


def run_args(args):
    return [args.binary, "run", "--scale", str(args.scale), "--roots", "8", "--write-parents", "p.txt",
            "--write-levels", "l.txt", "--json", "r.json"]


def measure(launcher, args):
    """Seconds an undisturbed run takes (the window the signals are drawn from)."""
    folder = tempfile.mkdtemp(prefix="zbfs-signal-")
    began = time.monotonic()
    done = subprocess.run(launcher + run_args(args), cwd=folder, capture_output=True, timeout=300)
    took = time.monotonic() - began
    subprocess.run(["rm", "-rf", folder])
    if done.returncode != 0:
        sys.exit(f"FAIL: the undisturbed run exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return took


def trace_cases(args, rng, count):
    """zbfs trace signalled while it writes its folder of traces (a file a rank): it ends as
    a run does, and no trace file, partial or whole, nor the folder, is left."""
    failures = 0
    for index in range(count):
        sig = (signal.SIGINT, signal.SIGTERM)[index % 2]
        folder = tempfile.mkdtemp(prefix="zbfs-signal-trace-")
        traces = Path(folder) / "traces"
        proc = subprocess.Popen([args.binary, "trace", "--ranks", "4096", "--scale", "14", "--roots", "2",
                                 "--overlap", "off", "--trace-dir", str(traces), "--json", "plan.json"],
                                cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        wanted = rng.randrange(1, 3000)
        while proc.poll() is None and not (traces.is_dir() and len(os.listdir(traces)) >= wanted):
            time.sleep(0.0005)
        if proc.poll() is not None:
            print(f"trace {index}: ended before its signal")
            proc.communicate()
            subprocess.run(["rm", "-rf", folder])
            continue
        os.kill(proc.pid, sig)
        try:
            err = proc.communicate(timeout=args.within + 10)[1]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            err = proc.communicate()[1]
        problems = []
        if proc.returncode not in (128 + sig, -sig):
            problems.append(f"exit {proc.returncode}")
        if err.count("zbfs: interrupted by") != 1:
            problems.append(f"stderr: {err[-300:]!r}")
        left = sorted(p.name for p in Path(folder).rglob("*") if p.name != "plan.json")
        if left:
            problems.append(f"left behind: {left[:5]} ({len(left)} in all)")
        for p in problems:
            print(f"FAIL: zbfs trace, {signal.Signals(sig).name} after {wanted} files: {p}")
        failures += bool(problems)
        subprocess.run(["rm", "-rf", folder])
    print(f"zbfs trace: {count} runs signalled while writing their traces", flush=True)
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mpiexec", required=True, help="the launcher and its flags")
    parser.add_argument("--count", type=int, default=20, help="signalled runs per signal and layout")
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--within", type=float, default=2.0, help="seconds a run may take to end")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)  # the runs start in folders of their own
    rng = random.Random(args.seed)
    failures = 0
    for ranks in (1, 4):
        launcher = [] if ranks == 1 else shlex.split(args.mpiexec) + ["-np", str(ranks)]
        duration = measure(launcher, args)
        for sig in (signal.SIGINT, signal.SIGTERM):
            done = 0
            index = 0
            while done < args.count and index < 4 * args.count:
                index += 1
                problems, delay = run_case(args, launcher, ranks, sig, duration, rng, index)
                if delay is None:
                    continue  # it ended before the signal: draw again
                done += 1
                label = f"{ranks} rank{'s' if ranks > 1 else ''}, {signal.Signals(sig).name} at {delay:.2f} s"
                for p in problems:
                    print(f"FAIL: {label}: {p}")
                failures += bool(problems)
            print(f"{ranks} rank(s), {signal.Signals(sig).name}: {done} runs signalled within {duration:.2f} s runs",
                  flush=True)
            if done < args.count:
                print(f"FAIL: only {done} of {args.count} runs were still running when signalled")
                failures += 1
    failures += trace_cases(args, rng, 6)
    print("signals: passed" if failures == 0 else f"signals: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
