#include "zbfs/graph/distributed_graph.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <string>
#include <type_traits>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/wire/routed/routed_records.hpp"

namespace zbfs {
namespace {

// Calls visit(thread, holder, source, target, tuple index) for both directions of every
// tuple in `edges` that is not a self-loop, in parallel: each thread gets the same static
// share in every call.
template <class Visit>
void for_each_directed_edge(const ProcessGrid& grid, std::span<const Edge> edges, int threads, Visit visit) {
  const auto m = static_cast<std::int64_t>(edges.size());
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const Edge e = edges[k];
      if (e.u == e.v) continue;
      visit(t, grid.holder_of_edge(e.u, e.v), e.u, e.v, k);
      visit(t, grid.holder_of_edge(e.v, e.u), e.v, e.u, k);
    }
  }
}

// One table for a whole piece group, indexed by the group's local index: the same local
// index in the other numbering, from each member's `mine` (its piece's table, sorted_of
// or original_of). Collective over `comm`, whose members hold the group's pieces in
// member order (as ProcessGrid's row and column do).
template <class V>
LargeArray<V> group_table(const Communicator& comm, const PieceGroup& group, std::span<const V> mine) {
  LargeArray<V> table(group.local_size());
  comm.allgather(mine, table.span());
  const std::uint64_t block = mine.size();
  const auto members = static_cast<std::int64_t>(group.count());
#pragma omp parallel for schedule(static)
  for (std::int64_t m = 0; m < members; ++m) {
    const std::uint64_t base = static_cast<std::uint64_t>(m) * block;
    for (std::uint64_t i = base; i < base + block; ++i) table[i] = static_cast<V>(table[i] + base);
  }
  return table;
}

// Packs the directed edges of `edges` as (source, target) id pairs grouped by the rank
// that stores them, or (source, target, weight bits) triples when `weights` (one per
// tuple) is given; counts[d] is the number of words for rank d.
void route_edges(const ProcessGrid& grid, std::span<const Edge> edges, const float* weights,
                 std::vector<std::uint64_t>& packed, std::vector<std::uint64_t>& counts) {
  const int threads = omp_get_max_threads();
  const auto p = static_cast<std::size_t>(grid.size());
  const std::uint64_t words = weights != nullptr ? 3 : 2;
  std::vector<std::uint64_t> per_thread(static_cast<std::size_t>(threads) * p, 0);
  for_each_directed_edge(grid, edges, threads,
                         [&](std::size_t t, int holder, std::uint64_t, std::uint64_t, std::size_t) {
                           per_thread[t * p + static_cast<std::size_t>(holder)] += words;
                         });
  // Exclusive offsets per (destination, thread), so the layout is grouped by destination.
  counts.assign(p, 0);
  std::uint64_t total = 0;
  for (std::size_t d = 0; d < p; ++d) {
    for (std::size_t t = 0; t < static_cast<std::size_t>(threads); ++t) {
      const std::uint64_t c = per_thread[t * p + d];
      per_thread[t * p + d] = total;
      total += c;
      counts[d] += c;
    }
  }
  packed.resize(total);
  for_each_directed_edge(grid, edges, threads,
                         [&](std::size_t t, int holder, std::uint64_t source, std::uint64_t target, std::size_t k) {
                           std::uint64_t& at = per_thread[t * p + static_cast<std::size_t>(holder)];
                           packed[at] = source;
                           packed[at + 1] = target;
                           if (weights != nullptr) packed[at + 2] = std::bit_cast<std::uint32_t>(weights[k]);
                           at += words;
                         });
}

// This rank's forward pairs after kernel 1's shuffle: each tuple, in rounds of
// `edges_per_round`, goes to the rank that holds its edge (by alltoallv, or along a
// relaying route).
template <class V>
struct ShuffledPairs {
  std::vector<V> row_of;         // forward rows: column-group local index of the source
  std::vector<V> col_of;         // forward neighbours: row-group local index of the target
  std::vector<float> weight_of;  // and the tuple's weight, when weighted
};

