#include "zbfs/validate/distributed_validator.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/validate/edge_rules.hpp"

namespace zbfs {
namespace {

constexpr std::int64_t kUnreached = kUnreachedLevel;
constexpr std::int64_t kUnknown = -2;  // reached, level not yet known
constexpr std::int64_t kBroken = -3;   // its parent chain does not lead to the root
constexpr std::size_t kMaxMessages = 8;

// Thread-safe: the edge checks run in parallel (errors are rare, so a lock is cheap).
class LocalErrors {
 public:
  void add(ValidationRule rule, const std::string& message) {
    const std::lock_guard lock(mutex_);
    ++count_;
    rules_ |= 1U << static_cast<unsigned>(rule);
    if (messages_.size() < kMaxMessages)
      messages_.push_back("rule " + std::to_string(static_cast<int>(rule)) + ": " + message);
  }
  [[nodiscard]] std::uint64_t count() const { return count_; }
  // Collective: the errors of all ranks, in rank order.
  [[nodiscard]] ValidationReport merge(const Communicator& world) const {
    ValidationReport report;
    report.error_count = world.allreduce(count_, ReduceOp::kSum);
    const std::uint64_t rules = world.allreduce(std::uint64_t{rules_}, ReduceOp::kBitOr);
    std::string joined;
    for (const std::string& m : messages_) joined += m + '\n';
    for (const std::string& text : world.allgather_strings(joined)) {
      std::size_t start = 0;
      for (std::size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
        if (report.messages.size() < kMaxMessages) report.messages.push_back(text.substr(start, end - start));
        start = end + 1;
      }
    }
    for (const ValidationRule rule :
         {ValidationRule::kTreeRootedAtKey, ValidationRule::kTreeEdgeDistance, ValidationRule::kInputEdgeLevels,
          ValidationRule::kSpansComponent, ValidationRule::kParentIsInputEdge}) {
      if ((rules >> static_cast<unsigned>(rule)) & 1U) report.violated.push_back(rule);
    }
    return report;
  }

