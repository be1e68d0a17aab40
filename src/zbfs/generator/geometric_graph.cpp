#include "zbfs/generator/geometric_graph.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "zbfs/generator/counter_rng.hpp"

namespace zbfs {
namespace {

// A uniform random bit generator over one keyed counter stream (for std distributions).
class KeyedEngine {
 public:
  using result_type = std::uint64_t;
  KeyedEngine(const CounterRng& rng, std::uint64_t key) : rng_(rng), base_(mix64(key)) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return rng_(base_ + next_++); }

 private:
  CounterRng rng_;
  std::uint64_t base_;
  std::uint64_t next_ = 0;
};

double unit_from_bits(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// How the points fall into the cells.
class CellLayout {
 public:
  explicit CellLayout(const GeometricGraphParams& p)
      : n_(p.vertices),
        radius_(p.radius),
        counts_rng_(p.seed, RandomStream::kGeometricCells),
        points_rng_(p.seed, RandomStream::kGeometricPoints) {
    // Cells no smaller than the radius (so neighbours are in the 3 x 3 block around a
    // cell), and no more cells than points (empty cells only cost time).
    const double by_radius = std::floor(1.0 / radius_);
    const double by_points = std::floor(std::sqrt(static_cast<double>(n_)));
    side_ = static_cast<std::uint64_t>(std::clamp(std::min(by_radius, by_points), 1.0, 1048576.0));
    cells_ = side_ * side_;
  }

  [[nodiscard]] std::uint64_t side() const { return side_; }
  [[nodiscard]] std::uint64_t cells() const { return cells_; }

  // First vertex and point count of every cell in [lo, hi).
  void range(std::uint64_t lo, std::uint64_t hi, std::vector<std::uint64_t>& first,
             std::vector<std::uint64_t>& count) const {
    first.assign(hi - lo, 0);
    count.assign(hi - lo, 0);
    visit(0, cells_, n_, 0, lo, hi, first, count);
  }

  // The cell that holds vertex v < n.
  [[nodiscard]] std::uint64_t cell_of_vertex(std::uint64_t v) const {
    std::uint64_t lo = 0;
    std::uint64_t hi = cells_;
    std::uint64_t k = n_;
    std::uint64_t base = 0;
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const std::uint64_t left = left_count(lo, hi, k);
      if (v < base + left) {
        hi = mid;
        k = left;
      } else {
        lo = mid;
        base += left;
        k -= left;
      }
    }
    return lo;
  }

  [[nodiscard]] Point point(std::uint64_t v, std::uint64_t cell) const {
    const double inv = 1.0 / static_cast<double>(side_);
    return {(static_cast<double>(cell % side_) + unit_from_bits(points_rng_(2 * v))) * inv,
            (static_cast<double>(cell / side_) + unit_from_bits(points_rng_(2 * v + 1))) * inv};
  }

 private:
  // Of the k points in cells [lo, hi), how many are in the left half.
  [[nodiscard]] std::uint64_t left_count(std::uint64_t lo, std::uint64_t hi, std::uint64_t k) const {
    if (k == 0) return 0;
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const double p = static_cast<double>(mid - lo) / static_cast<double>(hi - lo);
    KeyedEngine engine(counts_rng_, lo ^ mix64(hi));
    std::binomial_distribution<long long> split(static_cast<long long>(k), p);
    return static_cast<std::uint64_t>(split(engine));
  }

  void visit(std::uint64_t lo, std::uint64_t hi, std::uint64_t k, std::uint64_t base, std::uint64_t want_lo,
             std::uint64_t want_hi, std::vector<std::uint64_t>& first, std::vector<std::uint64_t>& count) const {
    if (hi <= want_lo || lo >= want_hi) return;
    if (hi - lo == 1) {
      first[lo - want_lo] = base;
      count[lo - want_lo] = k;
      return;
    }
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const std::uint64_t left = left_count(lo, hi, k);
    visit(lo, mid, left, base, want_lo, want_hi, first, count);
    visit(mid, hi, k - left, base + left, want_lo, want_hi, first, count);
  }

  std::uint64_t n_;
  double radius_;
  CounterRng counts_rng_;
  CounterRng points_rng_;
  std::uint64_t side_ = 1;
  std::uint64_t cells_ = 1;
};

}  // namespace

double radius_for_degree(std::uint64_t vertices, double degree) {
  return std::sqrt(degree / (std::numbers::pi * static_cast<double>(vertices)));
}

std::vector<Edge> geometric_graph_edges(const GeometricGraphParams& params, std::uint64_t first_vertex,
                                        std::uint64_t last_vertex) {
  std::vector<Edge> edges;
  last_vertex = std::min(last_vertex, params.vertices);
  if (first_vertex >= last_vertex) return edges;
  const CellLayout layout(params);
  const std::uint64_t side = layout.side();
  const std::uint64_t cell_first = layout.cell_of_vertex(first_vertex);
  const std::uint64_t cell_last = layout.cell_of_vertex(last_vertex - 1);
  // The cells of this range and the rows of cells around them.
  const std::uint64_t lo = cell_first >= side + 1 ? cell_first - side - 1 : 0;
  const std::uint64_t hi = std::min(layout.cells(), cell_last + side + 2);
  std::vector<std::uint64_t> first;
  std::vector<std::uint64_t> count;
  layout.range(lo, hi, first, count);
  const std::uint64_t v0 = first.front();
  std::vector<Point> points(first.back() + count.back() - v0);
  for (std::uint64_t c = lo; c < hi; ++c) {
    for (std::uint64_t v = first[c - lo]; v < first[c - lo] + count[c - lo]; ++v) points[v - v0] = layout.point(v, c);
  }
  const double r2 = params.radius * params.radius;
  const auto signed_side = static_cast<std::int64_t>(side);
  for (std::uint64_t c = cell_first; c <= cell_last; ++c) {
    const auto cx = static_cast<std::int64_t>(c % side);
    const auto cy = static_cast<std::int64_t>(c / side);
    const std::uint64_t u_begin = std::max(first_vertex, first[c - lo]);
    const std::uint64_t u_end = std::min(last_vertex, first[c - lo] + count[c - lo]);
    for (std::uint64_t u = u_begin; u < u_end; ++u) {
      const Point pu = points[u - v0];
      for (std::int64_t dy = -1; dy <= 1; ++dy) {
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const std::int64_t x = cx + dx;
          const std::int64_t y = cy + dy;
          if (x < 0 || y < 0 || x >= signed_side || y >= signed_side) continue;
          const std::uint64_t other = static_cast<std::uint64_t>(y) * side + static_cast<std::uint64_t>(x);
          const std::uint64_t v_end = first[other - lo] + count[other - lo];
          for (std::uint64_t v = std::max(u + 1, first[other - lo]); v < v_end; ++v) {
            const double ex = pu.x - points[v - v0].x;
            const double ey = pu.y - points[v - v0].y;
            if (ex * ex + ey * ey < r2) edges.push_back({u, v});
          }
        }
      }
    }
  }
  return edges;
}

std::vector<Point> geometric_graph_points(const GeometricGraphParams& params) {
  const CellLayout layout(params);
  std::vector<std::uint64_t> first;
  std::vector<std::uint64_t> count;
  layout.range(0, layout.cells(), first, count);
  std::vector<Point> points(params.vertices);
  for (std::uint64_t c = 0; c < layout.cells(); ++c) {
    for (std::uint64_t v = first[c]; v < first[c] + count[c]; ++v) points[v] = layout.point(v, c);
  }
  return points;
}

}  // namespace zbfs
