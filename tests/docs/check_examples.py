#!/usr/bin/env python3
"""Runs the example commands of the README and docs/*.md against this build, so that the
docs and the binary cannot drift apart (issue 56): every `zbfs run|generate|convert|model|trace`
line of a fenced shell block, in a scratch folder of its own per document, in the order
the document gives them (a `zbfs model run.json` finds the record an earlier example
wrote).

Each example runs as written except where that would take minutes or hardware this
machine lacks: a scale above 12 runs at 12, more than 4 ranks run as 4 (or as the --grid
names), an input file the document assumes (web-Google.txt, g.mtx) is generated first as
a small G(n, m) graph of 2,000 vertices. Examples that cannot run here are listed with
the reason (placeholders such as IN and OUT, a GPU, root privileges, the peers' builds).
Exit status 1 names each example that failed, with its stderr.

    python3 tests/docs/check_examples.py --binary build/bin/zbfs --mpiexec mpirun
"""
import argparse
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

COMMANDS = ("run", "generate", "convert", "model", "trace")
PLACEHOLDERS = re.compile(r"\b(IN|OUT|FILE|DIR|F|N|K|S|P|R|T|G|D|B|RxC|C|OLD_ZBFS|PATH|ARGS)\b|\[|\.\.\.|<|\bS S\b")


def fenced_lines(text):
    """The logical lines of the fenced blocks (continuations joined)."""
    for block in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
        pending = ""
        for raw in block.group(1).splitlines():
            line = raw.rstrip()
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            yield (pending + line).strip()
            pending = ""


def inline_commands(text):
    """Commands quoted inline in the prose (`zbfs run --scale 22 --json run.json`)."""
    outside = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    for span in re.findall(r"`([^`\n]+)`", outside):
        if re.match(r"(mpirun .*)?(build/bin/)?zbfs (run|generate|convert|model)\b", span):
            yield span


def zbfs_example(line):
    """The command of a zbfs example line (its comment cut), or None."""
    if line.startswith("$ "):
        line = line[2:]
    if line.startswith("zbfs:") or line.startswith("#"):
        return None  # output shown, or a comment
    command = re.sub(r"\s+#.*$", "", line).strip()
    words = command.split()
    for i, word in enumerate(words):
        if (word == "zbfs" or word.endswith("/zbfs")) and i + 1 < len(words) and words[i + 1] in COMMANDS:
            return command
    return None


def why_not(command):
    """Why an example cannot run on this machine, or None."""
    if PLACEHOLDERS.search(command):
        return "a placeholder stands for the user's arguments"
    if "$" in command:
        return "the body of a shell loop"
    if command.startswith("sudo") or "netcluster" in command:
        return "needs root and an emulated cluster"
    if "--backend cuda " in command + " " and "cuda-host" not in command:
        return "needs a GPU"
    return None


def adapted(command):
    """The command as it runs here: small scales and rank counts."""
    words = shlex.split(command)
    out = []
    i = 0
    grid = None
    for j, w in enumerate(words):
        if w == "--grid" and j + 1 < len(words):
            r, c = words[j + 1].lower().split("x")
            grid = int(r) * int(c)
    while i < len(words):
        w = words[i]
        if w in ("--scale", "-s") and i + 1 < len(words) and int(words[i + 1]) > 12:
            out += [w, "12"]
            i += 2
            continue
        if w == "-np" and i + 1 < len(words):
            ranks = grid if grid else min(int(words[i + 1]), 4)
            out += [w, str(ranks)]
            i += 2
            continue
        out.append(w)
        i += 1
    return shlex.join(out).replace("'>/dev/null'", ">/dev/null")


def inputs_of(command):
    """The graph files an example reads."""
    words = shlex.split(command)
    files = []
    for i, w in enumerate(words):
        if w == "--input" and i + 1 < len(words):
            files.append(words[i + 1])
        if w == "convert" and i + 1 < len(words):
            files.append(words[i + 1])
    return files


def scratch_tools(folder, binary, mpiexec):
    """`zbfs`, `build/bin/zbfs` and an `mpirun` that oversubscribes, inside `folder`."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (folder / "build" / "bin").mkdir(parents=True)
    for link in (bin_dir / "zbfs", folder / "build" / "bin" / "zbfs"):
        link.symlink_to(os.path.abspath(binary))
    extra = "--oversubscribe" + (" --allow-run-as-root" if os.geteuid() == 0 else "")
    wrapper = bin_dir / "mpirun"
    # The real launcher by its full path: the wrapper is first on PATH under the same name.
    real = shutil.which(mpiexec) or mpiexec
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(real)} {extra} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mpiexec", default="mpirun")
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    source = Path(args.source)
    documents = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    failures = []
    ran = 0
    skipped = 0
    for doc in documents:
        text = doc.read_text()
        fenced = [c for c in (zbfs_example(l) for l in fenced_lines(text)) if c]
        inline = set(c for c in (zbfs_example(l) for l in inline_commands(text)) if c)
        examples = fenced + sorted(inline - set(fenced))
        if not examples:
            continue
        with tempfile.TemporaryDirectory(prefix="zbfs_docs_") as tmp:
            folder = Path(tmp)
            bin_dir = scratch_tools(folder, args.binary, args.mpiexec)
            env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OMP_NUM_THREADS="1")
            for example in examples:
                reason = why_not(example)
                if reason:
                    print(f"skip  {doc.name}: {example}  ({reason})")
                    skipped += 1
                    continue
                for graph in inputs_of(example):
                    if not (folder / graph).exists():
                        subprocess.run([args.binary, "generate", "-q", graph, "--graph", "gnm", "--vertices", "2000",
                                        "--edges", "8000"], cwd=folder, check=True)
                command = adapted(example)
                try:
                    done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True,
                                          text=True, timeout=args.timeout)
                    status, err = done.returncode, done.stderr
                except subprocess.TimeoutExpired:
                    status, err = "timeout", ""
                # An inline span may name a command without all its arguments (`zbfs model`
                # in a sentence): a refusal for a missing argument is no example that failed.
                if example in inline and example not in fenced and status == 2 and (
                        "is required" in err or "required" in err and "missing" in err):
                    print(f"skip  {doc.name}: {example}  (names the command, not a whole example)")
                    skipped += 1
                    continue
                ran += 1
                ok = status == 0
                print(f"{'ok   ' if ok else 'FAIL '} {doc.name}: {command}", flush=True)
                if not ok:
                    failures.append(f"{doc.name}: {example}\n  ran: {command}\n  status {status}: "
                                    f"{err.strip()[-600:]}")
    print(f"{ran} examples ran, {skipped} skipped, {len(failures)} failed")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
