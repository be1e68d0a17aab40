#include "zbfs/bfs/distributed_forest.hpp"

#include <algorithm>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Pairs of words to their owners, one all-to-all: items[d] for world rank d, each pair
// (a vertex of d, a value) as two words.
std::vector<std::pair<std::uint64_t, std::uint64_t>> send_pairs(Exchanger& exchanger, const Communicator& world,
                                                                const std::vector<std::vector<std::uint64_t>>& items) {
  OutgoingIds outgoing;
  outgoing.counts.resize(items.size());
  for (std::size_t d = 0; d < items.size(); ++d) {
    outgoing.counts[d] = items[d].size();
    outgoing.ids.insert(outgoing.ids.end(), items[d].begin(), items[d].end());
  }
  const IncomingIds incoming = exchanger.all_to_all(world, outgoing, IdsAre::kSequence);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (int s = 0; s < incoming.num_sources(); ++s) {
    const std::span<const std::uint64_t> words = incoming.from(s);
    if (words.size() % 2 != 0) throw Error(ExitCode::kFailure, "forest pruning: a message of odd length");
    for (std::size_t i = 0; i < words.size(); i += 2) pairs.emplace_back(words[i], words[i + 1]);
  }
  return pairs;
}

// Queues the pair (vertex, value) for the vertex's owner.
void push_pair(std::vector<std::vector<std::uint64_t>>& items, int owner, std::uint64_t vertex, std::uint64_t value) {
  std::vector<std::uint64_t>& to = items[static_cast<std::size_t>(owner)];
  to.push_back(vertex);
  to.push_back(value);
}

}  // namespace

template <class V>
DistributedForest<V>::DistributedForest(const ProcessGrid& grid, const DistributedGraph<V>& graph, Exchanger& exchanger,
                                        int max_rounds)
    : grid_(grid),
      block_(grid.blocks().block()),
      first_vertex_(grid.my_first_vertex()),
      peeled_(block_),
      attach_(block_),
      attach_original_(block_),
      anchor_(block_),
      height_(block_),
      has_trees_(block_) {
  if (max_rounds < 1 || max_rounds > 255) throw Error(ExitCode::kFailure, "forest pruning rounds must be 1..255");
  const std::vector<std::vector<V>> rounds = peel(graph, exchanger, max_rounds);
  rounds_ = static_cast<int>(rounds.size());
  raise_heights(rounds, exchanger);
  find_anchors(rounds, graph, exchanger);

  const Communicator& world = grid.world();
  const std::span<const std::uint64_t> degree = graph.owned_degree();
  anchor_mask_.assign(static_cast<std::size_t>(world.size()) * grid.blocks().words_per_block(), 0);
  std::uint64_t counts[3] = {0, 0, 0};  // peeled, core vertices, core directed edges
  for (std::uint64_t o = 0; o < block_; ++o) {
    if (height_[o] > 0) has_trees_.set(o);
    if (peeled_.test(o)) {
      ++counts[0];
      if (anchor_[o] != kNone) {
        const std::uint64_t at = anchor_position(anchor_[o]);
        anchor_mask_[at / 64] |= std::uint64_t{1} << (at % 64);
      }
    } else if (degree[o] > 0) {
      ++counts[1];
      counts[2] += degree[o];
    }
  }
  // The peeled vertices in original order (sorted offsets read at random, once).
  peeled_vertices_ = LargeArray<PeeledVertex>(counts[0]);
  const std::span<const V> sorted_of = graph.order().sorted_offsets();
  for (std::uint64_t i = 0, k = 0; i < block_; ++i) {
    const V o = sorted_of[i];
    if (!peeled_.test(o)) continue;
    peeled_vertices_[k++] = {anchor_[o] == kNone ? kNone : anchor_position(anchor_[o]), attach_original_[o], o,
                             static_cast<V>(i)};
  }
  anchor_ = LargeArray<std::uint64_t>();  // searches read the positions
  world.allreduce(std::span<std::uint64_t>(anchor_mask_), ReduceOp::kBitOr);
  world.allreduce(std::span<std::uint64_t>(counts), ReduceOp::kSum);
  num_peeled_ = counts[0];
  core_vertices_ = counts[1];
  core_directed_edges_ = counts[2];

  row_group_peeled_ = Bitmap(grid.row_group().local_size());
  grid.row().allgather(std::span<const std::uint64_t>(peeled_.data(), peeled_.num_words()),
                       std::span<std::uint64_t>(row_group_peeled_.data(), row_group_peeled_.num_words()));
}

template <class V>
std::uint64_t DistributedForest<V>::anchor_position(std::uint64_t global) const {
  const VertexBlocks& blocks = grid_.blocks();
  const int piece = blocks.piece_of(global);
  return static_cast<std::uint64_t>(grid_.owner_of(global)) * block_ + (global - blocks.first_vertex(piece));
}

