#include "zbfs/replay/search_plan.hpp"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <tuple>

#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/graph/hub_neighbors.hpp"

namespace zbfs {
namespace {

constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();

// Every vertex's distance from `root` (kUnreached off its component).
std::vector<std::uint32_t> distances_from(const Csr<std::uint32_t>& graph, std::uint64_t root) {
  std::vector<std::uint32_t> distance(graph.num_vertices(), kUnreached);
  std::vector<std::uint32_t> frontier{static_cast<std::uint32_t>(root)};
  std::vector<std::uint32_t> next;
  distance[root] = 0;
  for (std::uint32_t level = 1; !frontier.empty(); ++level) {
    next.clear();
    for (const std::uint32_t u : frontier) {
      for (const std::uint32_t v : graph.neighbors(u)) {
        if (distance[v] != kUnreached) continue;
        distance[v] = level;
        next.push_back(v);
      }
    }
    frontier.swap(next);
  }
  return distance;
}

// The steps' directions as DistributedBfs takes them (bfs/direction_policy.hpp's
// run_levels), from each level's vertices and their edges, which are the same on every
// layout. One step per level; the last finds nothing.
std::vector<StepKind> step_directions(const BfsOptions& options, std::uint64_t num_vertices,
                                      std::uint64_t directed_edges, std::span<const std::uint64_t> level_vertices,
                                      std::span<const std::uint64_t> level_edges) {
  const auto at = [&](std::span<const std::uint64_t> counts, std::size_t level) {
    return level < counts.size() ? counts[level] : 0;
  };
  DirectionPolicy policy(options, num_vertices, directed_edges, level_edges[0]);
  std::vector<StepKind> steps;
  std::uint64_t frontier = 1;
  while (frontier > 0) {
    if (policy.go_bottom_up()) {
      std::uint64_t awake = frontier;
      std::uint64_t previous_awake = 0;
      do {
        previous_awake = awake;
        steps.push_back(StepKind::kBottomUp);
        awake = frontier = at(level_vertices, steps.size());
      } while (policy.stay_bottom_up(awake, previous_awake));
      policy.bottom_up_done();
    } else {
      steps.push_back(StepKind::kTopDown);
      frontier = at(level_vertices, steps.size());
      policy.top_down_done(at(level_edges, steps.size()));
    }
  }
  return steps;
}

void add(std::uint32_t& counter, std::uint32_t units) {
#pragma omp atomic
  counter += units;
}
void add(WorkCounts& counts, WorkKind kind, std::uint64_t units) {
  if (units == 0) return;
  std::uint64_t& counter = counts[static_cast<std::size_t>(kind)];
#pragma omp atomic
  counter += units;
}

// Where a neighbour sits in a distributed list: lists hold sorted ids (their piece, then
// descending input-tuple degree, equal degrees in input order: graph/degree_order.hpp).
struct ListKey {
  std::uint64_t piece = ~std::uint64_t{0};
  std::uint64_t tuple_degree = 0;
  std::uint64_t id = 0;
  [[nodiscard]] bool operator<(const ListKey& other) const {
    if (piece != other.piece) return piece < other.piece;
    if (tuple_degree != other.tuple_degree) return tuple_degree > other.tuple_degree;
    return id < other.id;
  }
};

// What one vertex's list says about it: per column group it has neighbours in, how many
// lie one level above it, at its level and one below (its touches), and how many in all;
// when work is counted, also the block's hub (bfs/distributed_bfs.cpp's check_hubs: the
// first neighbour in list order of the highest degree class) and the first neighbour one
// level above in list order, with the entries before it.
struct ColumnTouches {
  std::vector<std::uint32_t> by_level;  // [c * 3 + delta]
  std::vector<std::uint32_t> entries;   // [c]
  std::vector<int> touched;             // columns with entries, in order of first touch
  std::vector<std::uint8_t> hub_class;  // [c]
  std::vector<ListKey> hub;             // [c]
  std::vector<bool> hub_above;          // [c]: the hub lies one level above
  std::vector<ListKey> first_above;     // [c]
  std::vector<std::uint32_t> before;    // [c]: entries before first_above

  explicit ColumnTouches(int cols, bool with_work)
      : by_level(3 * static_cast<std::size_t>(cols), 0), entries(static_cast<std::size_t>(cols), 0) {
    if (!with_work) return;
    hub_class.assign(static_cast<std::size_t>(cols), 0);
    hub.assign(static_cast<std::size_t>(cols), ListKey{});
    hub_above.assign(static_cast<std::size_t>(cols), false);
    first_above.assign(static_cast<std::size_t>(cols), ListKey{});
    before.assign(static_cast<std::size_t>(cols), 0);
  }
  void clear() {
    for (const int c : touched) {
      const auto i = static_cast<std::size_t>(c);
      by_level[3 * i] = by_level[3 * i + 1] = by_level[3 * i + 2] = 0;
      entries[i] = 0;
      if (hub.empty()) continue;
      hub_class[i] = 0;
      hub[i] = first_above[i] = ListKey{};
      hub_above[i] = false;
      before[i] = 0;
    }
    touched.clear();
  }
  [[nodiscard]] std::uint32_t at(int c, int delta) const {
    return by_level[3 * static_cast<std::size_t>(c) + static_cast<std::size_t>(delta)];
  }
};

class Planner {
 public:
  Planner(const Csr<std::uint32_t>& graph, const ReplayLayout& layout, bool count_work)
      : graph_(graph), layout_(layout), count_work_(count_work) {}

