// Sorting a set before a delta codec encodes it: the sorted, duplicate-free form of a
// list of ids. No MPI.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zbfs {

// The sorted, duplicate-free form of `ids` into `out`: through a bitmap over their range
// when that is dense enough to beat a comparison sort.
void sort_set(std::span<const std::uint64_t> ids, std::vector<std::uint64_t>& out);

}  // namespace zbfs
