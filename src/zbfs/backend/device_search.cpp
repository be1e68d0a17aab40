#include "zbfs/backend/device_search.hpp"

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/graph/hub_neighbors.hpp"
#ifdef ZBFS_HAVE_CUDA
#include "zbfs/backend/cuda/device_runtime.hpp"
#endif

namespace zbfs {

struct DeviceSearch::Impl {
  const Csr<std::uint32_t>& graph;
  std::string device_name;
#ifdef ZBFS_HAVE_CUDA
  std::unique_ptr<cuda_backend::DeviceBfs> bfs;
#endif
};

DeviceSearch::DeviceSearch(Backend backend, const Csr<std::uint32_t>& graph, bool force) {
  require_backend(backend);
#ifdef ZBFS_HAVE_CUDA
  impl_ = std::make_unique<Impl>(Impl{graph, "host", nullptr});
  const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
  if (target == ExecutionTarget::kDevice) impl_->device_name = cuda_backend::use_device(0).name;
  // The same hubs and edgeless vertices as the CPU kernel (direction_optimizing_bfs.cpp).
  const std::uint64_t* off = graph.offsets();
  const LargeArray<std::uint32_t> hubs = hub_neighbors<std::uint32_t>(
      off, graph.neighbor_data(), graph.num_vertices(), [off](std::uint32_t w) { return off[w + 1] - off[w]; },
      std::uint32_t{0});
  Bitmap edgeless = rows_with_edges(off, graph.num_vertices());
  std::uint64_t words_with_edges = 0;
  for (std::size_t w = 0; w < edgeless.num_words(); ++w) {
    if (edgeless.word(w) != 0) words_with_edges = w + 1;
    edgeless.word(w) = ~edgeless.word(w);
  }
  const cuda_backend::HostGraphView view{
      graph.num_vertices(), off, graph.neighbor_data(), hubs.data(), graph.original_ids(), edgeless.data(),
      words_with_edges};
  impl_->bfs = std::make_unique<cuda_backend::DeviceBfs>(target, view, force);
  // One search before the timed ones: CUDA loads a module's kernels at their first launch,
  // and that belongs to setting up, not to the first key's search.
  if (graph.num_vertices() > 0 && graph.degree(0) > 0) impl_->bfs->run(graph.original_id(0), 0, BfsOptions{});
#else
  (void)graph;
  (void)force;
#endif
}

DeviceSearch::~DeviceSearch() = default;

BfsStats DeviceSearch::run(std::uint64_t root, const BfsOptions& options) {
#ifdef ZBFS_HAVE_CUDA
  const Csr<std::uint32_t>& graph = impl_->graph;
  if (root >= graph.num_vertices()) throw Error(ExitCode::kFailure, "BFS root out of range");
  return impl_->bfs->run(root, graph.internal_id(root), options);
#else
  (void)root;
  (void)options;
  return {};
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
