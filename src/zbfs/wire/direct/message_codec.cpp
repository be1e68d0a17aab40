#include "zbfs/wire/direct/message_codec.hpp"

#include <algorithm>
#include <bit>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Branch-free within chunks (it vectorises), so that a sorted message costs one quick
// pass, and an unsorted one is given up on at its first chunk out of order.
bool strictly_increasing(std::span<const std::uint64_t> ids) {
  constexpr std::size_t kChunk = 256;
  for (std::size_t begin = 1; begin < ids.size(); begin += kChunk) {
    const std::size_t end = std::min(ids.size(), begin + kChunk);
    bool ok = true;
    for (std::size_t k = begin; k < end; ++k) ok &= ids[k - 1] < ids[k];
    if (!ok) return false;
  }
  return true;
}

}  // namespace

MessageCodec::MessageCodec(CodecChoice choice, std::shared_ptr<const CodecCostModel> model)
    : choice_(choice), model_(std::move(model)) {
  if (choice_.is_auto() && !model_) throw Error(ExitCode::kFailure, "codec auto needs a calibrated cost model");
}

double MessageCodec::cpu_scale() const {
  // Until a millisecond of predicted work has been timed the calibration stands; the
  // bounds keep one odd spell (a descheduled rank) from switching compression off or on
  // for good.
  constexpr double kEnoughPredictedS = 1e-3;
  if (predicted_s_ < kEnoughPredictedS) return 1.0;
  return std::clamp(actual_s_ / predicted_s_, 0.5, 20.0);
}

void MessageCodec::learn(double predicted_s, double actual_s) {
  // Encodings predicted under a microsecond would mostly time the clock.
  constexpr double kTimedAtLeastS = 1e-6;
  if (predicted_s < kTimedAtLeastS) return;
  predicted_s_ += predicted_s;
  actual_s_ += actual_s;
}

MessageCodec::Pick MessageCodec::pick(const MessageShape& shape, const LinkCost* link) const {
  const CodecId codec = model_->choose(shape, link != nullptr ? *link : kSharedMemoryLink, cpu_scale());
  return {codec, model_->estimate(codec, shape).encode_s};
}

MessageCodec::Encoding MessageCodec::encode_ids(std::span<const std::uint64_t> ids, IdsAre kind, const LinkCost* link,
                                                ByteBuffer& out) {
  const bool sorted = strictly_increasing(ids);
  if (sorted || kind == IdsAre::kSequence) {
    const IdOrder order = sorted ? IdOrder::kSortedSet : IdOrder::kSequence;
    if (choice_.fixed) return {encode_frame(*choice_.fixed, ids, order, out), true};
    const Pick chosen = pick(MessageShape::of_ids(ids, order), link);
    if (chosen.codec == CodecId::kNone) return {CodecId::kNone, false};
    return timed(chosen, [&] { return encode_frame(chosen.codec, ids, order, out); });
  }
  // An unsorted set: sorting pays only for a codec other than none, so auto decides on
  // the set's shape (its count and range, which sorting keeps) with the sort's cost added.
  if (choice_.fixed) {
    if (*choice_.fixed == CodecId::kNone) return {encode_frame(CodecId::kNone, ids, IdOrder::kSequence, out), true};
    sort_set(ids, sorted_);
    return {encode_frame(*choice_.fixed, sorted_, IdOrder::kSortedSet, out), true};
  }
  const Pick chosen = pick(MessageShape::of_unsorted_set(ids), link);
  if (chosen.codec == CodecId::kNone) return {CodecId::kNone, false};
  return timed(chosen, [&] {
    sort_set(ids, sorted_);
    return encode_frame(chosen.codec, sorted_, IdOrder::kSortedSet, out);
  });
}

MessageCodec::Encoding MessageCodec::encode_bitmap(std::span<const std::uint64_t> words, const LinkCost* link,
                                                   ByteBuffer& out) {
  if (choice_.fixed) return {encode_bitmap_frame(*choice_.fixed, words, out), true};
  const Pick chosen = pick(MessageShape::of_bitmap(words), link);
  if (chosen.codec == CodecId::kBitmap) return {CodecId::kBitmap, false};
  return timed(chosen, [&] { return encode_bitmap_frame(chosen.codec, words, out); });
}

}  // namespace zbfs