  SearchPlan plan(std::uint64_t root, const BfsOptions& options) {
    SearchPlan plan;
    plan.root = root;
    plan.root_degree = graph_.degree(root);
    distance_ = distances_from(graph_, root);
    count_levels(plan);
    steps_ =
        step_directions(options, graph_.num_vertices(), graph_.num_directed_edges(), level_vertices_, level_edges_);
    // A count for every rank and member of its row, per level: refused before it is
    // allocated where memory cannot hold it (1D at tens of thousands of ranks).
    const std::uint64_t needed = search_plan_bytes(layout_, steps_.size(), count_work_);
    if (const std::optional<std::uint64_t> available = available_memory_bytes(); available && needed > *available) {
      throw Error(ExitCode::kFailure, "zbfs trace: a search's plan needs " + format_bytes(needed) + " for " +
                                          std::to_string(layout_.ranks()) + " ranks in rows of " +
                                          std::to_string(layout_.cols()) + ", " + format_bytes(*available) +
                                          " are available");
    }
    const auto ranks = static_cast<std::size_t>(layout_.ranks());
    const auto cols = static_cast<std::size_t>(layout_.cols());
    // Update folds bring the parents along (1D over a route): nothing to reduce.
    plan.reduce_after = layout_.cols() > 1 && !layout_.routed_fold();
    plan.claimed_from.assign(ranks * cols, 0);
    plan.levels.resize(steps_.size());
    for (std::size_t level = 0; level < steps_.size(); ++level) {
      PlannedLevel& planned = plan.levels[level];
      planned.kind = steps_[level];
      planned.frontier = level < level_vertices_.size() ? level_vertices_[level] : 0;
      planned.discovered = level + 1 < level_vertices_.size() ? level_vertices_[level + 1] : 0;
      planned.gathered.assign(ranks, 0);
      planned.folded.assign(ranks * cols, 0);
      if (count_work_) {
        planned.work_before_gather.assign(ranks, WorkCounts{});
        planned.work.assign(ranks, WorkCounts{});
        planned.work_ring.assign(ranks, WorkCounts{});
        planned.work_after_fold.assign(ranks, WorkCounts{});
      }
    }
    gathered_by_piece(plan);
    if (layout_.union_gather()) union_gathers(plan);
    walk_targets(plan);
    if (layout_.routed_fold()) route_folds(plan);
    if (plan.reduce_after && layout_.row_route() != nullptr) route_reads(plan);
    if (count_work_) {
      walk_sources(plan);
      count_fixed_work(plan);
    }
    return plan;
  }

 private:
  [[nodiscard]] bool top_down_at(std::int64_t level) const {
    return level >= 0 && static_cast<std::size_t>(level) < steps_.size() &&
           steps_[static_cast<std::size_t>(level)] == StepKind::kTopDown;
  }
  [[nodiscard]] bool bottom_up_at(std::int64_t level) const {
    return level >= 0 && static_cast<std::size_t>(level) < steps_.size() &&
           steps_[static_cast<std::size_t>(level)] == StepKind::kBottomUp;
  }

  void count_levels(SearchPlan& plan) {
    level_vertices_.clear();
    level_edges_.clear();
    plan.reached = 0;
    std::uint64_t endpoints = 0;
    for (std::uint64_t v = 0; v < graph_.num_vertices(); ++v) {
      const std::uint32_t d = distance_[v];
      if (d == kUnreached) continue;
      if (d >= level_vertices_.size()) {
        level_vertices_.resize(d + 1, 0);
        level_edges_.resize(d + 1, 0);
      }
      ++level_vertices_[d];
      level_edges_[d] += graph_.degree(v);
      endpoints += graph_.input_tuple_degree(v);
      ++plan.reached;
    }
    // Each tuple from its two ends, as the runners count a tree (count_tree).
    plan.traversed_edges = endpoints / 2;
  }

  // Top-down: each piece's frontier; bottom-up: the mask's open positions, the piece's
  // vertices with edges that no earlier bottom-up gather of the search carried.
  void gathered_by_piece(SearchPlan& plan) {
    const auto ranks = static_cast<std::size_t>(layout_.ranks());
    std::vector<std::vector<std::uint32_t>> frontier_of(plan.levels.size(), std::vector<std::uint32_t>(ranks, 0));
    std::vector<std::uint32_t> with_edges(ranks, 0);
    for (std::uint64_t v = 0; v < graph_.num_vertices(); ++v) {
      const auto piece = static_cast<std::size_t>(layout_.piece_of(v));
      if (graph_.degree(v) > 0) ++with_edges[piece];
      const std::uint32_t d = distance_[v];
      if (d != kUnreached && d < plan.levels.size()) ++frontier_of[d][piece];
    }
    std::vector<std::uint32_t> open = with_edges;
    for (std::size_t level = 0; level < plan.levels.size(); ++level) {
      PlannedLevel& planned = plan.levels[level];
      if (planned.kind == StepKind::kTopDown) {
        planned.gathered = frontier_of[level];
        continue;
      }
      planned.gathered = open;
      for (std::size_t p = 0; p < ranks; ++p) open[p] -= frontier_of[level][p];
    }
    if (!count_work_) return;
    // Claims: each level's new frontier on its owner.
    for (std::size_t level = 0; level < plan.levels.size(); ++level) {
      for (std::size_t p = 0; p < ranks; ++p) {
        if (level + 1 < frontier_of.size()) {
          plan.levels[level].work_after_fold[p][static_cast<std::size_t>(WorkKind::kClaimed)] +=
              frontier_of[level + 1][p];
        }
        if (plan.levels[level].kind == StepKind::kTopDown) {
          plan.levels[level].work_before_gather[p][static_cast<std::size_t>(WorkKind::kQueued)] +=
              frontier_of[level][p];
        }
      }
    }
  }

  // Every vertex's id in the distributed graph: its piece's first vertex plus its sorted
  // offset, the rank of its list key among the piece's vertices (graph/degree_order.hpp).
  void number_as_sorted() {
    if (!sorted_id_.empty()) return;
    const std::uint64_t n = graph_.num_vertices();
    sorted_id_.resize(n);
    std::vector<std::uint32_t> piece;
    for (int p = 0; p < layout_.ranks(); ++p) {
      const std::uint64_t first = layout_.blocks().first_vertex(p);
      const std::uint64_t count = layout_.blocks().piece_vertices(p);
      piece.resize(count);
      for (std::uint64_t k = 0; k < count; ++k) piece[k] = static_cast<std::uint32_t>(first + k);
      std::stable_sort(piece.begin(), piece.end(), [&](std::uint32_t a, std::uint32_t b) {
        return graph_.input_tuple_degree(a) > graph_.input_tuple_degree(b);
      });
      for (std::uint64_t k = 0; k < count; ++k) sorted_id_[piece[k]] = static_cast<std::uint32_t>(first + k);
    }
  }

