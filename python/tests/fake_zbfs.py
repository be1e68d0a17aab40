#!/usr/bin/env python3
"""A stand-in for build/bin/zbfs in sweep tests: `run ... --json PATH` writes a fixture record, and
logs each call to $FAKE_ZBFS_LOG. `--codec broken` fails like zbfs does; `--codec hang` sleeps."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures import record  # noqa: E402

args = sys.argv[1:]
with open(os.environ["FAKE_ZBFS_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
value = lambda flag, default=None: args[args.index(flag) + 1] if flag in args else default  # noqa: E731
codec = value("--codec", "none")
if codec == "broken":
    print("zbfs: kernel 1: distributing the graph", file=sys.stderr)
    print("zbfs: error: injected failure for codec broken", file=sys.stderr)
    sys.exit(1)
if codec == "hang":
    time.sleep(60)
with open(value("--json"), "w") as f:
    json.dump(record(1, int(value("--scale", 10)), codec, teps=1e6 * int(value("--scale", 10))), f)
