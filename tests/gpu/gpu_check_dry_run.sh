#!/usr/bin/env bash
# The device check's dry run (scripts/gpu-check; docs/gpu.md), so that it cannot rot
# between the GPU machine's uses: this build packed as --prepare packs, then
# `gpu-check --run --dry-run` through cuda-host with a stand-in nvidia-smi, every part
# done; a short budget drops the tail and is never passed; SIGTERM and SIGINT at several
# points end it with 143 and 130 and leave no process behind (every child carries a
# marker in its environment); bench/gpu_bench.py's runs end at --timeout and with it.
#
#   gpu_check_dry_run.sh SOURCE BUILD CUDA_BUILT(0|1)
# Exit 77 (skipped) on a build without CUDA: cuda-host needs the device code.
set -uo pipefail
source_dir="$1"
build="$2"
cuda_built="$3"
if [[ "$cuda_built" != 1 ]]; then
  echo "skipped: this build has no CUDA backend (cuda-host needs it)"
  exit 77
fi
tmp="$(mktemp -d)"
tag="zbfs-gpu-check-test-$$-$RANDOM"
failures=0
cleanup() {
  # Nothing of ours may outlive the test, whatever it found.
  for pid in $(tagged); do kill -KILL "$pid" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Processes whose environment carries the marker.
tagged() { grep -lsa "ZBFS_GPU_CHECK_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }

mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
# A stand-in nvidia-smi: the dry run needs one on PATH, as the GPU machine has.
case "$1" in
  -L) echo "GPU 0: Stand-in GPU (UUID: GPU-dry-run)" ;;
  *) echo "Stand-in GPU, 0.0, 0 MiB" ;;
esac
EOF
chmod +x "$tmp/bin/nvidia-smi"
export PATH="$tmp/bin:$PATH"
check="$source_dir/scripts/gpu-check"

# 1. The pack, as --prepare makes it, from this build.
if ! "$check" --pack-from "$build" --pack "$tmp/pack"; then
  echo "FAIL: packing $build"
  exit 1
fi

# 2. The whole dry run: every part done, every tree validated, the summary in both forms.
began=$SECONDS
ZBFS_GPU_CHECK_TAG="$tag" "$check" --run "$tmp/out" --pack "$tmp/pack" --dry-run --budget 300 \
  --unit-filter 'DeviceCodec*' 2>"$tmp/dry.log"
status=$?
[[ $status == 0 ]] || { tail -20 "$tmp/dry.log"; fail "the dry run exited $status"; }
python3 - "$tmp/out" <<'EOF' || fail "the dry run's summary"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
s = json.loads((out / "gpu-check.json").read_text())
md = (out / "gpu-check.md").read_text()
problems = []
statuses = {p["part"]: p["status"] for p in s["parts"]}
for part in ("start", "levels", "large", "ranks", "cpu", "energy", "unit"):
    if statuses.get(part) != "done":
        problems.append(f"part {part}: {statuses.get(part, 'missing')}")
parts = [r["part"] for r in s["rows"]]
if parts.count("levels") != 6 or parts.count("large") != 3 or parts.count("cpu") != 2:
    problems.append(f"one-process rows by part: {parts}")
if not all(r["validated"] for r in s["rows"] if r["part"] == "levels"):
    problems.append("a scale-22 stand-in search was not validated")
loops = {r["backend"] for r in s["rows"] if r["part"] == "levels"}
if len(loops) != 6:
    problems.append(f"the level loops and --prune: {sorted(loops)}")
ranks = {(r["ranks"], r["partition"], r["codec"]) for r in s["ranks"] if r["validated"]}
if len(ranks) != 12:
    problems.append(f"validated rank runs: {sorted(ranks)}")
if s["machine"].get("device") != "host" or s["failures"] or len(s["targets"]) != 3:
    problems.append(f"device {s['machine'].get('device')}, failures {s['failures']}, targets {s['targets']}")
if s["unit"]["passed"] < 1 or s["unit"]["failed"]:
    problems.append(f"unit tests: {s['unit']}")
for text in ("## One process", "## Ranks sharing the device", "## Targets", "## Energy", "not judged (dry run)"):
    if text not in md:
        problems.append(f"the Markdown has no '{text}'")
if list(out.glob("*.partial")):
    problems.append("a .partial file is left")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
echo "dry run: $((SECONDS - began)) s"
sleep 1
[[ -z "$(tagged)" ]] || fail "processes left after the dry run: $(tagged)"

# 2b. The carried Open MPI and libraries alone: the system's hidden in a private mount
# namespace (where one can be made: root, unshare), and ssh with them (the GPU machine has
# none), a 2-rank job through the pack.
hide_and_run() {
  mkdir -p "$tmp/empty"
  local d f
  for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi /etc/openmpi; do
    [[ -d "$d" ]] && mount --bind "$tmp/empty" "$d"
  done
  for f in /usr/lib/x86_64-linux-gnu/lib{mpi,open-,pmix,mca_common,fmt,roaring,streamvbyte,hwloc,event}*.so* \
    /usr/bin/orterun /usr/bin/ssh /usr/bin/rsh; do
    [[ -f "$f" && ! -L "$f" ]] && mount --bind /dev/null "$f"
  done
  ! command -v mpirun >/dev/null || ! mpirun --version >/dev/null 2>&1 || { echo "the system's Open MPI still runs"; return 1; }
  "$tmp/pack/bin/mpirun" --oversubscribe $([[ $(id -u) == 0 ]] && echo --allow-run-as-root) -np 2 \
    "$tmp/pack/bin/zbfs" run --scale 10 --roots 2 -q --backend cuda-host -p 2d >/dev/null
}
if [[ $(id -u) == 0 ]] && unshare -m true 2>/dev/null; then
  export -f hide_and_run
  export tmp
  if unshare -m bash -c hide_and_run; then
    echo "the pack alone (the system's Open MPI hidden): a 2-rank job ran"
  else
    fail "a 2-rank job through the pack with the system's Open MPI hidden"
  fi
