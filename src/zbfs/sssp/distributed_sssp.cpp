#include "zbfs/sssp/distributed_sssp.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/sssp/delta_stepping.hpp"
#include "zbfs/sssp/distributed_sssp_words.hpp"

namespace zbfs {

using namespace distributed_sssp_detail;  // NOLINT: sssp/'s own constants

DistributedSssp::DistributedSssp(const ProcessGrid& grid, DistributedGraph<Vertex>& graph, Exchanger& exchanger,
                                 PhaseMetrics& metrics, std::optional<double> delta, SubBucketPolicy sub_buckets)
    : grid_(grid),
      graph_(graph),
      exchanger_(exchanger),
      metrics_(metrics),
      layout_(grid.top_down()),
      block_(grid.blocks().block()),
      first_vertex_(grid.my_first_vertex()),
      col_base_(layout_.source.to_local(first_vertex_)),
      fold_rank_(static_cast<std::uint64_t>(layout_.fold->rank())),
      col_first_global_(layout_.source.to_global(0)),
      filter_sent_(exchanger.traits().merges_updates),
      owned_(block_),
      sent_(layout_.target.local_size()),
      settled_here_(layout_.target.local_size()),
      settled_mark_(block_),
      window_(kWindow),
      threads_(static_cast<std::size_t>(omp_get_max_threads())),
      shared_(threads_.size() > 1) {
  const LocalCsr<Vertex>& csr = graph_.forward();
  if (!csr.weighted()) throw Error(ExitCode::kFailure, "distributed SSSP: the graph has no weights");
  if (grid.blocks().num_vertices() > std::numeric_limits<Vertex>::max()) {
    throw Error(ExitCode::kUsage, "--kernels sssp takes graphs of fewer than 2^32 vertices");
  }
  if (delta && (!(*delta > 0) || !std::isfinite(*delta))) {
    throw Error(ExitCode::kUsage, "--delta must be a positive number");
  }
  const std::uint64_t entries = csr.num_entries();
  const float* weights = csr.weight_data();
  double weight_sum = 0;
  float largest = 0;
  const auto count = static_cast<std::int64_t>(entries);
#pragma omp parallel for reduction(+ : weight_sum) reduction(max : largest)
  for (std::int64_t k = 0; k < count; ++k) {
    weight_sum += weights[k];
    largest = std::max(largest, weights[k]);
  }
  std::uint64_t with_edges = 0;
  for (const std::uint64_t d : graph_.owned_degree()) with_edges += d > 0 ? 1 : 0;
  // The one-process kernel's default over the whole graph (every rank the same).
  const double global_weight = grid.world().allreduce(weight_sum, ReduceOp::kSum);
  const std::uint64_t global_with_edges = grid.world().allreduce(with_edges, ReduceOp::kSum);
  const std::uint64_t global_entries = graph_.global_directed_edges();
  delta_ = 1.0;
  if (global_entries > 0 && global_with_edges > 0 && global_weight > 0) {
    const double mean_weight = global_weight / static_cast<double>(global_entries);
    const double mean_degree = static_cast<double>(global_entries) / static_cast<double>(global_with_edges);
    delta_ = DeltaStepping::kDeltaDegrees * mean_weight / mean_degree;
  }
  if (delta) delta_ = *delta;
  const double largest_weight = grid.world().allreduce(static_cast<double>(largest), ReduceOp::kMax);
  delta_ = std::max(delta_, DeltaStepping::smallest_delta(largest_weight, grid.blocks().num_vertices()));
  inverse_delta_ = 1.0 / delta_;
  sub_bucket_min_ = sub_buckets.min_per_rank * static_cast<std::uint64_t>(grid.world().size());
  sub_bucket_stop_below_ = sub_buckets.stop_below;
  inverse_sub_delta_ = inverse_delta_ * static_cast<double>(kSubBuckets);

  // Pulling heavy edges needs a rank's rows to be its own vertices with all their edges,
  // and the settled distances of every neighbour: 1D, with merged updates.
  own_rows_ = layout_.expand->size() == 1;
  row_parents_ = own_rows_ && !graph_.row_group_original().empty();
  pull_possible_ = row_parents_ && filter_sent_;
  if (pull_possible_) {
    pulled_ = Bitmap(layout_.target.local_size());
    pulled_before_.resize(pulled_.num_words());
  }
  // Light edges first; heavy ones by weight for pulls (a prefix is all a pull reads), by
  // neighbour where they are only pushed (the sent distances are then swept, not hit at
  // random; docs/performance.md, "Figures behind the code").
  const auto light = static_cast<float>(delta_);
  graph.order_forward_rows(light, !pull_possible_);
  const std::uint64_t rows = csr.num_rows();
  const std::uint64_t* offsets = csr.offsets();
  heavy_start_ = LargeArray<std::uint64_t>(rows);
  const auto row_count = static_cast<std::int64_t>(rows);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t r = 0; r < row_count; ++r) {
    std::uint64_t e = offsets[r];
    while (e < offsets[r + 1] && weights[e] < light) ++e;
    heavy_start_[static_cast<std::uint64_t>(r)] = e;
  }
  for (std::uint64_t v = 0; v < block_; ++v) {
    const std::uint64_t row = col_base_ + v;
    const std::uint64_t heavy = offsets[row + 1] - heavy_start_[row];
    owned_[v].heavy = static_cast<std::uint32_t>(heavy);
    if (!pull_possible_ || heavy == 0) continue;
    with_heavy_edges_.push_back({static_cast<Vertex>(v), weights[heavy_start_[row]]});
    heavy_entries_ += heavy;
  }
  for (ThreadWork& work : threads_) work.outgoing.resize(static_cast<std::size_t>(layout_.fold->size()));
}

