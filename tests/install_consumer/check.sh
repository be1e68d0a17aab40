#!/usr/bin/env bash
# Installs the built zbfs into a scratch prefix, then configures, builds and runs a
# consumer project that finds it with find_package(zbfs).
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
cmake -S "$source_dir" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/build" -j 2 >/dev/null
"$scratch/build/consumer"
test -x "$scratch/prefix/bin/zbfs"
