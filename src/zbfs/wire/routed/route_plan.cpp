#include "zbfs/wire/routed/route_plan.hpp"

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

namespace {

// Sorted, without `me` and repeats.
std::vector<int> without(std::vector<int> ranks, int me) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  ranks.erase(std::remove(ranks.begin(), ranks.end(), me), ranks.end());
  return ranks;
}

}  // namespace

// Each route's peers in closed form, a few per dimension of the route (every rank for
// direct and sparse): setup stays O(P) at most however many ranks there are, where
// following every (source, destination) path took P^2 steps a hop (tests check the forms
// against those paths).
std::vector<RoutePlan::HopPeers> RoutePlan::hop_peers(int me) const {
  std::vector<HopPeers> peers(static_cast<std::size_t>(hops()));
  switch (kind_) {
    case RouteKind::kDirect:
    case RouteKind::kSparse: {
      std::vector<int> everyone(static_cast<std::size_t>(ranks_));
      for (int r = 0; r < ranks_; ++r) everyone[static_cast<std::size_t>(r)] = r;
      peers[0].to = without(everyone, me);
      peers[0].from = peers[0].to;
      break;
    }
    case RouteKind::kGrid2: grid2_hop_peers(me, peers); break;
    case RouteKind::kGridK: {
      // Hop h fixes digit h (mixed radix, dimension 0 fastest): a rank holds items for
      // every value of it and trades with the ranks that differ from it in that digit only.
      int stride = 1;
      for (std::size_t h = 0; h < dims_.size(); ++h) {
        const int d = dims_[h];
        const int mine = (me / stride) % d;
        std::vector<int> line;
        for (int v = 0; v < d; ++v) line.push_back(me + (v - mine) * stride);
        peers[h].to = without(line, me);
        peers[h].from = peers[h].to;
        stride *= d;
      }
      break;
    }
    case RouteKind::kHypercube: {
      // Hop 0 hands the ranks past the core in, hops 1..bits trade along one bit each
      // (a core rank holds items with either value of the bit), the last hop hands back.
      const int last = core_bits_ + 1;
      if (me >= core_) {
        peers[0].to = {me - core_};
        peers[static_cast<std::size_t>(last)].from = {me - core_};
      } else {
        if (me + core_ < ranks_) {
          peers[0].from = {me + core_};
          peers[static_cast<std::size_t>(last)].to = {me + core_};
        }
        for (int h = 1; h < last; ++h) {
          peers[static_cast<std::size_t>(h)].to = {me ^ (1 << (h - 1))};
          peers[static_cast<std::size_t>(h)].from = peers[static_cast<std::size_t>(h)].to;
        }
      }
      break;
    }
  }
  return peers;
}

void RoutePlan::grid2_hop_peers(int me, std::vector<HopPeers>& peers) const {
  // Rows of C ranks, R rows, the last holding L <= C. An item for d goes along its
  // source's column to the relay in d's row, then along that row; where that relay is
  // missing (d in the last row, the source's column >= L) it goes along the source's row
  // to d's column first, then down that column.
  const int c = columns_;
  const int rows = grid_rows();
  const int short_row = rows - 1;
  const int in_last = ranks_ - short_row * c;  // L
  const int row = me / c;
  const int col = me % c;
  const bool short_last = in_last < c;
  const auto in_row = [&](int r) {
    std::vector<int> out;
    for (int k = 0; k < c && r * c + k < ranks_; ++k) out.push_back(r * c + k);
    return out;
  };
  std::vector<int> column;
  for (int r = 0; r < rows; ++r) {
    if (r * c + col < ranks_) column.push_back(r * c + col);
  }
  // Hop 0. To: the relay in every row of my column; past the short row's end, the ranks
  // of my row under the short row's columns. From: my column, and where my column reaches
  // the short row, the ranks of my row past its end.
  std::vector<int> to0 = column;
  std::vector<int> from0 = column;
  if (col >= in_last) {
    for (int k = 0; k < in_last; ++k) to0.push_back(row * c + k);
  } else if (row < short_row) {
    for (int k = in_last; k < c; ++k) from0.push_back(row * c + k);
  }
  // Hop 1. I hold items for my row, and, in a full row under the short row's columns,
  // for the rank of the short row below me. I hear from my row and, in the short row,
  // from my column above (whose sources went along their rows first).
  std::vector<int> to1 = in_row(row);
  std::vector<int> from1 = to1;
  if (short_last && row < short_row && col < in_last) to1.push_back(short_row * c + col);
  if (short_last && row == short_row) from1.insert(from1.end(), column.begin(), column.end());
  peers[0] = {without(to0, me), without(from0, me)};
  peers[1] = {without(to1, me), without(from1, me)};
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
