#!/usr/bin/env python3
"""Weak scaling on simulated clusters beside zbfs's own projection (issue 57 item 6).

For every layout, codec, link preset and rank count P, at 2^PER_RANK vertices a rank
(scale = PER_RANK + log2 P):

- simulated: `zbfs-lab simulate` runs the SMPI build on a two-level fat tree of the
  preset's links, one rank a host (hybrid: --hybrid-ranks-per-host ranks a host, which is
  what hybrid is for);
- projected: a real run of the same graph and arguments on --record-ranks ranks of this
  machine (2D on a grid with more than one row and column, hybrid on twice the ranks in
  nodes of 2, so that every communicator's traffic is recorded), then
  `zbfs model RECORD --ranks P --network PRESET`, as an engineer planning the big run
  from a small one would. The model keeps the recorded run's computation (less its
  modelled communication, divided over P): run the study on an otherwise idle machine,
  and mind that 4 ranks on 2 cores take turns.

Every run has bulk folds (`--overlap off`) and leaves waits for late ranks out of the
exchange times (`--time-waits`): a pipelined fold's time in MPI includes waiting for
batches while their senders compute, which no traffic model prices.

It prints, per point, TEPS (harmonic mean over the searches) and the slowest rank's time
in each exchange phase per search, simulated and projected, and draws TEPS against P
(solid: simulated, dashed: projected), one panel per link preset and codec. Records are
kept in OUT (sim/, real/) and reused when the script runs again, so an interrupted study
goes on where it stopped.

    .venv/bin/python bench/weak_scaling.py --per-rank 10 --ranks 16 64 256 --out results/weak-scaling

With `--simulator replay` the simulated side is `zbfs-lab replay` instead: the searches
planned on this one process (`zbfs trace`, the normal build) and replayed by SimGrid from
their traces, which reaches thousands of ranks (docs/simulation.md); it takes codec none
and every layout, and `--compute counted --work-costs FILE` charges the
counted work (`zbfs-lab calibrate`). A replay's TEPS is every search's traversed edges
over their simulated time together; its phase times are the slowest rank's (`zbfs-lab
replay --phases`), and `computation` is all its counted work.

Needs `make build smpi lab` (the .venv has matplotlib; replay needs no SMPI build). Dense 1D exchanges cost the simulator P^2 messages a round
(docs/simulation.md): `--skip '*/1d@1024'` leaves such points out.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from zbfs_lab.runs import RunFailed, mpirun_command, run_output, run_record  # noqa: E402
PHASES = ("row_exchange", "column_exchange", "predecessor_reduction", "termination_check", "computation")
# 2D and hybrid take grid2 too: their searches' column gathers and row folds stay the
# same, but kernel 1's shuffle and the predecessor reduction follow the route. Without
# one, kernel 1 is a dense alltoallv, and at 256 simulated ranks its 65,280 concurrent
# flows kept SimGrid's bandwidth-sharing solver busy for more than 25 minutes (1D's
# dense search exchanges the same); that is how far dense patterns go here.
LAYOUTS = {
    "1d": ["--partition", "1d"],
    "1d-grid2": ["--partition", "1d", "--route", "grid2"],
    "1d-hypercube": ["--partition", "1d", "--route", "hypercube"],
    "2d": ["--partition", "2d", "--route", "grid2"],
    "2d-union": ["--partition", "2d", "--column-gather", "union", "--route", "grid2"],
    "hybrid": ["--partition", "hybrid", "--route", "grid2"],
}


def most_square(ranks: int) -> str:
    rows = max(r for r in range(1, ranks + 1) if ranks % r == 0 and r * r <= ranks)
    return f"{rows}x{ranks // rows}"


def run_args(args: argparse.Namespace, layout: str, codec: str, ranks: int, ranks_per_node: int | None) -> list[str]:
    """zbfs run's arguments; ranks_per_node None leaves it to zbfs-lab simulate (the platform's)."""
    scale = args.per_rank + int(math.log2(ranks))
    out = ["--scale", str(scale), *LAYOUTS[layout], "--codec", codec, "--roots", str(args.roots),
           "--no-validate", "--quiet", "--threads", "1", "--time-waits", "--overlap", "off"]
    if layout.startswith("2d"):
        out += ["--grid", most_square(ranks)]
    if layout == "hybrid" and ranks_per_node:
        out += ["--ranks-per-node", str(ranks_per_node)]
    return out + args.zbfs_args.split()


def tofu_units(hosts: int) -> int:
    """Tofu's units are 12 hosts, in an X x Y x Z torus of units: the job takes the first
    hosts of the fewest whole units whose torus is near cubic (no side more than twice
    another), as a real allocation would be shaped; 86 units (1,024 hosts) would make a
    torus of 43 x 2 x 1 units, whose long ring is what a search would then measure."""
    from zbfs_lab import platforms
    units = max(1, math.ceil(hosts / 12))
    while True:
        sides = platforms._balanced(units, 3)
        if units < 8 or max(sides) <= 2 * min(sides):
            return units
        units += 1


def failed(what: str, error: RunFailed) -> None:
    print(f"weak_scaling: {what} failed: {error}", file=sys.stderr, flush=True)


# What a replay plans (zbfs trace): every layout here, without a codec.
REPLAYED_LAYOUTS = ("1d", "1d-grid2", "1d-hypercube", "2d", "2d-union", "hybrid")


def simulated(args, layout: str, codec: str, links: str, ranks: int) -> dict | None:
    per_host = args.hybrid_ranks_per_host if layout == "hybrid" else 1
    replaying = args.simulator == "replay"
    folder = "replay" if replaying else "sim"
    out = args.out / folder / f"{links}_{layout}_{codec}_{args.compute}_P{ranks}.json"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        topology = args.topology or ("fattree3" if ranks > 2304 else "fattree")
        command = [str(args.lab), folder if replaying else "simulate", "-np", str(ranks), "--topology", topology,
                   "--links", links, "--ranks-per-host", str(per_host), "--compute", args.compute, "-o", str(out),
                   "--timeout", str(args.timeout)]
        if topology == "tofu":
            command += ["--hosts", str(12 * tofu_units(math.ceil(ranks / per_host)))]
        command += ["--binary", str(args.binary if replaying else args.smpi_binary)]
        if replaying:
            command.append("--phases")
        if args.work_costs:
            command += ["--work-costs", str(args.work_costs)]
        zargs = run_args(args, layout, codec, ranks, None)
        if replaying:
            zargs = [a for a in zargs if a not in ("--quiet", "--time-waits")]
        command += ["--", *zargs]
        try:
            run_output(command, args.timeout + 60)
        except RunFailed as e:
            failed(f"simulating {layout} {codec} {links} P={ranks}", e)
            return None
    return json.loads(out.read_text())


def recorded(args, layout: str, codec: str, links: str, ranks: int) -> Path | None:
    """A real run of the P-rank point's graph on --record-ranks ranks here."""
    scale = args.per_rank + int(math.log2(ranks))
    out = args.out / "real" / f"{links}_{layout}_{codec}_scale{scale}.json"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        # Hybrid: nodes of 2 ranks on a 2 x 2 grid of nodes, so that its column
        # communicators carry traffic too.
        small = 2 * args.record_ranks if layout == "hybrid" else args.record_ranks
        zargs = run_args(args, layout, codec, ranks, 2)
        if layout.startswith("2d"):
            zargs[zargs.index("--grid") + 1] = most_square(small)
        command = mpirun_command(("mpirun", "--oversubscribe", "--bind-to", "none"), small,
                                 [str(args.binary), "run", *zargs, "--network", links])
        try:
            run_record(command, args.timeout, keep=out)
        except RunFailed as e:
            failed(f"recording {layout} {codec} scale {scale} on {small} ranks", e)
            return None
    return out


