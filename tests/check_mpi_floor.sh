#!/usr/bin/env bash
# mpi/ is the floor: no MPI call, constant or type outside src/zbfs/mpi/ in the library,
# the program or the benchmarks (tests may drive MPI themselves). Comments may name MPI
# functions. Lists the offending lines and exits 1 when there are any.
set -euo pipefail
cd "$1"
found=0
while IFS= read -r hit; do
  code=${hit#*:*:}   # the line's text, after FILE:LINE:
  code=${code%%//*}  # without a trailing comment
  if [[ $code == *MPI_* || $code == *"<mpi.h>"* ]]; then
    echo "raw MPI outside src/zbfs/mpi/: $hit"
    found=1
  fi
done < <(grep -rnE 'MPI_|<mpi\.h>' --include='*.cpp' --include='*.hpp' src apps bench | grep -v '^src/zbfs/mpi/' || true)
if [[ $found -eq 0 ]]; then echo "no raw MPI outside src/zbfs/mpi/"; fi
exit "$found"
