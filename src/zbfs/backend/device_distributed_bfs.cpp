#include "zbfs/backend/device_distributed_bfs.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/wire/id_messages.hpp"
#ifdef ZBFS_HAVE_CUDA
#include "zbfs/backend/cuda/device_runtime.hpp"
#include "zbfs/backend/cuda/distributed_steps.hpp"
#endif

namespace zbfs {

#ifdef ZBFS_HAVE_CUDA

namespace {

// Books the copies between host and device memory made while it lives in `phase`.
class BookedCopies {
 public:
  BookedCopies(PhaseMetrics& metrics, Phase phase, const cuda_backend::DistributedSteps& steps)
      : metrics_(metrics), phase_(phase), steps_(steps), before_(steps.traffic()) {}
  ~BookedCopies() {
    const HostDeviceTraffic now = steps_.traffic();
    metrics_.add_device_copies(phase_, now.to_device - before_.to_device, now.to_host - before_.to_host);
  }
  BookedCopies(const BookedCopies&) = delete;
  BookedCopies& operator=(const BookedCopies&) = delete;

 private:
  PhaseMetrics& metrics_;
  Phase phase_;
  const cuda_backend::DistributedSteps& steps_;
  HostDeviceTraffic before_;
};

// A device wire sends ids as they are, or as frames with a codec on the wire.
cuda_backend::WireForm wire_form_of(cuda_backend::IdTransfer transfer) {
  return transfer == cuda_backend::IdTransfer::kRaw ? cuda_backend::WireForm::kIds : cuda_backend::WireForm::kFrames;
}

}  // namespace

// The device's part of the distributed steps (bfs/step_protocol.hpp): each step runs on
// this rank's piece in target memory, and the copies it makes between host and device
// memory are booked to the phase the protocol calls it in. The device's top-down steps
// report ids only (carries_parents() is false): its folds never send updates.
struct DeviceDistributedBfs::Steps final : cuda_backend::DistributedSteps, LocalSteps {
  Steps(ExecutionTarget target, const cuda_backend::DistributedPieceView& view, const ProcessGrid& grid,
        const DistributedGraph<std::uint32_t>& graph, PhaseMetrics& metrics,
        std::vector<std::uint64_t> source_has_edges, std::vector<std::uint64_t> source_core,
        DistributedPrunedSearch<std::uint32_t>& pruning)
      : DistributedSteps(target, view),
        grid_(grid),
        graph_(graph),
        metrics_(metrics),
        source_has_edges_(std::move(source_has_edges)),
        source_core_(std::move(source_core)),
        pruning_(pruning) {}