def projected(args, record: Path, layout: str, links: str, ranks: int) -> dict | None:
    command = [str(args.binary), "model", str(record), "--ranks", str(ranks), "--network", links]
    if layout.startswith("2d"):
        command += ["--grid", most_square(ranks)]
    if layout == "hybrid":
        command += ["--ranks-per-node", str(args.hybrid_ranks_per_host)]
    try:
        output = run_output(command)
    except RunFailed as e:
        failed("zbfs model", e)
        return None
    teps = re.search(r"predicted TEPS: ([0-9.e+-]+)", output)
    phases = {}
    for line in output.splitlines():
        fields = line.split()
        if len(fields) == 6 and fields[0] in PHASES:
            phases[fields[0]] = float(fields[5])
    return {"teps": float(teps.group(1)) if teps else math.nan, "phases": phases}


def simulated_teps(record: dict) -> float | None:
    if record.get("schema") == "zbfs.replay":
        return record["simulated"].get("teps")
    return record["summary"]["teps"]["harmonic_mean"]


def simulated_phases(record: dict) -> dict[str, float]:
    if record.get("schema") == "zbfs.replay":
        # The slowest rank's time a search in each phase (zbfs-lab replay --phases).
        return {p: v["max_s"] for p, v in record["simulated"].get("phases", {}).items()}
    searches = max(1, len(record.get("searches", [])))
    return {p: record["phases"].get(p, {}).get("mpi_time_s", {}).get("max", 0.0) / searches for p in PHASES}


