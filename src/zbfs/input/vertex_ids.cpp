#include "zbfs/input/vertex_ids.hpp"

#include <algorithm>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Sample elements per rank from which the splitters of the distributed sort are chosen.
constexpr std::size_t kSamplesPerRank = 64;

// Sends `ids` (grouped by destination, counts per destination), lets `answer` map what
// arrived, and returns the answers in the order of `ids`.
template <class Answer>
std::vector<std::uint64_t> ask(const Communicator& world, std::span<const std::uint64_t> ids,
                               std::span<const std::uint64_t> counts, Answer answer) {
  std::vector<std::uint64_t> arrived_counts;
  std::vector<std::uint64_t> asked = world.alltoallv(ids, counts, arrived_counts);
  for (std::uint64_t& id : asked) id = answer(id);
  std::vector<std::uint64_t> replies(ids.size());
  world.alltoallv_into(std::span<const std::uint64_t>(asked), arrived_counts, counts,
                       std::span<std::uint64_t>(replies));
  return replies;
}

}  // namespace

VertexIds VertexIds::with_base(std::uint64_t base) {
  VertexIds ids;
  ids.base_ = base;
  return ids;
}

VertexIds VertexIds::from_table(const Communicator& world, std::vector<std::uint64_t> mine) {
  VertexIds ids;
  const std::vector<std::uint64_t> counts = world.allgather_value(std::uint64_t{mine.size()});
  ids.first_of_rank_.assign(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) ids.first_of_rank_[r + 1] = ids.first_of_rank_[r] + counts[r];
  ids.table_ = std::move(mine);
  return ids;
}

std::vector<std::uint64_t> VertexIds::to_source(const Communicator& world,
                                                std::span<const std::uint64_t> internal) const {
  if (!relabelled()) {
    std::vector<std::uint64_t> out(internal.begin(), internal.end());
    for (std::uint64_t& id : out) id += base_;
    return out;
  }
  // Group by the rank holding each id's entry, ask, and put the answers back in order.
  const auto ranks = static_cast<std::size_t>(world.size());
  auto holder = [&](std::uint64_t id) {
    return static_cast<std::size_t>(std::upper_bound(first_of_rank_.begin(), first_of_rank_.end(), id) -
                                    first_of_rank_.begin() - 1);
  };
  std::vector<std::uint64_t> counts(ranks, 0);
  for (const std::uint64_t id : internal) {
    if (id >= first_of_rank_.back()) throw Error(ExitCode::kFailure, "vertex id out of range in to_source");
    ++counts[holder(id)];
  }
  std::vector<std::uint64_t> next(ranks, 0);
  for (std::size_t r = 1; r < ranks; ++r) next[r] = next[r - 1] + counts[r - 1];
  std::vector<std::uint64_t> grouped(internal.size());
  std::vector<std::uint64_t> slot(internal.size());
  for (std::size_t i = 0; i < internal.size(); ++i) {
    slot[i] = next[holder(internal[i])]++;
    grouped[slot[i]] = internal[i];
  }
  const std::uint64_t my_first = first_of_rank_[static_cast<std::size_t>(world.rank())];
  const std::vector<std::uint64_t> replies =
      ask(world, grouped, counts, [&](std::uint64_t id) { return table_[id - my_first] + base_; });
  std::vector<std::uint64_t> out(internal.size());
  for (std::size_t i = 0; i < internal.size(); ++i) out[i] = replies[slot[i]];
  return out;
}

std::vector<std::optional<std::uint64_t>> VertexIds::to_internal(const Communicator& world,
                                                                 std::span<const std::uint64_t> source,
                                                                 std::uint64_t num_vertices) const {
  std::vector<std::optional<std::uint64_t>> out(source.size());
  if (!relabelled()) {
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] >= base_ && source[i] - base_ < num_vertices) out[i] = source[i] - base_;
    }
    return out;
  }
  // The holder of a source id answers; everyone learns the answer (internal id + 1, or 0).
  std::vector<std::uint64_t> found(source.size(), 0);
  const std::uint64_t my_first = first_of_rank_[static_cast<std::size_t>(world.rank())];
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] < base_) continue;
    const std::uint64_t id = source[i] - base_;
    const auto it = std::lower_bound(table_.begin(), table_.end(), id);
    if (it != table_.end() && *it == id) found[i] = my_first + static_cast<std::uint64_t>(it - table_.begin()) + 1;
  }
  world.allreduce(std::span<std::uint64_t>(found), ReduceOp::kMax);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (found[i] != 0) out[i] = found[i] - 1;
  }
  return out;
}

VertexIds compact_vertex_ids(const Communicator& world, std::span<Edge> edges, std::uint64_t& num_vertices,
                             std::uint64_t base) {
  const auto ranks = static_cast<std::size_t>(world.size());
  // The distinct ids this rank has, sorted.
  std::vector<std::uint64_t> mine;
  mine.reserve(2 * edges.size());
  for (const Edge& e : edges) {
    mine.push_back(e.u);
    mine.push_back(e.v);
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());

  // Splitters from evenly spaced samples of every rank: range r holds ids in
  // [splitter[r - 1], splitter[r]).
  std::vector<std::uint64_t> samples;
  const std::size_t take = std::min(kSamplesPerRank, mine.size());
  for (std::size_t i = 0; i < take; ++i) samples.push_back(mine[(2 * i + 1) * mine.size() / (2 * take)]);
  std::vector<std::uint64_t> sample_counts;
  std::vector<std::uint64_t> all_samples = world.allgatherv(std::span<const std::uint64_t>(samples), sample_counts);
  std::sort(all_samples.begin(), all_samples.end());
  std::vector<std::uint64_t> splitters;
  for (std::size_t r = 1; r < ranks && !all_samples.empty(); ++r)
    splitters.push_back(all_samples[r * all_samples.size() / ranks]);
  splitters.resize(ranks - 1, ~std::uint64_t{0});

  // Each range to its rank, which merges them and numbers its ids after the lower ranks'.
  std::vector<std::uint64_t> counts(ranks, 0);
  {
    std::size_t r = 0;
    for (const std::uint64_t id : mine) {
      while (r < ranks - 1 && id >= splitters[r]) ++r;
      ++counts[r];
    }
  }
  std::vector<std::uint64_t> arrived_counts;
  std::vector<std::uint64_t> table = world.alltoallv(std::span<const std::uint64_t>(mine), counts, arrived_counts);
  std::sort(table.begin(), table.end());
  table.erase(std::unique(table.begin(), table.end()), table.end());
  VertexIds ids = VertexIds::from_table(world, std::move(table));
  const std::uint64_t my_first = ids.first_of_rank_[static_cast<std::size_t>(world.rank())];
  num_vertices = ids.first_of_rank_.back();

  // The new ids of this rank's ids, then of its edges' ends.
  const std::vector<std::uint64_t> renamed = ask(world, mine, counts, [&](std::uint64_t id) {
    return my_first +
           static_cast<std::uint64_t>(std::lower_bound(ids.table_.begin(), ids.table_.end(), id) - ids.table_.begin());
  });
  auto rename = [&](std::uint64_t id) {
    return renamed[static_cast<std::size_t>(std::lower_bound(mine.begin(), mine.end(), id) - mine.begin())];
  };
  const auto count = static_cast<std::int64_t>(edges.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    Edge& e = edges[static_cast<std::size_t>(i)];
    e = {rename(e.u), rename(e.v)};
  }
  ids.base_ = base;
  return ids;
}

}  // namespace zbfs
