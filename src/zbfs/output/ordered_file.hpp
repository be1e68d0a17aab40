// Writing one file from all ranks at once: every rank contributes a part, the parts are
// laid out by a position each rank names (rank order, or the order of the vertex pieces),
// after a header from rank 0. Rank 0 creates PATH.partial and sets the whole size aside;
// every rank writes its part there (pwrite, every byte count checked) and syncs it; once
// every rank succeeded, rank 0 checks the size and renames the file over PATH. On any
// failure the partial file is removed and every rank throws the same one-line error
// naming PATH and the reason (exit status 1): no failed run leaves a half-written file
// under the name asked for, and an older PATH stays as it was. A symbolic link PATH is
// followed (its target is replaced, the link stays). A device, FIFO or socket PATH (on
// rank 0's node) is written in place as one stream by rank 0, the parts sent to it in
// position order; a write error there (a full device) ends every rank the same way.
#pragma once

#include <span>
#include <string>

#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

// Collective. `position`: this rank's place among the parts (a permutation of 0..P-1
// over the ranks). `header` is used on rank 0 only.
void write_ordered_file(const Communicator& world, const std::string& path, std::span<const char> header,
                        std::span<const char> mine, int position);

}  // namespace zbfs
