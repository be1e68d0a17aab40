// Kernel 1 on the device backend's target (--backend cuda; cuda-host runs the same code on
// OpenMP threads): the one-process graph in degree order, the same lists byte for byte as
// build_csr<uint32_t>(edges, CsrOrder::kDegree) gives on the CPU, built where the search
// reads them so that the CPU only produces the tuples.
// - The tuples go to the target as 32-bit pairs, in chunks staged through pinned memory
//   (the host converts the next chunk while the copy engine moves the last one); they stay
//   there when they fit beside the lists, else they are sent again for each pass.
// - Degrees: one atomic add per tuple end that is not a self-loop.
// - The degree order: a stable radix sort of the vertices by descending degree (the CPU's
//   counting sort keeps equal degrees in input order too), and its two tables.
// - The lists, in passes over ranges of rows sized by the target's free memory: each
//   pass selects its entries as 64-bit words (row above neighbour, both in sorted ids),
//   radix-sorts and deduplicates them, and the rows' starts come from a vectorised lower
//   bound of each row's first word; the pass's neighbours follow the last pass's.
// The host gets the lists and the tables back (the search, the counts and the validator
// read them there). A distributed rank builds its piece's lists the same way from the
// (row, neighbour) pairs the shuffle brought it (build_local_lists).
// Plain C++ interface (the implementation is device_kernel1.cu).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "zbfs/backend/execution_target.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs::cuda_backend {

// A pass's entries on the host target (16 bytes each while sorted: 256 MiB), which bounds
// what the host launcher adds to the CPU build's memory.
inline constexpr std::uint64_t kHostPassEntries = std::uint64_t{1} << 24;
// Tuples per chunk sent to the target (8 bytes each as 32-bit pairs: 128 MiB).
inline constexpr std::uint64_t kChunkTuples = std::uint64_t{1} << 24;

// How the build uses the target's memory; tests set it to force several passes or either
// way of holding the tuples.
struct Kernel1Plan {
  enum class Tuples { kAuto, kResident, kStreamed };
  // Entries (directed, duplicates included) sorted by one pass at most; 0: as many as the
  // device's free memory holds (on the host target, kHostPassEntries).
  std::uint64_t pass_entries = 0;
  // kAuto: resident on a device where they leave room for passes of a quarter of the
  // entries, streamed on the host target.
  Tuples tuples = Tuples::kAuto;
  // Tuples per chunk sent; 0: kChunkTuples.
  std::uint64_t chunk_tuples = 0;
  bool force = false;  // --force: the device memory check does not refuse
  // Leave the one-process lists on the target for the search to take over (resident).
  bool keep_on_target = false;
  // How many processes build on the device at once (ranks sharing it): each plans with
  // that share of its free memory.
  unsigned memory_share = 1;
};

// The lists left on the target (resident_lists.cuh; opaque here).
struct ResidentLists;

// Where kernel 1's time on the target went: sending the tuples (or pairs) and counting
// degrees, the degree order (with its tables' way back), the passes that build the lists,
// and the lists' way back to the host.
struct Kernel1Stages {
  double send_s = 0;
  double order_s = 0;
  double lists_s = 0;
  double fetch_s = 0;
};

// The lists and tables the CPU's Csr<uint32_t> holds, in host memory.
struct Kernel1Lists {
  std::uint64_t num_vertices = 0;
  LargeArray<std::uint64_t> offsets;       // num_vertices + 1
  LargeArray<std::uint32_t> neighbors;     // offsets[num_vertices]
  LargeArray<std::uint32_t> tuple_degree;  // by internal id
  LargeArray<std::uint32_t> sorted_of;     // input id -> internal id
  LargeArray<std::uint32_t> original_of;   // internal id -> input id
  HostDeviceTraffic traffic;
  Kernel1Stages stages;
  std::uint64_t passes = 0;
  bool tuples_resident = false;
  // With Kernel1Plan::keep_on_target: the offsets, neighbours and input ids still on the
  // target (DeviceBfs takes them over).
  std::shared_ptr<ResidentLists> resident;
};

// Builds the lists of `edges` (ids below 2^32) on `target`. Throws a usage error when the
// device's memory is short (unless plan.force), and the CPU build's error when a tuple
// names a vertex outside the graph.
Kernel1Lists build_lists(ExecutionTarget target, const InputEdges& edges, const Kernel1Plan& plan = {});

// The same for a rank's piece of a distributed graph (graph/local_csr.hpp's
// build_local_csr): the lists of `num_rows` rows from (row, neighbour) pairs already in
// the rank's sorted local ids, sorted and deduplicated; the pairs are consumed (freed once
// they are on the device for good). No degree order: the tables stay empty.
Kernel1Lists build_local_lists(ExecutionTarget target, std::uint64_t num_rows, std::vector<std::uint32_t>&& rows,
                               std::vector<std::uint32_t>&& cols, const Kernel1Plan& plan = {});

// The target memory the build needs at least, for n vertices and m tuples: the degree
// count's and the order's arrays, or the passes' tables, rows' starts and neighbours (two
// per tuple at most) with a chunk of tuples and the runtime's reserve, whichever is more.
inline std::uint64_t kernel1_min_bytes(std::uint64_t n, std::uint64_t m) {
  const std::uint64_t chunk = 8 * (m < kChunkTuples ? m : kChunkTuples);
  const std::uint64_t ordering = 8 * (n + 1) + 8 * n + 4 * n + 12 * n;
  const std::uint64_t passes = 16 * (n + 1) + 8 * n + 4 * 2 * m;
  return (ordering > passes ? ordering : passes) + chunk + (256ULL << 20);
}

// The same for a rank's `pairs` pairs over `rows` rows: the rows' starts and offsets, the
// neighbours, a chunk of pairs and the reserve.
inline std::uint64_t kernel1_local_min_bytes(std::uint64_t rows, std::uint64_t pairs) {
  const std::uint64_t chunk = 8 * (pairs < kChunkTuples ? pairs : kChunkTuples);
  return 16 * (rows + 2) + 4 * pairs + chunk + (256ULL << 20);
}

// What the host launcher adds to host memory beyond the CPU build's: the target's copy of
// the lists and tables, a chunk and a pass's words, while the host's copy is made.
inline std::uint64_t kernel1_host_target_bytes(std::uint64_t n, std::uint64_t m) {
  return 16 * (n + 1) + 4 * n + 4 * 2 * m + 8 * (m < kChunkTuples ? m : kChunkTuples) +
         16 * (2 * m < kHostPassEntries ? 2 * m : kHostPassEntries);
}
// The same for a rank's piece of `pairs` pairs over `rows` rows, whose pairs the host
// launcher holds until the lists are built.
inline std::uint64_t kernel1_local_host_target_bytes(std::uint64_t rows, std::uint64_t pairs) {
  return 16 * (rows + 2) + 4 * pairs + 8 * (pairs < kChunkTuples ? pairs : kChunkTuples) +
         16 * (pairs < kHostPassEntries ? pairs : kHostPassEntries);
}

}  // namespace zbfs::cuda_backend
