"""A progress display for sweeps: a bar redrawn in place on a terminal, one line per run elsewhere
(CI logs, files), both with elapsed time and an estimate of the time left."""
from __future__ import annotations

import sys
import time


def clock(seconds: float) -> str:
    """1:02:03, 4:05 or 0:07."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts runs to do; the estimate uses the mean time of the runs done so far in this sweep
    (runs skipped because an earlier sweep did them take no time and do not count)."""

    def __init__(self, total: int, stream=None, width: int = 30, now=time.monotonic):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.width = width
        self.now = now
        self.start = now()
        self.done = 0
        self.failed = 0
        self.skipped = 0
        self.run_time = 0.0

    def eta(self) -> float | None:
        ran = self.done - self.skipped
        if ran == 0:
            return None
        return self.run_time / ran * (self.total - self.done)

    def skip(self, label: str) -> None:
        self.done += 1
        self.skipped += 1
        self._show("done before", label)

    def finish_run(self, label: str, seconds: float, ok: bool) -> None:
        self.done += 1
        self.run_time += seconds
        if not ok:
            self.failed += 1
        self._show(f"{'ok' if ok else 'FAILED'} in {seconds:.1f} s", label)

    def line(self, status: str, label: str) -> str:
        fraction = self.done / self.total if self.total else 1.0
        filled = int(round(fraction * self.width))
        eta = self.eta()
        return (f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {fraction * 100:3.0f}% "
                f"elapsed {clock(self.now() - self.start)} eta {clock(eta) if eta is not None else '?'}"
                f"{f' failed {self.failed}' if self.failed else ''} | {status}: {label}")

    def _show(self, status: str, label: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + self.line(status, label))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(self.line(status, label) + "\n")
        self.stream.flush()