inline void DistributedSssp::improve(ThreadWork& work, std::uint64_t offset, std::uint64_t word) {
  std::uint64_t old = 0;
  if (!lower(owned_[offset].word, word, shared_, distance_bits, old)) return;
  // One thread files the vertex at once; several leave it to file_improved.
  if (shared_) {
    work.improved.emplace_back(bucket_of(distance_bits(word)), static_cast<Vertex>(offset));
  } else {
    file(bucket_of(distance_bits(word)), static_cast<Vertex>(offset));
  }
  ++work.improvements;
  if (old == kUnreached && pull_possible_) work.heavy_reached += owned_[offset].heavy;
}

void DistributedSssp::offer(ThreadWork& work, Vertex to, float distance, std::uint32_t parent) {
  const auto bits = std::bit_cast<std::uint32_t>(distance);
  if (filter_sent_) {
    // A settled vertex takes nothing more (a bit in a bitmap a cache level closer than
    // the sent distances); otherwise only a distance below every one offered to the
    // vertex in this search can lower it (its own rank's included: the array is read
    // ahead, the owned words are not).
    if (settled_here_.test(to)) return;
    std::uint32_t old = 0;
    if (!lower(sent_[to], bits, shared_, std::identity{}, old)) return;
  }
  const std::uint64_t word = std::uint64_t{bits} << 32 | parent;
  const auto member = static_cast<std::uint64_t>(layout_.target.member_of_local(to));
  if (member == fold_rank_) {
    improve(work, to - member * block_, word | (row_parents_ ? kRowParent : 0));
    return;
  }
  work.outgoing[member].push_back({layout_.target.to_global(to), word});
}

std::vector<DistributedSssp::Source> DistributedSssp::expand(std::span<const Vertex> owned) {
  std::vector<Source> sources(owned.size());
  for (std::size_t i = 0; i < owned.size(); ++i) {
    sources[i] = {static_cast<Vertex>(col_base_ + owned[i]), distance_bits(owned_[owned[i]].word)};
  }
  if (layout_.expand->size() == 1) return sources;
  // Along the column as one sorted set of bucket words: a round's and a push's sources
  // are all in the current bucket, so the words are narrow and their gaps small.
  const ScopedPhase phase(metrics_, Phase::kColumnExchange);
  const BucketWords words = bucket_words();
  std::vector<std::uint64_t> mine(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) mine[i] = words.word(sources[i].col_local, sources[i].bits);
  std::sort(mine.begin(), mine.end());
  const std::vector<std::uint64_t> all = exchanger_.gather_ids(*layout_.expand, mine);
  sources.resize(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    sources[i] = {static_cast<Vertex>(words.id(all[i])), words.bits(all[i])};
  }
  return sources;
}

