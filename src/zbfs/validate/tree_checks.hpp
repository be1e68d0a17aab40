// What the one-process validators (validator.cpp for BFS trees, sssp_validator.cpp for
// shortest-path trees) share: an error log that many threads write to, and the tree's
// levels as depths in the parent array, which is how both check rule 1 (the parent links
// form a tree rooted at the search key). Internal to validate/.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "zbfs/core/edge.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {

// Levels of reached vertices whose chain is not sound (kUnreachedLevel, -1, marks an
// unreached vertex: edge_rules.hpp).
inline constexpr std::int32_t kUnknownLevel = -2;  // reached, level not yet computed
inline constexpr std::int32_t kOnPathLevel = -3;   // on the parent chain being walked
inline constexpr std::int32_t kBrokenChain = -4;   // its chain never reaches the root

// Collects errors from many threads; keeps counts exact and messages few.
class ErrorLog {
 public:
  explicit ErrorLog(ValidationReport& report) : report_(report) {}
  void add(ValidationRule rule, const std::string& message);

 private:
  ValidationReport& report_;
  std::mutex mutex_;
};

// Levels as depths in the parent tree, walking each chain once (O(n) in total). Chains
// that loop or end anywhere but the root break rule 1 and get kBrokenChain.
void compute_tree_levels(std::uint64_t root, std::span<const std::int64_t> parent, LargeArray<std::int32_t>& level,
                         ErrorLog& log);

// Rule 1's preconditions: `root` is a vertex and its own parent, and every parent is -1
// or a vertex. Returns false (having logged why) when they fail.
bool check_parent_range(std::uint64_t root, std::span<const std::int64_t> parent, ErrorLog& log);

// An input tuple with an end outside the vertex range: the list and the parent array
// do not belong together (a stored list's ids are below n by construction).
[[gnu::cold, gnu::noinline]] void report_edge_outside(const Edge& e, std::uint64_t n, ErrorLog& log);

}  // namespace zbfs
