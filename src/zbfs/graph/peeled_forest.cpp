#include "zbfs/graph/peeled_forest.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Appends each thread's items in thread order (with a static schedule over ascending
// indices, the concatenation is ascending too).
template <class V>
void concatenate(std::vector<std::vector<V>>& parts, std::vector<V>& out) {
  out.clear();
  for (std::vector<V>& part : parts) {
    out.insert(out.end(), part.begin(), part.end());
    part.clear();
  }
}

// A round of fewer vertices runs on the calling thread: a long path peels a vertex or two
// a round, and each parallel region's join can wait for a descheduled thread's whole time
// slice where other processes share the cores.
constexpr std::int64_t kParallelRound = 4096;

void raise_to(std::uint8_t& slot, std::uint8_t value) {
  std::atomic_ref<std::uint8_t> ref(slot);
  std::uint8_t seen = ref.load(std::memory_order_relaxed);
  while (seen < value && !ref.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

template <class V>
PeeledForest<V>::PeeledForest(const std::uint64_t* offsets, const V* adjacency, std::uint64_t num_vertices,
                              int max_rounds)
    : peeled_(num_vertices), attach_(num_vertices), height_(num_vertices) {
  if (max_rounds < 1 || max_rounds > 255) throw Error(ExitCode::kFailure, "forest pruning rounds must be 1..255");
  const auto n = static_cast<std::int64_t>(num_vertices);
  // Until a vertex is peeled, attach_ holds the XOR of its remaining neighbours and
  // remaining their count; height_ holds the round it was peeled in (0: not yet).
  LargeArray<V> remaining(num_vertices);
  std::vector<std::vector<V>> parts(static_cast<std::size_t>(omp_get_max_threads()));
  std::vector<V> frontier;
#pragma omp parallel
  {
    std::vector<V>& mine = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto v = static_cast<std::uint64_t>(i);
      V x = 0;
      for (std::uint64_t e = offsets[v]; e < offsets[v + 1]; ++e) x ^= adjacency[e];
      attach_[v] = x;
      remaining[v] = static_cast<V>(offsets[v + 1] - offsets[v]);
      if (remaining[v] == 1) mine.push_back(static_cast<V>(v));
    }
  }
  concatenate(parts, frontier);

  std::vector<std::vector<V>> rounds;
  for (int round = 1; round <= max_rounds && !frontier.empty(); ++round) {
    const auto mark = static_cast<std::uint8_t>(round);
    const auto size = static_cast<std::int64_t>(frontier.size());
#pragma omp parallel for schedule(static) if (size >= kParallelRound)
    for (std::int64_t i = 0; i < size; ++i) {
      height_[frontier[static_cast<std::size_t>(i)]] = mark;
      peeled_.set_atomic(frontier[static_cast<std::size_t>(i)]);
    }
#pragma omp parallel if (size >= kParallelRound)
    {
      std::vector<V>& mine = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < size; ++i) {
        const V v = frontier[static_cast<std::size_t>(i)];
        // Nobody else changes v's entries this round: its only remaining neighbour, if
        // any, is w, and w changes them only when it is peeled in this round too.
        if (remaining[v] == 0) {
          attach_[v] = v;  // the last vertex of a tree component: its root
          continue;
        }
        const V w = attach_[v];
        if (height_[w] == mark) {
          attach_[v] = std::min(v, w);  // the component's last edge: the smaller id is its root
          continue;
        }
        std::atomic_ref<V>(attach_[w]).fetch_xor(v, std::memory_order_relaxed);
        if (std::atomic_ref<V>(remaining[w]).fetch_sub(1, std::memory_order_relaxed) == 2) mine.push_back(w);
      }
    }
    rounds.push_back(std::move(frontier));
    concatenate(parts, frontier);
    std::sort(frontier.begin(), frontier.end());
  }
  remaining = LargeArray<V>();

  // Heights, from the leaves inwards: a round's vertices hang from later rounds' or the core.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) height_[static_cast<std::uint64_t>(i)] = 0;
  for (const std::vector<V>& round : rounds) {
    const auto size = static_cast<std::int64_t>(round.size());
#pragma omp parallel for schedule(static) if (size >= kParallelRound)
    for (std::int64_t i = 0; i < size; ++i) {
      const V v = round[static_cast<std::size_t>(i)];
      if (attach_[v] != v) raise_to(height_[attach_[v]], static_cast<std::uint8_t>(height_[v] + 1));
    }
  }

  std::uint64_t total = 0;
  for (const std::vector<V>& round : rounds) total += round.size();
  order_ = LargeArray<V>(total);
  round_starts_.push_back(0);
  std::uint64_t at = 0;
  for (auto round = rounds.rbegin(); round != rounds.rend(); ++round) {
    std::copy(round->begin(), round->end(), order_.data() + at);
    at += round->size();
    round_starts_.push_back(at);
  }

  std::uint64_t core = 0;
  std::uint64_t core_edges = 0;
#pragma omp parallel for schedule(static) reduction(+ : core, core_edges)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::uint64_t>(i);
    const std::uint64_t degree = offsets[v + 1] - offsets[v];
    if (degree > 0 && !peeled_.test(v)) {
      ++core;
      core_edges += degree;
    }
  }
  core_vertices_ = core;
  core_directed_edges_ = core_edges;
}

