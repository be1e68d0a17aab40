#!/usr/bin/env python3
"""No folder-level include cycle under src/zbfs/: each folder may include folders below it
only (docs/architecture.md lists the layers), and mpi/ includes nothing of zbfs but core/.
Prints the cycles, or the includes that break mpi/'s floor, and exits 1 when there are any."""
import collections
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1]) / "src" / "zbfs"
uses = collections.defaultdict(set)
for folder in sorted(p for p in root.iterdir() if p.is_dir()):
    for source in (p for p in folder.rglob("*") if p.is_file()):
        for used in re.findall(r'#include "zbfs/([a-z_]+)/', source.read_text(errors="replace")):
            if used != folder.name:
                uses[folder.name].add(used)

cycles = []
state = {}
path = []


def visit(folder):
    state[folder] = "open"
    path.append(folder)
    for used in sorted(uses[folder]):
        if state.get(used) == "open":
            cycles.append(path[path.index(used):] + [used])
        elif used not in state:
            visit(used)
    path.pop()
    state[folder] = "done"


for folder in sorted(uses):
    if folder not in state:
        visit(folder)
failed = False
for cycle in cycles:
    print("include cycle: " + " -> ".join(cycle))
    failed = True
if uses["mpi"] - {"core"}:
    print("mpi/ includes " + ", ".join(sorted(uses["mpi"] - {"core"})) + ": it may include only core/")
    failed = True
if not failed:
    print(f"no include cycle among {len(uses)} folders; mpi/ includes only core/")
sys.exit(1 if failed else 0)
