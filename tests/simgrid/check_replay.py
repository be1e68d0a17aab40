#!/usr/bin/env python3
"""Trace replay against the real run (issue 78): `zbfs trace` plans a job's searches on one
process, and every search's levels, directions, reached vertices, traversed edges and per-phase messages and
bytes must be those the real (oversubscribed) job books, key by key: 16 ranks in 2D, 8 in
1D, 8 hybrid, 6 on a 3x2 grid, the reads of grid2 and hypercube routes, the set-union
column gather, 1D's updates along grid2, hypercube and gridk, and a graph smaller than the
job. Then `zbfs-lab replay`
replays the 16-rank traces on a simulated fat tree, without and with counted compute, and
the replay's mean search is within 15% of the online simulation's (`zbfs-lab simulate
--compute none`, the SMPI build).

The planning checks need no SimGrid; exit 77 (skipped) after them where smpirun is not
installed. A missing SMPI build is a failure (make test builds it with make smpi)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

PHASES = ("column_exchange", "row_exchange", "termination_check", "predecessor_reduction")


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def run(cmd, what):
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        fail(f"{what} exited {done.returncode}: {done.stderr.strip()[-800:]}")
    return done


def searches_of(record):
    """Each search's key, reached vertices, traversed edges, directions and per-phase (messages, bytes)."""
    out = []
    for s in record["searches"]:
        phases = {}
        for phase in PHASES:
            # A record leaves out a phase no rank entered (no reduction after update folds).
            p = s["phases"].get(phase, {"messages": 0, "wire_bytes": 0})
            messages, wire = p["messages"], p["wire_bytes"]
            phases[phase] = (int(messages["sum"] if isinstance(messages, dict) else messages),
                             int(wire["sum"] if isinstance(wire, dict) else wire))
        out.append((s["root"], s["reached_vertices"], s["traversed_edges"], [step["direction"] for step in s["steps"]],
                    phases))
    return out


def check_plan(args, tmp, ranks, run_args):
    real = os.path.join(tmp, "real.json")
    plan = os.path.join(tmp, "plan.json")
    run([*args.mpiexec.split(), "-np", str(ranks), args.binary, "run", *run_args, "--json", real], "the real run")
    run([args.binary, "trace", "-P", str(ranks), *run_args, "--json", plan], "zbfs trace")
    with open(real) as f:
        want = searches_of(json.load(f))
    with open(plan) as f:
        got = searches_of(json.load(f))
    if len(want) != len(got):
        fail(f"{' '.join(run_args)} on {ranks}: {len(got)} planned searches, {len(want)} real ones")
    for w, g in zip(want, got):
        if w != g:
            fail(f"{' '.join(run_args)} on {ranks}: key {w[0]}: the real run booked {w[1:]}, the plan {g[1:]}")
    print(f"ok: {ranks} ranks, {' '.join(run_args)}: {len(got)} searches planned with the real traffic")


