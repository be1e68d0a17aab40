#include "zbfs/sssp/delta_stepping.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

constexpr std::uint64_t kUnreached = ~std::uint64_t{0};                        // its distance bits exceed any float's
constexpr std::uint64_t kNoBucket = BucketBins<DeltaStepping::Vertex>::kNone;  // what first_from says of none

std::uint64_t pack(float distance, std::uint32_t parent) {
  return static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(distance)) << 32 | parent;
}
std::uint32_t distance_bits(std::uint64_t word) { return static_cast<std::uint32_t>(word >> 32); }
float distance_of(std::uint64_t word) { return std::bit_cast<float>(distance_bits(word)); }

std::uint64_t load(std::uint64_t& word) { return std::atomic_ref<std::uint64_t>(word).load(std::memory_order_relaxed); }

}  // namespace

DeltaStepping::DeltaStepping(const Csr<Vertex>& graph, std::span<const float> weights, std::optional<double> delta)
    : graph_(graph),
      weights_(weights),
      original_(graph.original_ids()),
      light_start_(graph.num_vertices() + 1),
      state_(graph.num_vertices()),
      relaxed_(graph.num_vertices()),
      mark_(graph.num_vertices()),
      final_(graph.num_vertices()),
      threads_(static_cast<std::size_t>(omp_get_max_threads())) {
  const std::uint64_t n = graph.num_vertices();
  if (n > std::numeric_limits<Vertex>::max()) {
    throw Error(ExitCode::kUsage, "SSSP on one process takes graphs of fewer than 2^32 vertices");
  }
  if (weights.size() != graph.num_directed_edges()) {
    throw Error(ExitCode::kFailure, "DeltaStepping: the weights do not match the graph's lists");
  }
  if (delta && (!(*delta > 0) || !std::isfinite(*delta))) {
    throw Error(ExitCode::kUsage, "--delta must be a positive number");
  }
  const auto count = static_cast<std::int64_t>(n);
  std::uint64_t with_edges = 0;
#pragma omp parallel for reduction(+ : with_edges)
  for (std::int64_t v = 0; v < count; ++v) {
    state_[static_cast<std::uint64_t>(v)] = kUnreached;
    relaxed_[static_cast<std::uint64_t>(v)] = distance_bits(kUnreached);
    with_edges += graph.degree(static_cast<std::uint64_t>(v)) > 0 ? 1 : 0;
  }
  const auto entries = static_cast<std::int64_t>(weights.size());
  double weight_sum = 0;
  float largest = 0;
#pragma omp parallel for reduction(+ : weight_sum) reduction(max : largest)
  for (std::int64_t k = 0; k < entries; ++k) {
    weight_sum += weights[static_cast<std::size_t>(k)];
    largest = std::max(largest, weights[static_cast<std::size_t>(k)]);
  }
  delta_ = 1.0;
  if (entries > 0 && with_edges > 0 && weight_sum > 0) {
    const double mean_weight = weight_sum / static_cast<double>(entries);
    const double mean_degree = static_cast<double>(entries) / static_cast<double>(with_edges);
    delta_ = kDeltaDegrees * mean_weight / mean_degree;
  }
  if (delta) delta_ = *delta;
  delta_ = std::max(delta_, smallest_delta(largest, n));

  // The light lists: count, place.
  const auto light = static_cast<float>(delta_);
  const std::uint64_t* offsets = graph.offsets();
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < count; ++v) {
    std::uint64_t c = 0;
    for (std::uint64_t k = offsets[v]; k < offsets[v + 1]; ++k) c += weights[k] < light ? 1 : 0;
    light_start_[static_cast<std::uint64_t>(v) + 1] = c;
  }
  light_start_[0] = 0;
  for (std::uint64_t v = 0; v < n; ++v) light_start_[v + 1] += light_start_[v];
  light_ = LargeArray<LightEdge>(light_start_[n]);
  const Vertex* neighbors = graph.neighbor_data();
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < count; ++v) {
    std::uint64_t at = light_start_[static_cast<std::uint64_t>(v)];
    for (std::uint64_t k = offsets[v]; k < offsets[v + 1]; ++k) {
      if (weights[k] < light) light_[at++] = {neighbors[k], weights[k]};
    }
  }
}

