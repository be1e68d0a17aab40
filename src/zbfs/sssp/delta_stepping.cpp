#include "zbfs/sssp/delta_stepping.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

constexpr std::uint64_t kUnreached = ~std::uint64_t{0};                        // its distance bits exceed any float's
constexpr std::uint32_t kUnreachedBits = ~std::uint32_t{0};                    // kUnreached's distance bits
constexpr std::uint64_t kNoBucket = BucketBins<DeltaStepping::Vertex>::kNone;  // what first_from says of none

std::uint64_t pack(float distance, std::uint32_t parent) {
  return static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(distance)) << 32 | parent;
}
std::uint32_t distance_bits(std::uint64_t word) { return static_cast<std::uint32_t>(word >> 32); }
float distance_of(std::uint64_t word) { return std::bit_cast<float>(distance_bits(word)); }

std::uint64_t load(std::uint64_t& word) { return std::atomic_ref<std::uint64_t>(word).load(std::memory_order_relaxed); }

LargeArray<float> copy_of(std::span<const float> weights) {
  LargeArray<float> copy(weights.size());
  std::copy(weights.begin(), weights.end(), copy.data());
  return copy;
}

}  // namespace

DeltaStepping::DeltaStepping(const Csr<Vertex>& graph, std::span<const float> weights, std::optional<double> delta)
    : DeltaStepping(graph, copy_of(weights), delta) {}

DeltaStepping::DeltaStepping(const Csr<Vertex>& graph, LargeArray<float> weights, std::optional<double> delta)
    : graph_(graph),
      original_(graph.original_ids()),
      words_(graph.num_vertices()),
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
  std::uint64_t largest_degree = 0;
#pragma omp parallel for reduction(+ : with_edges) reduction(max : largest_degree)
  for (std::int64_t v = 0; v < count; ++v) {
    const std::uint64_t degree = graph.degree(static_cast<std::uint64_t>(v));
    with_edges += degree > 0 ? 1 : 0;
    largest_degree = std::max(largest_degree, degree);
  }
  if (largest_degree > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ExitCode::kUsage, "SSSP on one process takes vertices of fewer than 2^32 edges");
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

  order_lists(std::move(weights));
  pulled_ = Bitmap(n);
}

void DeltaStepping::order_lists(LargeArray<float> weights) {
  const std::uint64_t* offsets = graph_.offsets();
  entries_ = LargeArray<Entry>(graph_.num_directed_edges());
  // Rows a block at a time from the last: once a block is ordered, the pages of its
  // weights go back (LargeArray::shrink), so the lists and the weights never take
  // 12 bytes an entry together, only the lists' 8 and a block's weights.
  constexpr std::int64_t kRowsPerBlock = std::int64_t{1} << 16;
  for (auto end = static_cast<std::int64_t>(graph_.num_vertices()); end > 0; end -= kRowsPerBlock) {
    const std::int64_t begin = std::max<std::int64_t>(0, end - kRowsPerBlock);
    order_rows(weights, begin, end);
    weights.shrink(offsets[begin]);
  }
  for (std::uint64_t v = 0; v < graph_.num_vertices(); ++v) {
    if (words_[v].heavy == 0) continue;
    with_heavy_.push_back({static_cast<Vertex>(v), entries_[words_[v].heavy_start()].weight});
    heavy_entries_ += words_[v].heavy;
  }
}

