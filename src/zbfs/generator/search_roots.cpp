#include "zbfs/generator/search_roots.hpp"

#include <string>
#include <unordered_set>

#include "zbfs/core/error.hpp"
#include "zbfs/generator/counter_rng.hpp"

namespace zbfs {

std::vector<std::uint64_t> sample_search_roots(std::uint64_t num_vertices, std::uint64_t num_eligible,
                                               std::uint64_t count, std::uint64_t seed,
                                               const std::function<bool(std::uint64_t)>& eligible) {
  return sample_search_roots_batched(num_vertices, num_eligible, count, seed,
                                     [&](std::span<const std::uint64_t> candidates, std::span<std::uint8_t> flags) {
                                       for (std::size_t i = 0; i < candidates.size(); ++i) {
                                         flags[i] = eligible(candidates[i]) ? 1 : 0;
                                       }
                                     });
}

std::vector<std::uint64_t> sample_search_roots_batched(
    std::uint64_t num_vertices, std::uint64_t num_eligible, std::uint64_t count, std::uint64_t seed,
    const std::function<void(std::span<const std::uint64_t>, std::span<std::uint8_t>)>& eligible_batch) {
  if (num_eligible == 0) {
    // A file of self-loops only (or no edges) leaves no search key; say so rather than
    // print a result block of no searches.
    throw_usage_error(
        "the graph has no edge between two distinct vertices (self-loops do not count): nothing to search");
  }
  if (num_eligible < count) {
    throw_usage_error("the graph has " + std::to_string(num_eligible) + " vertices with edges, fewer than the " +
                      std::to_string(count) + " search roots asked for (--roots)");
  }
  const CounterRng rng(seed, RandomStream::kSearchRoots);
  std::vector<std::uint64_t> roots;
  roots.reserve(count);
  std::unordered_set<std::uint64_t> chosen;
  std::vector<std::uint64_t> candidates;
  std::vector<std::uint8_t> flags;
  std::uint64_t draw = 0;
  while (roots.size() < count) {
    // Twice the missing count per batch: most candidates are eligible in Kronecker graphs.
    const std::uint64_t batch = 2 * (count - roots.size()) + 16;
    candidates.resize(static_cast<std::size_t>(batch));
    flags.assign(static_cast<std::size_t>(batch), 0);
    for (std::uint64_t i = 0; i < batch; ++i) candidates[i] = uniform_below(rng(draw + i), num_vertices);
    draw += batch;
    eligible_batch(candidates, flags);
    for (std::size_t i = 0; i < candidates.size() && roots.size() < count; ++i) {
      if (flags[i] != 0 && chosen.insert(candidates[i]).second) roots.push_back(candidates[i]);
    }
  }
  return roots;
}

}  // namespace zbfs
