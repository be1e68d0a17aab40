// How one destination's merged keyed updates travel under a codec: as columns of words
// that a block codec's frame of reference packs well, rather than (key, value) pairs,
// whose interleaved halves would widen every block to the widest of them.
//
//   message: dictionary size D | key gaps (k) | values' high halves (k) | low halves
//   low halves, D = 0:  the k low halves
//   low halves, D > 0:  the D distinct low halves, rising, as the first and then the
//                       gaps | each item's index among them (k)
//
// The keys rise (the items are merged: one per key), so they go as the first and then
// the gaps between neighbours. A low half that repeats (a relaxation request's or a BFS
// update's parent: a vertex offers itself to many of a destination's vertices, each
// parent three times in a scale-20 SSSP request message) goes as its index in a
// dictionary when that takes fewer bits. An empty message is no words. No MPI here.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/wire/id_messages.hpp"

namespace zbfs {

// Reused between messages, so that encoding allocates only while messages grow.
struct UpdateColumnsScratch {
  std::vector<std::uint32_t> lows;   // the distinct low halves, rising
  std::vector<std::uint32_t> index;  // each item's among them
  std::vector<std::uint64_t> pairs;  // the radix sort's (low half, item) pairs
  std::vector<std::uint64_t> sorted;
};

// Appends the columns of `merged` (sorted by key, one item per key) to `words`.
void append_update_columns(std::span<const KeyedItem> merged, std::vector<std::uint64_t>& words,
                           UpdateColumnsScratch& scratch);

// Appends the items of one message to `items`, in key order; throws DecodeError when the
// message is malformed (its size does not fit its dictionary, keys that do not rise, a
// half over 32 bits, an index past the dictionary, a dictionary that does not rise).
void read_update_columns(std::span<const std::uint64_t> message, std::vector<KeyedItem>& items);

}  // namespace zbfs
