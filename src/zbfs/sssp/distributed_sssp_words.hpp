// The distributed SSSP's state words and tuning constants, shared by its translation
// units (distributed_sssp.cpp, distributed_sssp_search.cpp). Internal to sssp/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace zbfs::distributed_sssp_detail {

inline constexpr std::uint32_t kInfinityBits = 0x7f800000U;  // +infinity's bits
inline constexpr std::uint64_t kUnreached = std::uint64_t{kInfinityBits} << 32 | 0xffffffffU;
inline constexpr std::uint64_t kNoBucket = std::numeric_limits<std::uint64_t>::max();
// Entries of a heavy list a thread takes at once, so that hubs' lists are shared.
inline constexpr std::uint64_t kHeavyPiece = 1024;
inline constexpr std::uint64_t kPrefetchAhead = 16;
inline constexpr std::int64_t kPullAhead = 8;
inline constexpr std::int64_t kSourcesAhead = 4;
inline constexpr std::size_t kStatesAhead = 8;

// A word's top bit (a distance's sign, never set) marks a parent held as its row-group
// local index (1D, and every pull): its input id is looked up once, when the search is
// over (at every improvement, that random read was a fifth of a pull's time; a pull
// improves most vertices it reaches again and again, bucket after bucket).
inline constexpr std::uint64_t kRowParent = std::uint64_t{1} << 63;

inline std::uint32_t distance_bits(std::uint64_t word) { return static_cast<std::uint32_t>(word >> 32) & 0x7fffffffU; }

// Lowers `slot` to `value` when key(value) < key(slot), leaving the slot's earlier value in
// `old`. With `shared` false (one thread) a plain load and store: a locked compare-and-swap
// waits for every earlier store to drain, which kept a rank's cache misses from overlapping.
template <class T, class Key>
inline bool lower(T& slot, T value, bool shared, Key key, T& old) {
  if (!shared) {
    old = slot;
    if (key(value) >= key(old)) return false;
    slot = value;
    return true;
  }
  std::atomic_ref<T> ref(slot);
  old = ref.load(std::memory_order_relaxed);
  do {
    if (key(value) >= key(old)) return false;
  } while (!ref.compare_exchange_weak(old, value, std::memory_order_relaxed));
  return true;
}

}  // namespace zbfs::distributed_sssp_detail
