// Hop messages: how a routed exchange's items travel between two ranks, as 64-bit words.
// A message is the number of groups G, then G (destination, count) pairs, then the
// groups' items, two words each (key, value), in group order. Shared by the
// bulk-synchronous routed exchange (wire/routed/routed_exchange.hpp) and the pipelined one
// (wire/routed/routed_update_stream.hpp). Local, no MPI.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zbfs {

// An item on its way: where it is going, and what it is.
struct HopItem {
  std::uint64_t destination;
  std::uint64_t key;
  std::uint64_t value;
};

// Appends the message for `items` (sorted, or at least grouped, by destination).
void append_hop_message(std::span<const HopItem> items, std::vector<std::uint64_t>& words);

// Appends the items of one message to `items`; refuses (Error) a malformed one or a
// destination outside [0, ranks).
void parse_hop_message(std::span<const std::uint64_t> words, int ranks, std::vector<HopItem>& items);

}  // namespace zbfs
