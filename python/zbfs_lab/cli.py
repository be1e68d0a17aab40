"""zbfs-lab: `sweep EXPERIMENT.toml` runs an experiment's matrix (resuming where it stopped),
`report RESULTS_DIR -o OUT` turns the records into figures, tables and an index.html."""
from __future__ import annotations

import argparse
import signal
import sys

from zbfs_lab import __version__, files, report, results, sweep
from zbfs_lab.experiment import ExperimentError, check_flags, load


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
    r = sub.add_parser("report", help="figures, tables and index.html from a sweep's results")
    r.add_argument("results", help="a sweep's output folder")
    r.add_argument("-o", "--output", required=True, help="where the report goes")
    args = parser.parse_args(argv)
    try:
        if args.command == "sweep":
            return _sweep(args)
        data = report.write(results.load(args.results), args.output)
        print(f"zbfs-lab: report of {len(data['tables']['summary']['rows'])} point(s) in {args.output}/index.html "
              f"({len(data['figures'])} figures)")
        return 0
    except (ExperimentError, results.ResultsError) as e:
        print(f"zbfs-lab: error: {e}", file=sys.stderr)
        return 2
    except files.WriteError as e:
        print(f"zbfs-lab: error: {e}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, sweep.Interrupted) as e:
        signum = e.signum if isinstance(e, sweep.Interrupted) else signal.SIGINT
        print(f"\nzbfs-lab: interrupted ({signal.Signals(signum).name}): the run in progress was stopped and its "
              f"partial record removed; run the same command again to resume", file=sys.stderr)
        return 128 + signum


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