 private:
  std::mutex mutex_;
  std::uint64_t count_ = 0;
  unsigned rules_ = 0;
  std::vector<std::string> messages_;
};

// Where each request of `requests` (grouped by owner) begins among all of them: the
// answers to owner o's requests start at starts[o] requests in.
std::vector<std::uint64_t> request_starts(const OutgoingIds& requests) {
  std::vector<std::uint64_t> starts(requests.counts.size(), 0);
  for (std::size_t o = 1; o < starts.size(); ++o) starts[o] = starts[o - 1] + requests.counts[o - 1];
  return starts;
}

// The levels of `vertices`, asked of their owners, in order (one read).
std::vector<std::int64_t> levels_of(const ProcessGrid& grid, Exchanger& exchanger,
                                    std::span<const std::uint64_t> vertices, const LargeArray<std::int64_t>& level) {
  const std::uint64_t first = grid.my_first_vertex();
  OutgoingBuilder builder(grid.size(), 1);
  std::vector<std::uint64_t> slot(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    auto& bucket = builder.bucket(0, grid.owner_of(vertices[i]));
    slot[i] = bucket.size();
    bucket.push_back(vertices[i]);
  }
  const OutgoingIds requests = builder.finish();
  const std::vector<std::uint64_t> starts = request_starts(requests);
  const std::vector<std::uint64_t> answers =
      exchanger.read(grid.world(), requests.ids, requests.counts, 1,
                     [&](std::uint64_t v, std::uint64_t* out) { *out = static_cast<std::uint64_t>(level[v - first]); });
  std::vector<std::int64_t> levels(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    levels[i] =
        static_cast<std::int64_t>(answers[starts[static_cast<std::size_t>(grid.owner_of(vertices[i]))] + slot[i]]);
  }
  return levels;
}

// Levels as depths in the distributed parent tree, one level per round.
void compute_levels(const ProcessGrid& grid, Exchanger& exchanger, std::uint64_t root,
                    std::span<const std::int64_t> parent, LargeArray<std::int64_t>& level, LocalErrors& errors) {
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t block = level.size();
  for (std::uint64_t o = 0; o < block; ++o) level[o] = parent[o] == -1 ? kUnreached : kUnknown;
  if (grid.owns(root)) level[root - first] = 0;

  std::vector<std::uint64_t> pending;
  std::vector<std::uint64_t> parents;  // of the pending vertices
  for (;;) {
    pending.clear();
    for (std::uint64_t o = 0; o < block; ++o) {
      if (level[o] == kUnknown) pending.push_back(o);
    }
    if (grid.world().allreduce(std::uint64_t{pending.size()}, ReduceOp::kSum) == 0) return;
    parents.resize(pending.size());
    for (std::size_t i = 0; i < pending.size(); ++i) parents[i] = static_cast<std::uint64_t>(parent[pending[i]]);
    const std::vector<std::int64_t> parent_levels = levels_of(grid, exchanger, parents, level);
    std::uint64_t progress = 0;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const std::int64_t parent_level = parent_levels[i];
      if (parent_level == kUnknown) continue;
      ++progress;
      if (parent_level >= 0) {
        level[pending[i]] = parent_level + 1;
      } else {
        level[pending[i]] = kBroken;
        errors.add(ValidationRule::kTreeRootedAtKey,
                   "vertex " + std::to_string(first + pending[i]) +
                       (parent_level == kUnreached ? " has an unreached parent" : " has a broken parent chain"));
      }
    }
    if (grid.world().allreduce(progress, ReduceOp::kSum) == 0) {
      // Nothing moved anywhere: every pending vertex is on a cycle or hangs below one.
      for (const std::uint64_t o : pending) {
        level[o] = kBroken;
        errors.add(ValidationRule::kTreeRootedAtKey,
                   "vertex " + std::to_string(first + o) + " lies on or below a parent cycle");
      }
      return;
    }
  }
}

// Asks the owners of both ends of each edge of `round` for their `width` words, which
// answer(offset, out) gives for the owner's vertex at `offset` in its piece. Endpoint
// 2k + side's answer is at answers[at[2k + side]] and the words after it. The requests
// are counted per owner first and then placed once, in owner order (two passes, one static
// schedule): no bucket per thread and owner grows past its need, and none is copied into
// the message (validation's round is a rank's peak, and P buckets' slack grew with P).
std::vector<std::uint64_t> ask_for_ends(const ProcessGrid& grid, Exchanger& exchanger, std::span<const Edge> round,
                                        int threads, std::vector<std::uint64_t>& at, std::size_t width,
                                        const ReadAnswer& answer) {
  const auto ranks = static_cast<std::size_t>(grid.size());
  const std::uint64_t first = grid.my_first_vertex();
  const auto count = static_cast<std::int64_t>(round.size());
  OutgoingIds requests;
  requests.ids.resize(2 * round.size());
  requests.counts.assign(ranks, 0);
  // Thread t's next slot for owner o at t * ranks + o.
  std::vector<std::uint64_t> next(static_cast<std::size_t>(threads) * ranks, 0);
  at.resize(2 * static_cast<std::size_t>(count));
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    std::uint64_t* mine = next.data() + t * ranks;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      const Edge e = round[static_cast<std::size_t>(i)];
      ++mine[static_cast<std::size_t>(grid.owner_of(e.u))];
      ++mine[static_cast<std::size_t>(grid.owner_of(e.v))];
    }
#pragma omp single
    {
      std::uint64_t run = 0;
      const auto team = static_cast<std::size_t>(omp_get_num_threads());
      for (std::size_t o = 0; o < ranks; ++o) {
        for (std::size_t u = 0; u < team; ++u) {
          const std::uint64_t c = next[u * ranks + o];
          next[u * ranks + o] = run;
          run += c;
          requests.counts[o] += c;
        }
      }
    }
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      const Edge e = round[static_cast<std::size_t>(i)];
      for (std::size_t side = 0; side < 2; ++side) {
        const std::uint64_t x = side == 0 ? e.u : e.v;
        const std::uint64_t slot = mine[static_cast<std::size_t>(grid.owner_of(x))]++;
        requests.ids[slot] = x;
        at[2 * static_cast<std::size_t>(i) + side] = width * slot;
      }
    }
  }
  return exchanger.read(grid.world(), requests.ids, requests.counts, width,
                        [&](std::uint64_t v, std::uint64_t* out) { answer(v - first, out); });
}

}  // namespace

