#include "zbfs/exchange/message_codec.hpp"

#include <algorithm>
#include <bit>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Where no network is attached (a job of one node without a model), messages cross
// shared memory.
const LinkCost& shared_memory_link() {
  static const LinkCost link = network_preset("shm")->intra_node;
  return link;
}

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
  return model_->choose(shape, link != nullptr ? *link : shared_memory_link());
}

CodecId MessageCodec::encode_ids(std::span<const std::uint64_t> ids, IdsAre kind, const LinkCost* link,
                                 ByteBuffer& out) {
  const bool sorted = strictly_increasing(ids);
  if (sorted || kind == IdsAre::kSequence) {
    const IdOrder order = sorted ? IdOrder::kSortedSet : IdOrder::kSequence;
    const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_ids(ids, order), link);
    return encode_frame(codec, ids, order, out);
  }
  // An unsorted set: sorting pays only for a codec other than none, so auto decides on
  // the set's shape (its count and range, which sorting keeps) with the sort's cost added.
  const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_unsorted_set(ids), link);
  if (codec == CodecId::kNone) return encode_frame(CodecId::kNone, ids, IdOrder::kSequence, out);
  sort_set(ids, sorted_);
  return encode_frame(codec, sorted_, IdOrder::kSortedSet, out);
}

CodecId MessageCodec::encode_bitmap(std::span<const std::uint64_t> words, const LinkCost* link, ByteBuffer& out) {
  const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_bitmap(words), link);
  return encode_bitmap_frame(codec, words, out);
}

}  // namespace zbfs
