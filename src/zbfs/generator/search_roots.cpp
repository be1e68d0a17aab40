#include "zbfs/generator/search_roots.hpp"

#include <string>
#include <unordered_set>

#include "zbfs/core/error.hpp"
#include "zbfs/generator/counter_rng.hpp"

namespace zbfs {

std::vector<std::uint64_t> sample_search_roots(std::uint64_t num_vertices, std::uint64_t num_eligible,
                                               std::uint64_t count, std::uint64_t seed,
                                               const std::function<bool(std::uint64_t)>& eligible) {
  if (num_eligible < count) {
    throw_usage_error("the graph has " + std::to_string(num_eligible) + " vertices with edges, fewer than the " +
                      std::to_string(count) + " search roots asked for (--roots)");
  }
  const CounterRng rng(seed, RandomStream::kSearchRoots);
  std::vector<std::uint64_t> roots;
  roots.reserve(count);
  std::unordered_set<std::uint64_t> chosen;
  for (std::uint64_t draw = 0; roots.size() < count; ++draw) {
    const std::uint64_t candidate = uniform_below(rng(draw), num_vertices);
    if (eligible(candidate) && chosen.insert(candidate).second) roots.push_back(candidate);
  }
  return roots;
}

}  // namespace zbfs
