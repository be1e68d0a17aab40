#include "zbfs/exchange/message_codec.hpp"

#include <algorithm>
#include <bit>

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
  std::span<const std::uint64_t> message = ids;
  IdOrder order = IdOrder::kSortedSet;
  if (!strictly_increasing(ids)) {
    if (kind == IdsAre::kSet) {
      sort_set(ids, sorted_);
      message = sorted_;
    } else {
      order = IdOrder::kSequence;
    }
  }
  const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_ids(message, order), link);
  return encode_frame(codec, message, order, out);
}

CodecId MessageCodec::encode_bitmap(std::span<const std::uint64_t> words, const LinkCost* link, ByteBuffer& out) {
  const CodecId codec = choice_.fixed ? *choice_.fixed : pick(MessageShape::of_bitmap(words), link);
  return encode_bitmap_frame(codec, words, out);
}

void sort_set(std::span<const std::uint64_t> ids, std::vector<std::uint64_t>& out) {
  out.clear();
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const std::uint64_t range = *hi - *lo;
  // A bitmap sort costs a pass over range / 64 words; a comparison sort about log2(n)
  // passes over the ids.
  const auto n = static_cast<std::uint64_t>(ids.size());
  if (range / 64 <= n * static_cast<std::uint64_t>(std::bit_width(n))) {
    std::vector<std::uint64_t> words(static_cast<std::size_t>(range / 64 + 1), 0);
    const std::uint64_t base = *lo;
    for (const std::uint64_t id : ids) words[(id - base) / 64] |= std::uint64_t{1} << ((id - base) % 64);
    out.reserve(ids.size());
    for (std::size_t w = 0; w < words.size(); ++w) {
      for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
        out.push_back(base + w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
      }
    }
    return;
  }
  out.assign(ids.begin(), ids.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace zbfs
