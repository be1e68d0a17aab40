#!/usr/bin/env python3
"""The SMPI build against the real one (issue 57): a 16-rank scale-10 run simulated on a
16-host fat tree (zbfs-lab simulate) validates every search and traverses the same edges,
key by key, as the same run on 16 real (oversubscribed) ranks; its record is marked
simulated, with the platform. And what SMPI cannot carry is refused in one line.

Exit 77 (skipped) where smpirun is not installed; a missing SMPI build is a failure (make
test builds it with make smpi)."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def searches(record):
    return [(s["root"], s["traversed_edges"]) for s in record["searches"]]


def simulate(args, run_args, record, compute=()):
    done = subprocess.run([args.python, "-m", "zbfs_lab", "simulate", "-np", "16", "--topology", "fattree",
                           "--links", "10gbe", "--binary", args.smpi_binary, "--timeout", "600", *compute,
                           "-o", record, "--", *run_args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        fail(f"zbfs-lab simulate {' '.join(run_args)} exited {done.returncode}: {done.stderr.strip()[-800:]}")
    print(done.stdout.strip())


# Prices for the counted-compute check: round figures of the order zbfs-lab calibrate
# finds on a 2-core EPYC (seconds a unit).
TEST_COSTS = {"steps": 1e-6, "lists": 2e-8, "list_entries": 5e-9, "hub_checks": 3e-9, "bitmap_words": 1e-8,
              "claimed": 3e-9, "queued": 1e-8, "arrivals": 2e-8, "exchanged_bytes": 2e-9, "codec_bytes": 1e-9,
              "routed_bytes": 4e-9}


def work_totals(record):
    """Every search's counted work and traffic, phase by phase, summed over ranks."""
    out = []
    for search in record["searches"]:
        phases = {}
        for phase, p in search["phases"].items():
            if phase == "validation":
                continue
            phases[phase] = ({k: v["sum"] for k, v in p.get("work", {}).items() if k != "steps"},
                             p["messages"]["sum"], p["wire_bytes"]["sum"])
        out.append((search["root"], phases))
    return out


def check_counted_compute(counted, none, real):
    """--compute counted: a search's counts and traffic are the real run's; each step's
    local work took exactly its priced time on the simulated clock, and communication
    alone (--compute none) is faster still."""
    if work_totals(counted) != work_totals(real):
        for (root, a), (_, b) in zip(work_totals(counted), work_totals(real)):
            for phase in sorted(set(a) | set(b)):
                if a.get(phase) != b.get(phase):
                    fail(f"key {root} {phase}: counted simulation {a.get(phase)}, real run {b.get(phase)}")
        fail("the counted simulation's work differs from the real run's")
    if (counted["simulated"] or {}).get("compute") != "counted":
        fail(f"the counted record does not say so: {counted['simulated'].get('compute')}")
    priced = charged = 0.0
    for search in counted["searches"]:
        for step in search["steps"]:
            local = step["work"].get("local_expansion")
            if not local:
                continue
            price = sum(w["mean"] * TEST_COSTS[k] for k, w in local["work"].items())
            # SimGrid's clock keeps each charge to about a nanosecond.
            if abs(local["time_s"]["mean"] - price) > 2e-8 + 1e-3 * price:
                fail(f"a step's local work was priced {price} s and took {local['time_s']['mean']} s simulated")
            priced += price
            charged += local["time_s"]["mean"]
    if priced <= 0:
        fail("the counted simulation charged no local work")
    mean = lambda r: sum(s["time_s"] for s in r["searches"]) / len(r["searches"])  # noqa: E731
    if not mean(none) < mean(counted):
        fail(f"communication alone ({mean(none)} s a search) is not faster than with counted compute "
             f"({mean(counted)} s)")
    local_none = max(s["phases"].get("local_expansion", {}).get("time_s", {}).get("max", 0.0) for s in none["searches"])
    if local_none > 1e-9:
        fail(f"--compute none charged {local_none} s of local expansion")
    print(f"ok: counted compute: the real run's work and traffic, {charged * 1e3:.3f} ms of local steps charged as "
          f"priced; a search {mean(counted) * 1e3:.3f} ms counted, {mean(none) * 1e3:.3f} ms communication alone")


