#!/usr/bin/env python3
"""Counted work per rank in weak scaling (issue 78): at 2^PER_RANK vertices a rank, how each
kind of counted work, the traffic and the peers of the largest rank grow with the rank
count P, per layout and route.

Points up to --real-max ranks run for real (oversubscribed: the counts do not depend on
time); larger ones run on the simulated cluster with communication alone (`zbfs-lab
simulate --compute none`, the same code, so the same counts, at the simulator's least wall
time). Every run is one thread a rank, --overlap off, no validation, the same search keys'
count.

For each (layout, kind) it prints the largest rank's count a search (summed over the
search's phases, each phase's largest rank; the mean over the searches) at each P and
its growth against the smallest P, marking growth past --bar (10%). Records are kept in
OUT and reused.

    .venv/bin/python bench/work_scaling.py --per-rank 12 --ranks 16 64 256 1024 --out results/work-scaling
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

KINDS = ("steps", "lists", "list_entries", "hub_checks", "bitmap_words", "claimed", "queued", "arrivals",
         "exchanged_bytes", "codec_bytes", "routed_bytes")
LAYOUTS = {
    "2d-grid2": ["--partition", "2d", "--route", "grid2"],
    "2d": ["--partition", "2d"],
    "1d-grid2": ["--partition", "1d", "--route", "grid2"],
}


def square_grid(p: int) -> str:
    rows = 1 << (int(math.log2(p)) // 2)
    return f"{rows}x{p // rows}"


def run_point(args, layout: str, p: int, out: Path) -> dict:
    record = out / f"{layout}-P{p}.json"
    if record.is_file():
        return json.loads(record.read_text())
    scale = args.per_rank + int(math.log2(p))
    zbfs_args = ["--scale", str(scale), "--roots", str(args.roots), "--threads", "1", "--overlap", "off",
                 "--no-validate", "--network", "ib-hdr", "-q", *LAYOUTS[layout]]
    if "2d" in layout:
        zbfs_args += ["--grid", square_grid(p)]
    if p <= args.real_max:
        flags = ["--oversubscribe", "--bind-to", "none"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        cmd = [args.mpirun, *flags, "-np", str(p), args.binary, "run", *zbfs_args, "--json", str(record)]
    else:
        cmd = [sys.executable, "-m", "zbfs_lab", "simulate", "-np", str(p), "--compute", "none", "--links", "ib-hdr",
               "--binary", args.smpi_binary, "-o", str(record), "--", *zbfs_args]
    print(f"work_scaling: {layout} P={p}: {' '.join(cmd)}", file=sys.stderr)
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    if done.returncode != 0 or not record.is_file():
        sys.exit(f"work_scaling: {layout} P={p} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return json.loads(record.read_text())


def per_rank(record: dict) -> dict[str, float]:
    """The largest rank's counts a search, and its traffic and peers."""
    totals = {k: 0.0 for k in (*KINDS, "messages", "wire_bytes", "peers")}
    searches = record["searches"]
    for search in searches:
        for phase, p in search["phases"].items():
            if phase == "validation":
                continue
            for kind, w in p.get("work", {}).items():
                totals[kind] += w["max"] / len(searches)
            totals["messages"] += p["messages"]["max"] / len(searches)
            totals["wire_bytes"] += p["wire_bytes"]["max"] / len(searches)
        peers = max((v["peers"]["max"] for st in search["steps"] for v in st.get("work", {}).values()), default=0)
        totals["peers"] = max(totals["peers"], peers)
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-rank", type=int, default=12, help="log2 of the vertices a rank holds")
    parser.add_argument("--ranks", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--layouts", nargs="+", default=["2d-grid2"], choices=sorted(LAYOUTS))
    parser.add_argument("--real-max", type=int, default=64, help="the most ranks run for real (more: simulated)")
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--bar", type=float, default=0.10, help="growth marked as past the bar")
    parser.add_argument("--binary", default="build/bin/zbfs")
    parser.add_argument("--smpi-binary", default="build-smpi/bin/zbfs")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--out", default="results/work-scaling")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for layout in args.layouts:
        rows = {p: per_rank(run_point(args, layout, p, out)) for p in args.ranks}
        first = rows[args.ranks[0]]
        print(f"\n{layout}, 2^{args.per_rank} vertices a rank: the largest rank's count a search")
        print(f"{'count':>16} " + " ".join(f"{'P=' + str(p):>12}" for p in args.ranks) + f" {'growth':>9}")
        for kind in (*KINDS, "messages", "wire_bytes", "peers"):
            values = [rows[p][kind] for p in args.ranks]
            if not any(values):
                continue
            growth = values[-1] / first[kind] - 1 if first[kind] else float("inf")
            mark = "  past the bar" if growth > args.bar else ""
            print(f"{kind:>16} " + " ".join(f"{v:12.4g}" for v in values) + f" {growth:+9.1%}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