  [[nodiscard]] bool carries_parents() const override { return false; }
  std::vector<std::uint64_t> frontier_ids() override {
    const BookedCopies copies(metrics_, Phase::kColumnExchange, *this);
    return DistributedSteps::frontier_ids();
  }
  OutgoingIds expand(const TraversalLayout& layout, std::span<const std::uint64_t> sources, const FoldMode&) override {
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *this);
    const std::vector<std::uint64_t> reported = DistributedSteps::expand(sources);
    // Reported target-group local ids, by owner (member = local / block), as global ids.
    const std::uint64_t block = grid_.blocks().block();
    OutgoingBuilder builder(layout.fold->size(), 1);
    for (const std::uint64_t local : reported) {
      builder.bucket(0, static_cast<int>(local / block)).push_back(layout.target.to_global(local));
    }
    return builder.finish();
  }
  void claim(const IncomingIds& incoming, const FoldMode&) override {
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *this);
    DistributedSteps::claim(incoming.ids, incoming.offsets);
  }
  void claim_updates(std::span<const KeyedItem>, std::uint64_t) override { ids_only(); }
  void begin_pipelined(int) override { ids_only(); }
  std::size_t expand_chunk(const TraversalLayout&, std::span<const std::uint64_t>, std::size_t, std::size_t,
                           const FoldMode&) override {
    ids_only();
    return 0;
  }
  [[nodiscard]] std::size_t waiting(std::size_t) const override { return 0; }
  std::size_t drain(std::size_t, std::vector<KeyedItem>&) override { return 0; }

  std::span<const std::uint64_t> frontier_words() override {
    const BookedCopies copies(metrics_, Phase::kColumnExchange, *this);
    frontier_copy_ = DistributedSteps::frontier_words();
    return frontier_copy_;
  }
  std::span<const std::uint64_t> open_positions() override { return pruned ? source_core_ : source_has_edges_; }
  void search_own(const TraversalLayout&, std::span<const std::uint64_t> frontier) override {
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *this);
    DistributedSteps::search_own(frontier);
  }
  void copy_visited(std::span<std::uint64_t> held) override {
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *this);
    const std::vector<std::uint64_t> visited = visited_words();
    std::copy_n(visited.begin(), std::min(visited.size(), held.size()), held.begin());
  }
  void search_piece(const TraversalLayout& layout, std::span<const std::uint64_t>, int member,
                    std::span<std::uint64_t> piece_visited, OutgoingBuilder& builder) override {
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *this);
    const std::vector<std::uint64_t> found =
        DistributedSteps::search_piece(static_cast<std::uint64_t>(member), piece_visited);
    std::vector<std::uint64_t>& bucket = builder.bucket(0, member);
    for (const std::uint64_t local : found) bucket.push_back(layout.target.to_global(local));
  }
  LevelCounts count_level(bool with_edges) override {
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *this);
    const cuda_backend::LevelTally tally = finish_level(with_edges);
    if (pruned) pruning_.level_counted(tally.vertices, tally.tallest);
    return {tally.vertices, tally.edges};
  }

  OutgoingIds foreign_claims() override {
    const BookedCopies copies(metrics_, Phase::kPredecessorReduction, *this);
    const std::uint64_t first = grid_.my_first_vertex();
    OutgoingBuilder builder(grid_.row().size(), 1);
    for (const cuda_backend::ForeignClaim& c : DistributedSteps::foreign_claims()) {
      builder.bucket(0, static_cast<int>(c.member)).push_back(first + c.offset);
    }
    return builder.finish();
  }
  // The reporter looks the parents up on its device in one batch.
  void reported_parents(std::span<const std::uint64_t> vertices, std::span<std::uint64_t> parents) override {
    const BookedCopies copies(metrics_, Phase::kPredecessorReduction, *this);
    const PieceGroup& targets = grid_.row_group();
    const PieceGroup& sources = grid_.col_group();
    const std::span<const std::uint32_t> col_original = graph_.col_group_original();
    std::vector<std::uint64_t> asked(vertices.size());
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      // Only vertices of this row group were reported from here; another would index
      // past the table of reported parents on the device.
      if (!targets.contains(vertices[i])) {
        throw Error(ExitCode::kFailure, "predecessor reduction: asked for a vertex this rank never reported");
      }
      asked[i] = targets.to_local(vertices[i]);
    }
    const std::vector<std::uint64_t> answers = DistributedSteps::reported_parents(asked);
    for (std::size_t i = 0; i < answers.size(); ++i) parents[i] = sources.to_global(col_original[answers[i]]);
  }
  void set_parents(std::span<const std::uint64_t> vertices, std::span<const std::uint64_t> parents) override {
    const BookedCopies copies(metrics_, Phase::kPredecessorReduction, *this);
    const std::uint64_t first = grid_.my_first_vertex();
    std::vector<std::uint64_t> offsets(vertices.size());
    std::vector<std::int64_t> values(vertices.size());
    for (std::size_t k = 0; k < vertices.size(); ++k) {
      offsets[k] = vertices[k] - first;
      values[k] = static_cast<std::int64_t>(parents[k]);
    }
    DistributedSteps::set_parents(offsets, values);
  }

  [[noreturn]] static void ids_only() {
    throw Error(ExitCode::kFailure, "the device's distributed steps fold ids only, not updates");
  }

  const ProcessGrid& grid_;
  const DistributedGraph<std::uint32_t>& graph_;
  PhaseMetrics& metrics_;
  // The bottom-up gathers' mask: the source group's vertices with edges (empty when the
  // source group is this rank's piece alone), and of those the core's (--prune).
  std::vector<std::uint64_t> source_has_edges_;
  std::vector<std::uint64_t> source_core_;
  std::vector<std::uint64_t> frontier_copy_;  // frontier_words()'s, in host memory
  DistributedPrunedSearch<std::uint32_t>& pruning_;
  bool pruned = false;  // the current search
};