template <class V>
ShuffledPairs<V> shuffle_pairs(const ProcessGrid& grid, const PackedEdgeList& slice, std::uint64_t edges_per_round,
                               std::optional<std::span<const float>> weights,
                               const std::optional<RoutePlan>& shuffle_route) {
  const std::uint64_t first = 0;
  const std::uint64_t last = slice.size();
  const std::uint64_t largest_slice = grid.world().allreduce(slice.size(), ReduceOp::kMax);
  const std::uint64_t rounds = std::max<std::uint64_t>(1, (largest_slice + edges_per_round - 1) / edges_per_round);

  const PieceGroup& cols = grid.col_group();
  const PieceGroup& rows = grid.row_group();
  ShuffledPairs<V> pairs;
  std::vector<V>& row_of = pairs.row_of;
  std::vector<V>& col_of = pairs.col_of;
  std::vector<float>& weight_of = pairs.weight_of;
  row_of.reserve(static_cast<std::size_t>(2 * (last - first) * 11 / 10));
  col_of.reserve(row_of.capacity());
  if (weights) weight_of.reserve(row_of.capacity());
  const std::uint64_t words = weights ? 3 : 2;
  // A dense alltoallv starts P - 1 messages a rank a round; a relaying route, its hop
  // peers'. One hop (direct, sparse) is the alltoallv.
  const bool routed = shuffle_route && relays(shuffle_route->kind());

  std::vector<Edge> chunk;
  std::vector<std::uint64_t> packed;
  std::vector<std::uint64_t> counts;
  std::vector<std::uint64_t> recv_counts;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    // Every rank takes part in every round, with an empty chunk once its slice is done.
    const std::uint64_t begin = std::min(last, first + round * edges_per_round);
    const std::uint64_t end = std::min(last, begin + edges_per_round);
    chunk.resize(static_cast<std::size_t>(end - begin));
    const auto count = static_cast<std::int64_t>(chunk.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      chunk[static_cast<std::size_t>(i)] = slice.get(begin + static_cast<std::uint64_t>(i));
    }
    route_edges(grid, chunk, weights ? weights->data() + begin : nullptr, packed, counts);
    const std::vector<std::uint64_t> received =
        routed ? route_records(grid.world(), *shuffle_route, std::move(packed), counts, words)
               : grid.world().alltoallv(std::span<const std::uint64_t>(packed), std::span<const std::uint64_t>(counts),
                                        recv_counts);
    const std::size_t base = row_of.size();
    const std::size_t arrived = received.size() / words;
    row_of.resize(base + arrived);
    col_of.resize(base + arrived);
    if (weights) weight_of.resize(base + arrived);
    const auto arrived_pairs = static_cast<std::int64_t>(arrived);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < arrived_pairs; ++i) {
      const auto k = static_cast<std::size_t>(i);
      row_of[base + k] = static_cast<V>(cols.to_local(received[words * k]));
      col_of[base + k] = static_cast<V>(rows.to_local(received[words * k + 1]));
      if (words == 3) weight_of[base + k] = std::bit_cast<float>(static_cast<std::uint32_t>(received[words * k + 2]));
    }
  }
  return pairs;
}

// Sums each column-group row's count over the processor column into its owner's entry
// of `owned` (the owner's block): for_each_row(emit) calls emit(row, count) for the rows
// with a count here. Dense: a reduce-scatter of a word per group row. Sparse: the counts
// travel as (offset, count) pairs by alltoallv, so that what a rank holds grows with its
// rows that have a count, not with the group (at 4,096 ranks in 2D the group is 64 times
// a rank's vertices, and the reduce-scatter held three words a group row).
template <class ForEachRow>
void sum_over_column(const ProcessGrid& grid, bool sparse, ForEachRow for_each_row, std::span<std::uint64_t> owned) {
  const Communicator& column = grid.col();
  const std::uint64_t block = grid.blocks().block();
  if (!sparse) {
    std::vector<std::uint64_t> partial(grid.col_group().local_size(), 0);
    for_each_row([&](std::uint64_t row, std::uint64_t count) { partial[row] += count; });
    column.reduce_scatter_block_sum(std::span<const std::uint64_t>(partial), owned);
    return;
  }
  const auto members = static_cast<std::size_t>(column.size());
  std::vector<std::vector<std::uint64_t>> to(members);
  for_each_row([&](std::uint64_t row, std::uint64_t count) {
    std::vector<std::uint64_t>& pairs = to[static_cast<std::size_t>(row / block)];
    pairs.push_back(row % block);
    pairs.push_back(count);
  });
  std::vector<std::uint64_t> counts(members);
  std::vector<std::uint64_t> packed;
  for (std::size_t m = 0; m < members; ++m) {
    counts[m] = to[m].size();
    packed.insert(packed.end(), to[m].begin(), to[m].end());
    std::vector<std::uint64_t>().swap(to[m]);
  }
  std::vector<std::uint64_t> arrived_counts;
  const std::vector<std::uint64_t> arrived =
      column.alltoallv(std::span<const std::uint64_t>(packed), std::span<const std::uint64_t>(counts), arrived_counts);
  std::fill(owned.begin(), owned.end(), std::uint64_t{0});
  for (std::size_t k = 0; k + 1 < arrived.size(); k += 2) {
    if (arrived[k] >= owned.size()) throw Error(ExitCode::kFailure, "kernel 1: a count for a vertex not owned here");
    owned[arrived[k]] += arrived[k + 1];
  }
}