LargeArray<std::int64_t> bfs_tree_levels(const ProcessGrid& grid, Exchanger& exchanger, std::uint64_t root,
                                         std::span<const std::int64_t> parent) {
  LocalErrors ignored;  // a broken tree just gets -1 where its chains break
  LargeArray<std::int64_t> level(grid.blocks().block());
  compute_levels(grid, exchanger, root, parent, level, ignored);
  for (std::uint64_t o = 0; o < level.size(); ++o) level[o] = std::max<std::int64_t>(level[o], -1);
  return level;
}

namespace {

// Rule 1's preconditions on this rank's piece: the root is its own parent, and every
// parent is -1 or a vertex.
void check_parent_ranges(const ProcessGrid& grid, std::uint64_t root, std::span<const std::int64_t> parent,
                         LocalErrors& errors) {
  const std::uint64_t n = grid.blocks().num_vertices();
  const std::uint64_t first = grid.my_first_vertex();
  if (root >= n)
    errors.add(ValidationRule::kTreeRootedAtKey, "search key " + std::to_string(root) + " is not a vertex");
  if (root < n && grid.owns(root) && parent[root - first] != static_cast<std::int64_t>(root)) {
    errors.add(ValidationRule::kTreeRootedAtKey,
               "the parent of the root " + std::to_string(root) + " is " + std::to_string(parent[root - first]));
  }
  for (std::uint64_t o = 0; o < grid.blocks().block(); ++o) {
    const bool real = first + o < n;
    if (parent[o] < -1 || parent[o] >= static_cast<std::int64_t>(n) || (!real && parent[o] != -1)) {
      errors.add(ValidationRule::kTreeRootedAtKey, "parent " + std::to_string(parent[o]) + " of vertex " +
                                                       std::to_string(first + o) + " is out of range");
    }
  }
}

}  // namespace

