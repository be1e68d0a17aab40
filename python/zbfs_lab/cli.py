"""zbfs-lab: `sweep EXPERIMENT.toml` runs an experiment's matrix (resuming where it stopped),
`report RESULTS_DIR -o OUT` turns the records into figures, tables and an index.html, and
`simulate -np P ... -o REC.json -- ZBFS_ARGS` runs zbfs on a simulated cluster, and
`replay -np P ... -o REC.json -- ZBFS_ARGS` replays a P-rank job's planned searches there."""
from __future__ import annotations

import argparse
import signal
import sys

from zbfs_lab import __version__, calibrate, files, platforms, replay, report, results, simulate, sweep
from zbfs_lab.experiment import ExperimentError, check_flags, load


def _platform_arguments(parser: argparse.ArgumentParser) -> None:
    """The simulated cluster's arguments, the same for simulate and replay."""
    parser.add_argument("--topology", choices=platforms.TOPOLOGIES, default="fattree",
                        help="fattree (two levels), fattree3, torus (3D), tofu (6D, units of 12 hosts), dragonfly")
    parser.add_argument("--hosts", type=int, help="simulated hosts (default: the ranks over --ranks-per-host)")
    parser.add_argument("--links", choices=sorted(platforms.LINK_PRESETS), default="ib-hdr",
                        help="the links' latency and bandwidth, as zbfs run --network prices them")
    parser.add_argument("--latency", type=float, metavar="SECONDS",
                        help="end-to-end link latency in place of the preset's (e.g. one zbfs measured)")
    parser.add_argument("--bandwidth", type=float, metavar="BYTES_PER_S",
                        help="link bandwidth in place of the preset's")
    parser.add_argument("--oversubscription", type=float, default=1.0,
                        help="a fat tree leaf's hosts per uplink (1: full bisection)")
    parser.add_argument("-np", "--ranks", type=int, required=True, help="simulated MPI ranks")
    parser.add_argument("--ranks-per-host", type=int, default=1)


def _platform_of(args) -> tuple[platforms.Platform, int]:
    """The platform the arguments describe, and its hosts."""
    if args.ranks < 1:
        raise simulate.SimulationError("-np must be at least 1")
    hosts = args.hosts or platforms.hosts_for(args.ranks, args.ranks_per_host)
    if hosts * args.ranks_per_host < args.ranks:
        raise simulate.SimulationError(f"{hosts} hosts of {args.ranks_per_host} rank(s) hold fewer than {args.ranks} ranks")
    platform = platforms.make(args.topology, hosts, args.links, args.oversubscription, args.latency, args.bandwidth,
                              cores=args.ranks_per_host)
    return platform, hosts


