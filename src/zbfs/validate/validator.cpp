#include "zbfs/validate/validator.hpp"

#include <algorithm>
#include <string>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/validate/edge_rules.hpp"
#include "zbfs/validate/tree_checks.hpp"

namespace zbfs {

bool ValidationReport::violates(ValidationRule rule) const {
  return std::find(violated.begin(), violated.end(), rule) != violated.end();
}

ValidationReport validate_bfs_tree(const InputEdges& edges, std::uint64_t root, std::span<const std::int64_t> parent) {
  ValidationReport report;
  ErrorLog log(report);
  const std::uint64_t n = parent.size();
  if (n != edges.num_vertices()) {
    throw Error(ExitCode::kFailure, "the parent array has " + std::to_string(n) + " entries but the edge list has " +
                                        std::to_string(edges.num_vertices()) + " vertices");
  }
  if (!check_parent_range(root, parent, log)) return report;

  LargeArray<std::int32_t> level(n);
  compute_tree_levels(root, parent, level, log);

  // Rules 3-5 in one pass over the input edges (rule 2: see validator.hpp).
  Bitmap confirmed(n);
  confirmed.set(root);
  const std::int32_t* lvl = level.data();
  const auto check_chunk = [&](std::span<const Edge> part) {
    std::uint64_t inside = 0;
    for (const Edge& e : part) {
      if (e.u == e.v) continue;
      if (e.u >= n || e.v >= n) {
        report_edge_outside(e, n, log);
        continue;
      }
      const InputEdgeOutcome edge = check_input_edge(
          e, lvl[e.u], lvl[e.v], [&](std::uint64_t end) { return parent[end]; }, log);
      inside += edge.traversed ? 1 : 0;
      if (edge.confirms_v) confirmed.set_atomic(e.v);
      if (edge.confirms_u) confirmed.set_atomic(e.u);
    }
    return inside;
  };
  const std::uint64_t traversed = for_each_chunk(edges, [&](std::uint64_t, std::span<const Edge> part) {
    // The ends' levels and parents are random reads, which the checks' branches would
    // otherwise take one or two at a time: asked for all at once first (into L2: a
    // chunk's 8192 lines fit), they overlap.
    for (const Edge& e : part) {
      if (e.u < n && e.v < n) {
        __builtin_prefetch(lvl + e.u, 0, 2);
        __builtin_prefetch(lvl + e.v, 0, 2);
        __builtin_prefetch(parent.data() + e.u, 0, 2);
        __builtin_prefetch(parent.data() + e.v, 0, 2);
      }
    }
    return check_chunk(part);
  });
  report.traversed_edges = traversed;

  std::uint64_t reached = 0;
  for (std::uint64_t v = 0; v < n; ++v) reached += check_parent_link(v, lvl[v], parent[v], confirmed.test(v), log);
  report.reached_vertices = reached;
  return report;
}

}  // namespace zbfs