ValidationReport validate_distributed_bfs_tree(const ProcessGrid& grid, const InputEdges& slice, Exchanger& exchanger,
                                               std::uint64_t root, std::span<const std::int64_t> parent,
                                               PhaseMetrics& metrics, std::uint64_t edges_per_round) {
  const ScopedPhase phase(metrics, Phase::kValidation);
  const Communicator& world = grid.world();
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t block = grid.blocks().block();
  LocalErrors errors;
  check_parent_ranges(grid, root, parent, errors);
  if (world.allreduce(errors.count(), ReduceOp::kSum) != 0) return errors.merge(world);

  LargeArray<std::int64_t> level(block);
  compute_levels(grid, exchanger, root, parent, level, errors);

  // Rules 3-5 over this rank's slice of the input edges (rule 2: see validator.hpp).
  Bitmap confirmed(block);
  if (grid.owns(root)) confirmed.set(root - first);
  const std::uint64_t largest_slice = world.allreduce(slice.size(), ReduceOp::kMax);
  const std::uint64_t rounds = std::max<std::uint64_t>(1, (largest_slice + edges_per_round - 1) / edges_per_round);
  // An exchanger that relays updates merges the confirmations of a vertex on the way;
  // the others send them as id sets (one word each, not an update's two).
  const bool confirm_by_update = exchanger.traits().relays_updates;
  std::uint64_t traversed = 0;
  const int threads = omp_get_max_threads();
  OutgoingBuilder confirmations(grid.size(), threads);
  std::vector<std::uint64_t> at;  // per endpoint, where its answer is
  // The round's edges, read (or produced again) once for the four passes over them.
  std::vector<Edge> round_edges;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t begin = std::min(slice.size(), round * edges_per_round);
    const auto count = static_cast<std::int64_t>(std::min(slice.size(), begin + edges_per_round) - begin);
    round_edges.resize(static_cast<std::size_t>(count));
    const auto chunks = static_cast<std::int64_t>((round_edges.size() + InputEdges::kChunk - 1) / InputEdges::kChunk);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::uint64_t at_edge = static_cast<std::uint64_t>(c) * InputEdges::kChunk;
      slice.read(begin + at_edge,
                 std::span(round_edges.data() + at_edge, std::min(InputEdges::kChunk, round_edges.size() - at_edge)));
    }
    const std::vector<std::uint64_t> answers =
        ask_for_ends(grid, exchanger, round_edges, threads, at, 2, [&](std::uint64_t o, std::uint64_t* out) {
          out[0] = static_cast<std::uint64_t>(level[o]);
          out[1] = static_cast<std::uint64_t>(parent[o]);
        });
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : traversed)
    for (std::int64_t i = 0; i < count; ++i) {
      const int t = omp_get_thread_num();
      const auto k = static_cast<std::size_t>(i);
      const Edge e = round_edges[k];
      if (e.u == e.v) continue;
      const std::uint64_t* end_u = &answers[at[2 * k]];  // (level, parent) of e.u
      const std::uint64_t* end_v = &answers[at[2 * k + 1]];
      const InputEdgeOutcome edge = check_input_edge(
          e, static_cast<std::int64_t>(end_u[0]), static_cast<std::int64_t>(end_v[0]),
          [&](std::uint64_t end) { return static_cast<std::int64_t>(end == e.u ? end_u[1] : end_v[1]); }, errors);
      traversed += edge.traversed ? 1 : 0;
      if (edge.confirms_v) confirmations.bucket(t, grid.owner_of(e.v)).push_back(e.v);
      if (edge.confirms_u) confirmations.bucket(t, grid.owner_of(e.u)).push_back(e.u);
    }
    const OutgoingIds confirming = confirmations.finish();
    if (confirm_by_update) {
      std::vector<KeyedItem> items(confirming.ids.size());
      for (std::size_t i = 0; i < items.size(); ++i) items[i] = {confirming.ids[i], 0};
      for (const KeyedItem& item : exchanger.update(world, items, confirming.counts)) confirmed.set(item.key - first);
    } else {
      const IncomingIds confirmed_here = exchanger.all_to_all(world, confirming, IdsAre::kSet);
      for (const std::uint64_t v : confirmed_here.ids) confirmed.set(v - first);
    }
  }

  std::uint64_t reached = 0;
  for (std::uint64_t o = 0; o < block; ++o) {
    reached += check_parent_link(first + o, level[o], parent[o], confirmed.test(o), errors);
  }
  ValidationReport report = errors.merge(world);
  report.traversed_edges = world.allreduce(traversed, ReduceOp::kSum);
  report.reached_vertices = world.allreduce(reached, ReduceOp::kSum);
  return report;
}

namespace {

// A tree edge's vote, sent to the child's owner: the smallest over all the input tuples
// between the two wins.
constexpr std::uint64_t kDistanceConfirmed = 0;  // a tuple joins them and gives the distance exactly
constexpr std::uint64_t kLinkOnly = 1;           // tuples join them, none gives the distance
constexpr std::uint64_t kNoVote = 2;

[[gnu::cold, gnu::noinline]] void report_triangle(const Edge& e, float w, float du, float dv, LocalErrors& errors) {
  errors.add(ValidationRule::kInputEdgeLevels, "edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
                                                   ") of weight " + std::to_string(w) + " joins distances " +
                                                   std::to_string(du) + " and " + std::to_string(dv));
}

[[gnu::cold, gnu::noinline]] void report_tree_distance(std::uint64_t v, std::int64_t p, float dv, LocalErrors& errors) {
  errors.add(ValidationRule::kTreeEdgeDistance, "distance " + std::to_string(dv) + " of vertex " + std::to_string(v) +
                                                    " is not its parent " + std::to_string(p) +
                                                    "'s plus the weight of an input edge between them");
}

[[gnu::cold, gnu::noinline]] void report_missing_link(std::uint64_t v, std::int64_t p, LocalErrors& errors) {
  errors.add(ValidationRule::kParentIsInputEdge,
             "parent link (" + std::to_string(p) + ", " + std::to_string(v) + ") is not an input edge");
}

// A round of this rank's weighted tuples, [begin, begin + edges.size()), read in chunks.
void read_weighted_round(const InputEdges& slice, std::uint64_t begin, std::vector<Edge>& edges,
                         std::vector<float>& weights, int threads) {
  const auto chunks = static_cast<std::int64_t>((edges.size() + InputEdges::kChunk - 1) / InputEdges::kChunk);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::uint64_t at_edge = static_cast<std::uint64_t>(c) * InputEdges::kChunk;
    const std::size_t length = std::min(InputEdges::kChunk, edges.size() - at_edge);
    slice.read(begin + at_edge, std::span(edges.data() + at_edge, length));
    slice.read_weights(begin + at_edge, std::span(weights.data() + at_edge, length));
  }
}

