#include "zbfs/validate/distributed_validator.hpp"

#include <omp.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {
namespace {

constexpr std::int64_t kUnreached = -1;
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
    for (const ValidationRule rule : {ValidationRule::kTreeRootedAtKey, ValidationRule::kInputEdgeLevels,
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

// How the validator reaches other ranks: the exchanger, or a route when one is set.
struct Lookups {
  Exchanger& exchanger;
  RoutedExchange* route;
};

// Answers for ids sent to their owners: `answer(id)` per requested id, `width` values
// each, grouped by owner in the order of the requests.
template <class Answer>
IncomingIds ask_owners(const ProcessGrid& grid, const Lookups& via, const OutgoingIds& requests, std::size_t width,
                       Answer answer) {
  if (via.route != nullptr) {
    IncomingIds answers;
    answers.ids = via.route->read(grid.world(), requests.ids, requests.counts, width, answer);
    answers.offsets.assign(requests.counts.size() + 1, 0);
    for (std::size_t s = 0; s < requests.counts.size(); ++s)
      answers.offsets[s + 1] = answers.offsets[s] + requests.counts[s] * width;
    return answers;
  }
  Exchanger& exchanger = via.exchanger;
  const IncomingIds asked = exchanger.all_to_all(grid.world(), requests, IdsAre::kSequence);
  OutgoingIds replies;
  replies.ids.resize(asked.ids.size() * width);
  replies.counts.resize(static_cast<std::size_t>(asked.num_sources()));
  for (int s = 0; s < asked.num_sources(); ++s)
    replies.counts[static_cast<std::size_t>(s)] = asked.from(s).size() * width;
  const auto count = static_cast<std::int64_t>(asked.ids.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    answer(asked.ids[k], &replies.ids[k * width]);
  }
  return exchanger.all_to_all(grid.world(), replies, IdsAre::kSequence);
}

// Levels as depths in the distributed parent tree, one level per round.
void compute_levels(const ProcessGrid& grid, const Lookups& via, std::uint64_t root,
                    std::span<const std::int64_t> parent, LargeArray<std::int64_t>& level, LocalErrors& errors) {
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t block = level.size();
  for (std::uint64_t o = 0; o < block; ++o) level[o] = parent[o] == -1 ? kUnreached : kUnknown;
  if (grid.owns(root)) level[root - first] = 0;

  std::vector<std::uint64_t> pending;
  for (;;) {
    pending.clear();
    for (std::uint64_t o = 0; o < block; ++o) {
      if (level[o] == kUnknown) pending.push_back(o);
    }
    if (grid.world().allreduce(std::uint64_t{pending.size()}, ReduceOp::kSum) == 0) return;
    OutgoingBuilder builder(grid.size(), 1);
    std::vector<std::uint64_t> slot(pending.size());
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const auto p = static_cast<std::uint64_t>(parent[pending[i]]);
      auto& bucket = builder.bucket(0, grid.owner_of(p));
      slot[i] = bucket.size();
      bucket.push_back(p);
    }
    const OutgoingIds requests = builder.finish();
    const IncomingIds answers = ask_owners(grid, via, requests, 1, [&](std::uint64_t v, std::uint64_t* out) {
      *out = static_cast<std::uint64_t>(level[v - first]);
    });
    std::uint64_t progress = 0;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const auto p = static_cast<std::uint64_t>(parent[pending[i]]);
      const auto parent_level =
          static_cast<std::int64_t>(answers.ids[answers.offsets[static_cast<std::size_t>(grid.owner_of(p))] + slot[i]]);
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

}  // namespace

ValidationReport validate_distributed_bfs_tree(const ProcessGrid& grid, const PackedEdgeList& slice,
                                               Exchanger& exchanger, std::uint64_t root,
                                               std::span<const std::int64_t> parent, PhaseMetrics& metrics,
                                               RoutedExchange* lookups, std::uint64_t edges_per_round) {
  const Lookups via{exchanger, lookups};
  const ScopedPhase phase(metrics, Phase::kValidation);
  const Communicator& world = grid.world();
  const std::uint64_t n = slice.num_vertices();
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t block = grid.blocks().block();
  LocalErrors errors;

  // Rule 1 preconditions: the root is its own parent; every parent is -1 or a vertex.
  if (root >= n)
    errors.add(ValidationRule::kTreeRootedAtKey, "search key " + std::to_string(root) + " is not a vertex");
  if (root < n && grid.owns(root) && parent[root - first] != static_cast<std::int64_t>(root)) {
    errors.add(ValidationRule::kTreeRootedAtKey,
               "the parent of the root " + std::to_string(root) + " is " + std::to_string(parent[root - first]));
  }
  for (std::uint64_t o = 0; o < block; ++o) {
    const bool real = first + o < n;
    if (parent[o] < -1 || parent[o] >= static_cast<std::int64_t>(n) || (!real && parent[o] != -1)) {
      errors.add(ValidationRule::kTreeRootedAtKey, "parent " + std::to_string(parent[o]) + " of vertex " +
                                                       std::to_string(first + o) + " is out of range");
    }
  }
  if (world.allreduce(errors.count(), ReduceOp::kSum) != 0) {
    return errors.merge(world);
  }

  LargeArray<std::int64_t> level(block);
  compute_levels(grid, via, root, parent, level, errors);

  // Rules 3-5 over this rank's slice of the input edges (rule 2: see validator.hpp).
  Bitmap confirmed(block);
  if (grid.owns(root)) confirmed.set(root - first);
  const std::uint64_t slice_first = 0;
  const std::uint64_t slice_last = slice.size();
  const std::uint64_t largest_slice = world.allreduce(slice.size(), ReduceOp::kMax);
  const std::uint64_t rounds = std::max<std::uint64_t>(1, (largest_slice + edges_per_round - 1) / edges_per_round);
  std::uint64_t traversed = 0;
  const int threads = omp_get_max_threads();
  const auto ranks = static_cast<std::size_t>(grid.size());
  OutgoingBuilder requests_builder(grid.size(), threads);
  OutgoingBuilder confirmations(grid.size(), threads);
  std::vector<std::uint64_t> slot;  // per endpoint: where its answer is, among its owner's
  std::vector<std::uint64_t> bucket_base(static_cast<std::size_t>(threads) * ranks);
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t begin = std::min(slice_last, slice_first + round * edges_per_round);
    const auto count = static_cast<std::int64_t>(std::min(slice_last, begin + edges_per_round) - begin);
    slot.resize(2 * static_cast<std::size_t>(count));
    // Both loops below use the same static schedule in one parallel region, so each
    // thread revisits exactly the endpoints it queued.
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const Edge e = slice.get(begin + static_cast<std::uint64_t>(i));
        for (std::size_t side = 0; side < 2; ++side) {
          const std::uint64_t x = side == 0 ? e.u : e.v;
          auto& bucket = requests_builder.bucket(static_cast<int>(t), grid.owner_of(x));
          slot[2 * static_cast<std::size_t>(i) + side] = bucket.size();
          bucket.push_back(x);
        }
      }
#pragma omp single
      for (std::size_t o = 0; o < ranks; ++o) {
        std::uint64_t run = 0;
        for (std::size_t u = 0; u < static_cast<std::size_t>(threads); ++u) {
          bucket_base[u * ranks + o] = run;
          run += requests_builder.bucket(static_cast<int>(u), static_cast<int>(o)).size();
        }
      }
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const Edge e = slice.get(begin + static_cast<std::uint64_t>(i));
        slot[2 * static_cast<std::size_t>(i)] += bucket_base[t * ranks + static_cast<std::size_t>(grid.owner_of(e.u))];
        slot[2 * static_cast<std::size_t>(i) + 1] +=
            bucket_base[t * ranks + static_cast<std::size_t>(grid.owner_of(e.v))];
      }
    }
    const OutgoingIds requests = requests_builder.finish();
    const IncomingIds answers = ask_owners(grid, via, requests, 2, [&](std::uint64_t v, std::uint64_t* out) {
      out[0] = static_cast<std::uint64_t>(level[v - first]);
      out[1] = static_cast<std::uint64_t>(parent[v - first]);
    });
    auto fetch = [&](std::uint64_t x, std::uint64_t s, std::int64_t& lvl, std::int64_t& par) {
      const std::uint64_t at = answers.offsets[static_cast<std::size_t>(grid.owner_of(x))] + 2 * s;
      lvl = static_cast<std::int64_t>(answers.ids[at]);
      par = static_cast<std::int64_t>(answers.ids[at + 1]);
    };

#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : traversed)
    for (std::int64_t i = 0; i < count; ++i) {
      const int t = omp_get_thread_num();
      const auto k = static_cast<std::size_t>(i);
      const Edge e = slice.get(begin + static_cast<std::uint64_t>(i));
      if (e.u == e.v) continue;
      std::int64_t lu = 0, pu = 0, lv = 0, pv = 0;
      fetch(e.u, slot[2 * k], lu, pu);
      fetch(e.v, slot[2 * k + 1], lv, pv);
      const bool reached_u = lu != kUnreached;
      const bool reached_v = lv != kUnreached;
      if (!reached_u && !reached_v) continue;
      ++traversed;
      if (reached_u != reached_v) {
        errors.add(ValidationRule::kSpansComponent, "edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
                                                        ") joins a reached and an unreached vertex");
        continue;
      }
      if (lu < 0 || lv < 0) continue;  // a broken chain, reported under rule 1
      if (lu - lv > 1 || lv - lu > 1) {
        errors.add(ValidationRule::kInputEdgeLevels, "edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
                                                         ") joins levels " + std::to_string(lu) + " and " +
                                                         std::to_string(lv));
      }
      if (lv == lu + 1 && pv == static_cast<std::int64_t>(e.u)) {
        confirmations.bucket(t, grid.owner_of(e.v)).push_back(e.v);
      }
      if (lu == lv + 1 && pu == static_cast<std::int64_t>(e.v)) {
        confirmations.bucket(t, grid.owner_of(e.u)).push_back(e.u);
      }
    }
    const OutgoingIds confirming = confirmations.finish();
    if (lookups != nullptr) {
      std::vector<KeyedItem> items(confirming.ids.size());
      for (std::size_t k = 0; k < items.size(); ++k) items[k] = {confirming.ids[k], 0};
      for (const KeyedItem& item : lookups->exchange(world, items, confirming.counts)) confirmed.set(item.key - first);
    } else {
      const IncomingIds confirmed_here = exchanger.all_to_all(world, confirming, IdsAre::kSet);
      for (const std::uint64_t v : confirmed_here.ids) confirmed.set(v - first);
    }
  }

  std::uint64_t reached = 0;
  for (std::uint64_t o = 0; o < block; ++o) {
    if (level[o] == kUnreached) continue;
    ++reached;
    if (level[o] >= 0 && !confirmed.test(o)) {
      errors.add(ValidationRule::kParentIsInputEdge, "parent link (" + std::to_string(parent[o]) + ", " +
                                                         std::to_string(first + o) +
                                                         ") is not an input edge between adjacent levels");
    }
  }
  ValidationReport report = errors.merge(world);
  report.traversed_edges = world.allreduce(traversed, ReduceOp::kSum);
  report.reached_vertices = world.allreduce(reached, ReduceOp::kSum);
  return report;
}

}  // namespace zbfs
