// The local work of one rank's distributed BFS on the device backend's target: its pieces
// of the graph, the owned vertices' visited, frontier and next bitmaps and parents, and
// the reported (sent) bits and parents of its row group, all resident in the target's
// memory, and one call per local step. The exchanges between the steps stay with the
// caller (backend/device_distributed_bfs.hpp), which hands each step host vectors: what
// a step needs from other ranks arrives in host memory and is copied in, and what it
// sends is copied out (the staged exchange).
// Local ids are 32-bit; groups and layouts are ProcessGrid's (topology/process_grid.hpp):
// top-down rows are the column group (sources), their neighbours the row group
// (targets); bottom-up rows are the bottom-up target group, their neighbours its source
// group, a contiguous group (a column group, or every vertex in 1D).
// Plain C++ interface; the implementation is distributed_steps.cu.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "zbfs/backend/cuda/pcie_pricing.hpp"
#include "zbfs/backend/execution_target.hpp"

namespace zbfs::cuda_backend {

// A local CSR in host memory.
struct HostCsr {
  std::uint64_t rows = 0;
  const std::uint64_t* offsets = nullptr;    // rows + 1
  const std::uint32_t* neighbors = nullptr;  // offsets[rows]
};

struct DistributedPieceView {
  std::uint64_t block = 0;                            // vertices per piece
  std::uint64_t first_vertex = 0;                     // global id of this rank's first owned vertex
  std::uint64_t target_vertices = 0;                  // the top-down target (row) group's local size
  HostCsr top_down;                                   // rows: column group; neighbours: row group
  HostCsr bottom_up;                                  // rows: bottom-up targets; neighbours: bottom-up sources
  const std::uint32_t* bottom_up_hubs = nullptr;      // each bottom-up row's hub, tested first
  std::uint64_t top_down_my_first = 0;                // this rank's piece in the row group's local ids
  std::uint64_t bottom_up_my_first = 0;               // and in the bottom-up targets' local ids
  std::uint64_t top_down_source_base = 0;             // global id of the column group's local 0
  std::uint64_t bottom_up_source_base = 0;            // global id of the bottom-up sources' local 0
  std::uint64_t bottom_up_sources = 0;                // their local size
  const std::uint32_t* owned_original = nullptr;      // owned sorted offset -> original offset
  const std::uint32_t* top_down_original = nullptr;   // column group sorted -> original local
  const std::uint32_t* bottom_up_original = nullptr;  // bottom-up sources sorted -> original local
  const std::uint64_t* owned_degree = nullptr;        // per owned vertex (the level's edges)
  // How id lists cross PCIe (pcie_pricing.hpp): as they are, or as bitpack frames encoded
  // and decoded on the device (device_codec.hpp), always or where the calibration prices
  // them lower: the frontier and the reports on the way out, the gathered frontier and
  // the arrived reports on the way in. Bitmaps cross as they are.
  IdTransfer id_transfer = IdTransfer::kRaw;
};

// A vertex claimed from another rank's report: the reporting fold member and the
// vertex's owned offset (for the predecessor reduction).
struct ForeignClaim {
  std::uint64_t member = 0;
  std::uint64_t offset = 0;
};

class DistributedSteps {
 public:
  DistributedSteps(ExecutionTarget target, const DistributedPieceView& view);
  ~DistributedSteps();
  DistributedSteps(const DistributedSteps&) = delete;
  DistributedSteps& operator=(const DistributedSteps&) = delete;

  // A new search: nothing visited or reported, parents -1; an owner of the start (its
  // owned offset) marks it visited and in the frontier, with parent `start_parent`.
  void begin(bool owns_start, std::uint64_t start_offset, std::int64_t start_parent);

  // The frontier's vertices as sorted global ids.
  [[nodiscard]] std::vector<std::uint64_t> frontier_ids();
  // The frontier's and the visited bitmap's words (one piece).
  [[nodiscard]] std::vector<std::uint64_t> frontier_words();
  [[nodiscard]] std::vector<std::uint64_t> visited_words();

  // Top-down: expands the gathered frontier (global ids of the column group) through the
  // top-down graph; owned targets are claimed (visited, parent, next), the others are
  // reported once per search: returns their row-group local ids, unsorted.
  std::vector<std::uint64_t> expand(std::span<const std::uint64_t> sources);
  // Bottom-up, as DistributedBfs goes around the fold group's ring: first this rank's own
  // piece of the target rows, every unvisited row looking for a parent in
  // `source_frontier` (the bottom-up sources' bitmap; empty: this rank's own frontier,
  // when it is the whole source group), found rows claimed and folded into visited.
  void search_own(std::span<const std::uint64_t> source_frontier);
  // Then fold member `member`'s piece, against the same frontier, with the visited bits
  // the members before left (`piece_visited`, updated in place with the rows found
  // here): returns the found rows (target-group local ids), reported once each.
  std::vector<std::uint64_t> search_piece(std::uint64_t member, std::span<std::uint64_t> piece_visited);
  // Owners claim reported vertices: ids[offsets[m], offsets[m + 1]) came from fold member m.
  void claim(std::span<const std::uint64_t> ids, std::span<const std::uint64_t> offsets);
  // Ends the level: the next frontier becomes the frontier; returns its vertices and, when
  // asked, their edges (this rank's).
  std::pair<std::uint64_t, std::uint64_t> finish_level(bool with_edges);

  // After the search: the claims made from reports, and the parents (column-group sorted
  // local ids) this rank reported the given vertices (row-group local ids) with.
  [[nodiscard]] std::vector<ForeignClaim> foreign_claims();
  [[nodiscard]] std::vector<std::uint64_t> reported_parents(std::span<const std::uint64_t> targets);
  // parent[owned_original[offsets[i]]] = values[i].
  void set_parents(std::span<const std::uint64_t> offsets, std::span<const std::int64_t> values);
  // The search's parents (one per owned vertex, at original offsets) to host memory.
  void copy_parents(std::span<std::int64_t> parent);

  [[nodiscard]] HostDeviceTraffic traffic() const;
  // The calibration that prices id transfers (IdTransfer::kPriced; zeros otherwise), and
  // how many id lists crossed as frames and as they are.
  [[nodiscard]] const PcieCosts& pcie_costs() const;
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> lists_framed_and_raw() const;
  // Target memory for a view of these sizes (the device memory check).
  static std::uint64_t memory_bytes(const DistributedPieceView& view);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zbfs::cuda_backend
