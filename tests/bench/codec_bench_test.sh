#!/usr/bin/env bash
# The codec benchmark on a run's recorded frontiers (zbfs run --dump-frontiers, then
# zbfs_codec_bench --dump): every recorded 2D exchange shows up as a benchmark with its
# ratio, and bad --dump arguments end with one line and status 2.
set -euo pipefail
mpiexec="$1"
zbfs="$2"
bench="$3"
shift 3  # the rest: mpiexec's flags
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

timeout 120 "$mpiexec" "$@" -np 4 "$zbfs" run --scale 10 --roots 2 --threads 1 -q --partition 2d --grid 2x2 \
  --no-validate --dump-frontiers "$work/dump" >/dev/null
ls "$work/dump"/rank-{0,1,2,3}.zbfsdump >/dev/null

timeout 300 "$bench" --dump "$work/dump" --benchmark_filter='recorded .*/bitpack/' --benchmark_min_time=0.001 \
  >"$work/out" 2>"$work/err" || { echo "codec bench failed:"; cat "$work/err"; exit 1; }
for name in "recorded column_exchange set" "recorded row_exchange" "recorded predecessor_reduction sequence"; do
  for op in encode decode; do
    grep -q "^${name}[a-z ]*/bitpack/${op} .*ratio=" "$work/out" || {
      echo "no '${name} .../bitpack/${op}' line:"; cat "$work/out"; exit 1; }
  done
done

expect_refusal() {  # expect_refusal TEXT ARGS...: status 2 and one stderr line holding TEXT
  local text="$1"; shift
  local status=0
  "$bench" "$@" >/dev/null 2>"$work/err" || status=$?
  [[ "$status" == 2 ]] || { echo "status ${status} for $*"; cat "$work/err"; exit 1; }
  [[ "$(wc -l <"$work/err")" == 1 ]] && grep -q -- "$text" "$work/err" || {
    echo "for $*: expected one line with '${text}':"; cat "$work/err"; exit 1; }
}
mkdir "$work/empty"
expect_refusal "no \*.zbfsdump files" --dump "$work/empty"
expect_refusal "--dump needs a directory" --dump
head -c 100 "$work/dump/rank-0.zbfsdump" >"$work/empty/rank-0.zbfsdump"
expect_refusal "malformed buffer: .*rank-0.zbfsdump" --dump "$work/empty"
echo "codec bench on recorded frontiers: ok"
