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

// An owned peeled vertex as the attach step reads it (DistributedForest::PeeledVertex):
// the anchor's position in the gathered anchors' bits (kNoAnchor: a tree component's), its
// parent (input global id), and its sorted and original offsets.
struct PeeledVertexView {
  std::uint64_t anchor_at = 0;
  std::uint64_t parent = 0;
  std::uint32_t offset = 0;
  std::uint32_t original = 0;
};
inline constexpr std::uint64_t kNoAnchor = ~std::uint64_t{0};

// --prune's trees (bfs/distributed_forest.hpp) as a pruned search reads them on the
// target: the owned peeled bits (visited from a pruned search's start), the row group's
// (never reported), each owned vertex's tree height and the vertex it hangs from (global
// sorted id), and the owned peeled vertices.
struct ForestView {
  const std::uint64_t* peeled_bits = nullptr;       // block / 64 words
  const std::uint64_t* row_group_peeled = nullptr;  // target_vertices / 64 words
  const std::uint8_t* heights = nullptr;            // block
  const std::uint64_t* attach = nullptr;            // block
  const PeeledVertexView* peeled = nullptr;
  std::uint64_t num_peeled = 0;
  std::uint64_t anchor_words = 0;  // the gathered anchors' bits, over the world
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
  // The top-down target (row) group's layout, to turn its local ids into global ones on
  // the device: member m's piece is first_piece + m * stride.
  std::uint64_t target_first_piece = 0;
  std::uint64_t target_stride = 1;
  // The bottom-up sources with edges (their bitmap, bottom_up_sources / 64 words), whose
  // frontier bits a device wire gathers masked (nullptr: no gather, one member); and of
  // those, the core's (--prune: a pruned search's mask; nullptr: none).
  const std::uint64_t* source_has_edges = nullptr;
  const std::uint64_t* source_core = nullptr;
  // How id lists cross PCIe (pcie_pricing.hpp): as they are, or as bitpack frames encoded
  // and decoded on the device (device_codec.hpp), always or where the calibration prices
  // them lower: the frontier and the reports on the way out, the gathered frontier and
  // the arrived reports on the way in. Bitmaps cross as they are.
  IdTransfer id_transfer = IdTransfer::kRaw;
  // --prune's trees (nullptr: none; a pruned search runs on the staged exchange).
  const ForestView* forest = nullptr;
};

// A level as the target counts it: this rank's frontier vertices, their edges (when
// asked), and in a pruned search the tallest tree hanging below them.
struct LevelTally {
  std::uint64_t vertices = 0;
  std::uint64_t edges = 0;
  std::uint64_t tallest = 0;
};

// How id lists travel on a device wire (--device-exchange cuda-aware or nccl): as 64-bit
// words (--codec none) or as the device codec's bitpack frames (--codec bitpack), each
// member's own message always as words, as the Exchanger sends it.
enum class WireForm { kIds, kFrames };

// Messages in target memory for a device wire: member m's bytes[m] bytes one after
// another from `data`, carrying ids[m] ids.
struct TargetMessages {
  const std::uint8_t* data = nullptr;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> ids;
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

  // A new search: nothing visited or reported (a `pruned` one: the peeled vertices, of
  // the view's forest), parents -1; an owner of the start (its owned offset) marks it
  // visited and in the frontier, with parent `start_parent`.
  void begin(bool owns_start, std::uint64_t start_offset, std::int64_t start_parent, bool pruned = false);
  // Whether the owned vertex at `offset` is visited (one word read).
  [[nodiscard]] bool visited(std::uint64_t offset);

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
  // asked, their edges (this rank's), and in a pruned search its tallest tree.
  LevelTally finish_level(bool with_edges);
  // A pruned search's attach step, after the core search: every owned peeled vertex whose
  // anchor is set in `anchors` (the gathered anchors' bits, uploaded when `fresh`, else
  // the last upload's) gets its parent. Returns the vertices attached and the deepest
  // level below the root's own tree (its anchor `own_tree`: the chain `links`, global
  // sorted ids from the root to the start, hang it), at least `deepest`.
  std::pair<std::uint64_t, std::uint64_t> attach(std::span<const std::uint64_t> anchors, bool fresh,
                                                 std::uint64_t own_tree, std::span<const std::uint64_t> links,
                                                 std::uint64_t deepest);

  // The same steps for a device wire (device_wire.hpp): what crosses between ranks stays
  // in target memory, and the caller moves it. Arrivals go to the inbox.
  std::uint8_t* inbox(std::uint64_t bytes);
  // Top-down: the frontier's sorted global ids as one message; then expand() of the
  // members' messages gathered in the inbox (member m's: member_bytes[m] bytes), its
  // reports kept in target memory for report_messages.
  TargetMessages frontier_message(WireForm form);
  void expand_inbox(std::span<const std::uint64_t> member_bytes, WireForm form);
  // Bottom-up, as the staged steps go: this rank's frontier bits at its open positions
  // (the sources with edges, less every frontier gathered so far in this search), packed
  // as core/bit_compaction.hpp packs them, and every member's packed bytes (the mask is
  // the same everywhere). unpack_inbox() puts the gathered pieces in place and closes
  // their positions; search_own_gathered() is search_own() on them (gathered) or on this
  // rank's own frontier.
  TargetMessages packed_frontier(std::uint64_t member, std::uint64_t members);
  void unpack_inbox(std::span<const std::uint64_t> member_bytes);
  void search_own_gathered(bool gathered);
  // The ring: ring_start() holds a copy of the visited bits; ring_held() is what goes to
  // the next member, ring_arriving() the room for the previous member's, ring_turn()
  // makes the arrived bits the held ones, and search_ring_piece(member) searches member's
  // piece with them (search_piece), its reports kept in target memory.
  void ring_start();
  [[nodiscard]] std::uint8_t* ring_held();
  [[nodiscard]] std::uint8_t* ring_arriving();
  void ring_turn();
  // The held bits set (the vertices the next shift carries, for the exchange's count).
  [[nodiscard]] std::uint64_t ring_population();
  void search_ring_piece(std::uint64_t member);
  // The reports kept since the step began, by owner (fold member, `members` of them) as
  // global ids; then claim() of the members' messages in the inbox.
  TargetMessages report_messages(std::uint64_t my_member, std::uint64_t members, WireForm form);
  void claim_inbox(std::span<const std::uint64_t> member_bytes, std::uint64_t my_member, WireForm form);

  // The predecessor reduction over a device wire: the requests (the vertices claimed
  // from reports, global ids sorted, by the fold member that reported them, of
  // `members`); the reporter's answers to the requests in the inbox (the parents it
  // reported them with, global ids, in the requests' order: frames of sequences); and the
  // answers in the inbox set the requested vertices' parents.
  TargetMessages parent_requests(std::uint64_t members, WireForm form);
  TargetMessages parent_answers(std::span<const std::uint64_t> member_bytes, WireForm form);
  void set_answered_parents(std::span<const std::uint64_t> member_bytes, WireForm form);

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
  // Top-down over the first `count` sources (column-group local ids) in target memory.
  void expand_sources(std::uint64_t count);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zbfs::cuda_backend