// The shared state of one search, and the steps of its OpenMP team: each thread calls
// them with its own bins (`me`) from inside the one parallel region of run(), so the
// worksharing loops, barriers and single blocks in them bind to that team.
class DeltaStepping::Team {
 public:
  Team(DeltaStepping& search, SsspStats& stats)
      : s_(search),
        stats_(stats),
        light_(static_cast<float>(search.delta_)),
        per_bucket_(1.0 / search.delta_),
        offsets_(search.graph_.offsets()),
        neighbors_(search.graph_.neighbor_data()),
        weights_(search.weights_.data()),
        state_(search.state_.data()),
        relaxed_(search.relaxed_.data()),
        mark_(search.mark_.data()),
        light_start_(search.light_start_.data()),
        light_edges_(search.light_.data()),
        offset_(search.threads_.size() + 1) {}

  // The search from the frontier run() set (its root), by every thread of the team.
  void run(ThreadBins& me) {
    while (!done_) {
      if (light_round(me)) continue;
#pragma omp master
      {
        stats_.light_time_s += phase_.elapsed_s();
        phase_.restart();
      }
      heavy_pass(me);
      next_bucket();
      // Once the search has left a bucket (not when a rounding sends it through the
      // same bucket again), the vertices it settled are final. A bit read before it is
      // set only costs the read it would have saved.
      if (advanced_ && !done_) {
        for (const Vertex u : me.finished) s_.final_.set_atomic(u);
      }
      if (advanced_) me.finished.clear();
      if (!done_) gather(me);
    }
  }
  [[nodiscard]] const Stopwatch& phase() const { return phase_; }

 private:
  // Monotone in d, so a later bucket never holds a shorter distance (an infinite one, of
  // no vertex that is filed, saturates).
  [[nodiscard]] std::uint64_t bucket_of(float d) const {
    const double scaled = static_cast<double>(d) * per_bucket_;
    return scaled < 1.8e19 ? static_cast<std::uint64_t>(scaled) : kNoBucket - 1;
  }

  void relax(ThreadBins& me, Vertex u, float du, Vertex v, float w, std::uint64_t first_bucket) {
    // A vertex of an earlier bucket is final: no later relaxation can lower it, and its
    // bit (a bitmap that stays in cache) saves the random read of its word.
    if (s_.final_.test(v)) return;
    const float dv = du + w;
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(dv);
    std::atomic_ref<std::uint64_t> word(state_[v]);
    std::uint64_t current = word.load(std::memory_order_relaxed);
    while (bits < distance_bits(current)) {
      if (word.compare_exchange_weak(current, pack(dv, u), std::memory_order_relaxed)) {
        me.bins.at(std::max(first_bucket, bucket_of(dv))).push_back(v);
        ++me.improvements;
        return;
      }
    }
  }

  // Every thread's part(t) (a vector), one after another, into `out`; the whole team
  // calls it. It starts with a barrier (every part is complete before it is counted)
  // and ends with one.
  template <class Part, class Out>
  void concatenate(ThreadBins& me, const Part& part, Out& out) {
#pragma omp barrier
#pragma omp single
    {
      offset_[0] = 0;
      for (std::size_t t = 0; t < s_.threads_.size(); ++t) offset_[t + 1] = offset_[t] + part(s_.threads_[t]).size();
      out.resize(offset_.back());
    }
    auto& mine = part(me);
    std::copy(mine.begin(), mine.end(),
              out.begin() + static_cast<std::ptrdiff_t>(offset_[static_cast<std::size_t>(omp_get_thread_num())]));
    mine.clear();
#pragma omp barrier
  }