// Rules 2-5 on a round's weighted tuples, whose ends' (level, parent, distance bits) are
// answers[at[2k]] and answers[at[2k + 1]]: each parent link's vote goes to thread t's
// bucket for the child's owner (votes[t * ranks + owner]). Returns the tuples traversed.
std::uint64_t check_weighted_round(const ProcessGrid& grid, std::span<const Edge> edges, std::span<const float> weights,
                                   std::span<const std::uint64_t> answers, std::span<const std::uint64_t> at,
                                   std::vector<std::vector<KeyedItem>>& votes, int threads, LocalErrors& errors) {
  const auto ranks = static_cast<std::size_t>(grid.size());
  const auto count = static_cast<std::int64_t>(edges.size());
  std::uint64_t traversed = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : traversed)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto k = static_cast<std::size_t>(i);
    const Edge e = edges[k];
    if (e.u == e.v) continue;
    const std::uint64_t* end_u = &answers[at[2 * k]];  // (level, parent, distance bits) of e.u
    const std::uint64_t* end_v = &answers[at[2 * k + 1]];
    const auto lu = static_cast<std::int64_t>(end_u[0]);
    const auto lv = static_cast<std::int64_t>(end_v[0]);
    const bool reached_u = lu != kUnreached;
    const bool reached_v = lv != kUnreached;
    if (!reached_u && !reached_v) continue;
    ++traversed;
    if (reached_u != reached_v) {
      report_edge_across_component(e, errors);
      continue;
    }
    if (lu < 0 || lv < 0) continue;  // reported under rule 1 or 2
    const float w = weights[k];
    const float du = std::bit_cast<float>(static_cast<std::uint32_t>(end_u[2]));
    const float dv = std::bit_cast<float>(static_cast<std::uint32_t>(end_v[2]));
    const float via_u = du + w;
    const float via_v = dv + w;
    if (via_u < dv || via_v < du) report_triangle(e, w, du, dv, errors);
    if (static_cast<std::int64_t>(end_v[1]) == static_cast<std::int64_t>(e.u)) {
      votes[t * ranks + static_cast<std::size_t>(grid.owner_of(e.v))].push_back(
          {e.v, dv == via_u ? kDistanceConfirmed : kLinkOnly});
    }
    if (static_cast<std::int64_t>(end_u[1]) == static_cast<std::int64_t>(e.v)) {
      votes[t * ranks + static_cast<std::size_t>(grid.owner_of(e.u))].push_back(
          {e.u, du == via_v ? kDistanceConfirmed : kLinkOnly});
    }
  }
  return traversed;
}

// The threads' votes go to the children's owners, who keep each vertex's best.
void deliver_votes(const ProcessGrid& grid, Exchanger& exchanger, std::vector<std::vector<KeyedItem>>& votes,
                   int threads, std::span<std::uint64_t> vote) {
  const auto ranks = static_cast<std::size_t>(grid.size());
  std::vector<KeyedItem> items;
  std::vector<std::uint64_t> counts(ranks, 0);
  for (std::size_t o = 0; o < ranks; ++o) {
    for (std::size_t t = 0; t < static_cast<std::size_t>(threads); ++t) {
      std::vector<KeyedItem>& mine = votes[t * ranks + o];
      counts[o] += mine.size();
      items.insert(items.end(), mine.begin(), mine.end());
      mine.clear();
    }
  }
  const std::uint64_t first = grid.my_first_vertex();
  for (const KeyedItem& item : exchanger.update(grid.world(), items, counts)) {
    std::uint64_t& best = vote[item.key - first];
    best = std::min(best, item.value);
  }
}

}  // namespace