std::uint32_t DistributedSssp::request_parent(Vertex u) const {
  // In 1D a request's parent is its source's row-group index, as a pull's is (looked up
  // once the search is over): indices follow the degree order, so the hubs, which send
  // most requests, have small ones, and the parents' column compresses better.
  return row_parents_ ? static_cast<std::uint32_t>(fold_rank_ * block_ + u - col_base_)
                      : static_cast<std::uint32_t>(col_first_global_ + graph_.col_group_original()[u]);
}

void DistributedSssp::relax_light(std::span<const Source> sources) {
  const LocalCsr<Vertex>& csr = graph_.forward();
  const std::uint64_t* offsets = csr.offsets();
  const Vertex* neighbors = csr.neighbor_data();
  const float* weights = csr.weight_data();
  const std::span<const Vertex> col_original = graph_.col_group_original();
  const bool own_sources = layout_.expand->size() == 1;
  const auto count = static_cast<std::int64_t>(sources.size());
#pragma omp parallel
  {
    ThreadWork& work = threads_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < count; ++i) {
      // A source's row bounds, then its entries, are a random access each: ask for
      // them ahead (two steps, the entries once the bounds have come).
      if (i + 2 * kSourcesAhead < count) {
        const Vertex far = sources[static_cast<std::size_t>(i + 2 * kSourcesAhead)].col_local;
        __builtin_prefetch(offsets + far, 0, 1);
        __builtin_prefetch(heavy_start_.data() + far, 0, 1);
        __builtin_prefetch(col_original.data() + far, 0, 1);
      }
      if (i + kSourcesAhead < count) {
        const std::uint64_t first = offsets[sources[static_cast<std::size_t>(i + kSourcesAhead)].col_local];
        __builtin_prefetch(neighbors + first, 0, 1);
        __builtin_prefetch(weights + first, 0, 1);
      }
      const Source s = sources[static_cast<std::size_t>(i)];
      std::uint32_t bits = s.bits;
      if (own_sources) {
        // The distance may have dropped since the round began (an earlier source's
        // edge on this rank): relax from the lowest, so as not to come back for it.
        const Vertex v = s.col_local - static_cast<Vertex>(col_base_);
        bits = distance_bits(std::atomic_ref<std::uint64_t>(owned_[v].word).load(std::memory_order_relaxed));
        owned_[v].relaxed = bits;
      }
      const float du = std::bit_cast<float>(bits);
      const std::uint32_t parent = request_parent(s.col_local);
      const std::uint64_t end = heavy_start_[s.col_local];
      for (std::uint64_t e = offsets[s.col_local]; e < end; ++e) {
        if (e + kPrefetchAhead < end) __builtin_prefetch(sent_.data() + neighbors[e + kPrefetchAhead], 1, 1);
        offer(work, neighbors[e], du + weights[e], parent);
      }
      work.edges += end - offsets[s.col_local];
    }
  }
}

void DistributedSssp::relax_heavy(std::span<const Source> sources) {
  const LocalCsr<Vertex>& csr = graph_.forward();
  const std::uint64_t* offsets = csr.offsets();
  const Vertex* neighbors = csr.neighbor_data();
  const float* weights = csr.weight_data();
  // Heavy lists in pieces, so that a hub's is shared among threads.
  std::vector<HeavyPiece> pieces;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const Vertex u = sources[i].col_local;
    for (std::uint64_t first = heavy_start_[u]; first < offsets[u + 1]; first += kHeavyPiece) {
      pieces.push_back({static_cast<std::uint32_t>(i), first, std::min(offsets[u + 1], first + kHeavyPiece)});
    }
  }
  const std::uint32_t* sent = sent_.data();
  const auto count = static_cast<std::int64_t>(pieces.size());
#pragma omp parallel
  {
    ThreadWork& work = threads_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t i = 0; i < count; ++i) {
      if (i + kSourcesAhead < count) {
        const std::uint64_t first = pieces[static_cast<std::size_t>(i + kSourcesAhead)].first;
        __builtin_prefetch(neighbors + first, 0, 1);
        __builtin_prefetch(weights + first, 0, 1);
      }
      const HeavyPiece piece = pieces[static_cast<std::size_t>(i)];
      const Source s = sources[piece.source];
      const float du = std::bit_cast<float>(s.bits);
      const std::uint32_t parent = request_parent(s.col_local);
      for (std::uint64_t e = piece.first; e < piece.end; ++e) {
        // The sent distances are a random access a step: ask for them ahead.
        if (e + kPrefetchAhead < piece.end) __builtin_prefetch(sent + neighbors[e + kPrefetchAhead], 1, 1);
        offer(work, neighbors[e], du + weights[e], parent);
      }
      work.edges += piece.end - piece.first;
    }
  }
}