  // Top-down steps under --column-gather union: each column's frontier ids (sorted ids,
  // by member) through union_allreduce's exchanges, as it makes them: the ids' bound,
  // the fold-in past the largest power of two, then the halvings of the id range.
  void union_gathers(SearchPlan& plan) {
    number_as_sorted();
    const int rows = layout_.rows();
    const int cols = layout_.cols();
    const auto steps = static_cast<std::size_t>(layout_.union_steps());
    // [level][col * rows + row]: the frontier's sorted ids of that top-down level.
    std::vector<std::vector<std::vector<std::uint64_t>>> frontier(plan.levels.size());
    for (std::size_t level = 0; level < plan.levels.size(); ++level) {
      if (plan.levels[level].kind != StepKind::kTopDown) continue;
      frontier[level].resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
      plan.levels[level].union_given.assign(steps, std::vector<std::uint32_t>(plan.levels[level].gathered.size(), 0));
      plan.levels[level].union_held.assign(plan.levels[level].gathered.size(), 0);
    }
    for (std::uint64_t v = 0; v < graph_.num_vertices(); ++v) {
      const std::uint32_t d = distance_[v];
      if (d == kUnreached || d >= plan.levels.size() || frontier[d].empty()) continue;
      const int piece = layout_.piece_of(v);
      frontier[d][static_cast<std::size_t>(layout_.col_of_piece(piece)) * static_cast<std::size_t>(rows) +
                  static_cast<std::size_t>(layout_.row_of_piece(piece))]
          .push_back(sorted_id_[v]);
    }
    for (std::size_t level = 0; level < plan.levels.size(); ++level) {
      if (frontier[level].empty()) continue;
      for (int col = 0; col < cols; ++col) {
        const auto first = frontier[level].begin() + static_cast<std::ptrdiff_t>(col) * rows;
        union_column(plan.levels[level], col,
                     std::span<std::vector<std::uint64_t>>(&*first, static_cast<std::size_t>(rows)));
      }
    }
  }