template <class V>
std::vector<std::vector<V>> DistributedForest<V>::peel(const DistributedGraph<V>& graph, Exchanger& exchanger,
                                                       int max_rounds) {
  const Communicator& world = grid_.world();
  // Each owned vertex's remaining neighbours: their count, and their XOR, which is the
  // last one once the count is 1. A forward row holds the neighbours in this rank's row
  // group; the processor column's rows together hold them all.
  const TraversalLayout layout = grid_.top_down();
  const LocalCsr<V>& forward = graph.forward();
  std::vector<std::uint64_t> row_xor(static_cast<std::size_t>(layout.source.local_size()), 0);
  const auto rows = static_cast<std::int64_t>(forward.num_rows());
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t r = 0; r < rows; ++r) {
    std::uint64_t x = 0;
    for (const V neighbour : forward.neighbors(static_cast<std::uint64_t>(r))) x ^= layout.target.to_global(neighbour);
    row_xor[static_cast<std::size_t>(r)] = x;
  }
  if (layout.expand->size() > 1) layout.expand->allreduce(std::span<std::uint64_t>(row_xor), ReduceOp::kBitXor);
  const std::uint64_t my_first_row = layout.source.to_local(first_vertex_);
  LargeArray<std::uint64_t>& remaining_xor = attach_;  // until a vertex is peeled
  LargeArray<std::uint64_t> remaining(block_);
  const std::span<const std::uint64_t> degree = graph.owned_degree();
  std::vector<V> frontier;
  for (std::uint64_t o = 0; o < block_; ++o) {
    remaining_xor[o] = row_xor[my_first_row + o];
    remaining[o] = degree[o];
    if (degree[o] == 1) frontier.push_back(static_cast<V>(o));
  }
  row_xor = {};

  // height_ holds the round a vertex was peeled in until raise_heights.
  std::vector<std::vector<V>> rounds;
  std::vector<std::vector<std::uint64_t>> items(static_cast<std::size_t>(world.size()));
  for (int round = 1; round <= max_rounds; ++round) {
    if (world.allreduce(std::uint64_t{frontier.size()}, ReduceOp::kSum) == 0) break;
    const auto mark = static_cast<std::uint8_t>(round);
    for (const V o : frontier) {
      height_[o] = mark;
      peeled_.set(o);
    }
    for (const V o : frontier) {
      if (remaining[o] == 0) {
        attach_[o] = first_vertex_ + o;  // the last vertex of a tree component: its root
        continue;
      }
      const std::uint64_t w = remaining_xor[o];
      push_pair(items, grid_.owner_of(w), w, first_vertex_ + o);
    }
    const auto arrived = send_pairs(exchanger, world, items);
    for (auto& destination : items) destination.clear();
    std::vector<V> next;
    for (const auto& [w, v] : arrived) {
      const std::uint64_t o = w - first_vertex_;
      if (o >= block_)
        throw Error(ExitCode::kFailure, "forest pruning: a vertex arrived at a rank that does not own it");
      if (height_[o] == mark) {
        // The component's last edge, peeled from both ends: the smaller id is its root,
        // the larger hangs from it (remaining_xor[o] is v already).
        if (w < v) remaining_xor[o] = w;
        continue;
      }
      remaining_xor[o] ^= v;
      if (--remaining[o] == 1) next.push_back(static_cast<V>(o));
    }
    // attach_ is remaining_xor: a peeled vertex's last neighbour is the one it hangs from.
    rounds.push_back(std::move(frontier));
    std::sort(next.begin(), next.end());
    frontier = std::move(next);
  }
  return rounds;
}

template <class V>
void DistributedForest<V>::raise_heights(const std::vector<std::vector<V>>& rounds, Exchanger& exchanger) {
  const Communicator& world = grid_.world();
  for (std::uint64_t o = 0; o < block_; ++o) height_[o] = 0;
  std::vector<std::vector<std::uint64_t>> items(static_cast<std::size_t>(world.size()));
  for (const std::vector<V>& round : rounds) {
    for (const V o : round) {
      const std::uint64_t by = attach_[o];
      if (by == first_vertex_ + o) continue;
      push_pair(items, grid_.owner_of(by), by, std::uint64_t{height_[o]} + 1);
    }
    const auto arrived = send_pairs(exchanger, world, items);
    for (auto& destination : items) destination.clear();
    for (const auto& [vertex, height] : arrived) {
      std::uint8_t& h = height_[vertex - first_vertex_];
      h = std::max(h, static_cast<std::uint8_t>(height));
    }
  }
}

template <class V>
void DistributedForest<V>::find_anchors(const std::vector<std::vector<V>>& rounds, const DistributedGraph<V>& graph,
                                        Exchanger& exchanger) {
  const Communicator& world = grid_.world();
  const DegreeOrder<V>& order = graph.order();
  for (const std::vector<V>& round : rounds) {
    for (const V o : round) {
      if (attach_[o] == first_vertex_ + o) {
        anchor_[o] = kNone;
        attach_original_[o] = first_vertex_ + order.original_offset(o);
      }
    }
  }
  // A vertex's anchor and input id, as its owner answers: a core vertex is its own anchor.
  const ReadAnswer answer = [&](std::uint64_t key, std::uint64_t* out) {
    const std::uint64_t o = key - first_vertex_;
    out[0] = peeled_.test(o) ? anchor_[o] : key;
    out[1] = first_vertex_ + order.original_offset(o);
  };
  // The last round first: a round's vertices hang from later rounds' or from the core.
  for (auto round = rounds.rbegin(); round != rounds.rend(); ++round) {
    std::vector<std::vector<V>> asking(static_cast<std::size_t>(world.size()));
    for (const V o : *round) {
      if (attach_[o] != first_vertex_ + o) asking[static_cast<std::size_t>(grid_.owner_of(attach_[o]))].push_back(o);
    }
    std::vector<std::uint64_t> keys;
    std::vector<std::uint64_t> counts;
    for (const std::vector<V>& owner : asking) {
      counts.push_back(owner.size());
      for (const V o : owner) keys.push_back(attach_[o]);
    }
    const std::vector<std::uint64_t> answers = exchanger.read(world, keys, counts, 2, answer);
    std::size_t k = 0;
    for (const std::vector<V>& owner : asking) {
      for (const V o : owner) {
        anchor_[o] = answers[2 * k];
        attach_original_[o] = answers[2 * k + 1];
        ++k;
      }
    }
  }
}

template class DistributedForest<std::uint32_t>;
template class DistributedForest<std::uint64_t>;

}  // namespace zbfs
