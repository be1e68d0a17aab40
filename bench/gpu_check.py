#!/usr/bin/env python3
"""scripts/gpu-check --run: the whole device check on the GPU machine, in one command.

It runs the binaries scripts/gpu-check --prepare packed (PACK: .gpu-check/) and never
passes its wall-clock budget (--budget, default 330 s): every child runs under
`timeout -s INT` with what is left, so none outlives it, and SIGINT, SIGTERM or SIGHUP end
the child in progress (its whole process group) before the check exits 128 + the signal.
First it checks that the carried binaries start here (glibc, the processor's instruction
set, the driver, nvidia-smi, every library found, a scale-16 --backend cuda run that says
it ran on the device); where they cannot, it builds zbfs_gpu_bench here from the tree
(--source) and the pack's Debian packages, says why, and goes on without MPI. Then, in
priority order, dropping the tail when the budget runs short:

  levels   validated searches at the level scale (22) with --level-loop host, device and
           graph, without and with --prune;
  large    the large scale (26): kernel 1 on the device with its stages, GTEPS with the host
           loop and the faster device loop, then --prune with the faster of them;
  ranks    2 and 4 ranks sharing the GPU through the carried Open MPI: 1d, 2d and hybrid,
           staged exchange, --codec none then bitpack, every tree validated, the phase table;
  cpu      the CPU scale (24): the CPU backend on every core against the device;
  energy   how often the board's energy counter moves (NVML), and the searches' joules and
           TEPS per watt from the runs above;
  unit     the device unit tests (the GPU and the host launcher against the CPU kernel).

It writes OUT/gpu-check.md and OUT/gpu-check.json after every part (each complete, put in
place by rename), so whatever stops it leaves the parts done so far, and OUT/gpu-check.log.

  bench/gpu_check.py --pack .gpu-check --out OUT [--budget 330] [--dry-run] [--no-fallback]
                     [--level-scale 22] [--large-scale 26] [--cpu-scale 24] [--rank-scale 20]

--dry-run runs every step here through --backend cuda-host at small scales, with targets
not judged (a stand-in nvidia-smi on PATH): the CI test gpu_check.dry_run.
"""
import signal

# Until the check's own handlers are in place (interruptible, below), SIGINT ends it as
# SIGTERM does, by the signal (no child runs yet), not by a traceback.
signal.signal(signal.SIGINT, signal.SIG_DFL)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))
import gpu_bench  # noqa: E402
import gpu_ranks  # noqa: E402
from zbfs_lab.runs import Interrupted, interruptible, run_command  # noqa: E402

RESERVE_S = 3.0  # kept back for the summary
PARTS = ("start", "levels", "large", "ranks", "cpu", "energy", "unit")
# Seconds a part needs at least to be worth starting on the GPU machine (dry runs: a tenth).
PART_MIN_S = {"start": 10, "levels": 30, "large": 45, "ranks": 30, "cpu": 25, "energy": 4, "unit": 20}
# The libraries a binary takes from the machine it runs on: glibc's and the driver's.
MACHINE_LIB = re.compile(r"^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libcuda|"
                         r"libnvidia-[a-z-]+)\.so")
# x86-64-v3, as /proc/cpuinfo names its features (abm: lzcnt).
V3_FLAGS = ("avx", "avx2", "bmi1", "bmi2", "fma", "f16c", "movbe", "abm", "xsave")


class OutOfBudget(Exception):
    pass


class StepFailed(Exception):
    pass


class Dropped(Exception):
    """A part that cannot run here at all (str: why)."""


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text))


def last_error_line(text):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    own = [line for line in lines if "error" in line.lower()]
    return (own or lines or ["no message"])[-1]


