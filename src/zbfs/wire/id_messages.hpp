// Vertex-id messages of a sparse all-to-all: outgoing ids grouped by destination rank,
// incoming ids grouped by source rank, a builder that lets OpenMP threads fill
// per-destination buckets without locks, and the keyed items of updates. No MPI here.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zbfs {

// Whether the receiver needs the ids in the order sent, or only the set of them.
enum class IdsAre { kSet, kSequence };

// A vertex and its parent for BFS updates; an index and a value for array access.
struct KeyedItem {
  std::uint64_t key = 0;
  std::uint64_t value = 0;
  friend bool operator==(const KeyedItem&, const KeyedItem&) = default;
};

// Sorts `items` by key and keeps one per key, the smallest value (a keyed update's merge):
// an LSD radix sort on the key's bytes, skipping those every key shares (the high ones
// of small id ranges), which is several times faster than comparison sorting 16-byte
// items. `scratch` is reused between calls.
inline void merge_by_key(std::vector<KeyedItem>& items, std::vector<KeyedItem>& scratch) {
  const std::size_t n = items.size();
  if (n < 64) {
    std::sort(items.begin(), items.end(), [](const KeyedItem& a, const KeyedItem& b) {
      return a.key != b.key ? a.key < b.key : a.value < b.value;
    });
  } else {
    std::array<std::array<std::size_t, 256>, 8> counts{};
    for (const KeyedItem& item : items) {
      for (std::size_t b = 0; b < 8; ++b) ++counts[b][(item.key >> (8 * b)) & 0xff];
    }
    scratch.resize(n);
    KeyedItem* from = items.data();
    KeyedItem* to = scratch.data();
    for (std::size_t b = 0; b < 8; ++b) {
      std::array<std::size_t, 256>& count = counts[b];
      if (count[(items[0].key >> (8 * b)) & 0xff] == n) continue;  // every key has this byte
      std::size_t at = 0;
      for (std::size_t& c : count) {
        const std::size_t here = c;
        c = at;
        at += here;
      }
      for (const KeyedItem* p = from; p != from + n; ++p) to[count[(p->key >> (8 * b)) & 0xff]++] = *p;
      std::swap(from, to);
    }
    if (from != items.data()) std::copy(from, from + n, items.data());
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (kept != 0 && items[kept - 1].key == items[i].key) {
      items[kept - 1].value = std::min(items[kept - 1].value, items[i].value);
    } else {
      items[kept++] = items[i];
    }
  }
  items.resize(kept);
}

struct OutgoingIds {
  std::vector<std::uint64_t> ids;     // grouped by destination, in rank order
  std::vector<std::uint64_t> counts;  // counts[d]: ids for rank d
};

struct IncomingIds {
  std::vector<std::uint64_t> ids;      // grouped by source, in rank order
  std::vector<std::uint64_t> offsets;  // ids from rank s: [offsets[s], offsets[s + 1])

  [[nodiscard]] int num_sources() const { return static_cast<int>(offsets.size()) - 1; }
  [[nodiscard]] std::span<const std::uint64_t> from(int source) const {
    const auto s = static_cast<std::size_t>(source);
    return {ids.data() + offsets[s], static_cast<std::size_t>(offsets[s + 1] - offsets[s])};
  }
};

// One bucket per (thread, destination); finish() concatenates them by destination.
class OutgoingBuilder {
 public:
  OutgoingBuilder(int destinations, int threads)
      : destinations_(static_cast<std::size_t>(destinations)),
        buckets_(static_cast<std::size_t>(destinations) * static_cast<std::size_t>(threads)) {}

  [[nodiscard]] int threads() const {
    return destinations_ == 0 ? 0 : static_cast<int>(buckets_.size() / destinations_);
  }

  std::vector<std::uint64_t>& bucket(int thread, int destination) {
    return buckets_[static_cast<std::size_t>(thread) * destinations_ + static_cast<std::size_t>(destination)];
  }

  [[nodiscard]] OutgoingIds finish() {
    OutgoingIds out;
    out.counts.assign(destinations_, 0);
    const std::size_t threads = destinations_ == 0 ? 0 : buckets_.size() / destinations_;
    std::uint64_t total = 0;
    for (std::size_t t = 0; t < threads; ++t) {
      for (std::size_t d = 0; d < destinations_; ++d) {
        out.counts[d] += buckets_[t * destinations_ + d].size();
        total += buckets_[t * destinations_ + d].size();
      }
    }
    out.ids.reserve(total);
    for (std::size_t d = 0; d < destinations_; ++d) {
      for (std::size_t t = 0; t < threads; ++t) {
        auto& b = buckets_[t * destinations_ + d];
        out.ids.insert(out.ids.end(), b.begin(), b.end());
        b.clear();
      }
    }
    return out;
  }

 private:
  std::size_t destinations_;
  std::vector<std::vector<std::uint64_t>> buckets_;
};

}  // namespace zbfs
