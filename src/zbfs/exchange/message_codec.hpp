// MessageCodec: how an exchange turns its messages into frames. The codec is the one
// --codec names, or with `auto` the one the cost model finds cheapest for this message
// over the link it will cross. Sets may be reordered: an unsorted set is sorted (and
// duplicates merged) before encoding, so the delta codecs apply; sequences keep their
// order and are encoded as sorted sets when they happen to be increasing. With
// `--codec none` exchanges bypass frames altogether (passthrough). Local, no MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/codec/frame.hpp"
#include "zbfs/network/network_model.hpp"

namespace zbfs {

// Whether the receiver needs the ids in the order sent, or only the set of them.
enum class IdsAre { kSet, kSequence };

class MessageCodec {
 public:
  MessageCodec() = default;  // passthrough
  // `model` is required for auto and used by nothing else.
  MessageCodec(CodecChoice choice, std::shared_ptr<const CodecCostModel> model);

  [[nodiscard]] bool passthrough() const { return choice_.fixed == CodecId::kNone; }
  [[nodiscard]] const CodecChoice& choice() const { return choice_; }

  // Appends one frame of `ids` to `out`; `link` (nullptr: shared memory) is what the
  // message crosses. Returns the codec used.
  CodecId encode_ids(std::span<const std::uint64_t> ids, IdsAre kind, const LinkCost* link, ByteBuffer& out);
  CodecId encode_bitmap(std::span<const std::uint64_t> words, const LinkCost* link, ByteBuffer& out);

 private:
  // auto's choice for a message of this shape over `link`.
  CodecId pick(const MessageShape& shape, const LinkCost* link) const;

  CodecChoice choice_{CodecId::kNone};
  std::shared_ptr<const CodecCostModel> model_;
  std::vector<std::uint64_t> sorted_;  // scratch for sets that arrive unsorted
};

}  // namespace zbfs
