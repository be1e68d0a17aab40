#!/usr/bin/env python3
"""A stand-in for build/bin/zbfs in sweep tests: `run ... --json PATH` writes a fixture record,
`model ... --ranks P` prints a prediction, and logs each call to $FAKE_ZBFS_LOG. `--codec broken` fails like zbfs does; `--codec hang` sleeps. With
$FAKE_ZBFS_PIDS set, it starts a child (a "rank"), writes half a record, writes both process ids to
that file and waits: a job for a signal to end."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures import record  # noqa: E402

args = sys.argv[1:]
if args[:2] == ["run", "--help"]:  # what zbfs-lab reads to check matrix keys
    print("Options:\n  -s,--scale INT\n  --codec TEXT\n  -r,--roots UINT\n  --network TEXT\n  --threads INT")
    sys.exit(0)
with open(os.environ["FAKE_ZBFS_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
value = lambda flag, default=None: args[args.index(flag) + 1] if flag in args else default  # noqa: E731
codec = value("--codec", "none")
if codec == "broken":
    print("zbfs: kernel 1: distributing the graph", file=sys.stderr)
    print("zbfs: error: injected failure for codec broken", file=sys.stderr)
    # What mpirun adds after a rank's error: the zbfs line must still be the one reported.
    print("-" * 74 + "\nmpirun detected that one or more processes exited with non-zero status\n" + "-" * 74,
          file=sys.stderr)
    sys.exit(1)
if codec == "hang":
    time.sleep(60)
if args[:1] == ["model"]:  # a command without a record: it prints
    print(f"predicted TEPS: {1e6 * int(value('--ranks', 1)):.3g}")
    sys.exit(0)
if os.environ.get("FAKE_ZBFS_PIDS"):
    rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(value("--json"), "w") as f:
        f.write('{"schema": "zbfs.run", "half": ')
    with open(os.environ["FAKE_ZBFS_PIDS"] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {rank.pid}\n")
    os.replace(os.environ["FAKE_ZBFS_PIDS"] + ".tmp", os.environ["FAKE_ZBFS_PIDS"])
    time.sleep(120)
with open(value("--json"), "w") as f:
    json.dump(record(1, int(value("--scale", 10)), codec, teps=1e6 * int(value("--scale", 10))), f)