void DistributedSssp::relax(std::span<const Source> sources, bool light, SsspStats& stats) {
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    if (light) {
      relax_light(sources);
    } else {
      relax_heavy(sources);
    }
  }
  // The requests for other ranks' vertices, by fold member.
  items_.clear();
  counts_.assign(static_cast<std::size_t>(layout_.fold->size()), 0);
  for (std::size_t d = 0; d < counts_.size(); ++d) {
    for (ThreadWork& work : threads_) {
      counts_[d] += work.outgoing[d].size();
      items_.insert(items_.end(), work.outgoing[d].begin(), work.outgoing[d].end());
      work.outgoing[d].clear();
    }
  }
  std::vector<KeyedItem> arrived;
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    arrived = exchanger_.update(*layout_.fold, items_, counts_);
  }
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const auto count = static_cast<std::int64_t>(arrived.size());
#pragma omp parallel
    {
      ThreadWork& work = threads_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const KeyedItem& item = arrived[static_cast<std::size_t>(i)];
        const std::uint64_t offset = item.key - first_vertex_;
        if (offset >= block_) continue;  // not this rank's: a malformed request
        improve(work, offset, item.value | (row_parents_ ? kRowParent : 0));
      }
    }
    for (ThreadWork& work : threads_) {
      (light ? stats.light_edges : stats.heavy_edges) += work.edges;
      stats.improvements += work.improvements;
      work.edges = 0;
      work.improvements = 0;
    }
    file_improved();
  }
}

void DistributedSssp::share_settled(bool with_distances) {
  if (!filter_sent_) return;
  // A gather of the bucket's settled frontier, booked as BFS books its frontier gathers:
  // apart from the requests' fold (row_exchange), so that each shows its own bytes.
  const ScopedPhase phase(metrics_, Phase::kColumnExchange);
  // One sorted set: the row-group local ids, or for a pull their bucket words (a bucket's
  // settled vertices have their distances in it: a settled vertex's distance only drops
  // within its bucket). The settled vertices are put in order by a sort when few, else
  // read off a bitmap of the piece (a bucket's settled set can be a tenth of the piece,
  // where the sort took a third of the share's time).
  if (settled_.size() * 16 < settled_mark_.num_words()) {
    std::sort(settled_.begin(), settled_.end());
  } else {
    for (const Vertex v : settled_) settled_mark_.set(v);
    std::size_t at = 0;
    for (std::size_t w = 0; w < settled_mark_.num_words(); ++w) {
      for (std::uint64_t bits = settled_mark_.word(w); bits != 0; bits &= bits - 1) {
        settled_[at++] = static_cast<Vertex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      }
      settled_mark_.word(w) = 0;
    }
  }
  std::vector<std::uint64_t> mine;
  mine.reserve(settled_.size());
  const std::uint64_t row_base = fold_rank_ * block_;
  pulled_words_ = bucket_words();
  const LocalCsr<Vertex>& csr = graph_.forward();
  const std::uint64_t* offsets = csr.offsets();
  const Vertex* neighbors = csr.neighbor_data();
  for (std::size_t i = 0; i < settled_.size(); ++i) {
    const Vertex v = settled_[i];
    // In 1D a rank's rows hold all of its vertices' neighbours: a vertex all of whose
    // neighbours are known to be settled is offered nothing more, and no open vertex
    // pulls from it, so nobody needs to hear of it: leaves, and vertices farther than
    // all their neighbours, most of the vertices a Kronecker graph settles.
    if (own_rows_) {
      if (i + kSourcesAhead < settled_.size()) {
        __builtin_prefetch(neighbors + offsets[col_base_ + settled_[i + kSourcesAhead]], 0, 1);
      }
      const std::uint64_t row = col_base_ + v;
      std::uint64_t e = offsets[row];
      while (e < offsets[row + 1] && settled_here_.test(neighbors[e])) ++e;
      if (e == offsets[row + 1]) continue;
    }
    const std::uint64_t id = row_base + v;
    mine.push_back(with_distances ? pulled_words_.word(id, distance_bits(owned_[v].word)) : id);
  }
  std::vector<std::uint64_t> all = exchanger_.gather_ids(*layout_.fold, mine);
  const auto count = static_cast<std::int64_t>(all.size());
  const auto set_bit = [this](Bitmap& bits, std::uint64_t id) {
    if (shared_) {
      bits.set_atomic(id);
    } else {
      bits.set(id);
    }
  };
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint64_t word = all[static_cast<std::size_t>(i)];
    const std::uint64_t id = with_distances ? pulled_words_.id(word) : word;
    set_bit(settled_here_, id);
    if (with_distances) set_bit(pulled_, id);  // for the pull
  }
  if (!with_distances) return;
  // The words come sorted, each id once (gather_ids makes them so).
  pulled_entries_ = std::move(all);
  std::fill(pulled_before_.begin(), pulled_before_.end(), 0);
  for (const std::uint64_t word : pulled_entries_) ++pulled_before_[Bitmap::word_of(pulled_words_.id(word))];
  std::uint32_t before = 0;
  for (std::uint32_t& in_word : pulled_before_) before += std::exchange(in_word, before);
}