DeviceDistributedBfs::DeviceDistributedBfs(Backend backend, int device, const ProcessGrid& grid,
                                           const DistributedGraph<std::uint32_t>& graph, Exchanger& exchanger,
                                           PhaseMetrics& metrics, bool force, cuda_backend::IdTransfer id_transfer,
                                           DeviceExchange exchange, const DistributedForest<std::uint32_t>* forest)
    : grid_(grid),
      graph_(graph),
      exchanger_(exchanger),
      metrics_(metrics),
      device_name_("host"),
      id_transfer_(id_transfer),
      exchange_(exchange),
      pruning_(grid, graph, forest, exchanger, metrics) {
  if (exchange != DeviceExchange::kStaged && id_transfer == cuda_backend::IdTransfer::kPriced) {
    throw_usage_error("--device-exchange " + std::string(to_string(exchange)) +
                      " sends ids as they are (--codec none) or as bitpack frames (--codec bitpack)");
  }
  const TraversalLayout top_down = grid.top_down();
  const TraversalLayout bottom_up = grid.bottom_up();
  const LocalCsr<std::uint32_t>& forward = graph.for_layout(top_down);
  const LocalCsr<std::uint32_t>& backward = graph.for_layout(bottom_up);
  const std::uint64_t block = grid.blocks().block();
  cuda_backend::DistributedPieceView view;
  view.block = block;
  view.first_vertex = grid.my_first_vertex();
  view.target_vertices = grid.row_group().local_size();
  view.top_down = {forward.num_rows(), forward.offsets(), forward.neighbor_data()};
  view.bottom_up = {backward.num_rows(), backward.offsets(), backward.neighbor_data()};
  view.top_down_my_first = static_cast<std::uint64_t>(top_down.fold->rank()) * block;
  view.bottom_up_my_first = static_cast<std::uint64_t>(bottom_up.fold->rank()) * block;
  view.top_down_source_base = top_down.source.to_global(0);
  view.bottom_up_source_base = bottom_up.source.to_global(0);
  view.bottom_up_sources = bottom_up.source.local_size();
  view.owned_original = graph.order().original_offsets().data();
  view.top_down_original = graph.col_group_original().data();
  view.bottom_up_original =
      grid_layout(grid.partition()) ? graph.col_group_original().data() : graph.row_group_original().data();
  view.owned_degree = graph.owned_degree().data();
  // The same hubs as the CPU backend's (collective along the bottom-up expand group): with
  // a forest, a core neighbour.
  const LargeArray<std::uint32_t> hubs =
      bottom_up_hubs(graph, bottom_up, [forest](std::size_t v) { return forest != nullptr && forest->peeled(v); });
  view.bottom_up_hubs = hubs.data();
  view.id_transfer = id_transfer;
  view.target_first_piece = static_cast<std::uint64_t>(top_down.target.piece_of_member(0));
  view.target_stride =
      static_cast<std::uint64_t>(top_down.target.piece_of_member(1) - top_down.target.piece_of_member(0));
  const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
  const ScopedPhase phase(metrics, Phase::kConstruction);
  std::vector<std::uint64_t> source_has_edges;
  std::vector<std::uint64_t> source_core;
  if (bottom_up.expand->size() > 1) {
    const auto gather = [&](bool core_only) {
      std::vector<std::uint64_t> bits(static_cast<std::size_t>(bottom_up.source.words()), 0);
      gather_has_edges(
          graph, *bottom_up.expand, grid.blocks().words_per_block(),
          [forest, core_only](std::size_t v) { return core_only && forest->peeled(v); },
          std::span<std::uint64_t>(bits));
      return bits;
    };
    source_has_edges = gather(false);
    view.source_has_edges = source_has_edges.data();
    if (forest != nullptr) {
      source_core = gather(true);
      view.source_core = source_core.data();
    }
  }
  // --prune's trees, as the attach step reads them.
  std::vector<cuda_backend::PeeledVertexView> peeled;
  cuda_backend::ForestView trees;
  if (forest != nullptr) {
    for (const auto& p : forest->peeled_vertices()) peeled.push_back({p.anchor_at, p.parent, p.offset, p.original});
    trees = {forest->peeled_bits().data(),
             forest->row_group_peeled().data(),
             forest->heights().data(),
             forest->attach_ids().data(),
             peeled.data(),
             peeled.size(),
             forest->anchor_mask().size()};
    view.forest = &trees;
  }
  // Every rank checks its device, and all refuse together if one lacks the memory: with
  // the view whole (the masks and --prune's tables counted), before anything is allocated.
  std::uint64_t short_of_memory = 0;
  std::string why;
  if (target == ExecutionTarget::kDevice) {
    const cuda_backend::DeviceInfo info = cuda_backend::use_device(device);
    device_name_ = info.name;
    try {
      require_device_memory(cuda_backend::DistributedSteps::memory_bytes(view), info.free_bytes, info.total_bytes,
                            force);
    } catch (const Error& e) {
      short_of_memory = 1;
      why = e.what();
    }
  }
  if (grid.world().allreduce(short_of_memory, ReduceOp::kMax) != 0) {
    throw_usage_error(!why.empty() ? "rank " + std::to_string(grid.rank()) + ": " + why
                                   : "a rank's device is short of memory for its piece of the graph");
  }
  static_assert(cuda_backend::kNoAnchor == DistributedForest<std::uint32_t>::kNone);
  steps_ = std::make_unique<Steps>(target, view, grid, graph, metrics, std::move(source_has_edges),
                                   std::move(source_core), pruning_);
  protocol_ = std::make_unique<StepProtocol>(grid, exchanger, metrics, *steps_);
  if (exchange != DeviceExchange::kStaged) wire_ = make_device_wire(exchange, target);
  metrics.add_device_copies(Phase::kConstruction, steps_->traffic().to_device, steps_->traffic().to_host);
}

