#!/usr/bin/env bash
# Tiny zbfs jobs on 2 emulated hosts (scripts/netcluster) with 1 Gbit/s links and a
# small tbf bucket: the job runs over TCP between the namespaces, sees 2 nodes, and its
# ping-pong and loaded swap measure the shaped bandwidth. Exits 77 (skipped, with the reason) where the machine cannot host an
# emulated cluster: no root, no iproute2, no namespaces.
set -euo pipefail
netcluster="$1"
zbfs="$2"

if ! reason="$("$netcluster" check 2>&1)"; then
  echo "SKIPPED: ${reason}"
  exit 77
fi
name="zt$(($$ % 100000))"
work="$(mktemp -d)"
trap '"$netcluster" down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

if "$netcluster" up 2 --rate 1gbit --burst 100 --name "$name" 2>"$work/err"; then
  echo "a 100-byte burst was accepted"; exit 1
fi
grep -q -- '--burst' "$work/err" || { echo "no --burst error:"; cat "$work/err"; exit 1; }
"$netcluster" up 2 --rate 1gbit --burst 16000 --name "$name"
timeout 180 "$netcluster" run --name "$name" -- "$zbfs" run --scale 10 --roots 4 --threads 1 -q \
  --json "$work/run.json" >"$work/stdout"
grep -q '^SCALE: *10$' "$work/stdout" || { echo "no result block:"; cat "$work/stdout"; exit 1; }
grep -q '^num_mpi_processes: *2$' "$work/stdout" || { echo "not 2 ranks:"; cat "$work/stdout"; exit 1; }

python3 - "$work/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
net = j["network"]
assert net["nodes"] == 2, f"expected 2 nodes, got {net['nodes']}"
inter = net["measurement"]["inter_node"]
assert inter["measured"], "the inter-node link was not measured"
bandwidth = inter["fit"]["bandwidth_bytes_per_s"]
# tbf at 1 Gbit/s: 125 MB/s less TCP/IP framing; far above it means the shaping is not there.
assert 50e6 < bandwidth < 135e6, f"measured {bandwidth / 1e6:.1f} MB/s on a 1 Gbit/s link"
loaded = net["measurement"]["inter_node_loaded"]
assert loaded["measured"] and loaded["pairs"] == 1, f"loaded swap: {loaded}"
assert 20e6 < loaded["fit"]["bandwidth_bytes_per_s"] < 135e6, f"loaded swap: {loaded['fit']}"
assert j["phases"]["row_exchange"]["modelled_time_s"]["max"] > 0
print(f"2 emulated hosts: inter-node {inter['fit']['latency_s'] * 1e6:.1f} us, {bandwidth / 1e6:.1f} MB/s")
PY

# Two ranks per host: each host has a hostname of its own, so OpenMPI sees 2 nodes of 2
# ranks (with the machine's hostname everywhere it crashed splitting them by node).
timeout 180 "$netcluster" run --name "$name" --ranks-per-host 2 -- "$zbfs" run --scale 10 --roots 4 --threads 1 -q \
  --route grid2 --json "$work/run4.json" >"$work/stdout4"
grep -q '^num_mpi_processes: *4$' "$work/stdout4" || { echo "not 4 ranks:"; cat "$work/stdout4"; exit 1; }
python3 - "$work/run4.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["network"]["nodes"] == 2, f"expected 2 nodes, got {j['network']['nodes']}"
print("2 emulated hosts of 2 ranks each: 2 nodes")
PY