def check_what_smpi_carries(args):
    """tests/simgrid/smpi_checks.cpp on 8 simulated ranks, one late: a barrier that lets
    a rank leave early (SimGrid's own MPI_Ibarrier) makes it fail or hang."""
    checks = os.path.join(os.path.dirname(args.smpi_binary), "zbfs_smpi_checks")
    if not os.path.isfile(checks):
        fail(f"{checks} is missing: build it with `make smpi` (make test does)")
    with tempfile.TemporaryDirectory() as tmp:
        platform, hosts = os.path.join(tmp, "platform.xml"), os.path.join(tmp, "hostfile")
        subprocess.run([args.python, "-c", "import sys; from zbfs_lab import platforms; "
                        "p = platforms.make('fattree', 8, '10gbe'); "
                        "open(sys.argv[1], 'w').write(platforms.xml(p)); "
                        "open(sys.argv[2], 'w').write(platforms.hostfile(p, 1))", platform, hosts], check=True)
        # In a process group of its own: smpirun's simulator child must end with it.
        process = subprocess.Popen(["smpirun", "-np", "8", "-platform", platform, "-hostfile", hosts,
                                    "--cfg=smpi/iprobe:1e-6", "--cfg=smpi/test:1e-6", checks],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                   text=True, start_new_session=True)
        try:
            stdout, stderr = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            fail("the SMPI checks hung (a rank left a barrier early and missed a message?)")
    said = [line for line in stdout.splitlines() if line.startswith(("smpi checks:", "FAIL:"))]
    if process.returncode != 0 or len(said) != 1 or not said[0].startswith("smpi checks:"):
        fail(f"the SMPI checks failed (exit {process.returncode}): {said or stderr.strip()[-400:]}")
    print(f"ok: {said[0]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True, help="the real zbfs")
    parser.add_argument("--smpi-binary", required=True, help="the SMPI build's zbfs")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--python", required=True, help="Python with zbfs-lab")
    args = parser.parse_args()
    if shutil.which("smpirun") is None:
        print("skipped: smpirun is not installed (scripts/bootstrap installs libsimgrid-dev)")
        return 77
    if not os.path.isfile(args.smpi_binary):
        fail(f"{args.smpi_binary} is missing: build it with `make smpi` (make test does)")
    check_what_smpi_carries(args)
    run_args = ["--scale", "10", "--roots", "8", "--partition", "2d", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        simulated_json = os.path.join(tmp, "simulated.json")
        simulate(args, run_args, simulated_json)
        # Over a route, kernel 1's shuffle and every exchange go hop by hop among known
        # peers: the same graph, the same traversed edges.
        routed_json = os.path.join(tmp, "routed.json")
        simulate(args, run_args + ["--route", "grid2"], routed_json)
        real_json = os.path.join(tmp, "real.json")
        flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        done = subprocess.run([args.mpiexec, *flags, "-np", "16", args.binary, "run", *run_args, "--json", real_json],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            fail(f"the real 16-rank run exited {done.returncode}: {done.stderr.strip()[-800:]}")
        # Counted compute over grid2, against the real run of the same arguments.
        costs = os.path.join(tmp, "costs.json")
        with open(costs, "w") as f:
            json.dump({"zbfs_work_costs": 1, "seconds_per_unit": TEST_COSTS}, f)
        counted_args = ["--scale", "10", "--roots", "4", "--partition", "2d", "--grid", "4x4", "--route", "grid2", "--no-validate",
                        "--threads", "1", "--quiet"]
        counted_json, none_json, real_counted_json = (os.path.join(tmp, n) for n in ("c.json", "n.json", "rc.json"))
        simulate(args, counted_args, counted_json, ["--compute", "counted", "--work-costs", costs])
        simulate(args, counted_args, none_json, ["--compute", "none"])
        done = subprocess.run([args.mpiexec, *flags, "-np", "16", args.binary, "run", *counted_args, "--network",
                               "10gbe", "--json", real_counted_json],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            fail(f"the real 16-rank grid2 run exited {done.returncode}: {done.stderr.strip()[-800:]}")
        with open(counted_json) as f, open(none_json) as g, open(real_counted_json) as h:
            check_counted_compute(json.load(f), json.load(g), json.load(h))
        with open(simulated_json) as f:
            simulated = json.load(f)
        with open(routed_json) as f:
            routed = json.load(f)
        with open(real_json) as f:
            real = json.load(f)
    sim = simulated.get("simulated") or {}
    if not sim.get("simulator", "").startswith("SimGrid SMPI"):
        fail(f"the simulated record names no simulator: {sim}")
    if sim.get("platform", {}).get("hosts") != 16 or sim.get("platform", {}).get("topology") != "fattree":
        fail(f"the simulated record's platform is not the 16-host fat tree: {sim.get('platform')}")
    if real.get("simulated") is not None:
        fail("the real run's record says it was simulated")
    if simulated["num_mpi_processes"] != 16:
        fail(f"the simulated run had {simulated['num_mpi_processes']} ranks")
    if simulated["graph"]["num_graph_edges"] != real["graph"]["num_graph_edges"]:
        fail(f"kernel 1 kept {simulated['graph']['num_graph_edges']} edges simulated, "
             f"{real['graph']['num_graph_edges']} real")
    if searches(simulated) != searches(real):
        fail(f"the searches differ: simulated {searches(simulated)}, real {searches(real)}")
    if searches(routed) != searches(real):
        fail(f"the searches differ over grid2: simulated {searches(routed)}, real {searches(real)}")
    for record, name in ((simulated, "simulated"), (real, "real"), (routed, "simulated grid2")):
        if any(s["validate_time_s"] is None or s["validate_time_s"] < 0 for s in record["searches"]):
            fail(f"a {name} search was not validated")
    if simulated["network"]["name"] != "10gbe":
        fail(f"the simulated run's model priced {simulated['network']['name']}, not the platform's 10gbe links")
    print(f"ok: 16 simulated ranks traverse the real run's edges for {len(searches(real))} keys "
          f"({simulated['graph']['num_graph_edges']} graph edges)")

    # What SMPI cannot carry, refused in one line: a rank's OpenMP team.
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([args.python, "-m", "zbfs_lab", "simulate", "-np", "2", "--binary", args.smpi_binary,
                               "-o", os.path.join(tmp, "r.json"), "--", "--scale", "6", "--threads", "2"],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode == 0 or "a simulated rank runs one thread" not in done.stderr:
            fail(f"--threads 2 was not refused in the SMPI build: {done.returncode} {done.stderr.strip()[-400:]}")
    print("ok: --threads 2 is refused in one line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