DeviceDistributedBfs::~DeviceDistributedBfs() = default;

HostDeviceTraffic DeviceDistributedBfs::traffic() const { return steps_->traffic(); }

cuda_backend::PcieCosts DeviceDistributedBfs::pcie_costs() const { return steps_->pcie_costs(); }

std::pair<std::uint64_t, std::uint64_t> DeviceDistributedBfs::lists_framed_and_raw() const {
  return steps_->lists_framed_and_raw();
}

void DeviceDistributedBfs::copy_parents(std::span<std::int64_t> parent) {
  // The tree comes to host memory for the counts, the result files and the validator.
  const BookedCopies copies(metrics_, Phase::kOther, *steps_);
  steps_->copy_parents(parent);
}

void DeviceDistributedBfs::warm_up() {
  std::uint64_t root = 0;
  if (grid_.rank() == 0 && graph_.owned_degree().size() > 0) root = graph_.order().original_offset(0);
  root = grid_.world().allreduce(root, ReduceOp::kMax);
  if (root >= grid_.blocks().num_vertices()) root = 0;  // a piece of padding only
  const PhaseMetrics counters = metrics_;
  run(root, BfsOptions{});
  metrics_ = counters;
}

BfsStats DeviceDistributedBfs::run(std::uint64_t root, const BfsOptions& options) {
  if (root >= grid_.blocks().num_vertices()) {
    throw Error(ExitCode::kUsage, "search key " + std::to_string(root) + " is not a vertex", ErrorScope::kAllRanks);
  }
  BfsStats stats;
  Stopwatch clock;
  const std::uint64_t first = grid_.my_first_vertex();
  // The root, or a pruned search's core vertex (the chain walk asks the owner whether the
  // last search reached it, before this one clears the visited bits).
  const DistributedPrunedSearch<std::uint32_t>::Start start =
      pruning_.find_start(root, [this](std::uint64_t offset) { return steps_->visited(offset); });
  pruning_.forget_anchors();
  steps_->pruned = start.pruned;
  const bool owner = grid_.owns(start.id);
  const std::uint64_t offset = owner ? start.id - first : 0;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *steps_);
    steps_->begin(owner, offset, static_cast<std::int64_t>(start.start_parent()), start.pruned);
    protocol_->begin_search();
  }
  stats.init_time_s = clock.elapsed_s();
  std::uint64_t root_degree = start.degree.value_or(0);
  if (!start.degree) {
    root_degree = owner ? graph_.owned_degree()[offset] : 0;
    const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
    root_degree = grid_.world().allreduce(root_degree, ReduceOp::kSum);
  }
  pruning_.begin_levels(start);
  const DistributedForest<std::uint32_t>* forest = pruning_.forest();
  LevelCounts level{1, root_degree};
  DirectionPolicy policy(options, start.pruned ? forest->core_vertices() : grid_.blocks().num_vertices(),
                         start.pruned ? forest->core_directed_edges() : graph_.global_directed_edges(), root_degree);
  if (!wire_) {
    protocol_->run(policy, level, stats);
    if (start.pruned) attach_trees(root, start, stats);
    return stats;
  }
  run_levels(
      policy, level, stats, [&] { return top_down_on_wire(); }, [&] { return bottom_up_on_wire(); });
  // The reduction's requests and answers stay in device memory, unless a route is to
  // relay and merge them (the exchanger's read).
  if (exchanger_.traits().relays_updates) {
    protocol_->reduce_predecessors();
  } else {
    reduce_on_wire();
  }
  // The attach step's few collectives (the anchors' gather, the counts) go through the
  // host exchanger, as on the staged exchange.
  if (start.pruned) attach_trees(root, start, stats);
  return stats;
}