// Each column-group vertex's input tuples (its pairs here, `row_of`), summed over the
// column into its owner's `owned`: sparse, counted by position among the rows with pairs,
// never in a word per group row.
template <class V>
void sum_tuple_degrees(const ProcessGrid& grid, std::span<const V> row_of, bool sparse,
                       std::span<std::uint64_t> owned) {
  if (!sparse) {
    sum_over_column(
        grid, false,
        [&](auto emit) {
          for (const V row : row_of) emit(row, 1);
        },
        owned);
    return;
  }
  const RowIndex with_pairs(ids_present(row_of, grid.col_group().local_size()));
  const RowRank rank = with_pairs.rank();
  LargeArray<std::uint64_t> tuples(with_pairs.count());
  const auto pair_count = static_cast<std::int64_t>(row_of.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < pair_count; ++k) {
    std::atomic_ref<std::uint64_t>(tuples[rank.position(row_of[static_cast<std::size_t>(k)])])
        .fetch_add(1, std::memory_order_relaxed);
  }
  sum_over_column(
      grid, true,
      [&](auto emit) {
        for_each_set_bit(with_pairs.present().data(), with_pairs.size(),
                         [&](std::uint64_t row) { emit(row, tuples[rank.position(row)]); });
      },
      owned);
}

// The forward lists from the pairs, consumed a quarter of the entries at a time: they and
// the lists never both stand whole (kernel 1's peak, half a rank's memory at scale 24 on
// 2 ranks). With `kept`, the pairs' rows become positions among the rows with pairs
// first, and the lists are built over those alone (LocalCsr::by_position).
template <class V>
LocalCsr<V> build_forward_lists(std::uint64_t num_rows, std::vector<V>&& row_of, std::vector<V>&& col_of,
                                std::optional<RowIndex> kept) {
  if (!kept) return build_local_csr<V>(num_rows, std::move(row_of), std::move(col_of), kPlacementRanges);
  const RowRank rank = kept->rank();
  const auto pair_count = static_cast<std::int64_t>(row_of.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < pair_count; ++k) {
    row_of[static_cast<std::size_t>(k)] = static_cast<V>(rank.position(row_of[static_cast<std::size_t>(k)]));
  }
  LocalCsr<V> by_position = build_local_csr<V>(kept->count(), std::move(row_of), std::move(col_of), kPlacementRanges);
  return LocalCsr<V>::by_position(std::move(by_position), std::move(*kept));
}

// Each column-group vertex's list entries here (`forward`'s rows with a list alone),
// summed over the column into its owner's `owned`.
template <class V>
void sum_list_degrees(const ProcessGrid& grid, const LocalCsr<V>& forward, bool sparse,
                      std::span<std::uint64_t> owned) {
  sum_over_column(
      grid, sparse,
      [&](auto emit) {
        const auto each = [&](std::uint64_t r) {
          if (const std::uint64_t d = forward.degree(r); d != 0) emit(r, d);
        };
        if (forward.hypersparse()) {
          for_each_set_bit(forward.row_rank().words, forward.num_rows(), each);
        } else {
          for (std::uint64_t r = 0; r < forward.num_rows(); ++r) each(r);
        }
      },
      owned);
}

// `table` (by row) kept for the `positions` rows `rank` has, by position.
template <class V>
LargeArray<V> keep_by_position(const LargeArray<V>& table, RowRank rank, std::uint64_t positions) {
  LargeArray<V> kept(positions);
  for_each_set_bit(rank.words, table.size(), [&](std::uint64_t r) { kept[rank.position(r)] = table[r]; });
  return kept;
}

// Renumbers `ids` (local indices of `group`) by the group's table of `mine` (collective
// over `comm`, as group_table), the table freed once applied.
template <class V>
void renumber_by_group_table(const Communicator& comm, const PieceGroup& group, std::span<const V> mine,
                             std::vector<V>& ids) {
  const LargeArray<V> table = group_table(comm, group, mine);
  const auto count = static_cast<std::int64_t>(ids.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < count; ++k) ids[static_cast<std::size_t>(k)] = table[ids[static_cast<std::size_t>(k)]];
}

}  // namespace