class Check:
    def __init__(self, args):
        self.args = args
        self.pack = Path(args.pack).resolve()
        self.out = Path(args.out).resolve()
        self.dry = args.dry_run
        self.backend = "cuda-host" if self.dry else "cuda"
        self.started = time.monotonic()
        self.bench = self.pack / "bin" / "zbfs_gpu_bench"
        self.carried = True  # the pack's binaries run here (else a fallback build's zbfs_gpu_bench)
        self.device_loop = "device"
        self.best_loop = "host"
        self.summary = {"schema": "zbfs.gpu-check", "mode": "dry run (cuda-host)" if self.dry else "device",
                        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "budget_s": args.budget,
                        "pack": self.manifest(), "machine": {}, "parts": [], "rows": [], "ranks": [],
                        "targets": [], "energy": {}, "notes": [], "failures": []}
        self.out.mkdir(parents=True, exist_ok=True)
        self.log_file = open(self.out / "gpu-check.log", "w")

    def manifest(self):
        try:
            return json.loads((self.pack / "MANIFEST.json").read_text())
        except (OSError, ValueError):
            return {}

    # --- time and children -------------------------------------------------------------
    def left(self):
        return self.args.budget - (time.monotonic() - self.started)

    def log(self, text):
        line = f"gpu-check [{time.monotonic() - self.started:6.1f} s]: {text}"
        print(line, file=sys.stderr, flush=True)
        self.log_file.write(line + "\n")
        self.log_file.flush()

    def child_seconds(self, cap):
        """(seconds the next child may take, whether the budget rather than `cap` set them)."""
        seconds = min(cap, self.left() - RESERVE_S)
        if seconds < 2:
            raise OutOfBudget()
        return seconds, seconds < cap

    def run(self, label, command, cap, env=None):
        """(status, stdout, stderr) of `command` under timeout -s INT within the budget."""
        seconds, budget_bound = self.child_seconds(cap)
        timed = ["timeout", "-s", "INT", "-k", "5", f"{seconds:.0f}", *[str(c) for c in command]]
        began = time.monotonic()
        status, out, err = run_command(timed, seconds + 15, None if env is None else {**os.environ, **env})
        took = time.monotonic() - began
        if status in (124, 137, None):
            self.log(f"{label}: stopped at its {seconds:.0f} s limit" + (" (the budget's end)" if budget_bound else ""))
            if budget_bound:
                raise OutOfBudget()
            raise StepFailed(f"{label}: stopped at its {seconds:.0f} s limit")
        self.log(f"{label}: exit {status} in {took:.1f} s")
        return status, out, err

    def record(self, label, command, cap):
        """The JSON record of a zbfs run (command without --json)."""
        with tempfile.TemporaryDirectory(prefix="zbfs-gpu-check-") as tmp:
            path = Path(tmp) / "run.json"
            status, _, err = self.run(label, [*command, "--json", path], cap)
            if status != 0:
                raise StepFailed(f"{label}: exit {status}: {last_error_line(err)}")
            try:
                return json.loads(path.read_text())
            except (OSError, ValueError) as e:
                raise StepFailed(f"{label}: no readable record ({e})") from None

    def bench_row(self, part, scale, roots, validate, extra, backend=None):
        backend = backend or self.backend
        command = gpu_bench.bench_command(str(self.bench), scale, backend, roots, validate, extra)
        label = f"{part}: {backend} scale {scale} {' '.join(extra)}".rstrip()
        row = gpu_bench.bench_row([self.record(label, command, 600)], scale, backend, extra)
        row["part"] = part
        row["validate"] = validate
        if validate and not row["validated"]:
            self.summary["failures"].append(f"{label}: not every tree was validated")
        self.summary["rows"].append(row)
        self.log(f"{label}: {row['gteps']:.3f} GTEPS, kernel 1 {row['kernel1_s']:.2f} s")
        return row

    # --- the parts -----------------------------------------------------------------------
    def part_start(self):
        """Whether the carried binaries start here; falls back to a build here if not."""
        machine = self.summary["machine"]
        machine["cpu"] = cpu_model()
        machine["cores"] = os.cpu_count()
        machine["glibc"] = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else ""
        status, out, err = self.run("nvidia-smi -L", ["nvidia-smi", "-L"], 30)
        if status != 0:
            raise StepFailed(f"nvidia-smi -L: exit {status}: {last_error_line(err + out)} (no GPU here)")
        machine["gpus"] = [line for line in out.splitlines() if line.strip()]
        status, out, _ = self.run("nvidia-smi --query-gpu", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                                             "--format=csv,noheader"], 30)
        machine["gpu"] = out.strip().splitlines()[0] if status == 0 and out.strip() else ""
        why = self.why_carried_cannot_run()
        if why is None:
            try:
                self.start_run()
                return
            except StepFailed as e:
                why = str(e)
        # A pack that does not run where it was prepared for is a defect of the pack (the
        # check exits 1), whatever the fallback then measures.
        self.summary["failures"].append(f"the carried binaries cannot run here: {why}")
        self.log(f"the carried binaries cannot run here: {why}")
        if self.args.no_fallback:
            raise StepFailed(f"the carried binaries cannot run here ({why}); no fallback (--no-fallback)")
        self.fallback_build()
        self.start_run()

    def why_carried_cannot_run(self):
        manifest = self.summary["pack"]
        if not manifest:
            return f"no pack at {self.pack} (run scripts/gpu-check --prepare where nvcc is, and carry it)"
        need, have = manifest.get("glibc_required", ""), self.summary["machine"]["glibc"]
        if need and have and version_tuple(have) < version_tuple(need):
            return f"{have} here, the binaries need glibc {need}"
        if manifest.get("march") == "x86-64-v3":
            missing = [f for f in V3_FLAGS if f not in cpu_flags()]
            if missing:
                return f"this processor lacks {', '.join(missing)} (the binaries are built for x86-64-v3)"
        # Every library from the pack, but glibc's, the driver's and what the pack says it
        # left to the machine: one found elsewhere here would be missing on a bare machine.
        own = set(manifest.get("left_to_the_machine") or [])
        lib = self.pack / "lib"
        for binary in sorted((self.pack / "libexec").glob("*")):
            status, out, err = self.run(f"ldd {binary.name}", ["ldd", binary], 30, env={"LD_LIBRARY_PATH": str(lib)})
            if status != 0:
                return f"{binary.name} does not load: {last_error_line(err)}"
            for name, path in re.findall(r"^\s*(\S+) => (.+?)(?: \(0x[0-9a-f]+\))?$", out, re.M):
                if path == "not found":
                    return f"{binary.name} cannot load {name}"
                if not Path(path).resolve().is_relative_to(lib.resolve()) and not MACHINE_LIB.match(name) \
                        and name not in own:
                    return f"{binary.name} loads {name} from {path}, not from the pack"
        return None

    def start_run(self):
        """A scale-16 search that must say where it ran: a device, or the host launcher in a dry run."""
        command = gpu_bench.bench_command(str(self.bench), 16, self.backend, 4, True, [])
        record = self.record(f"start: {self.backend} scale 16", command, 120)
        name = (record.get("device") or {}).get("name", "")
        self.summary["machine"]["device"] = name
        if self.dry and name != "host":
            raise StepFailed(f"the dry run's scale-16 run ran on '{name}', not the host launcher")
        if not self.dry and name in ("", "host"):
            raise StepFailed("the scale-16 --backend cuda run did not run on a device")
        self.log(f"start: the scale-16 search ran on {name}")

    def fallback_build(self):
        """zbfs_gpu_bench built here (CUDA, no MPI, no tests) from the tree and the pack's packages."""
        source = Path(self.args.source).resolve()
        debs = sorted((self.pack / "debs").glob("*.deb"))
        if not (source / "CMakeLists.txt").exists() or not debs:
            raise StepFailed(f"no fallback build: it needs the tree ({source}) and the pack's Debian packages")
        prefix = Path(tempfile.gettempdir()) / "zbfs-gpu-check-deps"
        for deb in debs:
            self.run(f"dpkg -x {deb.name}", ["dpkg", "-x", deb, prefix], 60)
        build = Path(tempfile.gettempdir()) / "zbfs-gpu-check-fallback"
        usr = prefix / "usr"
        configure = ["cmake", "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DZBFS_CUDA=ON",
                     "-DZBFS_MPI=OFF", "-DZBFS_BUILD_TESTS=OFF", f"-DCMAKE_PREFIX_PATH={usr}",
                     f"-DCMAKE_LIBRARY_PATH={usr}/lib/x86_64-linux-gnu", f"-DCMAKE_INCLUDE_PATH={usr}/include"]
        for label, command in (("fallback: configure", configure),
                               ("fallback: build", ["cmake", "--build", build, "-j", str(os.cpu_count() or 4),
                                                    "--target", "zbfs_gpu_bench"])):
            status, out, err = self.run(label, command, 300)
            if status != 0:
                self.log_file.write((out + err)[-4000:] + "\n")
                first = [line.strip() for line in (err + out).splitlines() if re.search(r"Error|error:", line)]
                raise StepFailed(f"{label}: exit {status}: {(first or [last_error_line(err + out)])[0]} "
                                 "(its output's end is in gpu-check.log)")
        os.environ["LD_LIBRARY_PATH"] = f"{usr}/lib/x86_64-linux-gnu:" + os.environ.get("LD_LIBRARY_PATH", "")
        self.bench = build / "bin" / "zbfs_gpu_bench"
        self.carried = False
        self.summary["notes"].append("zbfs_gpu_bench was built here instead; the ranks and unit parts need the "
                                     "carried binaries and are dropped")

    def part_levels(self):
        scale, roots = self.args.level_scale, self.args.level_roots
        for prune in (False, True):
            for loop in ("host", "device", "graph"):
                self.bench_row("levels", scale, roots, True, ["--level-loop", loop] + (["--prune"] if prune else []))
            if not prune:
                rows = [r for r in self.summary["rows"] if r["part"] == "levels" and "--prune" not in r["backend"]]
                device_rows = [r for r in rows if not r["backend"].endswith("host")]
                if device_rows:
                    self.device_loop = max(device_rows, key=lambda r: r["gteps"])["backend"].split()[-1]
                self.summary["notes"].append(f"level loops at scale {scale}: " + ", ".join(
                    f"{r['backend'].split()[-1]} {r['gteps']:.2f} GTEPS" for r in rows) +
                    f"; the faster device loop: {self.device_loop}")

    def part_large(self):
        scale, roots = self.args.large_scale, self.args.large_roots
        rows = [self.bench_row("large", scale, roots, False, ["--level-loop", loop])
                for loop in ("host", self.device_loop)]
        best = max(rows, key=lambda r: r["gteps"])
        self.best_loop = best["backend"].split()[-1]
        self.summary["notes"].append(f"level loops at scale {scale}: " + ", ".join(
            f"{r['backend'].split()[-1]} {r['gteps']:.2f} GTEPS" for r in rows) + f"; the faster: {self.best_loop}")
        self.target(f"scale {scale} on the device >= 400 GTEPS ({best['backend']})", best["gteps"], 400, "GTEPS")
        kernel1 = min(r["kernel1_s"] for r in rows)
        self.target(f"kernel 1 at scale {scale} <= 3 s", kernel1, 3, "s", at_most=True)
        self.bench_row("large", scale, roots, False, ["--level-loop", self.best_loop, "--prune"])

    def part_ranks(self):
        if not self.carried:
            raise Dropped("the carried zbfs does not run here (the fallback build has no MPI)")
        launcher = [str(self.pack / "bin" / "mpirun"), "--oversubscribe"]
        if os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
        for ranks in (2, 4):
            for partition in ("1d", "2d", "hybrid"):
                for codec in ("none", "bitpack"):
                    command = gpu_ranks.ranks_command(launcher, str(self.pack / "bin" / "zbfs"), self.backend, ranks,
                                                      partition, codec, False, self.args.rank_scale,
                                                      self.args.rank_roots)
                    label = f"ranks: {ranks} ranks, {partition}, --codec {codec}"
                    row = gpu_ranks.row(self.record(label, command, 300), ranks, partition, codec, False)
                    if not row["validated"]:
                        self.summary["failures"].append(f"{label}: not every tree was validated")
                    self.summary["ranks"].append(row)
                    self.log(f"{label}: {row['gteps']:.3f} GTEPS")

    def part_cpu(self):
        scale, roots = self.args.cpu_scale, self.args.large_roots
        cpu = self.bench_row("cpu", scale, roots, False, [], backend="cpu")
        device = self.bench_row("cpu", scale, roots, False, ["--level-loop", self.best_loop])
        self.target(f"scale {scale} device / cpu >= 20x", device["gteps"] / max(cpu["gteps"], 1e-12), 20, "x")

    def part_energy(self):
        status, out, err = self.run("energy: the board's counter", [self.bench, "--energy-probe", "2"], 30)
        if status != 0:
            raise StepFailed(f"the energy probe: exit {status}: {last_error_line(err)}")
        try:
            probe = json.loads(out.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise StepFailed(f"the energy probe printed no JSON line: {out.strip()[-200:]!r}") from None
        energy = self.summary["energy"]
        energy["counter"] = probe
        measured = [r for r in self.summary["rows"] if r["power_w"] != "-"]
        energy["rows_measured"] = len(measured)
        why = sorted({r["energy_why_not"] for r in self.summary["rows"] if r["energy_why_not"]})
        energy["why_not"] = why
        interval = (probe.get("interval_ms") or {}).get("median")
        large = [r for r in measured if r["part"] == "large"]
        if interval and large:
            span_ms = min(r["searches_s"] for r in large) * 1e3
            energy["meaning"] = (
                f"the board's counter moved every {interval:.1f} ms (median); the {self.args.large_scale}-scale "
                f"searches took {span_ms:.1f} ms together, so one search's joules cannot be read, and the runs' "
                f"figure (over all their searches) is good to about {100 * interval / max(span_ms, 1e-9):.0f}%")
        elif interval:
            energy["meaning"] = f"the board's counter moved every {interval:.1f} ms (median)"

    def part_unit(self):
        if not self.carried:
            raise Dropped("the carried unit tests do not run here (the fallback build has none)")
        binary = self.pack / "bin" / "zbfs_unit_tests"
        status, out, err = self.run("unit: device tests", [binary, f"--gtest_filter={self.args.unit_filter}",
                                                            "--gtest_brief=1"], 240)
        passed = re.search(r"\[  PASSED  \] (\d+) test", out)
        failed = re.findall(r"\[  FAILED  \] (\S+)", out)
        self.summary["unit"] = {"filter": self.args.unit_filter, "passed": int(passed.group(1)) if passed else 0,
                                "failed": sorted(set(f for f in failed if "." in f))}
        if status != 0:
            raise StepFailed(f"device unit tests: exit {status}: {len(self.summary['unit']['failed'])} failed "
                             f"{', '.join(self.summary['unit']['failed'][:5])}{last_error_line(err) if not failed else ''}")

    def target(self, what, value, bound, unit, at_most=False):
        met = value <= bound if at_most else value >= bound
        verdict = "not judged (dry run)" if self.dry else ("met" if met else "NOT met")
        self.summary["targets"].append({"what": what, "value": value, "unit": unit, "verdict": verdict})

    # --- the whole check -----------------------------------------------------------------
    def run_all(self):
        minimum = {p: s / (10 if self.dry else 1) for p, s in PART_MIN_S.items()}
        for name in PARTS:
            began = time.monotonic()
            entry = {"part": name, "status": "done", "seconds": 0.0}
            if self.left() - RESERVE_S < minimum[name]:
                entry["status"] = f"dropped: {self.left():.0f} s of the budget left, it needs {minimum[name]:.0f}"
            else:
                try:
                    getattr(self, f"part_{name}")()
                except OutOfBudget:
                    entry["status"] = "cut short: the budget ran out"
                except Dropped as e:
                    entry["status"] = f"dropped: {e}"
                except StepFailed as e:
                    entry["status"] = f"failed: {e}"
                    self.summary["failures"].append(str(e))
                except (KeyError, IndexError, TypeError, ValueError, OSError) as e:
                    # A record shaped otherwise than this script expects must not cost the
                    # other parts (nor the summary) of a check that runs once.
                    entry["status"] = f"failed: {type(e).__name__}: {e}"
                    self.summary["failures"].append(f"part {name}: {type(e).__name__}: {e}")
            entry["seconds"] = round(time.monotonic() - began, 1)
            self.summary["parts"].append(entry)
            self.log(f"part {name}: {entry['status']} ({entry['seconds']} s)")
            self.write()
            if name == "start" and entry["status"] != "done":
                self.summary["notes"].append("nothing else ran: the check could not start a search here")
                break
        self.write()
        return 1 if self.summary["failures"] else 0

    def write(self):
        self.summary["wall_s"] = round(time.monotonic() - self.started, 1)
        for name, text in (("gpu-check.json", json.dumps(self.summary, indent=1, default=str) + "\n"),
                           ("gpu-check.md", markdown(self.summary) + "\n")):
            partial = self.out / (name + ".partial")
            with open(partial, "w") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(partial, self.out / name)


def cpu_flags():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(match.group(1).split()) if match else set()


def cpu_model():
    try:
        match = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
        return match.group(1).strip() if match else ""
    except OSError:
        return ""


def markdown(s):
    """The summary as Markdown: what ran where, the tables, the targets and what failed."""
    m = s["machine"]
    pack = s["pack"]
    lines = [f"# gpu-check: {m.get('device') or m.get('gpu') or 'no device'} ({s['mode']})", "",
             f"- when: {s['date']}; wall {s['wall_s']} s of a {s['budget_s']} s budget",
             f"- GPU: {m.get('gpu', '-')}; CPU: {m.get('cpu', '-')}, {m.get('cores', '-')} cores; {m.get('glibc', '')}",
             f"- pack: commit {pack.get('commit', '-')}, host code -march={pack.get('march') or 'default'}, CUDA "
             f"architectures {pack.get('cuda_architectures', '-')}, glibc {pack.get('glibc_required', '-')} or newer",
             "", "| part | status | s |", "|---|---|---|"]
    lines += [f"| {p['part']} | {p['status']} | {p['seconds']} |" for p in s["parts"]]
    if s["rows"]:
        lines += ["", "## One process", ""]
        header = ["part"] + list(gpu_bench.HEADER) + ["validated", "searches J"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for r, line in zip(s["rows"], gpu_bench.table_lines(s["rows"])[2:]):
            joules = "-" if r.get("searches_j") is None else f"{r['searches_j']:.2f}"
            valid = ("yes" if r["validated"] else "NO") if r.get("validate") else "not asked"
            lines.append(f"| {r['part']} {line} {valid} | {joules} |")
        staged = [r for r in s["rows"] if r["part"] in ("large", "cpu") or r["backend"].endswith("host")]
        lines += [""] + [f"- {r['part']}: {line}" for r in staged for line in [gpu_bench.stage_line(r)] if line]
    if s["ranks"]:
        lines += ["", "## Ranks sharing the device (staged exchange)", ""] + gpu_ranks.table_lines(s["ranks"])
        lines += ["", "Phase columns: the slowest rank's time in the phase, per search (ms)."]
    if s["targets"]:
        lines += ["", "## Targets", ""]
        lines += [f"- {t['what']}: {t['value']:.2f} {t['unit']}: {t['verdict']}" for t in s["targets"]]
    energy = s.get("energy") or {}
    if energy:
        counter = energy.get("counter") or {}
        lines += ["", "## Energy", ""]
        if counter.get("measured"):
            iv = counter.get("interval_ms") or {}
            lines.append(f"- the board's counter: {counter.get('changes')} changes in {counter.get('reads')} reads over "
                         f"{counter.get('seconds', 0):.1f} s; interval {iv.get('median', 0):.1f} ms median "
                         f"({iv.get('min', 0):.1f} to {iv.get('max', 0):.1f})")
        else:
            lines.append(f"- the board's counter: not read ({counter.get('why_not', 'unknown')})")
        lines.append(f"- runs with their searches' energy measured: {energy.get('rows_measured', 0)}")
        lines += [f"- {energy['meaning']}"] if energy.get("meaning") else []
        lines += [f"- not measured: {why}" for why in energy.get("why_not", [])]
    if s.get("unit"):
        u = s["unit"]
        lines += ["", f"Device unit tests ({u['filter']}): {u['passed']} passed, {len(u['failed'])} failed"
                  + (": " + ", ".join(u["failed"]) if u["failed"] else "")]
    lines += [""] + [f"Note: {n}" for n in s["notes"]] + [f"FAILED: {f}" for f in s["failures"]]
    return "\n".join(lines).rstrip()


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pack", required=True, help="the folder scripts/gpu-check --prepare wrote")
    parser.add_argument("--out", required=True, help="where gpu-check.md, .json and .log go")
    parser.add_argument("--source", default=str(HERE.parent), help="the tree, for a fallback build")
    parser.add_argument("--budget", type=float, default=330, help="wall-clock seconds the check never passes")
    parser.add_argument("--dry-run", action="store_true", help="here, through cuda-host, at small scales")
    parser.add_argument("--no-fallback", action="store_true", help="no build here when the binaries cannot run")
    parser.add_argument("--unit-filter", default="*Device*", help="the device unit tests' gtest filter")
    for name, device, dry in (("level-scale", 22, 11), ("large-scale", 26, 13), ("cpu-scale", 24, 12),
                              ("rank-scale", 20, 10), ("level-roots", 16, 8), ("large-roots", 64, 16),
                              ("rank-roots", 16, 4)):
        parser.add_argument(f"--{name}", type=int, default=None, help=f"default {device} ({dry} in a dry run)")
        parser.set_defaults(**{f"default_{name.replace('-', '_')}": (device, dry)})
    args = parser.parse_args()
    for name in ("level_scale", "large_scale", "cpu_scale", "rank_scale", "level_roots", "large_roots", "rank_roots"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(args, f"default_{name}")[1 if args.dry_run else 0])
    if args.budget <= RESERVE_S + 2:
        parser.error(f"--budget must leave more than {RESERVE_S + 2:.0f} s")
    return args


def main():
    args = parse_args()
    try:
        check = Check(args)
    except OSError as e:
        print(f"gpu-check: error: cannot write to {args.out}: {e.strerror}", file=sys.stderr)
        return 1
    try:
        with interruptible():
            return check.run_all()
    except Interrupted as e:
        check.summary["notes"].append(f"interrupted by {e}: the child in progress was ended")
        check.log(f"interrupted by {e}")
        check.write()
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(main())