template <class V>
Bitmap PeeledForest<V>::start_visited(const Bitmap& edgeless) const {
  if (edgeless.num_words() != peeled_.num_words())
    throw Error(ExitCode::kFailure, "the forest belongs to another graph");
  Bitmap bits(num_vertices());
  for (std::size_t w = 0; w < bits.num_words(); ++w) bits.word(w) = edgeless.word(w) | peeled_.word(w);
  return bits;
}

template <class V>
void PeeledForest<V>::attach_tables(const V* original, LargeArray<V>& parent, LargeArray<V>& anchor) const {
  // The last round first, so the vertex a peeled one hangs from has its anchor already.
  const std::span<const V> order = order_.span();
  parent = LargeArray<V>(order.size());
  anchor = LargeArray<V>(order.size());
  LargeArray<V> anchor_of(num_vertices());
  for (std::size_t round = 0; round + 1 < round_starts_.size(); ++round) {
    const auto first = static_cast<std::int64_t>(round_starts_[round]);
    const auto last = static_cast<std::int64_t>(round_starts_[round + 1]);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = first; i < last; ++i) {
      const auto at = static_cast<std::size_t>(i);
      const V v = order[at];
      const V by = attach_[v];
      // A tree component's root and everything hanging from it have no anchor: the root
      // stands in (a peeled vertex, which the attach step skips). A vertex hangs from one
      // of its own round only as the larger end of a component's last edge, from the root.
      const bool from_root = by == v || (peeled(by) && attach_[by] == by);
      const V a = from_root ? by : (peeled(by) ? anchor_of[by] : by);
      anchor_of[v] = a;
      anchor[at] = a;
      parent[at] = original != nullptr ? original[by] : by;
    }
  }
}

template <class V>
std::optional<V> PeeledForest<V>::core_start(V root, std::vector<V>& chain) const {
  chain.clear();
  V start = root;
  while (peeled(start) && attach_[start] != start) {
    chain.push_back(start);
    start = attach_[start];
  }
  if (peeled(start)) {
    chain.clear();
    return std::nullopt;
  }
  return start;
}

template <class V>
std::uint64_t PeeledForest<V>::chain_depth(const std::uint64_t* offsets, const V* adjacency,
                                           const std::vector<V>& chain, V start) const {
  if (chain.empty()) return height_[start];
  std::uint64_t deepest = chain.size();
  for (std::size_t i = 0; i <= chain.size(); ++i) {
    const V at = i < chain.size() ? chain[i] : start;
    // The trees hanging from `at`, but the one the chain came up through.
    for (std::uint64_t e = offsets[at]; e < offsets[at + 1]; ++e) {
      const V w = adjacency[e];
      if (peeled(w) && attach_[w] == at && (i == 0 || w != chain[i - 1])) {
        deepest = std::max<std::uint64_t>(deepest, i + 1 + height_[w]);
      }
    }
  }
  return deepest;
}

template class PeeledForest<std::uint32_t>;
template class PeeledForest<std::uint64_t>;

}  // namespace zbfs
