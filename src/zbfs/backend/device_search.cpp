#include "zbfs/backend/device_search.hpp"

#include <optional>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/hub_neighbors.hpp"
#ifdef ZBFS_HAVE_CUDA
#include "zbfs/backend/cuda/device_runtime.hpp"
#endif

namespace zbfs {

struct DeviceSearch::Impl {
  const Csr<std::uint32_t>& graph;
  const PeeledForest<std::uint32_t>* forest;
  std::string device_name;
#ifdef ZBFS_HAVE_CUDA
  std::unique_ptr<cuda_backend::DeviceBfs> bfs;
#endif
};

DeviceSearch::DeviceSearch(Backend backend, const Csr<std::uint32_t>& graph, bool force,
                           const PeeledForest<std::uint32_t>* forest,
                           std::shared_ptr<cuda_backend::ResidentLists> resident, LevelLoop loop) {
  require_backend(backend);
  if (forest != nullptr && forest->num_vertices() != graph.num_vertices())
    throw Error(ExitCode::kFailure, "the peeled forest belongs to another graph");
#ifdef ZBFS_HAVE_CUDA
  impl_ = std::make_unique<Impl>(Impl{graph, forest, "host", nullptr});
  const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
  if (target == ExecutionTarget::kDevice) impl_->device_name = cuda_backend::use_device(0).name;
  // The same edgeless vertices as the CPU kernel (direction_optimizing_bfs.cpp); its hubs
  // (with a forest, core neighbours) the target finds from the lists it holds.
  const std::uint64_t* off = graph.offsets();
  Bitmap edgeless = rows_with_edges(off, graph.num_vertices());
  std::uint64_t words_with_edges = 0;
  for (std::size_t w = 0; w < edgeless.num_words(); ++w) {
    if (edgeless.word(w) != 0) words_with_edges = w + 1;
    edgeless.word(w) = ~edgeless.word(w);
  }
  const cuda_backend::HostGraphView view{graph.num_vertices(),  off,
                                         graph.neighbor_data(), nullptr,
                                         graph.original_ids(),  edgeless.data(),
                                         words_with_edges,      std::move(resident)};
  if (forest != nullptr) {
    // The pruned search's start-visited bits and the attach step's tables, as the CPU
    // kernel has them; uploaded with the graph, then freed here.
    const Bitmap pruned = forest->start_visited(edgeless);
    LargeArray<std::uint32_t> attach_parent;
    LargeArray<std::uint32_t> attach_anchor;
    forest->attach_tables(graph.original_ids(), attach_parent, attach_anchor);
    const cuda_backend::HostForestView trees{
        pruned.data(),        forest->num_peeled(), forest->order().data(),  attach_anchor.data(),
        attach_parent.data(), forest->heights(),    forest->core_vertices(), forest->core_directed_edges()};
    impl_->bfs = std::make_unique<cuda_backend::DeviceBfs>(target, view, force, &trees, loop);
  } else {
    impl_->bfs = std::make_unique<cuda_backend::DeviceBfs>(target, view, force, nullptr, loop);
  }
  // One search before the timed ones: CUDA loads a module's kernels at their first launch,
  // and that belongs to setting up, not to the first key's search.
  if (graph.num_vertices() > 0 && graph.degree(0) > 0) impl_->bfs->run(graph.original_id(0), 0, BfsOptions{});
#else
  (void)graph;
  (void)force;
  (void)resident;
  (void)loop;
#endif
}

DeviceSearch::~DeviceSearch() = default;

BfsStats DeviceSearch::run(std::uint64_t root, const BfsOptions& options) {
#ifdef ZBFS_HAVE_CUDA
  const Csr<std::uint32_t>& graph = impl_->graph;
  if (root >= graph.num_vertices()) throw Error(ExitCode::kFailure, "BFS root out of range");
  const auto internal = static_cast<std::uint32_t>(graph.internal_id(root));
  const PeeledForest<std::uint32_t>* forest = impl_->forest;
  std::vector<std::uint32_t> chain;
  const std::optional<std::uint32_t> core = forest != nullptr ? forest->core_start(internal, chain) : std::nullopt;
  // Without a forest, or from a tree component (searched whole): the plain search.
  if (!core) return impl_->bfs->run(root, internal, options);
  cuda_backend::PrunedStart start;
  start.start = *core;
  start.level = chain.size();
  start.deepest = forest->chain_depth(graph.offsets(), graph.neighbor_data(), chain, *core);
  // The chain's parents point back towards the root (as the CPU kernel's attach leaves them).
  if (!chain.empty()) {
    const auto input = [&graph](std::uint32_t v) { return graph.original_id(v); };
    start.chain_parents.emplace_back(root, static_cast<std::int64_t>(root));
    for (std::size_t i = 1; i < chain.size(); ++i) {
      start.chain_parents.emplace_back(input(chain[i]), static_cast<std::int64_t>(input(chain[i - 1])));
    }
    start.chain_parents.emplace_back(input(*core), static_cast<std::int64_t>(input(chain.back())));
  }
  return impl_->bfs->run_pruned(root, start, options);
#else
  (void)root;
  (void)options;
  return {};
#endif
}

void DeviceSearch::copy_hubs(std::span<std::uint32_t> hubs) {
#ifdef ZBFS_HAVE_CUDA
  impl_->bfs->copy_hubs(hubs);
#else
  (void)hubs;
#endif
}

void DeviceSearch::copy_parents(std::span<std::int64_t> parent) {
#ifdef ZBFS_HAVE_CUDA
  impl_->bfs->copy_parents(parent);
#else
  (void)parent;
#endif
}

const std::string& DeviceSearch::device_name() const { return impl_->device_name; }

HostDeviceTraffic DeviceSearch::traffic() const {
#ifdef ZBFS_HAVE_CUDA
  return impl_->bfs->traffic();
#else
  return {};
#endif
}

}  // namespace zbfs