  // One column's union: `held` (by member) starts as each member's frontier.
  void union_column(PlannedLevel& level, int col, std::span<std::vector<std::uint64_t>> held) const {
    const int p = static_cast<int>(held.size());
    const auto slot = [&](int member) { return static_cast<std::size_t>(layout_.piece_at(member, col)); };
    std::uint64_t bound = 0;
    for (std::vector<std::uint64_t>& ids : held) {
      std::sort(ids.begin(), ids.end());
      if (!ids.empty()) bound = std::max(bound, ids.back() + 1);
    }
    int p2 = 1;
    while (p2 * 2 <= p) p2 *= 2;
    for (int r = p2; r < p; ++r) {
      level.union_given[0][slot(r)] = static_cast<std::uint32_t>(held[static_cast<std::size_t>(r)].size());
      std::vector<std::uint64_t>& into = held[static_cast<std::size_t>(r - p2)];
      std::vector<std::uint64_t>& from = held[static_cast<std::size_t>(r)];
      into.insert(into.end(), from.begin(), from.end());
      std::inplace_merge(into.begin(), into.end() - static_cast<std::ptrdiff_t>(from.size()), into.end());
      from.clear();
    }
    std::vector<std::uint64_t> lo(static_cast<std::size_t>(p2), 0);
    std::vector<std::uint64_t> hi(static_cast<std::size_t>(p2), bound);
    std::vector<std::size_t> split(static_cast<std::size_t>(p2), 0);
    std::size_t step = 1;
    for (int mask = p2 / 2; mask >= 1; mask /= 2, ++step) {
      for (int r = 0; r < p2; ++r) {
        const auto i = static_cast<std::size_t>(r);
        const std::uint64_t mid = lo[i] + (hi[i] - lo[i]) / 2;
        const std::vector<std::uint64_t>& ids = held[i];
        split[i] = static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), mid) - ids.begin());
        const bool keep_lower = (r & mask) == 0;
        level.union_given[step][slot(r)] = static_cast<std::uint32_t>(keep_lower ? ids.size() - split[i] : split[i]);
        (keep_lower ? hi[i] : lo[i]) = mid;
      }
      // Pairs swap halves: the lower member keeps [0, split) and takes its partner's.
      for (int r = 0; r < p2; ++r) {
        if ((r & mask) != 0) continue;
        std::vector<std::uint64_t>& low = held[static_cast<std::size_t>(r)];
        std::vector<std::uint64_t>& high = held[static_cast<std::size_t>(r | mask)];
        const std::size_t low_split = split[static_cast<std::size_t>(r)];
        const std::size_t high_split = split[static_cast<std::size_t>(r | mask)];
        std::vector<std::uint64_t> kept_low(low.begin(), low.begin() + static_cast<std::ptrdiff_t>(low_split));
        kept_low.insert(kept_low.end(), high.begin(), high.begin() + static_cast<std::ptrdiff_t>(high_split));
        std::inplace_merge(kept_low.begin(), kept_low.begin() + static_cast<std::ptrdiff_t>(low_split), kept_low.end());
        std::vector<std::uint64_t> kept_high(low.begin() + static_cast<std::ptrdiff_t>(low_split), low.end());
        const std::size_t from_low = kept_high.size();
        kept_high.insert(kept_high.end(), high.begin() + static_cast<std::ptrdiff_t>(high_split), high.end());
        std::inplace_merge(kept_high.begin(), kept_high.begin() + static_cast<std::ptrdiff_t>(from_low),
                           kept_high.end());
        low.swap(kept_low);
        high.swap(kept_high);
      }
    }
    for (int r = 0; r < p; ++r)
      level.union_held[slot(r)] = static_cast<std::uint32_t>(held[static_cast<std::size_t>(r)].size());
  }

  // The pass over every reached vertex's list, as a target: its reports, its finder and
  // its claim, and (when counted) the entries that list holds for each level's expansions
  // and searches.
  void walk_targets(SearchPlan& plan) {
    const auto n = static_cast<std::int64_t>(graph_.num_vertices());
    const int cols = layout_.cols();
#pragma omp parallel
    {
      ColumnTouches touches(cols, count_work_);
#pragma omp for schedule(dynamic, 1024)
      for (std::int64_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::uint64_t>(i);
        if (graph_.degree(v) == 0) continue;
        touches.clear();
        const std::uint32_t d = distance_[v];
        for (const std::uint32_t u : graph_.neighbors(v)) {
          const int c = layout_.col_of_piece(layout_.piece_of(u));
          const auto ci = static_cast<std::size_t>(c);
          if (touches.entries[ci] == 0) touches.touched.push_back(c);
          ++touches.entries[ci];
          if (d != kUnreached) ++touches.by_level[3 * ci + (distance_[u] + 1 - d)];
        }
        if (count_work_ && d != kUnreached && d >= 1 && bottom_up_at(d - 1)) find_first_above(v, touches);
        plan_target(plan, v, touches);
      }
    }
  }

  void plan_target(SearchPlan& plan, std::uint64_t v, const ColumnTouches& touches) {
    const int cols = layout_.cols();
    const int piece = layout_.piece_of(v);
    const int row = layout_.row_of_piece(piece);
    const int owner_col = layout_.col_of_piece(piece);
    const auto slot = [&](int from_col, int to_col) {
      return static_cast<std::size_t>(layout_.piece_at(row, from_col)) * static_cast<std::size_t>(cols) +
             static_cast<std::size_t>(to_col);
    };
    const std::uint32_t d = distance_[v];
    // The member that found v in a bottom-up step (its report is that step's fold).
    int finder = -1;
    if (d != kUnreached && d >= 1) {
      const auto found_at = static_cast<std::size_t>(d - 1);
      const bool top_down = steps_[found_at] == StepKind::kTopDown;
      int winner = -1;
      if (top_down && touches.at(owner_col, 0) == 0) {
        // The owner claims from the lowest member whose report reached it.
        for (const int c : touches.touched) {
          if (touches.at(c, 0) > 0 && (winner < 0 || c < winner)) winner = c;
        }
      } else if (!top_down && layout_.bottom_up_ring()) {
        // The first member in ring order after the owner (the owner itself first).
        for (const int c : touches.touched) {
          if (touches.at(c, 0) == 0) continue;
          const int after = (c - owner_col + cols) % cols;
          if (winner < 0 || after < (winner - owner_col + cols) % cols) winner = c;
        }
        if (winner == owner_col) winner = -1;
        if (winner >= 0) {
          finder = winner;
          add(plan.levels[found_at].folded[slot(winner, owner_col)], 1);
        }
      }
      if (winner >= 0 && plan.reduce_after) {
        add(plan.claimed_from[static_cast<std::size_t>(piece) * static_cast<std::size_t>(cols) +
                              static_cast<std::size_t>(winner)],
            1);
      }
    }
    for_each_report(v, touches, finder,
                    [&](std::size_t level, int c) { add(plan.levels[level].folded[slot(c, owner_col)], 1); });
    if (count_work_) count_target_work(plan, v, touches, finder);
  }

  // Top-down reports: a member reports v at the first top-down level its frontier
  // touches v, unless it found v before; never to itself. report(level, member).
  template <class Report>
  void for_each_report(std::uint64_t v, const ColumnTouches& touches, int finder, Report&& report) const {
    const std::uint32_t d = distance_[v];
    if (d == kUnreached) return;
    const int owner_col = layout_.col_of_piece(layout_.piece_of(v));
    for (const int c : touches.touched) {
      if (c == owner_col || c == finder) continue;
      for (int delta = 0; delta < 3; ++delta) {
        const std::int64_t level = static_cast<std::int64_t>(d) - 1 + delta;
        if (touches.at(c, delta) == 0 || !top_down_at(level)) continue;
        report(static_cast<std::size_t>(level), c);
        break;
      }
    }
  }

  // 1D over a relaying route: each top-down fold's (vertex, parent) updates hop by hop
  // (wire/routed/routed_exchange.cpp), merged at every rank to one per vertex. Per
  // destination piece, each vertex's reporters move along the route together; what
  // passes from a to b at a hop is one item per vertex, in one group per destination.
  void route_folds(SearchPlan& plan) const {
    const RoutePlan& route = *layout_.row_route();
    const int hops = route.hops();
    for (PlannedLevel& level : plan.levels) {
      if (level.kind != StepKind::kTopDown) continue;
      level.fold_hops.assign(static_cast<std::size_t>(hops), PlannedLevel::HopCounts{});
      for (int h = 0; h < hops; ++h) {
        const std::size_t peers = layout_.hop_peer_slots(h);
        level.fold_hops[static_cast<std::size_t>(h)].items.assign(peers, 0);
        level.fold_hops[static_cast<std::size_t>(h)].groups.assign(peers, 0);
      }
      level.fold_arrivals.assign(static_cast<std::size_t>(layout_.ranks()), 0);
    }
    const int cols = layout_.cols();
#pragma omp parallel
    {
      ColumnTouches touches(cols, false);
      // (level, hop, from, to) of every item that passed, for one destination.
      std::vector<std::tuple<std::uint32_t, int, int, int>> passed;
      std::vector<std::vector<int>> reporters(plan.levels.size());
      std::vector<int> next;
#pragma omp for schedule(dynamic, 1)
      for (int dest = 0; dest < layout_.ranks(); ++dest) {
        passed.clear();
        const std::uint64_t first = layout_.blocks().first_vertex(dest);
        const std::uint64_t end = first + layout_.blocks().piece_vertices(dest);
        for (std::uint64_t v = first; v < end; ++v) {
          if (graph_.degree(v) == 0 || distance_[v] == kUnreached) continue;
          touches.clear();
          touch_columns(v, touches);
          for_each_report(v, touches, -1, [&](std::size_t level, int c) { reporters[level].push_back(c); });
          for (std::size_t level = 0; level < reporters.size(); ++level) {
            std::vector<int>& at = reporters[level];
            if (at.empty()) continue;
            ++plan.levels[level].fold_arrivals[static_cast<std::size_t>(dest)];
            for (int h = 0; h < hops; ++h) {
              next.clear();
              for (const int a : at) {
                const int b = route.next(h, a, dest);
                if (b != a) passed.emplace_back(static_cast<std::uint32_t>(level), h, a, b);
                next.push_back(b);
              }
              std::sort(next.begin(), next.end());
              next.erase(std::unique(next.begin(), next.end()), next.end());
              at.swap(next);
            }
            at.clear();
          }
        }
        std::sort(passed.begin(), passed.end());
        for (std::size_t i = 0; i < passed.size();) {
          std::size_t j = i;
          while (j < passed.size() && passed[j] == passed[i]) ++j;
          const auto [level, h, a, b] = passed[i];
          PlannedLevel::HopCounts& counts = plan.levels[level].fold_hops[static_cast<std::size_t>(h)];
          const std::size_t at = layout_.hop_peer_slot(h, a, b);
          add(counts.items[at], static_cast<std::uint32_t>(j - i));
          add(counts.groups[at], 1);
          i = j;
        }
      }
    }
  }

  // The columns v's neighbours lie in, by level against v's (walk_targets's counts).
  void touch_columns(std::uint64_t v, ColumnTouches& touches) const {
    const std::uint32_t d = distance_[v];
    for (const std::uint32_t u : graph_.neighbors(v)) {
      const auto c = static_cast<std::size_t>(layout_.col_of_piece(layout_.piece_of(u)));
      if (touches.entries[c] == 0) touches.touched.push_back(static_cast<int>(c));
      ++touches.entries[c];
      ++touches.by_level[3 * c + (distance_[u] + 1 - d)];
    }
  }

  // The reduction's requests along the row's route: each holder groups what it holds by
  // the next rank toward each destination (keys are distinct: every asker asks for its
  // own vertices, so no hop merges any).
  void route_reads(SearchPlan& plan) const {
    const RoutePlan& route = *layout_.row_route();
    const auto cols = static_cast<std::size_t>(layout_.cols());
    const auto hops = static_cast<std::size_t>(route.hops());
    plan.read_items.assign(hops, std::vector<std::uint32_t>(plan.claimed_from.size(), 0));
    plan.read_groups.assign(hops, std::vector<std::uint32_t>(plan.claimed_from.size(), 0));
    std::vector<std::uint64_t> held(cols * cols);
    std::vector<std::uint64_t> next(cols * cols);
    for (int row = 0; row < layout_.rows(); ++row) {
      const auto slot = [&](int member) { return static_cast<std::size_t>(layout_.piece_at(row, member)) * cols; };
      for (std::size_t x = 0; x < cols; ++x) {
        std::copy_n(plan.claimed_from.begin() + static_cast<std::ptrdiff_t>(slot(static_cast<int>(x))), cols,
                    held.begin() + static_cast<std::ptrdiff_t>(x * cols));
      }
      for (std::size_t hop = 0; hop < hops; ++hop) {
        std::fill(next.begin(), next.end(), 0);
        for (std::size_t x = 0; x < cols; ++x) {
          for (std::size_t d = 0; d < cols; ++d) {
            const std::uint64_t count = held[x * cols + d];
            if (count == 0) continue;
            const auto to =
                static_cast<std::size_t>(route.next(static_cast<int>(hop), static_cast<int>(x), static_cast<int>(d)));
            next[to * cols + d] += count;
            if (to == x) continue;
            plan.read_items[hop][slot(static_cast<int>(x)) + to] += static_cast<std::uint32_t>(count);
            ++plan.read_groups[hop][slot(static_cast<int>(x)) + to];
          }
        }
        held.swap(next);
      }
    }
  }

  [[nodiscard]] ListKey key_of(std::uint64_t u) const {
    return {static_cast<std::uint64_t>(layout_.piece_of(u)), graph_.input_tuple_degree(u), u};
  }

  // For the bottom-up step that finds v: in each block, its hub and whether it lies one
  // level above (in the frontier), the first frontier neighbour in list order, and the
  // entries a scan reads before it. In 1D the one list is all of v's, its columns the
  // pieces in order.
  void find_first_above(std::uint64_t v, ColumnTouches& touches) const {
    const std::uint32_t above = distance_[v] - 1;
    for (const std::uint32_t u : graph_.neighbors(v)) {
      const auto c = static_cast<std::size_t>(layout_.col_of_piece(layout_.piece_of(u)));
      const ListKey key = key_of(u);
      const std::uint8_t cls = degree_class(graph_.degree(u));
      if (cls > touches.hub_class[c] || (cls == touches.hub_class[c] && key < touches.hub[c])) {
        touches.hub_class[c] = cls;
        touches.hub[c] = key;
        touches.hub_above[c] = distance_[u] == above;
      }
      if (distance_[u] == above && key < touches.first_above[c]) touches.first_above[c] = key;
    }
    for (const std::uint32_t u : graph_.neighbors(v)) {
      const auto c = static_cast<std::size_t>(layout_.col_of_piece(layout_.piece_of(u)));
      if (key_of(u) < touches.first_above[c]) ++touches.before[c];
    }
  }

  // A target's part of the levels' work: the entries top-down expansions read from its
  // lists, and the bottom-up searches of its rows while it is unvisited.
  void count_target_work(SearchPlan& plan, std::uint64_t v, const ColumnTouches& touches, int finder) {
    const int cols = layout_.cols();
    const int piece = layout_.piece_of(v);
    const int row = layout_.row_of_piece(piece);
    const int owner_col = layout_.col_of_piece(piece);
    const std::uint32_t d = distance_[v];
    // The member's own piece is searched before the ring, the others' around it.
    const auto work_of = [&](std::size_t level, int col) -> WorkCounts& {
      PlannedLevel& planned = plan.levels[level];
      return (col == owner_col ? planned.work
                               : planned.work_ring)[static_cast<std::size_t>(layout_.piece_at(row, col))];
    };
    if (d != kUnreached) {
      for (const int c : touches.touched) {
        for (int delta = 0; delta < 3; ++delta) {
          const std::int64_t level = static_cast<std::int64_t>(d) - 1 + delta;
          if (top_down_at(level)) {
            add(work_of(static_cast<std::size_t>(level), c), WorkKind::kListEntries, touches.at(c, delta));
          }
        }
      }
    }
    // Bottom-up: while unvisited, every member with a list for v tests its hub and reads
    // its list, in ring order from the owner, until one finds it; in 1D only the owner
    // searches, its one list being all of v's.
    const std::size_t searched_until = d == kUnreached ? steps_.size() : std::min<std::size_t>(d, steps_.size());
    for (std::size_t level = 0; level < searched_until; ++level) {
      if (steps_[level] != StepKind::kBottomUp) continue;
      const bool found_here = level + 1 == d;
      if (!layout_.bottom_up_ring()) {
        search_whole_list(work_of(level, owner_col), touches, found_here);
        continue;
      }
      // The member that finds v here: the first in ring order with a frontier neighbour.
      int first = -1;
      const auto ring_at = [&](int c) { return (c - owner_col + cols) % cols; };
      if (found_here) {
        for (const int c : touches.touched) {
          if (touches.at(c, 0) > 0 && (first < 0 || ring_at(c) < ring_at(first))) first = c;
        }
      }
      for (const int c : touches.touched) {
        const auto ci = static_cast<std::size_t>(c);
        if (first >= 0 && ring_at(c) > ring_at(first)) continue;  // found before its turn
        WorkCounts& work = work_of(level, c);
        if (c != first) {
          search_row(work, touches.entries[ci], false, false, 0);
          continue;
        }
        search_row(work, touches.entries[ci], true, touches.hub_above[ci], touches.before[ci]);
        if (c == finder) add(work, WorkKind::kQueued, 1);
      }
    }
  }

  // 1D: the owner's one list for v, its blocks (pieces) in list order.
  static void search_whole_list(WorkCounts& work, const ColumnTouches& touches, bool found_here) {
    std::uint64_t entries = 0;
    for (const int c : touches.touched) entries += touches.entries[static_cast<std::size_t>(c)];
    if (!found_here) {
      search_row(work, entries, false, false, 0);
      return;
    }
    // The hub: the highest class over the blocks, the first in list order among equals;
    // the first frontier neighbour: the first over the blocks, after every block before
    // its own.
    int hub = -1;
    int first = -1;
    for (const int c : touches.touched) {
      const auto ci = static_cast<std::size_t>(c);
      if (hub < 0 || touches.hub_class[ci] > touches.hub_class[static_cast<std::size_t>(hub)] ||
          (touches.hub_class[ci] == touches.hub_class[static_cast<std::size_t>(hub)] &&
           touches.hub[ci] < touches.hub[static_cast<std::size_t>(hub)])) {
        hub = c;
      }
      if (touches.at(c, 0) > 0 && (first < 0 || c < first)) first = c;
    }
    std::uint64_t before = 0;
    for (const int c : touches.touched) {
      if (c < first) before += touches.entries[static_cast<std::size_t>(c)];
    }
    before += touches.before[static_cast<std::size_t>(first)];
    search_row(work, entries, true, touches.hub_above[static_cast<std::size_t>(hub)], before);
  }

  // One unvisited row searched: its hub tested; unless the hub is in the frontier, its
  // list read up to the first frontier neighbour (`before` entries, then that one) or
  // through when it has none.
  static void search_row(WorkCounts& work, std::uint64_t entries, bool hits, bool hub_hit, std::uint64_t before) {
    add(work, WorkKind::kHubChecks, 1);
    if (hits && hub_hit) return;
    add(work, WorkKind::kLists, 1);
    add(work, WorkKind::kListEntries, hits ? before + 1 : entries);
  }

  // The pass over every top-down source's list: the lists a step opens (one per source
  // and row group that its list reaches).
  void walk_sources(SearchPlan& plan) {
    const auto n = static_cast<std::int64_t>(graph_.num_vertices());
    const int rows = layout_.rows();
#pragma omp parallel
    {
      std::vector<std::uint8_t> seen(static_cast<std::size_t>(rows), 0);
      std::vector<int> touched;
#pragma omp for schedule(dynamic, 1024)
      for (std::int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::uint64_t>(i);
        const std::uint32_t d = distance_[u];
        if (d == kUnreached || !top_down_at(d)) continue;
        const int col = layout_.col_of_piece(layout_.piece_of(u));
        for (const std::uint32_t v : graph_.neighbors(u)) {
          const int r = layout_.row_of_piece(layout_.piece_of(v));
          if (seen[static_cast<std::size_t>(r)] == 0) touched.push_back(r);
          seen[static_cast<std::size_t>(r)] = 1;
        }
        for (const int r : touched) {
          add(plan.levels[d].work[static_cast<std::size_t>(layout_.piece_at(r, col))], WorkKind::kLists, 1);
          seen[static_cast<std::size_t>(r)] = 0;
        }
        touched.clear();
      }
    }
  }

  // What every rank does whatever the graph: its bitmaps' words, its local steps, the
  // ids it queues and applies, and the bytes it hands to exchanges.
  void count_fixed_work(SearchPlan& plan) const {
    count_search_ends(plan);
    count_level_steps(plan);
  }

  static std::uint64_t& at(WorkCounts& work, WorkKind kind) { return work[static_cast<std::size_t>(kind)]; }

  void count_search_ends(SearchPlan& plan) const {
    const int ranks = layout_.ranks();
    const int cols = layout_.cols();
    const std::uint64_t words = layout_.blocks().words_per_block();
    // The search's start clears the visited, reported and frontier bits (the reported
    // ones over the row group); its end asks for the reports' parents and moves the tree.
    plan.start_work.assign(static_cast<std::size_t>(ranks), WorkCounts{});
    plan.end_work.assign(static_cast<std::size_t>(ranks), WorkCounts{});
    for (int p = 0; p < ranks; ++p) {
      const auto i = static_cast<std::size_t>(p);
      at(plan.start_work[i], WorkKind::kSteps) = 1;
      at(plan.start_work[i], WorkKind::kBitmapWords) = words * static_cast<std::uint64_t>(2 + cols);
      WorkCounts& end = plan.end_work[i];
      at(end, WorkKind::kSteps) = 1;
      at(end, WorkKind::kBitmapWords) = words;
      if (!plan.reduce_after) continue;
      const int row = layout_.row_of_piece(p);
      const int col = layout_.col_of_piece(p);
      for (int m = 0; m < cols; ++m) {
        const std::uint64_t asked = plan.claimed_from[i * static_cast<std::size_t>(cols) + static_cast<std::size_t>(m)];
        const std::uint64_t asked_of_me =
            plan.claimed_from[static_cast<std::size_t>(layout_.piece_at(row, m)) * static_cast<std::size_t>(cols) +
                              static_cast<std::size_t>(col)];
        at(end, WorkKind::kQueued) += asked;
        at(end, WorkKind::kArrivals) += asked + asked_of_me;  // the answers here, the requests there
      }
      // Along a route, the bytes of the hop messages it hands on: requests, then replies
      // (search_calls.cpp: three words a request, back to whoever handed it over).
      for (std::size_t hop = 0; hop < plan.read_items.size(); ++hop) {
        for (int m = 0; m < cols; ++m) {
          const std::size_t mine = i * static_cast<std::size_t>(cols) + static_cast<std::size_t>(m);
          const std::uint64_t items = plan.read_items[hop][mine];
          if (items > 0) at(end, WorkKind::kRoutedBytes) += 8 * (1 + 2 * plan.read_groups[hop][mine] + 2 * items);
          at(end, WorkKind::kRoutedBytes) +=
              24 *
              plan.read_items[hop][static_cast<std::size_t>(layout_.piece_at(row, m)) * static_cast<std::size_t>(cols) +
                                   static_cast<std::size_t>(col)];
        }
      }
    }
  }

  // Each level's bitmaps, local steps, queued and arrived ids, by where the search does them.
  void count_level_steps(SearchPlan& plan) const {
    const int ranks = layout_.ranks();
    const int rows = layout_.rows();
    const int cols = layout_.cols();
    const std::uint64_t words = layout_.blocks().words_per_block();
    const std::uint64_t source_words = words * static_cast<std::uint64_t>(layout_.bottom_up_ring() ? rows : ranks);
    for (PlannedLevel& level : plan.levels) {
      const bool top_down = level.kind == StepKind::kTopDown;
      const bool ring = !top_down && layout_.bottom_up_ring() && cols > 1;
      for (int p = 0; p < ranks; ++p) {
        const auto i = static_cast<std::size_t>(p);
        WorkCounts& work = level.work[i];
        const int row = layout_.row_of_piece(p);
        const int col = layout_.col_of_piece(p);
        std::uint64_t sent = 0;
        std::uint64_t arrived = 0;
        for (int m = 0; m < cols; ++m) {
          if (m == col) continue;
          sent += level.folded[i * static_cast<std::size_t>(cols) + static_cast<std::size_t>(m)];
          arrived += level.folded[static_cast<std::size_t>(layout_.piece_at(row, m)) * static_cast<std::size_t>(cols) +
                                  static_cast<std::size_t>(col)];
        }
        WorkCounts& after = level.work_after_fold[i];
        if (!level.fold_hops.empty()) {
          // Updates: a word pair each queued, one a vertex claimed, the hop messages' bytes.
          sent *= 2;
          arrived = level.fold_arrivals[i];
          at(after, WorkKind::kRoutedBytes) += routed_fold_bytes(level, col);
        }
        // The fold's arrivals claimed (updates: only when some came), the level counted:
        // two local steps.
        at(after, WorkKind::kArrivals) += arrived;
        at(after, WorkKind::kBitmapWords) += words;
        at(after, WorkKind::kSteps) += level.fold_hops.empty() || arrived > 0 ? 2 : 1;
        if (top_down) {
          at(level.work_before_gather[i], WorkKind::kBitmapWords) += words;
          at(work, WorkKind::kQueued) += sent;
          at(work, WorkKind::kBitmapWords) += words;  // next cleared
          at(work, WorkKind::kSteps) += 1;            // the expansion
        } else {
          // The mask (after a gather), the own search, and with a ring the visited copy;
          // each other piece searched.
          const bool gathered = layout_.bottom_up_ring() ? rows > 1 : ranks > 1;
          at(work, WorkKind::kBitmapWords) += (gathered ? source_words : 0) + words * (ring ? 2 : 1);
          at(work, WorkKind::kSteps) += ring ? 2 : 1;
          if (ring) {
            at(level.work_ring[i], WorkKind::kBitmapWords) += words * static_cast<std::uint64_t>(cols - 1);
            at(level.work_ring[i], WorkKind::kSteps) += static_cast<std::uint64_t>(cols - 1);
          }
        }
      }
    }
  }

  // The bytes of the hop messages `member` hands on in a routed fold (hop_message.hpp: a
  // group count, a (destination, count) pair a group, two words an item).
  [[nodiscard]] std::uint64_t routed_fold_bytes(const PlannedLevel& level, int member) const {
    std::uint64_t bytes = 0;
    for (std::size_t h = 0; h < level.fold_hops.size(); ++h) {
      const int hop = static_cast<int>(h);
      for (const int to : layout_.hop_targets(hop, member)) {
        const std::size_t at = layout_.hop_peer_slot(hop, member, to);
        const std::uint64_t items = level.fold_hops[h].items[at];
        if (items > 0) bytes += 8 * (1 + 2 * std::uint64_t{level.fold_hops[h].groups[at]} + 2 * items);
      }
    }
    return bytes;
  }

  const Csr<std::uint32_t>& graph_;
  const ReplayLayout& layout_;
  bool count_work_;
  std::vector<std::uint32_t> distance_;
  std::vector<std::uint64_t> level_vertices_;
  std::vector<std::uint64_t> level_edges_;
  std::vector<StepKind> steps_;
  std::vector<std::uint32_t> sorted_id_;  // number_as_sorted's, when a union needs them
};

}  // namespace