void DistributedSssp::pull_heavy(SsspStats& stats) {
  const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
  const LocalCsr<Vertex>& csr = graph_.forward();
  const std::uint64_t* offsets = csr.offsets();
  const Vertex* neighbors = csr.neighbor_data();
  const float* weights = csr.weight_data();
  const double low = static_cast<double>(current_) * delta_;
  const double next_low = static_cast<double>(current_ + 1) * delta_;
  // The open vertices with heavy edges (those below the bucket's top are final now: each
  // thread keeps the others for the next pull in the same pass).
  const auto count = static_cast<std::int64_t>(unsettled_.size());
#pragma omp parallel
  {
    ThreadWork& work = threads_[static_cast<std::size_t>(omp_get_thread_num())];
    work.still_open.clear();
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t i = 0; i < count; ++i) {
      const OpenVertex open = unsettled_[static_cast<std::size_t>(i)];
      const Vertex v = open.offset;
      // The lists a few vertices ahead are a random access each: ask for them early.
      if (i + kPullAhead < count) {
        const std::uint64_t ahead =
            heavy_start_[col_base_ + unsettled_[static_cast<std::size_t>(i + kPullAhead)].offset];
        __builtin_prefetch(weights + ahead, 0, 1);
        __builtin_prefetch(neighbors + ahead, 0, 1);
      }
      const std::uint32_t bits = distance_bits(owned_[v].word);
      if (bits < sub_first_bits_[kSubBuckets]) continue;  // reached, and in this bucket or below
      // A neighbour settled in this bucket is at low or above: only edges lighter than
      // the gap between the best distance so far and low can help (a little slack for
      // the float sum's rounding), and the gap narrows as better ones are found.
      const auto gap_to = [](std::uint32_t best_bits, double from) {
        return best_bits == kInfinityBits
                   ? std::numeric_limits<double>::infinity()
                   : (static_cast<double>(std::bit_cast<float>(best_bits)) - from) * (1 + 0x1p-20) + 0x1p-40;
      };
      const auto gap = [&](std::uint32_t best_bits) { return gap_to(best_bits, low); };
      std::uint32_t best = bits;
      double limit = gap(best);
      // A reached vertex whose gap is below its lightest heavy edge (kept beside it) can
      // take nothing from this pull, nor from any later one (low only grows, its distance
      // only drops): it leaves the open vertices for good and waits for its bucket.
      if (!(open.lightest < limit)) continue;
      Vertex by = 0;
      const std::uint64_t row = col_base_ + v;
      std::uint64_t e = heavy_start_[row];
      for (; e < offsets[row + 1] && weights[e] < limit; ++e) {
        const Vertex u = neighbors[e];
        const std::size_t w = Bitmap::word_of(u);
        const std::uint64_t in_word = pulled_.word(w);
        const std::uint64_t mask = std::uint64_t{1} << (u & 63U);
        if ((in_word & mask) == 0) continue;  // not settled in this bucket
        const std::uint32_t settled = pulled_words_.bits(
            pulled_entries_[pulled_before_[w] + static_cast<std::uint32_t>(std::popcount(in_word & (mask - 1)))]);
        const auto candidate = std::bit_cast<std::uint32_t>(std::bit_cast<float>(settled) + weights[e]);
        if (candidate < best) {
          best = candidate;
          by = u;
          limit = gap(best);
        }
      }
      work.edges += e - heavy_start_[row];
      // The same holds at the next pull, a bucket on at least, for its distance now: most
      // vertices the bucket with the hubs reached leave here, not in the next pull (which
      // visited 130k vertices a rank to keep 25k, scale 20).
      if (open.lightest < gap_to(best, next_low)) work.still_open.push_back(open);
      if (best == bits) continue;
      improve(work, v, kRowParent | std::uint64_t{best} << 32 | by);
    }
  }
  for (const std::uint64_t word : pulled_entries_) pulled_.word(Bitmap::word_of(pulled_words_.id(word))) = 0;
  pulled_entries_.clear();
  unsettled_.clear();
  for (ThreadWork& work : threads_) {
    unsettled_.insert(unsettled_.end(), work.still_open.begin(), work.still_open.end());
    stats.heavy_edges += work.edges;
    stats.improvements += work.improvements;
    work.edges = 0;
    work.improvements = 0;
  }
  file_improved();
}