template <class V>
DistributedGraph<V>::DistributedGraph(const ProcessGrid& grid, const PackedEdgeList& slice, bool compressed_lists,
                                      std::uint64_t edges_per_round, std::optional<std::span<const float>> weights,
                                      const std::optional<RoutePlan>& shuffle_route,
                                      const LocalListBuilder<V>& list_builder, SparseRows sparse_rows) {
  if (weights && weights->size() != slice.size()) {
    throw Error(ExitCode::kFailure, "kernel 1: " + std::to_string(weights->size()) + " weights for " +
                                        std::to_string(slice.size()) + " tuples");
  }
  if (weights && compressed_lists) throw Error(ExitCode::kFailure, "kernel 1: weighted lists stay plain");
  const PieceGroup& cols = grid.col_group();
  const PieceGroup& rows = grid.row_group();
  ShuffledPairs<V> pairs = shuffle_pairs<V>(grid, slice, edges_per_round, weights, shuffle_route);
  std::vector<V>& row_of = pairs.row_of;
  std::vector<V>& col_of = pairs.col_of;
  std::vector<float>& weight_of = pairs.weight_of;

  // Weighted lists and a device's keep their rows by row.
  sparse_rows_ = weights || list_builder ? SparseRows::kNever : sparse_rows;
  const bool sparse = sparse_rows_ != SparseRows::kNever;

  // The degree order: every owner's input tuples per vertex (the pairs of its forward
  // rows, summed over the column: Graph500's tuple degree, kept in original order), then
  // every pair renumbered into sorted ids, one group's table at a time.
  const std::uint64_t block = grid.blocks().block();
  owned_tuple_degree_ = LargeArray<std::uint64_t>(block);
  sum_tuple_degrees(grid, std::span<const V>(row_of), sparse, owned_tuple_degree_.span());
  order_ = DegreeOrder<V>(owned_tuple_degree_.span());
  renumber_by_group_table(grid.col(), cols, order_.sorted_offsets(), row_of);
  renumber_by_group_table(grid.row(), rows, order_.sorted_offsets(), col_of);
  col_original_ = group_table(grid.col(), cols, order_.original_offsets());
  if (grid.partition() == Partition::k1D) row_original_ = group_table(grid.row(), rows, order_.original_offsets());

  if (weights) {
    if constexpr (std::is_same_v<V, std::uint32_t>) {
      forward_ = build_weighted_local_csr(cols.local_size(), std::span<const V>(row_of), std::span<const V>(col_of),
                                          std::span<const float>(weight_of));
    } else {
      throw Error(ExitCode::kFailure, "kernel 1: weighted lists number their groups in 32 bits");
    }
  } else if (list_builder) {
    forward_ = list_builder(cols.local_size(), std::move(row_of), std::move(col_of));
  } else {
    std::optional<RowIndex> kept;
    if (sparse) kept = rows_worth_keeping(std::span<const V>(row_of), cols.local_size());
    forward_ = build_forward_lists(cols.local_size(), std::move(row_of), std::move(col_of), std::move(kept));
  }
  std::vector<V>().swap(row_of);
  std::vector<V>().swap(col_of);
  std::vector<float>().swap(weight_of);
  // Only the forward lists' sources are ever looked up: the table by their position.
  if (forward_.hypersparse())
    col_original_ = keep_by_position(col_original_, forward_.row_rank(), forward_.positions());
  if (grid_layout(grid.partition())) {
    std::optional<RowIndex> kept;
    if (sparse) {
      kept =
          rows_worth_keeping(std::span<const V>(forward_.neighbor_data(), forward_.num_entries()), rows.local_size());
    }
    transposed_ = transpose_local_csr(forward_, rows.local_size(), std::move(kept));
  }

  // Owners' degrees: each rank of a processor column holds a part of every column-group
  // vertex's adjacency (the part inside its row group); the column sums them up.
  owned_degree_ = LargeArray<std::uint64_t>(block);
  sum_list_degrees(grid, forward_, sparse, owned_degree_.span());
  global_directed_edges_ = grid.world().allreduce(forward_.num_entries(), ReduceOp::kSum);
  // Compressed once both are built: the transpose is read from the plain forward lists.
  if (compressed_lists) {
    forward_.compress();
    transposed_.compress();
  }
}

template <class V>
bool DistributedGraph<V>::sparse_pays_here(std::uint64_t present, std::uint64_t ids, double bytes_per_id) const {
  return sparse_rows_ == SparseRows::kAlways ||
         (sparse_rows_ == SparseRows::kWherePays && sparse_pays(present, ids, bytes_per_id));
}

template <class V>
std::optional<RowIndex> DistributedGraph<V>::rows_worth_keeping(std::span<const V> ids, std::uint64_t rows) const {
  Bitmap present = ids_present(ids, rows);
  if (!sparse_pays_here(present.count(), rows, 8)) return std::nullopt;
  return RowIndex(std::move(present));
}

template class DistributedGraph<std::uint32_t>;
template class DistributedGraph<std::uint64_t>;

}  // namespace zbfs