ReplayLayout::ReplayLayout(Partition partition, GridShape shape, std::uint64_t num_vertices,
                           const std::optional<RouteChoice>& route, ColumnGather gather)
    : partition_(partition), shape_(partition == Partition::k1D ? GridShape{1, shape.size()} : shape), gather_(gather) {
  if (shape_.size() < 1) throw_usage_error("a replayed job needs at least one rank");
  blocks_ = VertexBlocks(num_vertices, shape_.size());
  if (route) {
    if (!relays(route->kind)) throw_usage_error("a planned route relays: grid2, gridk or hypercube");
    row_route_ = route->plan_for(shape_.cols);
    if (routed_fold()) {
      const int hops = row_route_->hops();
      hop_first_.assign(static_cast<std::size_t>(hops), std::vector<std::size_t>(1, 0));
      hop_to_.assign(static_cast<std::size_t>(hops), {});
      hop_from_.assign(static_cast<std::size_t>(hops), {});
      hop_from_first_.assign(static_cast<std::size_t>(hops), std::vector<std::size_t>(1, 0));
      for (int member = 0; member < shape_.cols; ++member) {
        const std::vector<RoutePlan::HopPeers> peers = row_route_->hop_peers(member);
        for (std::size_t h = 0; h < peers.size(); ++h) {
          hop_to_[h].insert(hop_to_[h].end(), peers[h].to.begin(), peers[h].to.end());
          hop_first_[h].push_back(hop_to_[h].size());
          hop_from_[h].insert(hop_from_[h].end(), peers[h].from.begin(), peers[h].from.end());
          hop_from_first_[h].push_back(hop_from_[h].size());
        }
      }
    }
  }
}