void DeviceDistributedBfs::attach_trees(std::uint64_t root, const DistributedPrunedSearch<std::uint32_t>::Start& start,
                                        BfsStats& stats) {
  const Stopwatch clock;
  std::vector<std::uint64_t> visited;
  if (!start.anchors_known) {
    const BookedCopies copies(metrics_, Phase::kColumnExchange, *steps_);
    visited = steps_->visited_words();
  }
  const std::span<const std::uint64_t> anchors = pruning_.anchors_reached(start, visited);
  std::pair<std::uint64_t, std::uint64_t> tally;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *steps_);
    std::vector<std::uint64_t> links;
    for (const auto& link : start.chain) links.push_back(link.id);
    links.push_back(start.id);
    tally = steps_->attach(anchors, !start.anchors_known, pruning_.own_tree_anchor(start), links, pruning_.deepest());
    std::vector<std::uint64_t> offsets;
    std::vector<std::int64_t> parents;
    for (const auto& [offset, by] : pruning_.chain_parents(start, root)) {
      offsets.push_back(offset);
      parents.push_back(static_cast<std::int64_t>(by));
    }
    steps_->cuda_backend::DistributedSteps::set_parents(offsets, parents);
  }
  pruning_.finish(start, tally.first, tally.second, clock, stats);
}