void DeltaStepping::order_rows(const LargeArray<float>& weights, std::int64_t begin, std::int64_t end) {
  const auto light = static_cast<float>(delta_);
  const std::uint64_t* offsets = graph_.offsets();
  const Vertex* neighbors = graph_.neighbor_data();
#pragma omp parallel
  {
    std::vector<Entry> heavy;
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t i = begin; i < end; ++i) {
      const auto v = static_cast<std::uint64_t>(i);
      heavy.clear();
      std::uint64_t at = offsets[v];
      for (std::uint64_t k = offsets[v]; k < offsets[v + 1]; ++k) {
        if (weights[k] < light) {
          entries_[at++] = {neighbors[k], weights[k]};
        } else {
          heavy.push_back({neighbors[k], weights[k]});
        }
      }
      std::sort(heavy.begin(), heavy.end(), [](const Entry& a, const Entry& b) {
        return a.weight < b.weight || (a.weight == b.weight && a.to < b.to);
      });
      words_[v] = {kUnreached,
                   kUnreachedBits,
                   0,
                   offsets[v],
                   static_cast<std::uint32_t>(at - offsets[v]),
                   static_cast<std::uint32_t>(heavy.size())};
      std::copy(heavy.begin(), heavy.end(), entries_.data() + at);
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
        per_bucket_(1.0 / search.delta_),
        entries_(search.entries_.data()),
        words_(search.words_.data()),
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
    std::atomic_ref<std::uint64_t> word(words_[v].state);
    std::uint64_t current = word.load(std::memory_order_relaxed);
    while (bits < distance_bits(current)) {
      if (word.compare_exchange_weak(current, pack(dv, u), std::memory_order_relaxed)) {
        me.bins.at(std::max(first_bucket, bucket_of(dv))).push_back(v);
        ++me.improvements;
        if (current == kUnreached) me.heavy_reached += words_[v].heavy;
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
    VertexWords& words = words_[u];
    const std::uint32_t bits = distance_bits(load(words.state));
    const float du = std::bit_cast<float>(bits);
    if (bucket_of(du) != bucket_) return;
    if (std::atomic_ref<std::uint32_t>(words.mark).exchange(s_.pass_, std::memory_order_relaxed) != s_.pass_) {
      me.settled.push_back(u);
    }
    if (std::atomic_ref<std::uint32_t>(words.relaxed).exchange(bits, std::memory_order_relaxed) == bits) return;
    const Entry* list = entries_ + words.first;
    for (std::uint32_t k = 0; k < words.light; ++k) relax(me, u, du, list[k].to, list[k].weight, bucket_);
    me.light_edges += words.light;
  }

  // A light round over the frontier; true when it found more of the bucket.
  bool light_round(ThreadBins& me) {
    const auto count = static_cast<std::int64_t>(frontier_size_);
    const Vertex* frontier = s_.frontier_.data();
#pragma omp for schedule(dynamic, 64) nowait
    for (std::int64_t i = 0; i < count; ++i) {
      // A frontier vertex's words eight ahead, its list four ahead, its first light
      // neighbour's words two ahead (each read from what the step before asked for).
      if (i + 2 * kPiecesAhead < count) __builtin_prefetch(&words_[frontier[i + 2 * kPiecesAhead]], 1, 1);
      if (i + kPiecesAhead < count) __builtin_prefetch(entries_ + words_[frontier[i + kPiecesAhead]].first, 0, 1);
      if (i + kPiecesAhead / 2 < count) {
        const VertexWords& ahead = words_[frontier[i + kPiecesAhead / 2]];
        if (ahead.light > 0) prefetch_word(entries_[ahead.first].to);
      }
      settle_light(me, frontier[i]);
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

  // The bucket is settled: its heavy edges are relaxed once, with the settled vertices'
  // final distances. Those land in later buckets (or, by a rounding of d + w, in this
  // one, which is then settled again in a new pass). They are pushed from the settled
  // vertices, or pulled by the open ones where those have fewer entries to look at (late
  // buckets, whose few settled vertices have many edges into final ones).
  void heavy_pass(ThreadBins& me) {
    for (const Vertex u : me.settled) {
      me.finished.push_back(u);
      me.pass_volume += words_[u].heavy;
    }
#pragma omp barrier
#pragma omp single
    {
      // A pull visits each open vertex and reads an unreached one's entries until it
      // finds a settled neighbour (a quarter of them, say).
      std::uint64_t push = 0;
      for (ThreadBins& t : s_.threads_) {
        push += std::exchange(t.pass_volume, 0);
        s_.unreached_heavy_ -= std::exchange(t.heavy_reached, 0);
      }
      const std::uint64_t open = s_.open_ready_ ? s_.open_.size() : s_.with_heavy_.size();
      pull_ = open + s_.unreached_heavy_ / 4 < push;
      if (pull_ && !s_.open_ready_) {
        s_.open_ = s_.with_heavy_;
        s_.open_ready_ = true;
      }
      if (pull_) ++stats_.pull_buckets;
    }
    if (pull_) {
      pull(me);
    } else {
      push(me);
    }
  }

  // The settled vertices' heavy edges, in pieces of kHeavyPiece entries shared out among
  // the threads: a hub's list is most of a bucket's work on a Kronecker graph.
  void push(ThreadBins& me) {
    for (const Vertex u : me.settled) {
      const VertexWords& words = words_[u];
      for (std::uint64_t k = words.heavy_start(); k < words.end(); k += kHeavyPiece) me.pieces.push_back({u, k});
      me.heavy_edges += words.heavy;
    }
    me.settled.clear();
    concatenate(
        me, [](ThreadBins& t) -> std::vector<HeavyPiece>& { return t.pieces; }, s_.pieces_);
    const auto count = static_cast<std::int64_t>(s_.pieces_.size());
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t i = 0; i < count; ++i) {
      // Most lists are short: the words of their neighbours are asked for two pieces
      // ahead (the lists themselves four ahead), those of a long list's later entries a
      // few entries ahead.
      if (i + kPiecesAhead < count) prefetch_list(s_.pieces_[static_cast<std::size_t>(i + kPiecesAhead)]);
      if (i + kPiecesAhead / 2 < count) prefetch_words(s_.pieces_[static_cast<std::size_t>(i + kPiecesAhead / 2)]);
      const HeavyPiece piece = s_.pieces_[static_cast<std::size_t>(i)];
      const float du = distance_of(load(words_[piece.vertex].state));
      const std::uint64_t end = std::min(piece.first + kHeavyPiece, words_[piece.vertex].end());
      for (std::uint64_t k = piece.first; k < end; ++k) {
        if (k + kPrefetchAhead < end) prefetch_word(entries_[k + kPrefetchAhead].to);
        relax(me, piece.vertex, du, entries_[k].to, entries_[k].weight, bucket_);
      }
    }
  }

  // Every open vertex takes the best of its heavy edges to a vertex this pass settled.
  // Nothing else writes a word meanwhile: a vertex is one thread's.
  void pull(ThreadBins& me) {
    for (const Vertex u : me.settled) s_.pulled_.set_atomic(u);
#pragma omp barrier
    const double low = static_cast<double>(bucket_) / per_bucket_;
    const double next_low = static_cast<double>(bucket_ + 1) / per_bucket_;
    const auto count = static_cast<std::int64_t>(s_.open_.size());
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t i = 0; i < count; ++i) {
      // An open vertex's words eight ahead, its heavy list (from those words) four ahead.
      if (i + 2 * kPiecesAhead < count) {
        __builtin_prefetch(&words_[s_.open_[static_cast<std::size_t>(i + 2 * kPiecesAhead)].vertex], 0, 1);
      }
      if (i + kPiecesAhead < count) {
        const Vertex near = s_.open_[static_cast<std::size_t>(i + kPiecesAhead)].vertex;
        __builtin_prefetch(entries_ + words_[near].heavy_start(), 0, 1);
      }
      pull_into(me, s_.open_[static_cast<std::size_t>(i)], low, next_low);
    }
#pragma omp single
    for (ThreadBins& t : s_.threads_) {
      for (const Vertex u : t.settled) s_.pulled_.word(Bitmap::word_of(u)) = 0;
      t.settled.clear();
    }
    concatenate(
        me, [](ThreadBins& t) -> std::vector<OpenVertex>& { return t.still_open; }, s_.open_);
  }

  // The gap below which a heavy edge from a vertex at `from` or above can lower a
  // distance of `best_bits` (a little slack for the float sum's rounding).
  static double gap(std::uint32_t best_bits, double from) {
    return best_bits == kUnreachedBits
               ? std::numeric_limits<double>::infinity()
               : (static_cast<double>(std::bit_cast<float>(best_bits)) - from) * (1 + 0x1p-20) + 0x1p-40;
  }

  // One open vertex's pull: its heavy edges by weight, while one could still help.
  void pull_into(ThreadBins& me, OpenVertex open, double low, double next_low) {
    const Vertex v = open.vertex;
    const std::uint32_t bits = distance_bits(load(words_[v].state));
    // Settled (in this bucket or before): no heavy edge can lower it.
    if (bits != kUnreachedBits && bucket_of(std::bit_cast<float>(bits)) <= bucket_) return;
    std::uint32_t best = bits;
    double limit = gap(best, low);
    // A gap below its lightest heavy edge stays so at every later pull (low only grows,
    // the distance only drops): the vertex leaves the open ones for good.
    if (!(open.lightest < limit)) return;
    Vertex by = 0;
    const std::uint64_t first = words_[v].heavy_start();
    const std::uint64_t end = words_[v].end();
    std::uint64_t k = first;
    for (; k < end && entries_[k].weight < limit; ++k) {
      const Vertex u = entries_[k].to;
      if (!s_.pulled_.test(u)) continue;
      const auto candidate = std::bit_cast<std::uint32_t>(distance_of(load(words_[u].state)) + entries_[k].weight);
      if (candidate < best) {
        best = candidate;
        by = u;
        limit = gap(best, low);
      }
    }
    me.heavy_edges += k - first;
    if (open.lightest < gap(best, next_low)) me.still_open.push_back(open);
    if (best == bits) return;
    if (bits == kUnreachedBits) me.heavy_reached += end - first;
    std::atomic_ref<std::uint64_t>(words_[v].state)
        .store(pack(std::bit_cast<float>(best), by), std::memory_order_relaxed);
    me.bins.at(std::max(bucket_, bucket_of(std::bit_cast<float>(best)))).push_back(v);
    ++me.improvements;
  }

  // A piece's list entries and its vertex's word, to cache.
  void prefetch_list(const HeavyPiece& piece) const {
    __builtin_prefetch(entries_ + piece.first, 0, 1);
    __builtin_prefetch(&words_[piece.vertex], 0, 1);
  }
  // The words of a piece's first neighbours.
  void prefetch_words(const HeavyPiece& piece) const {
    const std::uint64_t end = std::min(piece.first + kPrefetchAhead, words_[piece.vertex].end());
    for (std::uint64_t k = piece.first; k < end; ++k) prefetch_word(entries_[k].to);
  }
  // An open vertex's word (a final one's bit, in cache, says it will not be read).
  void prefetch_word(Vertex v) const {
    if (!s_.final_.test(v)) __builtin_prefetch(&words_[v], 1, 1);
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
  const double per_bucket_;
  const Entry* entries_;
  VertexWords* words_;
  std::vector<std::size_t> offset_;  // concatenate's, per thread
  std::uint64_t bucket_ = 0;
  std::size_t frontier_size_ = 1;
  bool done_ = false;
  bool advanced_ = false;  // the last pass settled its bucket for good
  bool pull_ = false;      // the current pass's heavy edges are pulled
  Stopwatch phase_;
};

void DeltaStepping::next_pass() {
  if (++pass_ == 0) {  // the marks' counter wrapped: start them again
    for (std::uint64_t v = 0; v < graph_.num_vertices(); ++v) words_[v].mark = 0;
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
  words_[r].state = pack(0.0F, r);
  frontier_.assign(1, r);
  next_pass();
  // The pulls' bookkeeping starts afresh: every vertex but the root unreached, nothing
  // counted by a thread yet.
  open_ready_ = false;
  unreached_heavy_ = heavy_entries_ - words_[r].heavy;
  for (ThreadBins& t : threads_) t.heavy_reached = t.pass_volume = 0;
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
    const std::uint64_t word = words_[v].state;
    const std::uint64_t id = original_ != nullptr ? original_[v] : v;
    if (word == kUnreached) {
      parent[id] = -1;
      distance[id] = std::numeric_limits<float>::infinity();
      continue;
    }
    const auto p = static_cast<std::uint32_t>(word);
    parent[id] = static_cast<std::int64_t>(original_ != nullptr ? original_[p] : p);
    distance[id] = distance_of(word);
    words_[v].state = kUnreached;
    words_[v].relaxed = distance_bits(kUnreached);
    ++reached;
  }
  return reached;
}

}  // namespace zbfs
