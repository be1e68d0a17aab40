#include "zbfs/exchange/message_codec.hpp"

#include <algorithm>
#include <bit>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Where no network is attached (a job of one node without a model), messages cross
// shared memory.
const LinkCost kSharedMemory{0.5e-6, 10e9};

bool strictly_increasing(std::span<const std::uint64_t> ids) {
  bool ok = true;
  for (std::size_t k = 1; k < ids.size(); ++k) ok &= ids[k - 1] < ids[k];
  return ok;
}

}  // namespace

MessageCodec::MessageCodec(CodecChoice choice, std::shared_ptr<const CodecCostModel> model)
    : choice_(choice), model_(std::move(model)) {
  if (choice_.is_auto() && !model_) throw Error(ExitCode::kFailure, "codec auto needs a calibrated cost model");
}

CodecId MessageCodec::pick(const MessageShape& shape, const LinkCost* link) const {
  if (choice_.fixed) return *choice_.fixed;
  return model_->choose(shape, link != nullptr ? *link : kSharedMemory);
}

CodecId MessageCodec::encode_ids(std::span<const std::uint64_t> ids, IdsAre kind, const LinkCost* link,
                                 ByteBuffer& out) {
  if (strictly_increasing(ids)) {
    const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_ids(ids, IdOrder::kSortedSet), link);
    return encode_frame(codec, ids, IdOrder::kSortedSet, out);
  }
  if (kind == IdsAre::kSequence) {
    const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_ids(ids, IdOrder::kSequence), link);
    return encode_frame(codec, ids, IdOrder::kSequence, out);
  }
  // An unsorted set: sorting pays only for a codec other than none, so auto decides on
  // the set's shape (its count and range, which sorting keeps) with the sort's cost added.
  if (choice_.is_auto()) {
    MessageShape shape = MessageShape::of_unsorted_set(ids);
    const CodecId codec = model_->choose(shape, link != nullptr ? *link : kSharedMemory);
    if (codec == CodecId::kNone) return encode_frame(CodecId::kNone, ids, IdOrder::kSequence, out);
    sort_set(ids, sorted_);
    return encode_frame(codec, sorted_, IdOrder::kSortedSet, out);
  }
  if (*choice_.fixed == CodecId::kNone) return encode_frame(CodecId::kNone, ids, IdOrder::kSequence, out);
  sort_set(ids, sorted_);
  return encode_frame(*choice_.fixed, sorted_, IdOrder::kSortedSet, out);
}

CodecId MessageCodec::encode_bitmap(std::span<const std::uint64_t> words, const LinkCost* link, ByteBuffer& out) {
  const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_bitmap(words), link);
  return encode_bitmap_frame(codec, words, out);
}

}  // namespace zbfs