def skipped(args, links: str, codec: str, layout: str, ranks: int) -> bool:
    if args.simulator == "replay" and (codec != "none" or layout not in REPLAYED_LAYOUTS):
        return True
    return any(fnmatch.fnmatch(f"{links}/{codec}/{layout}@{ranks}", pattern) for pattern in args.skip)


def draw(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = sorted({(r["links"], r["codec"]) for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2), squeeze=False, sharey=True)
    colours = dict(zip(LAYOUTS, ("#4c72b0", "#dd8452", "#937860", "#55a868", "#c44e52", "#8172b3")))
    for ax, (links, codec) in zip(axes[0], panels):
        for layout in LAYOUTS:
            pts = sorted((r for r in rows if (r["links"], r["codec"], r["layout"]) == (links, codec, layout)),
                         key=lambda r: r["ranks"])
            sim = [(r["ranks"], r["sim_teps"]) for r in pts if r["sim_teps"] is not None]
            model = [(r["ranks"], r["model_teps"]) for r in pts if r["model_teps"] is not None]
            if sim:
                how = "replayed" if pts[0].get("simulator") == "replay" else "simulated"
                ax.plot(*zip(*sim), "o-", color=colours[layout], label=f"{layout} {how}")
            if model:
                ax.plot(*zip(*model), "x--", color=colours[layout], alpha=0.7, label=f"{layout} model")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("simulated ranks P")
        ax.set_title(f"{links}, codec {codec}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("TEPS" if rows[0].get("simulator") == "replay" else "TEPS (harmonic mean)")
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.suptitle(f"Weak scaling, 2^{rows[0]['per_rank']} vertices a rank, {rows[0]['topology']} (SimGrid) and zbfs model")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def markdown(rows: list[dict]) -> str:
    """TEPS in millions, simulated (projected), a table per link preset."""
    out = []
    ranks = sorted({r["ranks"] for r in rows})
    fmt = (lambda x: f"{x / 1e6:,.0f}" if x else "-")
    for links in sorted({r["links"] for r in rows}):
        out.append(f"\n{links}: TEPS in millions, simulated (model)\n")
        out.append("| layout | codec | " + " | ".join(f"P = {p:,}" for p in ranks) + " |")
        out.append("|---|---|" + "---|" * len(ranks))
        for codec in sorted({r["codec"] for r in rows}):
            for layout in LAYOUTS:
                cells = {r["ranks"]: r for r in rows if (r["links"], r["codec"], r["layout"]) == (links, codec, layout)}
                if not cells:
                    continue
                out.append(f"| {layout} | {codec} | " + " | ".join(
                    f"{fmt(cells[p]['sim_teps'])} ({fmt(cells[p]['model_teps'])})" if p in cells else ""
                    for p in ranks) + " |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-rank", type=int, default=10, help="log2 of the vertices a rank")
    parser.add_argument("--ranks", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    parser.add_argument("--codecs", nargs="+", default=["none", "auto"])
    parser.add_argument("--links", nargs="+", default=["ib-hdr", "10gbe"])
    parser.add_argument("--roots", type=int, default=2)
    parser.add_argument("--record-ranks", type=int, default=4, help="real ranks of the runs the model projects")
    parser.add_argument("--hybrid-ranks-per-host", type=int, default=4)
    parser.add_argument("--skip", nargs="*", default=[],
                        help="points to leave out, as LINKS/CODEC/LAYOUT@P patterns, e.g. '*/1d@1024' '10gbe/*@1024'")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "weak-scaling")
    parser.add_argument("--binary", type=Path, default=ROOT / "build" / "bin" / "zbfs")
    parser.add_argument("--smpi-binary", type=Path, default=ROOT / "build-smpi" / "bin" / "zbfs")
    parser.add_argument("--lab", type=Path, default=ROOT / ".venv" / "bin" / "zbfs-lab")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a run may take")
    parser.add_argument("--zbfs-args", default="", help="more zbfs run arguments for every run")
    parser.add_argument("--simulator", choices=("simulate", "replay"), default="simulate",
                        help="online simulation (the SMPI build) or trace replay (zbfs trace, then smpirun -replay)")
    parser.add_argument("--compute", choices=("measured", "counted", "none"), default="measured",
                        help="how simulated computation takes time (replay: counted or none)")
    parser.add_argument("--work-costs", type=Path, help="with --compute counted: zbfs-lab calibrate's costs")
    parser.add_argument("--topology", help="the platform (default: a two-level fat tree, three levels past 2,304 hosts)")
    parser.add_argument("--no-model", action="store_true", help="simulate only: no real runs and projections")
    args = parser.parse_args()
    if args.simulator == "replay" and args.compute == "measured":
        args.compute = "none"
    if (args.compute == "counted") != (args.work_costs is not None):
        sys.exit("weak_scaling: --compute counted and --work-costs go together")
    for ranks in args.ranks:
        if ranks < 1 or ranks & (ranks - 1):
            sys.exit(f"weak_scaling: --ranks {ranks} is not a power of two")
    needed = (args.binary, args.lab) if args.simulator == "replay" else (args.binary, args.smpi_binary, args.lab)
    for binary in needed:
        if not binary.exists():
            sys.exit(f"weak_scaling: no {binary} (make build smpi lab)")

    rows = []
    print(f"2^{args.per_rank} vertices a rank, {args.roots} search keys, no validation; per-search ms of the slowest "
          "rank in MPI: simulated / projected")
    print(f"{'links':>6} {'layout':>9} {'codec':>5} {'P':>5} {'scale':>5} {'sim TEPS':>10} {'model TEPS':>10} "
          f"{'model/sim':>9} " + " ".join(f"{p[:14]:>15}" for p in PHASES) + f" {'wall s':>7}", flush=True)
    # The smallest P first: a study cut short still has whole curves up to some P.
    for ranks in args.ranks:
        for links in args.links:
            for codec in args.codecs:
                for layout in args.layouts:
                    if skipped(args, links, codec, layout, ranks):
                        continue
                    sim = simulated(args, layout, codec, links, ranks)
                    record = None if args.no_model else recorded(args, layout, codec, links, ranks)
                    model = projected(args, record, layout, links, ranks) if record else None
                    row = {"links": links, "codec": codec, "layout": layout, "ranks": ranks,
                           "topology": args.topology or "fattree",
                           "per_rank": args.per_rank, "scale": args.per_rank + int(math.log2(ranks)),
                           "simulator": args.simulator, "compute": args.compute,
                           "sim_teps": simulated_teps(sim) if sim else None,
                           "model_teps": model["teps"] if model else None,
                           "sim_phases": simulated_phases(sim) if sim else {},
                           "model_phases": model["phases"] if model else {},
                           "wall_s": (sim.get("simulated") or {}).get("wall_s") if sim else None}
                    rows.append(row)
                    ratio = (row["model_teps"] / row["sim_teps"]) if row["sim_teps"] and row["model_teps"] else math.nan
                    cells = " ".join(f"{row['sim_phases'].get(p, math.nan) * 1e3:>7.3f}/"
                                     f"{row['model_phases'].get(p, math.nan) * 1e3:<7.3f}" for p in PHASES)
                    fmt = (lambda x: f"{x:>10.3e}" if x is not None else f"{'-':>10}")
                    print(f"{links:>6} {layout:>9} {codec:>5} {ranks:>5} {row['scale']:>5} {fmt(row['sim_teps'])} "
                          f"{fmt(row['model_teps'])} {ratio:>9.2f} {cells} {row['wall_s'] or 0:>7.0f}", flush=True)
    (args.out / "weak_scaling.json").write_text(json.dumps(rows, indent=1))
    if rows:
        print(markdown(rows))
    if rows:
        draw(rows, args.out / "weak_scaling.png")
        print(f"figure: {args.out / 'weak_scaling.png'}; table: {args.out / 'weak_scaling.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
