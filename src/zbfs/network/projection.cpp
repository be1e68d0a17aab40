#include "zbfs/network/projection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "zbfs/core/error.hpp"
#include "zbfs/mpi/collective_traffic.hpp"

namespace zbfs {
namespace {

bool is_bfs_phase(Phase p) {
  return p == Phase::kLocalExpansion || p == Phase::kColumnExchange || p == Phase::kRowExchange ||
         p == Phase::kTerminationCheck || p == Phase::kPredecessorReduction;
}

// How often the recorded totals of a phase happened: per search, per validation, once.
double occurrences(const RecordedRun& run, Phase p) {
  if (is_bfs_phase(p)) return run.searches;
  if (p == Phase::kValidation) return run.validations;
  return 1;
}

// Up to 64 ranks spread over the job, the last one included.
std::vector<int> sample_ranks(int ranks) {
  std::set<int> picked;
  const int count = std::min(ranks, 64);
  for (int i = 0; i < count; ++i) {
    picked.insert(static_cast<int>(static_cast<long long>(i) * ranks / count));
  }
  picked.insert(ranks - 1);
  return {picked.begin(), picked.end()};
}

// Floor division for a positive divisor (C++ rounds towards zero).
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// How many world ranks of `blocks` runs of `length` consecutive ranks, run q starting at
// first + q * step (step >= length: the runs do not overlap), lie in [lo, hi): in
// closed form, since a projection to millions of ranks must not count them one by one.
// A row of a grid is such runs of one rank, a column of a hybrid grid runs of a node's.
std::int64_t ranks_in_range(std::int64_t first, std::int64_t step, std::int64_t length, std::int64_t blocks,
                            std::int64_t lo, std::int64_t hi) {
  if (blocks <= 0 || hi <= lo) return 0;
  // The runs that meet [lo, hi): start < hi and start + length > lo.
  const std::int64_t q_lo = std::max<std::int64_t>(0, floor_div(lo - first - length, step) + 1);
  const std::int64_t q_hi = std::min<std::int64_t>(blocks - 1, floor_div(hi - first - 1, step));
  if (q_lo > q_hi) return 0;
  const auto in_range = [&](std::int64_t q) {
    const std::int64_t start = first + q * step;
    return std::max<std::int64_t>(0, std::min(start + length, hi) - std::max(start, lo));
  };
  if (q_lo == q_hi) return in_range(q_lo);
  // Only the first and the last run can be cut by the range's ends.
  return in_range(q_lo) + in_range(q_hi) + (q_hi - q_lo - 1) * length;
}

int node_overlap(int first, int count, int node, int ranks_per_node) {
  const int lo = std::max(first, node * ranks_per_node);
  const int hi = std::min(first + count, (node + 1) * ranks_per_node);
  return std::max(0, hi - lo);
}

}  // namespace

int group_size(CommRole role, const GridShape& grid) {
  switch (role) {
    case CommRole::kWorld: return grid.size();
    case CommRole::kRow: return grid.cols;
    case CommRole::kColumn: return grid.rows;
    case CommRole::kOther: return 1;
  }
  return 1;
}

int members_on_node(CommRole role, const GridShape& grid, int rank, int ranks_per_node) {
  const int node = rank / ranks_per_node;
  const std::int64_t lo = static_cast<std::int64_t>(node) * ranks_per_node;
  const std::int64_t hi = lo + ranks_per_node;
  switch (role) {
    case CommRole::kWorld: return node_overlap(0, grid.size(), node, ranks_per_node);
    case CommRole::kRow: {
      // rank_at(row, col) for col = 0, 1, ...: one rank every `stack`.
      const int row = grid.row_of(rank);
      return static_cast<int>(ranks_in_range(grid.rank_at(row, 0), grid.stack, 1, grid.cols, lo, hi));
    }
    case CommRole::kColumn:
      // rank_at(row, col) for row = 0, 1, ...: runs of `stack` consecutive ranks, one every
      // cols * stack.
      return static_cast<int>(ranks_in_range(grid.rank_at(0, grid.col_of(rank)),
                                             static_cast<std::int64_t>(grid.cols) * grid.stack, grid.stack,
                                             grid.rows / grid.stack, lo, hi));
    case CommRole::kOther: return 1;
  }
  return 1;
}

ScaledTraffic scale_traffic(CommPattern pattern, double bytes, double messages, double calls, int g0, int p0, int g,
                            int p) {
  if (g <= 1 || g0 <= 1) return {};
  const double dg0 = g0;
  const double dg = g;
  const double log0 = ceil_log2(static_cast<std::uint64_t>(g0));
  const double log1 = ceil_log2(static_cast<std::uint64_t>(g));
  switch (pattern) {
    case CommPattern::kPersonalized:
      return {bytes * ((dg - 1) / (dg * p)) / ((dg0 - 1) / (dg0 * p0)), messages * (dg - 1) / (dg0 - 1)};
    case CommPattern::kGather: return {bytes * ((dg - 1) / p) / ((dg0 - 1) / p0), calls * (dg - 1)};
    case CommPattern::kReduce: return {bytes * log1 / log0, calls * log1};
    case CommPattern::kPairwise: return {bytes * ((dg - 1) / p) / ((dg0 - 1) / p0), messages * log1 / log0};
  }
  return {};
}

double price_traffic(const NetworkModel& network, CommPattern pattern, const ScaledTraffic& traffic, int g,
                     int on_node) {
  if (g <= 1) return 0;
  const int off_node = g - on_node;
  switch (pattern) {
    case CommPattern::kPersonalized: {
      // Owners are spread evenly over the group's members.
      const double off = static_cast<double>(off_node) / (g - 1);
      ClassTraffic t;
      t.add(LinkClass::kIntraNode, traffic.messages * (1 - off), traffic.bytes * (1 - off));
      t.add(LinkClass::kInterNode, traffic.messages * off, traffic.bytes * off);
      return network.time_s(t);
    }
    case CommPattern::kGather: {
      const LinkCost& link = network.link(off_node > 0 ? LinkClass::kInterNode : LinkClass::kIntraNode);
      return link.time_s(traffic.messages, traffic.bytes);
    }
    case CommPattern::kReduce:
    case CommPattern::kPairwise: {
      // Rounds split between partners on this node and elsewhere as in doubling_traffic.
      const int rounds = ceil_log2(static_cast<std::uint64_t>(g));
      const ClassTraffic split = doubling_traffic(g, on_node, 1.0);
      const double local = rounds > 0 ? split.messages[0] / rounds : 0;
      ClassTraffic t;
      t.add(LinkClass::kIntraNode, traffic.messages * local, traffic.bytes * local);
      t.add(LinkClass::kInterNode, traffic.messages * (1 - local), traffic.bytes * (1 - local));
      return network.time_s(t);
    }
  }
  return 0;
}

double price_one_sided(const NetworkModel& network, const ScaledTraffic& traffic, double calls, int g, int on_node) {
  if (g <= 1) return 0;
  const int off_node = g - on_node;
  const LinkClass slowest = off_node > 0 ? LinkClass::kInterNode : LinkClass::kIntraNode;
  // Pieces are spread evenly over the group's members, like messages.
  const double off = static_cast<double>(off_node) / (g - 1);
  constexpr double kOpsPerPiece = 3;  // reservation, put, notification
  const double ops = kOpsPerPiece * traffic.messages;
  return calls * 4 * network.link(slowest).latency_s +
         ops * ((1 - off) * one_sided_op_s(network, LinkClass::kIntraNode) +
                off * one_sided_op_s(network, LinkClass::kInterNode)) +
         traffic.bytes *
             ((1 - off) / network.intra_node.bandwidth_bytes_per_s + off / network.inter_node.bandwidth_bytes_per_s);
}

Projection project_run(const RecordedRun& run, const ProjectionTarget& target) {
  if (run.ranks < 1 || run.grid.size() != run.ranks)
    throw_usage_error("the recorded run's grid does not match its ranks");
  if (target.ranks < 1 || target.grid.size() != target.ranks) throw_usage_error("--grid does not multiply to --ranks");
  if (target.ranks_per_node < 1) throw_usage_error("--ranks-per-node must be at least 1");
  if (run.searches <= 0) throw_usage_error("the recorded run has no searches");

  Projection out;
  const std::vector<int> sampled = sample_ranks(target.ranks);
  out.sampled_ranks = static_cast<int>(sampled.size());
  if (run.ranks == 1 && target.ranks > 1) {
    // Nothing crossed a link, so every projected exchange would price as zero.
    out.warnings.push_back(
        "the recorded run had one rank, so it recorded no traffic and the projected communication is zero; record on "
        "2 or more ranks (a 2d grid of at least 2 x 2 records every exchange)");
  }
  if (run.num_vertices > 0 && static_cast<double>(target.ranks) > run.num_vertices) {
    out.warnings.push_back(fmt::format(
        "{} ranks are more than the graph's {:.0f} vertices: some ranks would own none, and the per-rank scaling "
        "this projection assumes does not hold there",
        target.ranks, run.num_vertices));
  }
  for (const CommRole role : {CommRole::kRow, CommRole::kColumn}) {
    if (run.ranks > 1 && group_size(role, run.grid) == 1 && group_size(role, target.grid) > 1) {
      out.warnings.push_back(std::string("the recorded run's ") + std::string(to_string(role)) +
                             " communicators had one rank each, so no traffic on them was recorded and the "
                             "projection leaves it out; record on a grid with more than one " +
                             std::string(to_string(role)) + " rank");
    }
  }
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const auto phase = static_cast<Phase>(i);
    if (phase == Phase::kOther) continue;
    const double times = occurrences(run, phase);
    if (times <= 0) continue;
    PhaseProjection pp;
    pp.phase = phase;
    pp.per_search = is_bfs_phase(phase) || phase == Phase::kValidation;
    pp.recorded_time_s = run.max_time_s[i] / times;
    pp.recorded_model_s = run.max_model_s[i] / times;
    bool any = pp.recorded_time_s > 0;
    // Per sampled rank: the phase's bytes, messages and time; keep the busiest.
    std::vector<PhaseProjection> per_rank(sampled.size(), pp);
    for (const TrafficRecord& t : run.traffic) {
      if (t.phase != phase) continue;
      any = true;
      if (t.role == CommRole::kOther) {
        out.warnings.push_back(std::string("traffic of ") + std::string(to_string(phase)) +
                               " on an unnamed communicator is left out");
        continue;
      }
      const int g0 = group_size(t.role, run.grid);
      const int g = group_size(t.role, target.grid);
      const double per_rank_divisor = run.ranks * times;
      const ScaledTraffic scaled = scale_traffic(t.pattern, t.bytes / per_rank_divisor, t.messages / per_rank_divisor,
                                                 t.calls / per_rank_divisor, g0, run.ranks, g, target.ranks);
      for (std::size_t s = 0; s < sampled.size(); ++s) {
        const int on = members_on_node(t.role, target.grid, sampled[s], target.ranks_per_node);
        per_rank[s].bytes_per_rank += scaled.bytes;
        per_rank[s].messages_per_rank += scaled.messages;
        const bool pieces = t.pattern == CommPattern::kPersonalized || t.pattern == CommPattern::kGather;
        per_rank[s].model_s += target.one_sided && pieces
                                   ? price_one_sided(target.network, scaled, t.calls / per_rank_divisor, g, on)
                                   : price_traffic(target.network, t.pattern, scaled, g, on);
      }
    }
    if (!any) continue;
    const auto busiest = std::max_element(per_rank.begin(), per_rank.end(),
                                          [](const auto& a, const auto& b) { return a.model_s < b.model_s; });
    busiest->hidden_s = busiest->model_s * std::clamp(run.hidden_share[i], 0.0, 1.0);
    out.phases.push_back(*busiest);
    if (is_bfs_phase(phase)) {
      out.communication_s += busiest->model_s;
      out.hidden_s += busiest->hidden_s;
    }
  }
  // Whatever of the recorded search time its own model does not explain as communication
  // (what ran hidden did not take time) is taken as work that divides over the ranks.
  double recorded_communication = 0;
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    if (is_bfs_phase(static_cast<Phase>(i))) {
      recorded_communication += run.max_model_s[i] * (1 - std::clamp(run.hidden_share[i], 0.0, 1.0)) / run.searches;
    }
  }
  out.local_s = std::max(0.0, run.mean_bfs_time_s - recorded_communication) * run.ranks / target.ranks;
  out.hidden_s = std::min(out.hidden_s, out.local_s);
  out.bfs_time_s = out.local_s + out.communication_s - out.hidden_s;
  out.teps = out.bfs_time_s > 0 ? run.mean_traversed_edges / out.bfs_time_s : 0;
  return out;
}

}  // namespace zbfs
