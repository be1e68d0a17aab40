// HopCodec: how a routed exchange's hop messages travel when a codec is on. A message is
// 64-bit words in one of two layouts (wire/routed/routed_exchange.hpp): items (the group
// count G, G (destination, count) pairs, then (key, value) pairs) or replies (records of
// `stride` words: owner, key, values). Encoded, it becomes sections: for items the header
// words, each group's keys (sorted within a group, so the delta codecs apply) and all
// values; for replies each column of the records. A section is a tag byte, then a frame
// (codec/frame.hpp) or, where `auto` finds that no codec pays, a varint count and the
// words as they are. The encoded bytes travel as words: their length, then the bytes,
// zero-padded. Decoding rebuilds exactly the original words and refuses anything
// malformed (DecodeError). Local, no MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/wire/direct/message_codec.hpp"

namespace zbfs {

struct HopLayout {
  enum Kind { kItems, kReplies };
  Kind kind = kItems;
  std::size_t stride = 2;  // replies: words per record
};

// What one encoding produced, for the phase counters.
struct HopEncoding {
  std::vector<std::uint64_t> words;  // the encoded message
  std::vector<CodecId> frames;       // the codec of each framed section
};

HopEncoding encode_hop_message(std::span<const std::uint64_t> words, HopLayout layout, MessageCodec& codec,
                               const LinkCost* link);

// `max_items`: a section announcing more values is malformed (checked before allocating).
std::vector<std::uint64_t> decode_hop_message(std::span<const std::uint64_t> encoded, HopLayout layout,
                                              std::uint64_t max_items);

}  // namespace zbfs
