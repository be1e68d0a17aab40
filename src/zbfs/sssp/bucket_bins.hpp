// BucketBins: one thread's vertices by delta-stepping bucket. The buckets near the
// search's current one (a window of kWindow from `base`) sit in a ring of vectors; the
// ones beyond it in an ordered map, moved into the ring as the base advances. The cost of
// a search is then the buckets that hold something, whatever delta is: a tiny --delta
// puts a path's few vertices billions of buckets apart, which a vector indexed by bucket
// (GAPBS's layout, and this kernel's before) had to allocate and step through.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace zbfs {

template <class Vertex>
class BucketBins {
 public:
  static constexpr std::uint64_t kWindow = 1024;
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  BucketBins() : ring_(kWindow) {}

  // Bucket b's vertices (b >= base()), created empty when there are none.
  std::vector<Vertex>& at(std::uint64_t b) {
    if (b - base_ < kWindow) [[likely]]
      return ring_[b % kWindow];
    return far(b);
  }
  // Bucket b's vertices, or nullptr when it holds none (b >= base()).
  std::vector<Vertex>* find(std::uint64_t b) {
    if (b - base_ < kWindow) return ring_[b % kWindow].empty() ? nullptr : &ring_[b % kWindow];
    const auto it = far_.find(b);
    return it == far_.end() || it->second.empty() ? nullptr : &it->second;
  }
  // The first bucket at or after `from` (>= base()) that holds a vertex, or kNone.
  [[nodiscard]] std::uint64_t first_from(std::uint64_t from) const {
    for (std::uint64_t b = from; b - base_ < kWindow; ++b) {
      if (!ring_[b % kWindow].empty()) return b;
    }
    for (const auto& [b, vertices] : far_) {
      if (!vertices.empty()) return b;
    }
    return kNone;
  }
  // The search moves on to bucket `to` (no bucket before it holds anything): the window
  // starts there, and the far buckets it now covers come into the ring.
  void advance(std::uint64_t to) {
    base_ = to;
    while (!far_.empty() && far_.begin()->first - base_ < kWindow) {
      std::vector<Vertex>& slot = ring_[far_.begin()->first % kWindow];
      if (slot.empty()) {
        slot.swap(far_.begin()->second);
      } else {
        slot.insert(slot.end(), far_.begin()->second.begin(), far_.begin()->second.end());
      }
      far_.erase(far_.begin());
    }
  }
  [[nodiscard]] std::uint64_t base() const { return base_; }

 private:
  // Out of the relaxations' inner loop: a map insertion there kept the compiler from
  // keeping the loop tight.
  [[gnu::noinline]] std::vector<Vertex>& far(std::uint64_t b) { return far_[b]; }

  std::uint64_t base_ = 0;
  std::vector<std::vector<Vertex>> ring_;
  std::map<std::uint64_t, std::vector<Vertex>> far_;
};

}  // namespace zbfs
