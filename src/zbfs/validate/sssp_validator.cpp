#include "zbfs/validate/sssp_validator.hpp"

#include <cmath>
#include <string>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/validate/edge_rules.hpp"
#include "zbfs/validate/tree_checks.hpp"

namespace zbfs {
namespace {

// The messages are built out of line, as edge_rules.hpp's are: a violation is rare.
[[gnu::cold, gnu::noinline]] void report_triangle(const Edge& e, float w, float du, float dv, ErrorLog& log) {
  log.add(ValidationRule::kInputEdgeLevels, "edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
                                                ") of weight " + std::to_string(w) + " joins distances " +
                                                std::to_string(du) + " and " + std::to_string(dv));
}

[[gnu::cold, gnu::noinline]] void report_distance(std::uint64_t v, std::int64_t p, float dv, float dp, ErrorLog& log) {
  log.add(ValidationRule::kTreeEdgeDistance, "distance " + std::to_string(dv) + " of vertex " + std::to_string(v) +
                                                 " is not its parent " + std::to_string(p) + "'s " +
                                                 std::to_string(dp) + " plus the weight of an input edge between them");
}

[[gnu::cold, gnu::noinline]] void report_missing_link(std::uint64_t v, std::int64_t p, ErrorLog& log) {
  log.add(ValidationRule::kParentIsInputEdge,
          "parent link (" + std::to_string(p) + ", " + std::to_string(v) + ") is not an input edge");
}

}  // namespace

ValidationReport validate_sssp_tree(const InputEdges& edges, std::uint64_t root, std::span<const std::int64_t> parent,
                                    std::span<const float> distance) {
  ValidationReport report;
  ErrorLog log(report);
  const std::uint64_t n = parent.size();
  if (n != edges.num_vertices() || distance.size() != n) {
    throw Error(ExitCode::kFailure, "the parent and distance arrays have " + std::to_string(n) + " and " +
                                        std::to_string(distance.size()) + " entries but the edge list has " +
                                        std::to_string(edges.num_vertices()) + " vertices");
  }
  if (!edges.has_weights()) throw Error(ExitCode::kFailure, "validate_sssp_tree: the edge list has no weights");
  if (!check_parent_range(root, parent, log)) return report;
  if (distance[root] != 0.0F) {
    log.add(ValidationRule::kTreeRootedAtKey, "the distance of the root is " + std::to_string(distance[root]));
  }
  LargeArray<std::int32_t> level(n);
  compute_tree_levels(root, parent, level, log);
  // A reached vertex's distance must be a distance: finite and not negative.
  for (std::uint64_t v = 0; v < n; ++v) {
    if (level[v] >= 0 && !(distance[v] >= 0 && std::isfinite(distance[v]))) {
      log.add(ValidationRule::kTreeEdgeDistance,
              "vertex " + std::to_string(v) + " is reached at distance " + std::to_string(distance[v]));
      level[v] = kBrokenChain;
    }
  }

  // Rules 2-5 in one pass over the weighted tuples. A parent link is `linked` once some
  // tuple joins the vertex to its parent, and `confirmed` once such a tuple also gives
  // its distance exactly.
  Bitmap linked(n);
  Bitmap confirmed(n);
  linked.set(root);
  confirmed.set(root);
  const std::int32_t* lvl = level.data();
  const float* dist = distance.data();
  const std::uint64_t traversed =
      for_each_weighted_chunk(edges, [&](std::uint64_t, std::span<const Edge> part, std::span<const float> weights) {
        for (const Edge& e : part) {
          if (e.u < n && e.v < n) {
            __builtin_prefetch(lvl + e.u, 0, 2);
            __builtin_prefetch(lvl + e.v, 0, 2);
            __builtin_prefetch(dist + e.u, 0, 2);
            __builtin_prefetch(dist + e.v, 0, 2);
          }
        }
        std::uint64_t inside = 0;
        for (std::size_t i = 0; i < part.size(); ++i) {
          const Edge& e = part[i];
          if (e.u == e.v) continue;
          if (e.u >= n || e.v >= n) {
            report_edge_outside(e, n, log);
            continue;
          }
          const bool reached_u = lvl[e.u] != kUnreachedLevel;
          const bool reached_v = lvl[e.v] != kUnreachedLevel;
          if (!reached_u && !reached_v) continue;
          ++inside;
          if (reached_u != reached_v) {
            report_edge_across_component(e, log);
            continue;
          }
          if (lvl[e.u] < 0 || lvl[e.v] < 0) continue;  // reported under rule 1 or 2
          const float w = weights[i];
          const float du = dist[e.u];
          const float dv = dist[e.v];
          const float via_u = du + w;
          const float via_v = dv + w;
          if (via_u < dv || via_v < du) report_triangle(e, w, du, dv, log);
          if (parent[e.v] == static_cast<std::int64_t>(e.u)) {
            linked.set_atomic(e.v);
            if (dv == via_u) confirmed.set_atomic(e.v);
          }
          if (parent[e.u] == static_cast<std::int64_t>(e.v)) {
            linked.set_atomic(e.u);
            if (du == via_v) confirmed.set_atomic(e.u);
          }
        }
        return inside;
      });
  report.traversed_edges = traversed;

  std::uint64_t reached = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    if (level[v] == kUnreachedLevel) continue;
    ++reached;
    if (level[v] < 0 || confirmed.test(v)) continue;
    if (!linked.test(v)) {
      report_missing_link(v, parent[v], log);
    } else {
      const auto p = static_cast<std::uint64_t>(parent[v]);
      report_distance(v, parent[v], dist[v], dist[p], log);
    }
  }
  report.reached_vertices = reached;
  return report;
}

}  // namespace zbfs