ValidationReport validate_distributed_sssp_tree(const ProcessGrid& grid, const InputEdges& slice, Exchanger& exchanger,
                                                std::uint64_t root, std::span<const std::int64_t> parent,
                                                std::span<const float> distance, PhaseMetrics& metrics,
                                                std::uint64_t edges_per_round) {
  const ScopedPhase phase(metrics, Phase::kValidation);
  if (!slice.has_weights())
    throw Error(ExitCode::kFailure, "validate_distributed_sssp_tree: the edges have no weights");
  const Communicator& world = grid.world();
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t block = grid.blocks().block();
  LocalErrors errors;
  check_parent_ranges(grid, root, parent, errors);
  if (world.allreduce(errors.count(), ReduceOp::kSum) != 0) return errors.merge(world);
  if (grid.owns(root) && distance[root - first] != 0.0F) {
    errors.add(ValidationRule::kTreeRootedAtKey,
               "the distance of the root is " + std::to_string(distance[root - first]));
  }

  LargeArray<std::int64_t> level(block);
  compute_levels(grid, exchanger, root, parent, level, errors);
  // A reached vertex's distance must be a distance: finite and not negative.
  for (std::uint64_t o = 0; o < block; ++o) {
    if (level[o] >= 0 && !(distance[o] >= 0 && std::isfinite(distance[o]))) {
      errors.add(ValidationRule::kTreeEdgeDistance,
                 "vertex " + std::to_string(first + o) + " is reached at distance " + std::to_string(distance[o]));
      level[o] = kBroken;
    }
  }

  // Rules 2-5 over this rank's slice of the weighted tuples; each parent link's best vote
  // goes to the child's owner.
  LargeArray<std::uint64_t> vote(block);
  std::fill(vote.data(), vote.data() + block, kNoVote);
  if (grid.owns(root)) vote[root - first] = kDistanceConfirmed;
  const std::uint64_t largest_slice = world.allreduce(slice.size(), ReduceOp::kMax);
  const std::uint64_t rounds = std::max<std::uint64_t>(1, (largest_slice + edges_per_round - 1) / edges_per_round);
  std::uint64_t traversed = 0;
  const int threads = omp_get_max_threads();
  const auto ranks = static_cast<std::size_t>(grid.size());
  std::vector<std::vector<KeyedItem>> votes(static_cast<std::size_t>(threads) * ranks);
  std::vector<std::uint64_t> at;
  std::vector<Edge> round_edges;
  std::vector<float> round_weights;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t begin = std::min(slice.size(), round * edges_per_round);
    const std::uint64_t count = std::min(slice.size(), begin + edges_per_round) - begin;
    round_edges.resize(static_cast<std::size_t>(count));
    round_weights.resize(static_cast<std::size_t>(count));
    read_weighted_round(slice, begin, round_edges, round_weights, threads);
    const std::vector<std::uint64_t> answers =
        ask_for_ends(grid, exchanger, round_edges, threads, at, 3, [&](std::uint64_t o, std::uint64_t* out) {
          out[0] = static_cast<std::uint64_t>(level[o]);
          out[1] = static_cast<std::uint64_t>(parent[o]);
          out[2] = std::bit_cast<std::uint32_t>(distance[o]);
        });
    traversed += check_weighted_round(grid, round_edges, round_weights, answers, at, votes, threads, errors);
    deliver_votes(grid, exchanger, votes, threads, vote.span());
  }

  std::uint64_t reached = 0;
  for (std::uint64_t o = 0; o < block; ++o) {
    if (level[o] == kUnreached) continue;
    ++reached;
    if (level[o] < 0 || vote[o] == kDistanceConfirmed) continue;
    if (vote[o] == kLinkOnly) {
      report_tree_distance(first + o, parent[o], distance[o], errors);
    } else {
      report_missing_link(first + o, parent[o], errors);
    }
  }
  ValidationReport report = errors.merge(world);
  report.traversed_edges = world.allreduce(traversed, ReduceOp::kSum);
  report.reached_vertices = world.allreduce(reached, ReduceOp::kSum);
  return report;
}

}  // namespace zbfs
