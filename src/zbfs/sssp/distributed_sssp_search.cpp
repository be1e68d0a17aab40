// DistributedSssp's search (distributed_sssp.hpp): its buckets in step over the ranks,
// each settled by light rounds, then its heavy edges pushed or pulled.
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
#include "zbfs/sssp/distributed_sssp.hpp"
#include "zbfs/sssp/distributed_sssp_words.hpp"

namespace zbfs {

using namespace distributed_sssp_detail;  // NOLINT: sssp/'s own constants

void DistributedSssp::begin_search(std::uint64_t root) {
  for (std::uint64_t v = 0; v < block_; ++v) {
    owned_[v].word = kUnreached;
    owned_[v].relaxed = kInfinityBits;
  }
  std::fill(sent_.data(), sent_.data() + sent_.size(), 0xffffffffU);
  settled_here_.clear();
  for (std::vector<Vertex>& bin : window_) bin.clear();
  far_.clear();
  current_ = 0;
  unsettled_.clear();
  unreached_heavy_ = 0;
  if (pull_possible_) {
    unsettled_ = with_heavy_edges_;
    unreached_heavy_ = heavy_entries_;
  }
  if (grid_.owns(root)) {
    const std::uint64_t offset = graph_.order().sorted_offset(root - first_vertex_);
    owned_[offset].word = static_cast<std::uint32_t>(root);  // distance 0
    file(0, static_cast<Vertex>(offset));
    unreached_heavy_ -= pull_possible_ ? owned_[offset].heavy : 0;
  }
}

bool DistributedSssp::relaxable(Vertex v, std::uint64_t sub) const {
  const std::uint32_t bits = distance_bits(owned_[v].word);
  return bits >= sub_first_bits_[sub] && bits < sub_first_bits_[sub + 1] && owned_[v].relaxed != bits;
}

void DistributedSssp::file_by_sub_bucket() {
  // The bucket's vertices whose distance dropped since they last relaxed, filed by
  // sub-bucket (stale and relaxed entries dropped on the way).
  std::vector<Vertex>& bin = window_[current_ % kWindow];
  for (std::size_t i = 0; i < bin.size(); ++i) {
    if (i + kStatesAhead < bin.size()) __builtin_prefetch(&owned_[bin[i + kStatesAhead]], 0, 1);
    const Vertex v = bin[i];
    const std::uint32_t bits = distance_bits(owned_[v].word);
    if (bits < sub_first_bits_[0] || bits >= sub_first_bits_[kSubBuckets] || owned_[v].relaxed == bits) continue;
    sub_bins_[sub_bucket_of(bits)].push_back(v);
  }
  bin.clear();
  // The lowest sub-bucket here keeps an entry still to relax at its front.
  for (std::uint64_t j = 0; j < kSubBuckets; ++j) {
    std::vector<Vertex>& sub = sub_bins_[j];
    while (!sub.empty() && !relaxable(sub.back(), j)) sub.pop_back();
    if (!sub.empty()) break;
  }
}

std::uint64_t DistributedSssp::take_round(std::uint64_t limit, std::uint64_t& push_volume) {
  frontier_.clear();
  std::uint64_t newly_settled = 0;
  for (std::uint64_t j = 0; j <= limit; ++j) {
    for (const Vertex v : sub_bins_[j]) {
      const std::uint32_t bits = distance_bits(owned_[v].word);
      if (!relaxable(v, j)) continue;  // stale, or a second entry
      // A vertex's first time in this search's rounds puts it in the bucket's settled set
      // (it can be relaxed only in its own bucket, where it settles).
      if (owned_[v].relaxed == kInfinityBits) {
        settled_.push_back(v);
        push_volume += owned_[v].heavy;
        ++newly_settled;
      }
      owned_[v].relaxed = bits;
      frontier_.push_back(v);
    }
    sub_bins_[j].clear();
  }
  return newly_settled;
}

bool DistributedSssp::settle_bucket(SsspStats& stats, bool& by_sub_buckets) {
  const Communicator& world = grid_.world();
  settled_.clear();
  std::uint64_t push_volume = 0;
  // This round's relaxed and newly settled vertices (summed over the ranks with the next
  // round's count), and the bucket's, over all ranks; whether it took sub-buckets.
  std::uint64_t round_relaxed = 0;
  std::uint64_t round_settled = 0;
  std::uint64_t bucket_relaxed = 0;
  std::uint64_t bucket_settled = 0;
  bool took_sub_buckets = false;
  for (;;) {
    file_by_sub_bucket();
    // Summed over the ranks: the entries a push would scan, a pull's cost, the last
    // round's relaxed and newly settled vertices, and the vertices left to relax by
    // sub-bucket. For the heavy pass that follows the last round, a pull costs the open
    // vertices it visits (as of the last pull, which drops those that can take nothing
    // from any later one) and a quarter of the unreached ones' heavy entries (an
    // unreached vertex mostly stops at its first settled neighbour), so that the pull is
    // chosen wherever it scans fewer entries than the push.
    constexpr std::size_t kLeft = 4;
    std::uint64_t sums[kLeft + kSubBuckets] = {};
    for (std::uint64_t j = 0; j < kSubBuckets; ++j) sums[kLeft + j] = sub_bins_[j].size();
    sums[0] = push_volume;
    sums[1] = pull_possible_ ? unsettled_.size() + unreached_heavy_ / 4 : 0;
    sums[2] = round_relaxed;
    sums[3] = round_settled;
    {
      const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
      world.allreduce(std::span<std::uint64_t>(sums), ReduceOp::kSum);
    }
    std::uint64_t pending = 0;
    std::uint64_t limit = kSubBuckets;
    for (std::uint64_t j = 0; j < kSubBuckets; ++j) {
      pending += sums[kLeft + j];
      if (limit == kSubBuckets && sums[kLeft + j] != 0) limit = j;
    }
    bucket_relaxed += sums[2];
    bucket_settled += sums[3];
    if (pending == 0) {
      if (took_sub_buckets &&
          static_cast<double>(bucket_relaxed) < (1 + sub_bucket_stop_below_) * static_cast<double>(bucket_settled)) {
        by_sub_buckets = false;
      }
      return pull_possible_ && sums[1] < sums[0];
    }
    if (pending < sub_bucket_min_ || !by_sub_buckets) {
      limit = kSubBuckets - 1;
    } else {
      took_sub_buckets = true;
    }
    round_settled = take_round(limit, push_volume);
    ++stats.light_rounds;
    round_relaxed = frontier_.size();
    const std::vector<Source> sources = expand(frontier_);
    relax(sources, true, stats);
  }
}

std::uint64_t DistributedSssp::export_tree(std::span<std::int64_t> parent, std::span<float> distance) const {
  // Parents and distances by input offset, in input ids.
  const std::span<const Vertex> original = graph_.order().original_offsets();
  const std::span<const Vertex> row_original = graph_.row_group_original();
  const std::uint64_t row_first_global = layout_.target.to_global(0);
  std::uint64_t reached = 0;
  const auto count = static_cast<std::int64_t>(block_);
#pragma omp parallel for schedule(static) reduction(+ : reached)
  for (std::int64_t s = 0; s < count; ++s) {
    const std::uint64_t word = owned_[static_cast<std::uint64_t>(s)].word;
    const std::uint64_t at = original[static_cast<std::size_t>(s)];
    if (word == kUnreached) {
      parent[at] = -1;
      distance[at] = std::numeric_limits<float>::infinity();
    } else {
      const std::uint64_t low = word & 0xffffffffU;
      parent[at] = static_cast<std::int64_t>((word & kRowParent) != 0 ? row_first_global + row_original[low] : low);
      distance[at] = std::bit_cast<float>(distance_bits(word));
      ++reached;
    }
  }
  return reached;
}

SsspStats DistributedSssp::run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance) {
  const Communicator& world = grid_.world();
  if (parent.size() != block_ || distance.size() != block_) {
    throw Error(ExitCode::kFailure, "distributed SSSP: the parent and distance arrays do not match the piece");
  }
  if (root >= grid_.blocks().num_vertices()) {
    throw Error(ExitCode::kUsage, "search key " + std::to_string(root) + " is not a vertex");
  }
  SsspStats stats;
  stats.delta = delta_;
  Stopwatch clock;
  begin_search(root);
  double light_s = 0;
  double heavy_s = 0;
  bool by_sub_buckets = true;  // until a bucket taken by sub-buckets gained little from them
  for (;;) {
    // The next bucket with a vertex in it on any rank (the current one again when a
    // heavy relaxation rounded into it).
    std::uint64_t next = 0;
    {
      const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
      next = world.allreduce(lowest_bucket(current_), ReduceOp::kMin);
    }
    if (next == kNoBucket) break;
    if (next != current_) {
      for (std::uint64_t b = current_; b < std::min(next, current_ + kWindow); ++b) window_[b % kWindow].clear();
      current_ = next;
      refill_window();
    }
    ++stats.buckets;
    for (std::uint64_t j = 0; j <= kSubBuckets; ++j) sub_first_bits_[j] = first_bits_of(current_ * kSubBuckets + j);
    clock.restart();
    const bool pull = settle_bucket(stats, by_sub_buckets);
    light_s += clock.elapsed_s();
    clock.restart();
    share_settled(pull);
    // The bucket's heavy edges: pushed from the vertices it settled, or pulled by the
    // vertices still open where those have fewer to look at (late buckets).
    if (pull) {
      pull_heavy(stats);
      ++stats.pull_buckets;
    } else {
      const std::vector<Source> sources = expand(settled_);
      relax(sources, false, stats);
    }
    heavy_s += clock.elapsed_s();
  }
  clock.restart();
  const std::uint64_t reached = export_tree(parent, distance);
  stats.export_time_s = clock.elapsed_s();
  stats.light_time_s = light_s;
  stats.heavy_time_s = heavy_s;
  std::uint64_t totals[4] = {reached, stats.light_edges, stats.heavy_edges, stats.improvements};
  world.allreduce(std::span<std::uint64_t>(totals), ReduceOp::kSum);
  stats.reached_vertices = totals[0];
  stats.light_edges = totals[1];
  stats.heavy_edges = totals[2];
  stats.improvements = totals[3];
  return stats;
}

}  // namespace zbfs