  // The next frontier: every thread's vertices in the current bucket.
  void gather(ThreadBins& me) {
    std::vector<Vertex> none;
    concatenate(
        me,
        [&](ThreadBins& t) -> std::vector<Vertex>& {
          std::vector<Vertex>* here = t.bins.find(bucket_);
          return here != nullptr ? *here : none;
        },
        s_.next_frontier_);
#pragma omp single
    {
      s_.frontier_.swap(s_.next_frontier_);
      frontier_size_ = s_.frontier_.size();
    }
  }

  // A frontier vertex that is still in this bucket relaxes its light edges, once per
  // distance it reaches (a vertex improved twice in a round comes twice); it joins this
  // pass's settled list once.
  void settle_light(ThreadBins& me, Vertex u) {
    const std::uint32_t bits = distance_bits(load(state_[u]));
    const float du = std::bit_cast<float>(bits);
    if (bucket_of(du) != bucket_) return;
    if (std::atomic_ref<std::uint32_t>(mark_[u]).exchange(s_.pass_, std::memory_order_relaxed) != s_.pass_) {
      me.settled.push_back(u);
    }
    if (std::atomic_ref<std::uint32_t>(relaxed_[u]).exchange(bits, std::memory_order_relaxed) == bits) return;
    for (std::uint64_t k = light_start_[u]; k < light_start_[u + 1]; ++k) {
      relax(me, u, du, light_edges_[k].to, light_edges_[k].weight, bucket_);
    }
    me.light_edges += light_start_[u + 1] - light_start_[u];
  }

  // A light round over the frontier; true when it found more of the bucket.
  bool light_round(ThreadBins& me) {
#pragma omp for schedule(dynamic, 64) nowait
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(frontier_size_); ++i) {
      settle_light(me, s_.frontier_[static_cast<std::size_t>(i)]);
    }
    // Bucket fusion (as GAPBS and GraphIt do): what a thread found for this bucket, while
    // it is little, it settles itself at once instead of waiting a round for the team;
    // most of a Kronecker graph's rounds are a handful of vertices.
    for (std::vector<Vertex>* here = me.bins.find(bucket_); here != nullptr && here->size() < kFusionLimit;
         here = me.bins.find(bucket_)) {
      me.fused.swap(*here);
      for (const Vertex u : me.fused) settle_light(me, u);
      me.fused.clear();
    }
    gather(me);
#pragma omp master
    ++stats_.light_rounds;
    return frontier_size_ > 0;
  }

  // The bucket is settled: its vertices relax their heavy edges, once, with their final
  // distances. Those land in later buckets (or, by a rounding of d + w, in this one,
  // which is then settled again in a new pass). Lists are cut into pieces of kHeavyPiece
  // entries shared out among the threads: a hub's list is most of a bucket's work on a
  // Kronecker graph.
  void heavy_pass(ThreadBins& me) {
    for (const Vertex u : me.settled) {
      for (std::uint64_t k = offsets_[u]; k < offsets_[u + 1]; k += kHeavyPiece) me.pieces.push_back({u, k});
      me.finished.push_back(u);
      me.heavy_edges += offsets_[u + 1] - offsets_[u] - (light_start_[u + 1] - light_start_[u]);
    }
    me.settled.clear();
    concatenate(
        me, [](ThreadBins& t) -> std::vector<HeavyPiece>& { return t.pieces; }, s_.pieces_);
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(s_.pieces_.size()); ++i) {
      const HeavyPiece piece = s_.pieces_[static_cast<std::size_t>(i)];
      const float du = distance_of(load(state_[piece.vertex]));
      const std::uint64_t end = std::min(piece.first + kHeavyPiece, offsets_[piece.vertex + 1]);
      for (std::uint64_t k = piece.first; k < end; ++k) {
        if (!(weights_[k] < light_)) relax(me, piece.vertex, du, neighbors_[k], weights_[k], bucket_);
      }
    }
  }

  // The next bucket that holds anything (one thread): empty buckets cost nothing,
  // whatever delta.
  void next_bucket() {
#pragma omp single
    {
      std::uint64_t next = kNoBucket;
      for (const ThreadBins& t : s_.threads_) next = std::min(next, t.bins.first_from(bucket_));
      ++stats_.buckets;
      advanced_ = next != bucket_;
      if (next == kNoBucket) {
        done_ = true;
        for (ThreadBins& t : s_.threads_) t.bins.advance(0);
      } else {
        bucket_ = next;
        for (ThreadBins& t : s_.threads_) t.bins.advance(bucket_);
        s_.next_pass();
      }
      stats_.heavy_time_s += phase_.elapsed_s();
      phase_.restart();
    }
  }

  DeltaStepping& s_;
  SsspStats& stats_;
  const float light_;  // an edge is light when w < light_
  const double per_bucket_;
  const std::uint64_t* offsets_;
  const Vertex* neighbors_;
  const float* weights_;
  std::uint64_t* state_;
  std::uint32_t* relaxed_;
  std::uint32_t* mark_;
  const std::uint64_t* light_start_;
  const LightEdge* light_edges_;
  std::vector<std::size_t> offset_;  // concatenate's, per thread
  std::uint64_t bucket_ = 0;
  std::size_t frontier_size_ = 1;
  bool done_ = false;
  bool advanced_ = false;  // the last pass settled its bucket for good
  Stopwatch phase_;
};

