#include "zbfs/route/route_plan.hpp"

#include <algorithm>
#include <set>

#include "zbfs/core/error.hpp"
#include "zbfs/core/wording.hpp"

namespace zbfs {

std::string_view to_string(RouteKind kind) {
  switch (kind) {
    case RouteKind::kDirect: return "direct";
    case RouteKind::kSparse: return "sparse";
    case RouteKind::kGrid2: return "grid2";
    case RouteKind::kGridK: return "gridk";
    case RouteKind::kHypercube: return "hypercube";
  }
  return "unknown";
}

std::optional<RouteKind> parse_route_kind(std::string_view text) {
  for (const RouteKind k :
       {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kGridK, RouteKind::kHypercube}) {
    if (to_string(k) == text) return k;
  }
  return std::nullopt;
}

RoutePlan::RoutePlan(RouteKind kind, int ranks, std::vector<int> dims) : kind_(kind), ranks_(ranks) {
  if (ranks < 1) throw Error(ExitCode::kUsage, "a route needs at least one rank");
  while (columns_ * columns_ < ranks) ++columns_;
  while (core_ * 2 <= ranks) {
    core_ *= 2;
    ++core_bits_;
  }
  if (kind == RouteKind::kGridK) {
    if (dims.empty()) throw Error(ExitCode::kUsage, "--route gridk needs --route-dims, e.g. 2x2x2");
    for (const int d : dims) {
      if (d < 1) throw Error(ExitCode::kUsage, "route dimensions must be positive");
    }
    if (dims_product(dims) != ranks) {
      throw Error(ExitCode::kUsage,
                  "route dimensions " + describe_dims(dims) + " do not multiply to " + counted(ranks, "rank"));
    }
    dims_ = std::move(dims);
  }
}

long long RoutePlan::dims_product(const std::vector<int>& dims) {
  long long product = 1;
  for (const int d : dims) {
    product *= std::max(d, 0);
    if (product > kMaxDimsProduct) return kMaxDimsProduct + 1;
  }
  return product;
}

std::string RoutePlan::describe_dims(const std::vector<int>& dims) {
  std::string s;
  for (const int d : dims) {
    if (!s.empty()) s += 'x';
    s += std::to_string(d);
  }
  return s;
}

int RoutePlan::hops() const {
  switch (kind_) {
    case RouteKind::kDirect:
    case RouteKind::kSparse: return 1;
    case RouteKind::kGrid2: return 2;
    case RouteKind::kGridK: return static_cast<int>(dims_.size());
    case RouteKind::kHypercube: return core_bits_ + 2;  // hand in, one hop per bit, hand back
  }
  return 1;
}

int RoutePlan::next(int hop, int holder, int destination) const {
  switch (kind_) {
    case RouteKind::kDirect:
    case RouteKind::kSparse: return destination;
    case RouteKind::kGrid2: return next_grid2(hop, holder, destination);
    case RouteKind::kGridK: return next_gridk(hop, holder, destination);
    case RouteKind::kHypercube: return next_hypercube(hop, holder, destination);
  }
  return destination;
}

int RoutePlan::next_grid2(int hop, int holder, int destination) const {
  if (hop == 1) return destination;  // after hop 0 the holder shares a row or a column with it
  const int relay = (destination / columns_) * columns_ + holder % columns_;
  if (relay < ranks_) return relay;  // along the column to the destination's row
  // The relay would be in the short last row's missing part: along the row to the
  // destination's column instead (that row is full: it is not the last one).
  return (holder / columns_) * columns_ + destination % columns_;
}

int RoutePlan::next_gridk(int hop, int holder, int destination) const {
  // Mixed radix, dimension 0 fastest: replace the holder's digit `hop` by the destination's.
  int stride = 1;
  for (int j = 0; j < hop; ++j) stride *= dims_[static_cast<std::size_t>(j)];
  const int d = dims_[static_cast<std::size_t>(hop)];
  const int mine = (holder / stride) % d;
  const int theirs = (destination / stride) % d;
  return holder + (theirs - mine) * stride;
}

int RoutePlan::next_hypercube(int hop, int holder, int destination) const {
  if (hop == 0) return holder >= core_ ? holder - core_ : holder;  // hand in
  if (hop == core_bits_ + 1) return destination;                   // hand back (or already there)
  const int target = destination >= core_ ? destination - core_ : destination;
  const int bit = 1 << (hop - 1);
  return ((holder ^ target) & bit) != 0 ? holder ^ bit : holder;
}

std::vector<RoutePlan::HopPeers> RoutePlan::hop_peers(int me) const {
  const int hop_count = hops();
  std::vector<std::set<int>> to(static_cast<std::size_t>(hop_count));
  std::vector<std::set<int>> from(static_cast<std::size_t>(hop_count));
  // For each destination, the set of ranks holding some item for it, hop by hop (every
  // rank at hop 0), kept as a list with a stamp per rank to drop repeats.
  std::vector<int> holders;
  std::vector<int> next_holders;
  std::vector<int> stamp(static_cast<std::size_t>(ranks_), -1);
  for (int destination = 0; destination < ranks_; ++destination) {
    holders.resize(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) holders[static_cast<std::size_t>(r)] = r;
    for (int h = 0; h < hop_count; ++h) {
      const int mark = destination * hop_count + h;
      next_holders.clear();
      for (const int holder : holders) {
        const int at = next(h, holder, destination);
        if (holder == me && at != me) to[static_cast<std::size_t>(h)].insert(at);
        if (at == me && holder != me) from[static_cast<std::size_t>(h)].insert(holder);
        if (stamp[static_cast<std::size_t>(at)] != mark) {
          stamp[static_cast<std::size_t>(at)] = mark;
          next_holders.push_back(at);
        }
      }
      std::swap(holders, next_holders);
    }
  }
  std::vector<HopPeers> peers(static_cast<std::size_t>(hop_count));
  for (std::size_t h = 0; h < peers.size(); ++h) {
    peers[h].to.assign(to[h].begin(), to[h].end());
    peers[h].from.assign(from[h].begin(), from[h].end());
  }
  return peers;
}

std::vector<int> RoutePlan::peers(int me) const {
  std::set<int> out;
  for (const HopPeers& hop : hop_peers(me)) out.insert(hop.to.begin(), hop.to.end());
  return {out.begin(), out.end()};
}

std::string RoutePlan::describe() const {
  switch (kind_) {
    case RouteKind::kGrid2:
      return "grid2 " + std::to_string(grid_rows()) + "x" + std::to_string(grid_columns()) +
             (grid_rows() * grid_columns() == ranks_ ? "" : " (last row short)");
    case RouteKind::kGridK: return "gridk " + describe_dims(dims_);
    case RouteKind::kHypercube:
      return "hypercube of " + std::to_string(core_) +
             (core_ == ranks_ ? "" : " (+" + std::to_string(ranks_ - core_) + " handed in)");
    default: return std::string(to_string(kind_));
  }
}

}  // namespace zbfs