else
  echo "not checked: the pack with the system's Open MPI hidden (needs root and unshare -m)"
fi

# 2c. A pack that lacks a library its binaries load: the start check says which (a
# library found on this machine instead would be missing on a bare one), exit 1.
cp -r "$tmp/pack" "$tmp/broken"
rm "$tmp/broken/lib/"libfmt.so*
ZBFS_GPU_CHECK_TAG="$tag" "$check" --run "$tmp/broken-out" --pack "$tmp/broken" --dry-run --budget 60 --no-fallback \
  2>"$tmp/broken.log"
status=$?
[[ $status == 1 ]] || fail "a pack without libfmt: exit $status, not 1"
grep -q "cannot run here: zbfs.* libfmt.so" "$tmp/broken-out/gpu-check.md" ||
  fail "a pack without libfmt: the summary does not name it ($(grep -m1 FAILED "$tmp/broken-out/gpu-check.md"))"
rm -rf "$tmp/broken"

# 3. A short budget: the tail is dropped, the budget never passed, exit 0.
began=$(date +%s.%N)
ZBFS_GPU_CHECK_TAG="$tag" "$check" --run "$tmp/short" --pack "$tmp/pack" --dry-run --budget 7 2>"$tmp/short.log"
status=$?
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$began" "$(date +%s.%N)")
echo "budget 7 s: exit $status in $took s"
[[ $status == 0 ]] || { tail -5 "$tmp/short.log"; fail "the short run exited $status"; }
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 8.5 else 1)" "$took" || fail "the 7 s budget took $took s"
grep -Eq '"status": "(dropped|cut short)' "$tmp/short/gpu-check.json" || fail "the short run dropped nothing"

# 4. Signals at several points: 143 or 130 soon after, nothing left running, a summary.
n=0
for delay in 0.3 1.0 2.0 3.5; do
  for sig in TERM INT; do
    n=$((n + 1))
    (
      # A shell's background job starts with SIGINT ignored: the check's own must not be.
      exec env --default-signal=INT ZBFS_GPU_CHECK_TAG="$tag" "$check" --run "$tmp/sig$n" --pack "$tmp/pack" \
        --dry-run --budget 300 2>"$tmp/sig$n.log"
    ) &
    pid=$!
    sleep "$delay"
    kill -s "$sig" "$pid"
    waited=0
    while kill -0 "$pid" 2>/dev/null && ((waited < 200)); do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
      fail "SIG$sig after $delay s: still running 20 s later"
      continue
    fi
    wait "$pid"
    status=$?
    want=$([[ $sig == TERM ]] && echo 143 || echo 130)
    [[ $status == "$want" ]] || { tail -3 "$tmp/sig$n.log"; fail "SIG$sig after $delay s: exit $status, not $want"; }
    for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -z "$(tagged)" ]] && break; sleep 0.5; done
    [[ -z "$(tagged)" ]] || fail "SIG$sig after $delay s: left running: $(tagged | tr '\n' ' ')"
    if [[ -d "$tmp/sig$n" ]] && ls "$tmp/sig$n"/*.partial >/dev/null 2>&1; then fail "SIG$sig: a .partial file left"; fi
    echo "SIG$sig after $delay s: exit $status, in $((waited / 10)).$((waited % 10)) s, nothing left running"
  done
done

# 5. bench/gpu_bench.py: a run that hangs is ended at --timeout; SIGTERM ends its run too.
cat >"$tmp/bin/hanging_bench" <<'EOF'
#!/bin/sh
exec sleep 120
EOF
chmod +x "$tmp/bin/hanging_bench"
began=$SECONDS
out="$(ZBFS_GPU_CHECK_TAG="$tag" python3 "$source_dir/bench/gpu_bench.py" --binary "$tmp/bin/hanging_bench" \
  --scales 10 --cpu-scales "" --device-backend cuda-host --repeats 1 --timeout 2 2>&1)"
((SECONDS - began <= 10)) || fail "gpu_bench.py --timeout 2 took $((SECONDS - began)) s"
grep -q "no result after 2" <<<"$out" || fail "gpu_bench.py --timeout 2 said: $out"
ZBFS_GPU_CHECK_TAG="$tag" python3 "$source_dir/bench/gpu_bench.py" --binary "$tmp/bin/hanging_bench" \
  --scales 10 --cpu-scales "" --device-backend cuda-host --repeats 1 >/dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
status=$?
[[ $status == 143 ]] || fail "gpu_bench.py on SIGTERM exited $status, not 143"
for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -z "$(tagged)" ]] && break; sleep 0.5; done
[[ -z "$(tagged)" ]] || fail "gpu_bench.py on SIGTERM left its run: $(tagged | tr '\n' ' ')"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "gpu-check dry run: passed"