void DeltaStepping::next_pass() {
  if (++pass_ == 0) {  // the marks' counter wrapped: start them again
    std::fill_n(mark_.data(), graph_.num_vertices(), 0U);
    pass_ = 1;
  }
}

SsspStats DeltaStepping::run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance) {
  const std::uint64_t n = graph_.num_vertices();
  if (root >= n || parent.size() != n || distance.size() != n) {
    throw Error(ExitCode::kFailure, "DeltaStepping::run: root or output spans out of range");
  }
  SsspStats stats;
  stats.delta = delta_;
  const auto r = static_cast<Vertex>(graph_.internal_id(root));
  state_[r] = pack(0.0F, r);
  frontier_.assign(1, r);
  next_pass();
  Team team(*this, stats);
#pragma omp parallel num_threads(static_cast <int>(threads_.size()))
  team.run(threads_[static_cast<std::size_t>(omp_get_thread_num())]);
  final_.clear();
  stats.reached_vertices = export_tree(parent, distance);
  stats.export_time_s = team.phase().elapsed_s();
  for (ThreadBins& t : threads_) {
    stats.light_edges += std::exchange(t.light_edges, 0);
    stats.heavy_edges += std::exchange(t.heavy_edges, 0);
    stats.improvements += std::exchange(t.improvements, 0);
  }
  return stats;
}

std::uint64_t DeltaStepping::export_tree(std::span<std::int64_t> parent, std::span<float> distance) {
  const auto count = static_cast<std::int64_t>(graph_.num_vertices());
  std::uint64_t reached = 0;
#pragma omp parallel for reduction(+ : reached)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto v = static_cast<std::uint64_t>(i);
    const std::uint64_t word = state_[v];
    const std::uint64_t id = original_ != nullptr ? original_[v] : v;
    if (word == kUnreached) {
      parent[id] = -1;
      distance[id] = std::numeric_limits<float>::infinity();
      continue;
    }
    const auto p = static_cast<std::uint32_t>(word);
    parent[id] = static_cast<std::int64_t>(original_ != nullptr ? original_[p] : p);
    distance[id] = distance_of(word);
    state_[v] = kUnreached;
    relaxed_[v] = distance_bits(kUnreached);
    ++reached;
  }
  return reached;
}

}  // namespace zbfs