void DistributedSssp::file(std::uint64_t bucket, Vertex offset) {
  if (bucket - current_ < kWindow) {
    window_[bucket % kWindow].push_back(offset);
  } else {
    far_.emplace_back(bucket, offset);
  }
}

void DistributedSssp::file_improved() {
  for (ThreadWork& work : threads_) {
    unreached_heavy_ -= work.heavy_reached;
    work.heavy_reached = 0;
    for (const auto& [bucket, offset] : work.improved) file(bucket, offset);
    work.improved.clear();
  }
}

std::uint64_t DistributedSssp::lowest_bucket(std::uint64_t from) {
  for (std::uint64_t b = from; b < current_ + kWindow; ++b) {
    std::vector<Vertex>& bin = window_[b % kWindow];
    if (bin.empty()) continue;
    // Entries are stale once their vertex moved to a lower bucket; drop those.
    const std::uint32_t first = first_bits_of(b * kSubBuckets);
    const std::uint32_t end = first_bits_of((b + 1) * kSubBuckets);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < bin.size(); ++i) {
      if (i + kStatesAhead < bin.size()) __builtin_prefetch(&owned_[bin[i + kStatesAhead]], 0, 1);
      const Vertex v = bin[i];
      const std::uint32_t bits = distance_bits(owned_[v].word);
      if (bits >= first && bits < end) bin[kept++] = v;
    }
    bin.resize(kept);
    if (kept != 0) return b;
  }
  std::uint64_t lowest = kNoBucket;
  std::size_t kept = 0;
  for (const auto& [bucket, offset] : far_) {
    if (bucket_of(distance_bits(owned_[offset].word)) != bucket) continue;
    far_[kept++] = {bucket, offset};
    lowest = std::min(lowest, bucket);
  }
  far_.resize(kept);
  return lowest;
}

void DistributedSssp::refill_window() {
  std::size_t kept = 0;
  for (const auto& [bucket, offset] : far_) {
    if (bucket - current_ < kWindow) {
      window_[bucket % kWindow].push_back(offset);
    } else {
      far_[kept++] = {bucket, offset};
    }
  }
  far_.resize(kept);
}

std::uint32_t DistributedSssp::first_bits_of(std::uint64_t sub) const {
  // Distances' bits order them (non-negative floats), and sub_bucket_of's scaling is
  // monotone: the first bits at or past the boundary, by bisection.
  const auto reaches = [&](std::uint32_t bits) {
    const double scaled = static_cast<double>(std::bit_cast<float>(bits)) * inverse_sub_delta_;
    return !(scaled < 1.8e19) || static_cast<std::uint64_t>(scaled) >= sub;
  };
  std::uint32_t low = 0;
  std::uint32_t high = kInfinityBits;  // reaches every boundary
  while (low < high) {
    const std::uint32_t middle = low + (high - low) / 2;
    if (reaches(middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

}  // namespace zbfs
