#!/usr/bin/env python3
"""Counted work (issue 78) against what a search must do, at 4 and 16 real ranks, 1D and
2D (2x2 and 4x4 grids), one thread a rank, on a graph file whose lists this script counts
itself:

- a top-down step reads, summed over ranks, every list entry of its frontier: the sum of
  the frontier's degrees in the deduplicated graph without self loops (the levels file
  names the frontier), and opens each frontier vertex's list once a member of its expand
  group (1 in 1D, the grid's rows in 2D);
- every step's claimed vertices, summed over ranks, are the vertices it discovered;
- the record's largest rank's count is at least the mean, and their ratio is printed as the
  imbalance; the per-search totals of local work equal the sum of the steps' (and what
  happens outside the steps: the search's start, the parents' move, the predecessor
  reduction), never less.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def read_degrees(path):
    neighbours = defaultdict(set)
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            u, v = (int(x) for x in line.split()[:2])
            if u != v:
                neighbours[u].add(v)
                neighbours[v].add(u)
    return {v: len(n) for v, n in neighbours.items()}


def read_levels(path):
    levels = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            v, level = (int(x) for x in line.split())
            if level >= 0:
                levels[v] = level
    return levels


def work(step, phase, kind, field="mean"):
    return ((step.get("work") or {}).get(phase, {}).get("work", {}).get(kind, {}).get(field, 0.0))


def check(args, tmp, graph, degrees, ranks, partition, grid, direction):
    levels_file = os.path.join(tmp, f"levels-{ranks}-{partition}-{direction}.txt")
    record_file = os.path.join(tmp, f"run-{ranks}-{partition}-{direction}.json")
    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    run_args = ["--input", graph, "--partition", partition, "--roots", "4", "--threads", "1", "--network", "10gbe",
                "--overlap", "off", "--write-levels", levels_file, "--json", record_file, "-q"]
    if grid:
        run_args += ["--grid", grid]
    run_args += ["--direction", direction]
    done = subprocess.run([args.mpiexec, *flags, "-np", str(ranks), args.binary, "run", *run_args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    if done.returncode != 0:
        fail(f"{ranks} ranks {partition}: exit {done.returncode}: {done.stderr.strip()[-600:]}")
    with open(record_file) as f:
        record = json.load(f)
    shape = record["config"]["grid"]
    expand_members = int(shape.split("x")[0]) if partition == "2d" else 1
    levels = read_levels(levels_file)
    first = record["searches"][0]
    by_level = defaultdict(list)
    for v, level in levels.items():
        by_level[level].append(v)
    level = 0
    checked = 0
    for i, step in enumerate(first["steps"]):
        if "work" not in step:
            fail(f"{ranks} ranks {partition}: step {i} has no counted work")
        frontier = by_level.get(level, [])
        if step["frontier_vertices"] != len(frontier):
            fail(f"{ranks} ranks {partition}: step {i} expanded {step['frontier_vertices']} vertices, the levels "
                 f"file has {len(frontier)} at level {level}")
        claimed = work(step, "local_expansion", "claimed") * ranks
        if round(claimed) != step["discovered_vertices"]:
            fail(f"{ranks} ranks {partition}: step {i} claimed {claimed} vertices over the ranks, discovered "
                 f"{step['discovered_vertices']}")
        if step["direction"] == "top-down":
            entries = round(work(step, "local_expansion", "list_entries") * ranks)
            expected = sum(degrees.get(v, 0) for v in frontier)
            if entries != expected:
                fail(f"{ranks} ranks {partition}: top-down step {i} read {entries} list entries over the ranks, its "
                     f"frontier's degrees sum to {expected}")
            # Each frontier vertex's list is opened by the expand group's members whose block
            # of it is not empty: at least one (it has edges), at most all of them.
            lists = round(work(step, "local_expansion", "lists") * ranks)
            with_edges = sum(1 for v in frontier if degrees.get(v, 0) > 0)
            if not with_edges <= lists <= with_edges * expand_members:
                fail(f"{ranks} ranks {partition}: top-down step {i} opened {lists} lists, not between {with_edges} "
                     f"frontier vertices with edges and {expand_members} times that")
            checked += 1
        for phase, counts in step["work"].items():
            for kind, w in counts.get("work", {}).items():
                if w["max"] < w["mean"] - 1e-9 or (w["mean"] > 0 and abs(w["imbalance"] - w["max"] / w["mean"]) > 1e-9):
                    fail(f"{ranks} ranks {partition}: step {i} {phase} {kind}: max {w['max']} mean {w['mean']} "
                         f"imbalance {w['imbalance']}")
        level += 1
    if checked == 0:
        fail(f"{ranks} ranks {partition}: the first search took no top-down step to check")
    # The search's own totals hold every step's local work, and more (its start, its end).
    for kind in ("lists", "list_entries", "claimed", "bitmap_words"):
        total = first["phases"]["local_expansion"]["work"].get(kind, {}).get("sum", 0.0)
        steps_sum = sum(work(s, "local_expansion", kind) * ranks for s in first["steps"])
        if total + 1e-6 < steps_sum:
            fail(f"{ranks} ranks {partition}: the search's {kind} ({total}) are fewer than its steps' ({steps_sum})")
    worst = max((w["imbalance"], s["direction"], kind) for s in first["steps"]
                for kind, w in s["work"]["local_expansion"]["work"].items() if w["mean"] >= 16)
    print(f"ok: {ranks} ranks {partition} ({shape}, {direction}): {len(first['steps'])} steps, {checked} top-down steps' list "
          f"entries and lists as the graph's degrees say; most imbalanced local count {worst[2]} ({worst[1]}) "
          f"{worst[0]:.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mpiexec", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "graph.txt")
        subprocess.run([args.binary, "generate", "-s", "10", "--to", "edgelist", "-q", graph], check=True)
        degrees = read_degrees(graph)
        for ranks, partition, grid, direction in ((4, "1d", None, "auto"), (4, "2d", "2x2", "auto"),
                                                  (16, "1d", None, "auto"), (16, "2d", "4x4", "auto"),
                                                  (16, "2d", "4x4", "top-down"), (4, "1d", None, "top-down")):
            check(args, tmp, graph, degrees, ranks, partition, grid, direction)
    return 0


if __name__ == "__main__":
    sys.exit(main())