void DeviceDistributedBfs::book_wire(std::uint64_t ids_to_others, std::uint64_t raw_bytes, std::uint64_t wire_bytes,
                                     std::uint64_t frames) {
  metrics_.add_ids(ids_to_others);
  if (id_transfer_ == cuda_backend::IdTransfer::kRaw) return;
  metrics_.add_codec_work(raw_bytes, wire_bytes, 0, 0);
  for (std::uint64_t f = 0; f < frames; ++f) metrics_.add_frame(CodecId::kBitpack);
}

void DeviceDistributedBfs::book_messages(const Communicator& comm, const cuda_backend::TargetMessages& sent) {
  if (comm.size() == 1) return;
  std::uint64_t ids = 0;
  std::uint64_t bytes = 0;
  std::uint64_t frames = 0;
  for (std::size_t m = 0; m < sent.ids.size(); ++m) {
    if (m == static_cast<std::size_t>(comm.rank())) continue;
    ids += sent.ids[m];
    bytes += sent.bytes[m];
    frames += sent.ids[m] > 0 ? 1 : 0;
  }
  book_wire(ids, 8 * ids, bytes, frames);
}

DeviceDistributedBfs::LevelCounts DeviceDistributedBfs::top_down_on_wire() {
  const TraversalLayout layout = grid_.top_down();
  const Communicator& expand = *layout.expand;
  std::vector<std::uint64_t> arrived;
  {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    const BookedCopies copies(metrics_, Phase::kColumnExchange, *steps_);
    const cuda_backend::TargetMessages mine = steps_->frontier_message(wire_form_of(id_transfer_));
    arrived = wire_all_gather(*wire_, expand, mine.data, mine.bytes[0],
                              [&](std::uint64_t bytes) { return steps_->inbox(bytes); });
    if (expand.size() > 1) {
      const auto peers = static_cast<std::uint64_t>(expand.size() - 1);
      book_wire(peers * mine.ids[0], peers * 8 * mine.ids[0], peers * mine.bytes[0], mine.ids[0] > 0 ? 1 : 0);
    }
  }
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *steps_);
    steps_->expand_inbox(arrived, wire_form_of(id_transfer_));
  }
  return fold_on_wire(layout, true);
}

DeviceDistributedBfs::LevelCounts DeviceDistributedBfs::bottom_up_on_wire() {
  const TraversalLayout layout = grid_.bottom_up();
  const Communicator& expand = *layout.expand;
  const bool gathered = expand.size() > 1;
  if (gathered) {
    // Masked, as the staged exchange gathers it: only the positions that can still change.
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    const BookedCopies copies(metrics_, Phase::kColumnExchange, *steps_);
    const cuda_backend::TargetMessages mine =
        steps_->packed_frontier(static_cast<std::uint64_t>(expand.rank()), static_cast<std::uint64_t>(expand.size()));
    std::uint64_t total = 0;
    for (const std::uint64_t b : mine.bytes) total += b;
    wire_all_gather_known(*wire_, expand, mine.data, mine.bytes, steps_->inbox(total));
    metrics_.add_ids(static_cast<std::uint64_t>(expand.size() - 1) * mine.ids[static_cast<std::size_t>(expand.rank())]);
    steps_->unpack_inbox(mine.bytes);
  }
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *steps_);
    steps_->search_own_gathered(gathered);
  }
  const Communicator& fold_comm = *layout.fold;
  const int members = fold_comm.size();
  if (members > 1) {
    {
      const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
      steps_->ring_start();
    }
    for (int k = 1; k < members; ++k) {
      {
        const ScopedPhase phase(metrics_, Phase::kRowExchange);
        metrics_.add_ids(steps_->ring_population());
        wire_shift(*wire_, fold_comm, steps_->ring_held(), steps_->ring_arriving(), grid_.blocks().block() / 8);
      }
      steps_->ring_turn();
      const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
      const BookedCopies copies(metrics_, Phase::kLocalExpansion, *steps_);
      steps_->search_ring_piece(static_cast<std::uint64_t>((fold_comm.rank() + members - k) % members));
    }
  }
  return fold_on_wire(layout, false);
}