std::span<const int> ReplayLayout::hop_targets(int hop, int member) const {
  const auto h = static_cast<std::size_t>(hop);
  const auto m = static_cast<std::size_t>(member);
  return std::span<const int>(hop_to_[h]).subspan(hop_first_[h][m], hop_first_[h][m + 1] - hop_first_[h][m]);
}

std::span<const int> ReplayLayout::hop_sources(int hop, int member) const {
  const auto h = static_cast<std::size_t>(hop);
  const auto m = static_cast<std::size_t>(member);
  return std::span<const int>(hop_from_[h])
      .subspan(hop_from_first_[h][m], hop_from_first_[h][m + 1] - hop_from_first_[h][m]);
}

std::size_t ReplayLayout::hop_peer_slot(int hop, int from, int to) const {
  const std::span<const int> targets = hop_targets(hop, from);
  const auto at = std::lower_bound(targets.begin(), targets.end(), to);
  if (at == targets.end() || *at != to) {
    throw Error(ExitCode::kFailure, "search plan: member " + std::to_string(to) + " is no hop " + std::to_string(hop) +
                                        " peer of " + std::to_string(from));
  }
  return hop_first_[static_cast<std::size_t>(hop)][static_cast<std::size_t>(from)] +
         static_cast<std::size_t>(at - targets.begin());
}