def mean_search(path, simulated):
    with open(path) as f:
        record = json.load(f)
    return record["simulated"]["mean_search_s"] if simulated == "replay" else record["summary"]["bfs_time_s"]["mean"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--smpi-binary", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--python", required=True)
    args = parser.parse_args()
    if os.geteuid() == 0:
        args.mpiexec += " --allow-run-as-root"
    args.mpiexec += " --oversubscribe"
    base = ["--scale", "10", "--roots", "4", "--overlap", "off"]
    with tempfile.TemporaryDirectory(prefix="zbfs-replay-test-") as tmp:
        check_plan(args, tmp, 16, [*base, "--partition", "2d", "--grid", "4x4"])
        check_plan(args, tmp, 8, [*base, "--partition", "1d"])
        check_plan(args, tmp, 8, [*base, "--partition", "hybrid", "--ranks-per-node", "2"])
        check_plan(args, tmp, 6, [*base, "--partition", "2d", "--grid", "3x2", "--direction", "bottom-up"])
        check_plan(args, tmp, 16, [*base, "--partition", "2d", "--grid", "2x8", "--route", "grid2"])
        check_plan(args, tmp, 12, [*base, "--partition", "2d", "--grid", "2x6", "--route", "hypercube"])
        # The set-union column gather: columns of 4 (halvings only) and of 3 and 6 (a
        # fold-in past the largest power of two), hybrid's columns of nodes too.
        check_plan(args, tmp, 16, [*base, "--partition", "2d", "--grid", "4x4", "--column-gather", "union"])
        check_plan(args, tmp, 12, [*base, "--partition", "2d", "--grid", "6x2", "--column-gather", "union",
                                   "--route", "grid2", "--direction", "top-down"])
        check_plan(args, tmp, 6, [*base, "--partition", "2d", "--grid", "3x2", "--column-gather", "union"])
        check_plan(args, tmp, 8, [*base, "--partition", "hybrid", "--ranks-per-node", "2", "--column-gather",
                                  "union"])
        # 1D's folds as updates along a route, merged at every hop.
        check_plan(args, tmp, 8, [*base, "--partition", "1d", "--route", "grid2"])
        check_plan(args, tmp, 7, [*base, "--partition", "1d", "--route", "hypercube"])
        check_plan(args, tmp, 12, [*base, "--partition", "1d", "--route", "gridk", "--route-dims", "2x3x2",
                                   "--direction", "top-down"])
        check_plan(args, tmp, 8, ["--scale", "3", "--roots", "2", "--overlap", "off", "--partition", "2d", "--grid", "2x4"])
        if shutil.which("smpirun") is None:
            print("SKIP: smpirun not found (scripts/bootstrap installs SimGrid); the replay was not checked")
            sys.exit(77)
        if not os.path.isfile(args.smpi_binary):
            fail(f"{args.smpi_binary} not found: build it with make smpi")
        lab = [args.python, "-m", "zbfs_lab"]
        run_args = [*base, "--partition", "2d", "--no-validate"]
        t_replay = None
        # 2D, and 1D's updates along grid2: the replay's traffic is the online run's,
        # its mean search within 15% of it.
        for name, layout in (("2d", ["--partition", "2d"]), ("1d-grid2", ["--partition", "1d", "--route", "grid2"])):
            point_args = [*base, *layout, "--no-validate"]
            online = os.path.join(tmp, f"online-{name}.json")
            replayed = os.path.join(tmp, f"replay-{name}.json")
            run([*lab, "simulate", "-np", "16", "--compute", "none", "--binary", args.smpi_binary, "-o", online, "--",
                 *point_args], "zbfs-lab simulate")
            traces = os.path.join(tmp, f"traces-{name}")
            run([*lab, "replay", "-np", "16", "--binary", args.binary, "--keep-traces", traces, "-o", replayed, "--",
                 *point_args], "zbfs-lab replay")
            if not os.path.isfile(os.path.join(traces, "traces.txt")) or len(os.listdir(traces)) < 17:
                fail("--keep-traces left no whole trace folder")
            with open(replayed) as f:
                replay = json.load(f)
            with open(online) as f:
                simulated = json.load(f)
            if searches_of(replay["plan"]) != searches_of(simulated):
                fail(f"{name}: the replayed plan's traffic is not the online simulation's")
            t_online = mean_search(online, "online")
            t_point = mean_search(replayed, "replay")
            if not 0.85 <= t_point / t_online <= 1.15:
                fail(f"{name}: replayed mean search {t_point * 1e3:.4f} ms, online {t_online * 1e3:.4f} ms: "
                     "not within 15%")
            print(f"ok: 16 ranks, {name}, replayed: mean search {t_point * 1e3:.4f} ms, online {t_online * 1e3:.4f} ms")
            if t_replay is None:
                t_replay = t_point
        costs = os.path.join(tmp, "costs.json")
        with open(costs, "w") as f:
            json.dump({"seconds_per_unit": {"steps": 1e-6, "lists": 2e-8, "list_entries": 5e-9, "hub_checks": 3e-9,
                                            "bitmap_words": 1e-8, "claimed": 3e-9, "queued": 1e-8,
                                            "arrivals": 2e-8, "exchanged_bytes": 2e-9, "codec_bytes": 1e-9,
                                            "routed_bytes": 4e-9}}, f)
        counted = os.path.join(tmp, "counted.json")
        run([*lab, "replay", "-np", "16", "--binary", args.binary, "--compute", "counted", "--work-costs", costs,
             "-o", counted, "--", *run_args], "zbfs-lab replay --compute counted")
        t_counted = mean_search(counted, "replay")
        if not t_counted > t_replay:
            fail(f"counted compute made the replayed search no longer ({t_counted} s against {t_replay} s)")
        print(f"ok: 16 ranks replayed with counted compute: mean search {t_counted * 1e3:.4f} ms")
        bad = subprocess.run([args.binary, "trace", "-P", "16", *run_args, "--codec", "bitpack"], capture_output=True,
                             text=True, stdin=subprocess.DEVNULL)
        if bad.returncode != 2 or "zbfs trace:" not in bad.stderr or len(bad.stderr.strip().splitlines()) != 1:
            fail(f"zbfs trace --codec bitpack: exit {bad.returncode}, {bad.stderr.strip()!r}")
    print("PASS")


if __name__ == "__main__":
    main()
