#include "zbfs/validate/tree_checks.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "zbfs/validate/edge_rules.hpp"

namespace zbfs {
namespace {

constexpr auto kUnreached = static_cast<std::int32_t>(kUnreachedLevel);
constexpr std::size_t kMaxMessages = 8;

}  // namespace

void ErrorLog::add(ValidationRule rule, const std::string& message) {
  const std::lock_guard lock(mutex_);
  ++report_.error_count;
  if (std::find(report_.violated.begin(), report_.violated.end(), rule) == report_.violated.end()) {
    report_.violated.push_back(rule);
  }
  if (report_.messages.size() < kMaxMessages) {
    report_.messages.push_back("rule " + std::to_string(static_cast<int>(rule)) + ": " + message);
  }
}

void compute_tree_levels(std::uint64_t root, std::span<const std::int64_t> parent, LargeArray<std::int32_t>& level,
                         ErrorLog& log) {
  const std::uint64_t n = parent.size();
  for (std::uint64_t v = 0; v < n; ++v) level[v] = parent[v] == -1 ? kUnreached : kUnknownLevel;
  level[root] = 0;
  std::vector<std::uint64_t> path;
  for (std::uint64_t start = 0; start < n; ++start) {
    if (level[start] != kUnknownLevel) continue;
    path.clear();
    std::uint64_t x = start;
    while (level[x] == kUnknownLevel) {
      level[x] = kOnPathLevel;
      path.push_back(x);
      x = static_cast<std::uint64_t>(parent[x]);
    }
    std::int32_t base = level[x];
    if (base < 0) {
      const char* why = base == kOnPathLevel ? "lies on a parent cycle"
                        : base == kUnreached ? "has an unreached ancestor"
                                             : "has a broken parent chain";
      log.add(ValidationRule::kTreeRootedAtKey, "vertex " + std::to_string(start) + " " + why);
      for (const std::uint64_t p : path) level[p] = kBrokenChain;
      continue;
    }
    if (path.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max() - base)) {
      log.add(ValidationRule::kTreeRootedAtKey, "tree deeper than 2^31 levels");
      for (const std::uint64_t p : path) level[p] = kBrokenChain;
      continue;
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) level[*it] = ++base;
  }
}

bool check_parent_range(std::uint64_t root, std::span<const std::int64_t> parent, ErrorLog& log) {
  const std::uint64_t n = parent.size();
  if (root >= n) {
    log.add(ValidationRule::kTreeRootedAtKey, "search key " + std::to_string(root) + " is not a vertex");
    return false;
  }
  if (parent[root] != static_cast<std::int64_t>(root)) {
    log.add(ValidationRule::kTreeRootedAtKey,
            "the parent of the root " + std::to_string(root) + " is " + std::to_string(parent[root]));
    return false;
  }
  bool in_range = true;
  for (std::uint64_t v = 0; v < n; ++v) {
    if (parent[v] < -1 || parent[v] >= static_cast<std::int64_t>(n)) {
      log.add(ValidationRule::kTreeRootedAtKey,
              "parent " + std::to_string(parent[v]) + " of vertex " + std::to_string(v) + " is out of range");
      in_range = false;
    }
  }
  return in_range;
}

void report_edge_outside(const Edge& e, std::uint64_t n, ErrorLog& log) {
  log.add(ValidationRule::kInputEdgeLevels, "input edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
                                                ") has an end outside the " + std::to_string(n) + " vertices");
}

}  // namespace zbfs