def _check_costs(args) -> None:
    if args.compute == "counted" and not args.work_costs:
        raise simulate.SimulationError("--compute counted prices counted work: give --work-costs FILE "
                                       "(zbfs-lab calibrate -o FILE writes one)")
    if args.work_costs and args.compute != "counted":
        raise simulate.SimulationError("--work-costs needs --compute counted")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="zbfs-lab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"zbfs-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sweep", help="run every point of an experiment file not run yet")
    s.add_argument("experiment", help="the experiment file (TOML; see experiments/)")
    s.add_argument("-o", "--output", help="results folder (default: the file's `output`)")
    s.add_argument("--binary", help="the zbfs binary (default: the file's zbfs.binary)")
    s.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    m = sub.add_parser("simulate", help="one zbfs run on a simulated cluster (SimGrid SMPI)",
                       description=simulate.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _platform_arguments(m)
    m.add_argument("--binary", default="build-smpi/bin/zbfs", help="the SMPI build of zbfs (make smpi)")
    m.add_argument("--smpirun", default="smpirun")
    m.add_argument("--timeout", type=float, help="seconds before the simulation is stopped")
    m.add_argument("--privatize", action="store_true",
                   help="give every simulated rank its own copy of the program (SMPI's dlopen privatization; "
                        "zbfs needs none: it holds no mutable global state)")
    m.add_argument("-o", "--json", required=True, help="where the run's record goes")
    m.add_argument("--log", metavar="FILE",
                   help="write the run's progress there as it comes, each line after its wall seconds ('-': the "
                        "error stream)")
    m.add_argument("--compute", choices=simulate.COMPUTE_MODES, default="measured",
                   help="how a rank's computation takes simulated time: measured (timed on this machine while it "
                        "simulates), counted (priced from zbfs's counted work at --work-costs' per-unit costs) or "
                        "none (not at all: communication alone)")
    m.add_argument("--work-costs", metavar="FILE", help="with --compute counted: the costs zbfs-lab calibrate wrote")
    m.add_argument("zbfs_args", nargs=argparse.REMAINDER, help="-- then the zbfs run arguments")
    p = sub.add_parser("replay", help="a P-rank job's searches planned on this process (zbfs trace) and replayed on "
                                      "a simulated cluster (smpirun -replay)",
                       description=replay.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _platform_arguments(p)
    p.add_argument("--binary", default="build/bin/zbfs", help="the zbfs binary (the normal build, not SMPI's)")
    p.add_argument("--smpirun", default="smpirun")
    p.add_argument("--timeout", type=float, help="seconds before the planning and replay are stopped")
    p.add_argument("-o", "--json", required=True, help="where the replay's record goes")
    p.add_argument("--compute", choices=replay.COMPUTE_MODES, default="none",
                   help="none (the messages alone) or counted (each rank's counted work priced at --work-costs)")
    p.add_argument("--work-costs", metavar="FILE", help="with --compute counted: the costs zbfs-lab calibrate wrote")
    p.add_argument("--keep-traces", metavar="DIR", help="leave the traces in this new folder")
    p.add_argument("--phases", action="store_true",
                   help="time every replayed action: the record gets each phase's time a search")
    p.add_argument("zbfs_args", nargs=argparse.REMAINDER, help="-- then zbfs trace's run arguments")
    c = sub.add_parser("calibrate", help="per-unit costs of zbfs's counted work on this host (for simulate "
                                         "--compute counted)",
                       description=calibrate.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("-o", "--output", required=True, help="where the costs go (JSON)")
    c.add_argument("--binary", default="build/bin/zbfs", help="the zbfs binary (the normal build, not SMPI's)")
    c.add_argument("--mpirun", default="mpirun")
    c.add_argument("--ranks", default="1,2", help="rank counts to run, each at most this host's cores (default 1,2)")
    c.add_argument("--vertices-per-rank", default="10,12,14", metavar="LOG2S",
                   help="log2 of the vertices a rank holds, one run each (default 10,12,14)")
    c.add_argument("--partitions", default="1d,2d")
    c.add_argument("--roots", type=int, default=8, help="search keys a run")
    c.add_argument("zbfs_args", nargs=argparse.REMAINDER, help="-- then zbfs run arguments every run adds")
    r = sub.add_parser("report", help="figures, tables and index.html from a sweep's results")
    r.add_argument("results", help="a sweep's output folder")
    r.add_argument("-o", "--output", required=True, help="where the report goes")
    args = parser.parse_args(argv)
    try:
        if args.command == "sweep":
            return _sweep(args)
        if args.command == "simulate":
            return _simulate(args)
        if args.command == "replay":
            return _replay(args)
        if args.command == "calibrate":
            return _calibrate(args)
        data = report.write(results.load(args.results), args.output)
        print(f"zbfs-lab: report of {len(data['tables']['summary']['rows'])} point(s) in {args.output}/index.html "
              f"({len(data['figures'])} figures)")
        return 0
    except (ExperimentError, results.ResultsError, platforms.PlatformError, simulate.SimulationError,
            calibrate.CalibrationError) as e:
        print(f"zbfs-lab {args.command}: error: {e}", file=sys.stderr)
        return 2
    except files.WriteError as e:
        print(f"zbfs-lab {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        # Whatever the checks above did not foresee still ends in one line, as zbfs's errors do.
        where = f"{e.filename}: " if e.filename else ""
        print(f"zbfs-lab {args.command}: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, sweep.Interrupted) as e:
        signum = e.signum if isinstance(e, sweep.Interrupted) else signal.SIGINT
        print(f"\nzbfs-lab: interrupted ({signal.Signals(signum).name}): the run in progress was stopped and its "
              f"partial record removed; run the same command again to resume", file=sys.stderr)
        return 128 + signum


def _simulate(args) -> int:
    zbfs_args = args.zbfs_args[1:] if args.zbfs_args[:1] == ["--"] else args.zbfs_args
    platform, hosts = _platform_of(args)
    _check_costs(args)
    simulation = simulate.Simulation(platform, args.ranks, args.ranks_per_host, args.binary, args.smpirun,
                                     args.privatize, args.compute, args.work_costs)
    if args.log is None or args.log == "-":
        data = simulate.run(simulation, zbfs_args, args.json, args.timeout, sys.stderr if args.log else None)
    else:
        try:
            log = open(args.log, "w", encoding="utf-8")
        except OSError as e:
            raise simulate.SimulationError(f"cannot write the log {args.log}: {e.strerror}") from None
        with log:
            data = simulate.run(simulation, zbfs_args, args.json, args.timeout, log)
    summary = data.get("summary", {})
    teps = (summary.get("teps") or {}).get("harmonic_mean")
    print(f"zbfs-lab: simulated {args.ranks} ranks on {hosts} {args.topology} hosts ({args.links}) in "
          f"{data['simulated']['wall_s']:.1f} s; TEPS harmonic mean {teps:.4g}; record in {args.json}"
          if teps else f"zbfs-lab: simulated run recorded in {args.json}")
    return 0


def _replay(args) -> int:
    zbfs_args = args.zbfs_args[1:] if args.zbfs_args[:1] == ["--"] else args.zbfs_args
    platform, hosts = _platform_of(args)
    _check_costs(args)
    run = replay.Replay(platform, args.ranks, args.ranks_per_host, args.binary, args.smpirun, args.compute,
                        args.work_costs, args.keep_traces, args.phases)
    data = replay.run(run, zbfs_args, args.json, args.timeout)
    simulated = data["simulated"]
    print(f"zbfs-lab: replayed {args.ranks} ranks on {hosts} {args.topology} hosts ({args.links}): mean search "
          f"{simulated['mean_search_s'] * 1e3:.4g} ms simulated; planned in {simulated['trace_wall_s']:.1f} s, "
          f"replayed in {simulated['wall_s']:.1f} s; record in {args.json}")
    return 0


def _integers(text: str, flag: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise calibrate.CalibrationError(f"{flag} must be integers separated by commas, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise calibrate.CalibrationError(f"{flag} must be positive integers separated by commas, got {text!r}")
    return values


def _calibrate(args) -> int:
    extra = args.zbfs_args[1:] if args.zbfs_args[:1] == ["--"] else args.zbfs_args
    partitions = [p for p in args.partitions.split(",") if p]
    if not partitions or any(p not in ("1d", "2d", "hybrid") for p in partitions):
        raise calibrate.CalibrationError(f"--partitions must be 1d, 2d or hybrid, separated by commas, got "
                                         f"{args.partitions!r}")
    if args.roots < 1:
        raise calibrate.CalibrationError("--roots must be at least 1")
    calibration = calibrate.Calibration(args.binary, args.mpirun, _integers(args.ranks, "--ranks"),
                                        _integers(args.vertices_per_rank, "--vertices-per-rank"), partitions,
                                        args.roots, extra)
    result = calibrate.run(calibration, args.output, sys.stderr)
    fit = result["fit"]
    print(f"zbfs-lab: costs of counted work from {fit['samples']} samples (R^2 {fit['r2']:.3f}, total compute "
          f"{fit['priced_compute_s'] * 1e3:.3f} ms priced against {fit['measured_compute_s'] * 1e3:.3f} ms measured) "
          f"in {args.output}")
    return 0


def _sweep(args) -> int:
    experiment = load(args.experiment, args.output, args.binary)
    check_flags(experiment)
    if args.dry_run:
        launch = sweep.Launch(experiment)
        for point in experiment.points:
            print(" ".join(launch.command(point, experiment.zbfs_args(point) + ["--json", "RECORD"])))
        return 0
    runs = len(experiment.points) * experiment.repetitions
    print(f"zbfs-lab: {experiment.name}: {len(experiment.points)} point(s) x {experiment.repetitions} "
          f"repetition(s) = {runs} run(s) into {experiment.output}", file=sys.stderr)
    state = sweep.sweep(experiment)
    print(f"zbfs-lab: {state['done']} run(s) done, {state['failed']} failed "
          f"(see {experiment.output}/failures)" if state["failed"] else
          f"zbfs-lab: {state['done']} run(s) done", file=sys.stderr)
    return 1 if state["failed"] else 0
