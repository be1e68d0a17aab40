// Graph500's per-edge validation rules, written once for both validators (validator.cpp
// on one process, distributed_validator.cpp over ranks): rules 3 and 4 on an input edge
// from the levels of its ends, the edge's vote for rule 5 (it is the tree edge of an end
// whose parent is the other end), and rule 5 on a reached vertex. Levels are depths in
// the parent tree, with kUnreachedLevel for an unreached vertex and another negative
// value for a vertex whose chain is broken (reported under rule 1). `Log` is either
// validator's error log: add(ValidationRule, message). Local, inline (the hot loop of
// validation).
#pragma once

#include <cstdint>
#include <string>

#include "zbfs/core/edge.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {

inline constexpr std::int64_t kUnreachedLevel = -1;

// What one input edge gives: whether it lies inside the searched component (Graph500's
// traversed edges), and whether it confirms u's or v's parent link for rule 5.
struct InputEdgeOutcome {
  bool traversed = false;
  bool confirms_u = false;
  bool confirms_v = false;
};

// The messages are built out of line: a violation is rare, and its string code inlined
// into the edge loop slowed validation by a quarter.
template <class Log>
[[gnu::cold, gnu::noinline]] void report_edge_across_component(const Edge& e, Log& log) {
  log.add(ValidationRule::kSpansComponent,
          "edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) + ") joins a reached and an unreached vertex");
}

template <class Log>
[[gnu::cold, gnu::noinline]] void report_edge_levels(const Edge& e, std::int64_t lu, std::int64_t lv, Log& log) {
  log.add(ValidationRule::kInputEdgeLevels, "edge (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
                                                ") joins levels " + std::to_string(lu) + " and " + std::to_string(lv));
}

template <class Log>
[[gnu::cold, gnu::noinline]] void report_parent_link(std::uint64_t vertex, std::int64_t parent, Log& log) {
  log.add(ValidationRule::kParentIsInputEdge, "parent link (" + std::to_string(parent) + ", " + std::to_string(vertex) +
                                                  ") is not an input edge between adjacent levels");
}

// Rules 3 and 4 on the non-self-loop input edge `e`, whose ends have levels `lu`, `lv`.
// `parent_of(vertex)` gives an end's parent; it is asked only when the levels make the
// edge a possible tree edge.
template <class Log, class ParentOf>
inline InputEdgeOutcome check_input_edge(const Edge& e, std::int64_t lu, std::int64_t lv, const ParentOf& parent_of,
                                         Log& log) {
  InputEdgeOutcome out;
  const bool reached_u = lu != kUnreachedLevel;
  const bool reached_v = lv != kUnreachedLevel;
  if (!reached_u && !reached_v) return out;
  out.traversed = true;
  if (reached_u != reached_v) {
    report_edge_across_component(e, log);
    return out;
  }
  if (lu < 0 || lv < 0) return out;  // a broken chain, reported under rule 1
  if (lu - lv > 1 || lv - lu > 1) report_edge_levels(e, lu, lv, log);
  out.confirms_v = lv == lu + 1 && parent_of(e.v) == static_cast<std::int64_t>(e.u);
  out.confirms_u = lu == lv + 1 && parent_of(e.u) == static_cast<std::int64_t>(e.v);
  return out;
}

// Rule 5 on `vertex` (level `level`, parent `parent`): a reached vertex with a sound chain
// must have had its parent link confirmed by an input edge. Returns whether it was reached.
template <class Log>
inline bool check_parent_link(std::uint64_t vertex, std::int64_t level, std::int64_t parent, bool confirmed, Log& log) {
  if (level == kUnreachedLevel) return false;
  if (level >= 0 && !confirmed) report_parent_link(vertex, parent, log);
  return true;
}

}  // namespace zbfs
