#!/usr/bin/env python3
"""The folders under src/zbfs/ in their declared order (src/zbfs/LAYERS, bottom up): every
folder is declared once, each includes only folders declared before it (so there is no
cycle), mpi/ includes nothing of zbfs but core/, and docs/architecture.md's layer table
lists the folders in the same order. Each folder is a build unit: its CMakeLists.txt (and
the .cmake files beside it) names every source under it, and the top-level CMakeLists.txt
names none. Prints every break and exits 1 when there is one."""
import collections
import pathlib
import re
import sys

project = pathlib.Path(sys.argv[1])
root = project / "src" / "zbfs"
problems = []

declared = [line.strip() for line in (root / "LAYERS").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
position = {}
for index, folder in enumerate(declared):
    if folder in position:
        problems.append(f"LAYERS declares {folder}/ twice")
    position.setdefault(folder, index)
folders = sorted(p.name for p in root.iterdir() if p.is_dir())
for folder in folders:
    if folder not in position:
        problems.append(f"{folder}/ is not declared in src/zbfs/LAYERS")
for folder in declared:
    if folder not in folders:
        problems.append(f"LAYERS declares {folder}/, which does not exist")

uses = collections.defaultdict(set)
for folder in folders:
    for source in sorted(p for p in (root / folder).rglob("*") if p.is_file()):
        for used in re.findall(r'#include "zbfs/([a-z_]+)/', source.read_text(errors="replace")):
            if used == folder:
                continue
            uses[folder].add(used)
            if folder in position and used in position and position[used] > position[folder]:
                problems.append(f"{source.relative_to(project)} includes {used}/, a higher layer than {folder}/ in LAYERS")
if uses["mpi"] - {"core"}:
    problems.append("mpi/ includes " + ", ".join(sorted(uses["mpi"] - {"core"})) + ": it may include only core/")

# The first column of the layer table: `name/` for each folder of src/zbfs (apps/ rows aside).
architecture = (project / "docs" / "architecture.md").read_text()
table = architecture.split("## Layers", 1)[-1]
listed = [m for m in re.findall(r"^\| `([a-z_]+)/` \|", table, flags=re.MULTILINE) if m in position]
if listed != declared:
    problems.append("docs/architecture.md lists the layers as " + ", ".join(listed) + "; LAYERS declares " +
                    ", ".join(declared))

# Folders as build units.
for folder in folders:
    lists = [p for p in (root / folder).glob("*.cmake")] + [root / folder / "CMakeLists.txt"]
    if not lists[-1].is_file():
        problems.append(f"src/zbfs/{folder}/ has no CMakeLists.txt")
        continue
    named = "\n".join(p.read_text() for p in lists)
    for source in sorted(p for p in (root / folder).rglob("*") if p.suffix in (".cpp", ".cu")):
        relative = source.relative_to(root / folder).as_posix()
        if not re.search(r"(?<![\w/.])" + re.escape(relative) + r"(?![\w.])", named):
            problems.append(f"src/zbfs/{folder}/CMakeLists.txt does not name {relative}")
top = (project / "CMakeLists.txt").read_text()
for stray in re.findall(r"src/zbfs/[a-z_]+/[\w/]+\.(?:cpp|cu)", top):
    problems.append(f"CMakeLists.txt names {stray}: a folder's sources are in its own CMakeLists.txt")

for problem in problems:
    print(problem)
if not problems:
    print(f"{len(declared)} folders in their declared order, each a build unit; every include goes down; "
          "mpi/ includes only core/")
sys.exit(1 if problems else 0)
