// Writing one file from all ranks at once (MPI-IO): every rank contributes a part, the
// parts are laid out by a position each rank names (rank order, or the order of the
// vertex pieces), after a header from rank 0. The data goes to PATH.partial, which is
// renamed to PATH once every rank's write succeeded and removed otherwise: a failed run
// never leaves a half-written file under the name asked for.
#pragma once

#include <span>
#include <string>

#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

// Collective. `position`: this rank's place among the parts (a permutation of 0..P-1
// over the ranks). `header` is used on rank 0 only. Throws a usage error (all ranks
// alike) when the file cannot be written.
void write_ordered_file(const Communicator& world, const std::string& path, std::span<const char> header,
                        std::span<const char> mine, int position);

}  // namespace zbfs