int ReplayLayout::union_steps() const {
  if (!union_gather()) return 0;
  int steps = 1;
  for (int p2 = 2; p2 <= shape_.rows; p2 *= 2) ++steps;
  return steps;
}

std::uint64_t search_plan_bytes(const ReplayLayout& layout, std::uint64_t levels, bool count_work) {
  const auto ranks = static_cast<std::uint64_t>(layout.ranks());
  const auto cols = static_cast<std::uint64_t>(layout.cols());
  const auto union_steps = static_cast<std::uint64_t>(layout.union_steps());
  const std::uint64_t per_level = ranks * (cols + 1 + (union_steps > 0 ? union_steps + 1 : 0)) * sizeof(std::uint32_t) +
                                  (count_work ? 4 * ranks * sizeof(WorkCounts) : 0);
  std::uint64_t route_reads = 0;
  std::uint64_t route_folds = 0;
  if (layout.routed_fold()) {
    for (int h = 0; h < layout.row_route()->hops(); ++h) route_folds += 2 * 4 * layout.hop_peer_slots(h);
    route_folds += 4 * ranks;
  } else if (layout.row_route() != nullptr) {
    route_reads = 2 * static_cast<std::uint64_t>(layout.row_route()->hops()) * ranks * cols * 4;
  }
  // A union numbers every vertex as sorted, and holds each level's frontier ids.
  const std::uint64_t union_ids =
      union_steps > 0 ? layout.blocks().num_vertices() * (sizeof(std::uint32_t) + sizeof(std::uint64_t)) : 0;
  return levels * (per_level + route_folds) + ranks * cols * sizeof(std::uint32_t) + route_reads + union_ids;
}

SearchPlan plan_search(const Csr<std::uint32_t>& graph, const ReplayLayout& layout, std::uint64_t root,
                       const BfsOptions& options, bool count_work) {
  if (graph.num_vertices() != layout.blocks().num_vertices()) {
    throw Error(ExitCode::kFailure, "search plan: the layout has " + std::to_string(layout.blocks().num_vertices()) +
                                        " vertices, the graph " + std::to_string(graph.num_vertices()));
  }
  if (root >= graph.num_vertices()) throw_usage_error("search key " + std::to_string(root) + " is no vertex");
  return Planner(graph, layout, count_work).plan(root, options);
}

}  // namespace zbfs