DeviceDistributedBfs::LevelCounts DeviceDistributedBfs::fold_on_wire(const TraversalLayout& layout, bool with_edges) {
  const Communicator& fold_comm = *layout.fold;
  const auto me = static_cast<std::size_t>(fold_comm.rank());
  std::vector<std::uint64_t> arrived;
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    const BookedCopies copies(metrics_, Phase::kRowExchange, *steps_);
    const cuda_backend::TargetMessages out =
        steps_->report_messages(me, static_cast<std::uint64_t>(fold_comm.size()), wire_form_of(id_transfer_));
    arrived = wire_all_to_all(*wire_, fold_comm, out.data, out.bytes,
                              [&](std::uint64_t bytes) { return steps_->inbox(bytes); });
    book_messages(fold_comm, out);
  }
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const BookedCopies copies(metrics_, Phase::kLocalExpansion, *steps_);
    steps_->claim_inbox(arrived, me, wire_form_of(id_transfer_));
  }
  return protocol_->finish_level(with_edges);
}

void DeviceDistributedBfs::reduce_on_wire() {
  const ScopedPhase phase(metrics_, Phase::kPredecessorReduction);
  const BookedCopies copies(metrics_, Phase::kPredecessorReduction, *steps_);
  const Communicator& row = grid_.row();
  if (row.size() == 1) return;
  const cuda_backend::TargetMessages requests =
      steps_->parent_requests(static_cast<std::uint64_t>(row.size()), wire_form_of(id_transfer_));
  const std::vector<std::uint64_t> asked = wire_all_to_all(*wire_, row, requests.data, requests.bytes,
                                                           [&](std::uint64_t bytes) { return steps_->inbox(bytes); });
  book_messages(row, requests);
  const cuda_backend::TargetMessages answers = steps_->parent_answers(asked, wire_form_of(id_transfer_));
  const std::vector<std::uint64_t> answered = wire_all_to_all(
      *wire_, row, answers.data, answers.bytes, [&](std::uint64_t bytes) { return steps_->inbox(bytes); });
  book_messages(row, answers);
  steps_->set_answered_parents(answered, wire_form_of(id_transfer_));
}

#else

// A build without CUDA: require_backend refuses every device backend.
DeviceDistributedBfs::DeviceDistributedBfs(Backend backend, int, const ProcessGrid& grid,
                                           const DistributedGraph<std::uint32_t>& graph, Exchanger& exchanger,
                                           PhaseMetrics& metrics, bool, cuda_backend::IdTransfer id_transfer,
                                           DeviceExchange exchange, const DistributedForest<std::uint32_t>* forest)
    : grid_(grid),
      graph_(graph),
      exchanger_(exchanger),
      metrics_(metrics),
      id_transfer_(id_transfer),
      exchange_(exchange),
      pruning_(grid, graph, forest, exchanger, metrics) {
  require_backend_built(backend);
  require_backend_built(Backend::kCuda);
}

struct DeviceDistributedBfs::Steps {};

DeviceDistributedBfs::~DeviceDistributedBfs() = default;

HostDeviceTraffic DeviceDistributedBfs::traffic() const { return {}; }

void DeviceDistributedBfs::copy_parents(std::span<std::int64_t>) {}

BfsStats DeviceDistributedBfs::run(std::uint64_t, const BfsOptions&) { return {}; }

void DeviceDistributedBfs::warm_up() {}

cuda_backend::PcieCosts DeviceDistributedBfs::pcie_costs() const { return {}; }

std::pair<std::uint64_t, std::uint64_t> DeviceDistributedBfs::lists_framed_and_raw() const { return {0, 0}; }

#endif

}  // namespace zbfs
