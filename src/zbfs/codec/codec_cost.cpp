#include "zbfs/codec/codec_cost.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

constexpr std::size_t kCalibrationIds = 4096;
constexpr std::size_t kCalibrationWords = 1 << 14;
constexpr double kHeaderBytes = 14;  // a typical frame header
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The fastest of a few runs of f(), in seconds.
template <class F>
double fastest_s(F&& f, int runs = 3) {
  double best = kInfinity;
  for (int r = 0; r < runs; ++r) {
    const Stopwatch clock;
    f();
    best = std::min(best, clock.elapsed_s());
  }
  return best;
}

std::vector<std::uint64_t> synthetic(IdOrder order, int spread_bits, std::mt19937_64& rng) {
  std::vector<std::uint64_t> ids(kCalibrationIds);
  if (order == IdOrder::kSortedSet) {
    // A random set of density 2^-s, as a frontier is: geometric gaps of mean 2^s (uniform
    // gaps would flatter bit packing and hide what Rice coding saves).
    std::geometric_distribution<std::uint64_t> failures(std::exp2(-spread_bits));
    std::uint64_t x = rng() % 1024;
    for (auto& id : ids) {
      x += 1 + failures(rng);
      id = x;
    }
  } else {
    const std::uint64_t range = std::uint64_t{1} << spread_bits;
    const std::uint64_t base = rng() % 1024;
    for (auto& id : ids) id = base + rng() % range;
  }
  return ids;
}

bool applies(CodecId codec, IdOrder order) {
  // Bitmaps are priced from their size; roaring and bitmap carry no sequences.
  if (codec == CodecId::kBitmap) return false;
  return !(codec == CodecId::kRoaring && order == IdOrder::kSequence);
}

std::vector<std::uint64_t> random_words(std::size_t n, int one_in, std::mt19937_64& rng) {
  std::vector<std::uint64_t> words(n, 0);
  if (one_in == 0) return words;
  for (std::size_t bit = 0; bit < n * 64; ++bit) {
    if (rng() % static_cast<std::uint64_t>(one_in) == 0) words[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  return words;
}

// log2 of the mean gap of `count` distinct ids between lo and hi.
double set_spread_bits(std::uint64_t count, std::uint64_t lo, std::uint64_t hi) {
  const double span = static_cast<double>(hi - lo) + 1;
  return std::max(0.0, std::log2(span / static_cast<double>(count)));
}

}  // namespace

MessageShape MessageShape::of_ids(std::span<const std::uint64_t> ids, IdOrder order) {
  MessageShape shape;
  shape.count = ids.size();
  shape.order = order;
  if (ids.empty()) return shape;
  if (order == IdOrder::kSortedSet) {
    shape.spread_bits = set_spread_bits(ids.size(), ids.front(), ids.back());
  } else {
    const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
    shape.spread_bits = std::log2(static_cast<double>(*hi - *lo) + 1);
  }
  return shape;
}

MessageShape MessageShape::of_unsorted_set(std::span<const std::uint64_t> ids) {
  MessageShape shape;
  shape.count = ids.size();
  shape.needs_sort = true;
  if (ids.empty()) return shape;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  shape.spread_bits = set_spread_bits(ids.size(), *lo, *hi);
  return shape;
}

MessageShape MessageShape::of_bitmap(std::span<const std::uint64_t> words) {
  MessageShape shape;
  shape.bitmap_words = words.size();
  // List codecs carry the set bits, or the zero bits when they are fewer
  // (encode_bitmap_frame).
  const std::uint64_t set = count_set_bits(words);
  shape.count = std::min(set, words.size() * 64 - set);
  shape.spread_bits =
      shape.count == 0 ? 0 : std::log2(static_cast<double>(words.size()) * 64 / static_cast<double>(shape.count));
  return shape;
}

CodecCostModel CodecCostModel::calibrate() {
  CodecCostModel model;
  std::mt19937_64 rng(20261122);
  ByteBuffer buffer;
  std::vector<std::uint64_t> out(kCalibrationIds);
  const auto n = static_cast<double>(kCalibrationIds);
  for (const IdOrder order : {IdOrder::kSortedSet, IdOrder::kSequence}) {
    for (int s = 0; s < kSpreadPoints; ++s) {
      const std::vector<std::uint64_t> ids = synthetic(order, s * kSpreadStep, rng);
      for (const CodecId codec : kAllCodecs) {
        if (!applies(codec, order)) continue;
        CodecPoint& p =
            model.table_[static_cast<std::size_t>(order)][static_cast<std::size_t>(s)][static_cast<std::size_t>(codec)];
        const double encode_s = fastest_s([&] {
          buffer.clear();
          encode_frame(codec, ids, order, buffer);
        });
        const FrameHeader header = read_frame_header(buffer.bytes(), ids.size());
        const double decode_s = fastest_s([&] { decode_frame_into(buffer.bytes(), header, out.data()); });
        p.bits_per_id = static_cast<double>(header.payload_bytes) * 8 / n;
        p.encode_s_per_id = encode_s / n;
        p.decode_s_per_id = decode_s / n;
      }
    }
  }
  // Bitmap messages: whole words with the bitmap codec; scanning and clearing (all-zero
  // bitmap) and extracting and setting bits (one bit in four) for the list codecs.
  std::vector<std::uint64_t> back(kCalibrationWords);
  const auto words = static_cast<double>(kCalibrationWords);
  const std::vector<std::uint64_t> dense = random_words(kCalibrationWords, 2, rng);
  model.words_encode_s_ = fastest_s([&] {
                            buffer.clear();
                            encode_bitmap_frame(CodecId::kBitmap, dense, buffer);
                          }) /
                          words;
  model.words_decode_s_ = fastest_s([&] { decode_bitmap_frame(buffer.bytes(), back); }) / words;
  const std::vector<std::uint64_t> empty(kCalibrationWords, 0);
  model.scan_s_per_word_ = fastest_s([&] {
                             buffer.clear();
                             encode_bitmap_frame(CodecId::kNone, empty, buffer);
                           }) /
                           words;
  model.clear_s_per_word_ = fastest_s([&] { decode_bitmap_frame(buffer.bytes(), back); }) / words;
  const std::vector<std::uint64_t> quarter = random_words(kCalibrationWords, 4, rng);
  const auto set_bits = static_cast<double>(count_set_bits(quarter));
  const CodecPoint& none = model.point(CodecId::kNone, IdOrder::kSortedSet, 1);  // spread 2: one in four
  const double extract_s = fastest_s([&] {
    buffer.clear();
    encode_bitmap_frame(CodecId::kNone, quarter, buffer);
  });
  model.extract_s_per_id_ =
      std::max(0.0, (extract_s - words * model.scan_s_per_word_) / set_bits - none.encode_s_per_id);
  const double set_s = fastest_s([&] { decode_bitmap_frame(buffer.bytes(), back); });
  model.set_s_per_id_ = std::max(0.0, (set_s - words * model.clear_s_per_word_) / set_bits - none.decode_s_per_id);
  // Sorting: a shuffled set one in four dense, the kind a top-down fold sends.
  std::vector<std::uint64_t> shuffled;
  append_set_bits(quarter, 0, shuffled);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::vector<std::uint64_t> sorted;
  model.sort_s_per_id_ = fastest_s([&] { sort_set(shuffled, sorted); }) / static_cast<double>(shuffled.size());
  return model;
}

CodecCostModel CodecCostModel::uniform(const CodecPoint& point, double per_word_s, double sort_s_per_id) {
  CodecCostModel model;
  for (auto& by_order : model.table_) {
    for (auto& row : by_order) row.fill(point);
  }
  model.words_encode_s_ = model.words_decode_s_ = per_word_s;
  model.scan_s_per_word_ = model.clear_s_per_word_ = per_word_s;
  model.sort_s_per_id_ = sort_s_per_id;
  return model;
}

CodecPoint CodecCostModel::interpolate(CodecId codec, IdOrder order, double spread_bits) const {
  const double at = std::clamp(spread_bits / kSpreadStep, 0.0, static_cast<double>(kSpreadPoints - 1));
  const int lo = std::min(static_cast<int>(at), kSpreadPoints - 2);
  const double f = at - lo;
  const CodecPoint& a = point(codec, order, lo);
  const CodecPoint& b = point(codec, order, lo + 1);
  CodecPoint p{a.bits_per_id + f * (b.bits_per_id - a.bits_per_id),
               a.encode_s_per_id + f * (b.encode_s_per_id - a.encode_s_per_id),
               a.decode_s_per_id + f * (b.decode_s_per_id - a.decode_s_per_id)};
  // Past the last point, ids grow by a bit per bit of spread (capped at 64-bit ids).
  const double beyond = spread_bits - (kSpreadPoints - 1) * kSpreadStep;
  if (beyond > 0 && codec != CodecId::kNone) p.bits_per_id = std::min(72.0, p.bits_per_id + beyond);
  return p;
}

CodecEstimate CodecCostModel::estimate(CodecId codec, const MessageShape& shape) const {
  CodecEstimate e = estimate_sorted(codec, shape);
  if (shape.needs_sort && codec != CodecId::kNone) e.encode_s += static_cast<double>(shape.count) * sort_s_per_id_;
  return e;
}

CodecEstimate CodecCostModel::estimate_sorted(CodecId codec, const MessageShape& shape) const {
  const auto count = static_cast<double>(shape.count);
  const auto words = static_cast<double>(shape.bitmap_words);
  CodecEstimate e;
  if (codec == CodecId::kBitmap) {
    if (shape.order == IdOrder::kSequence) return {kInfinity, kInfinity, kInfinity};
    if (shape.bitmap_words > 0) return {words * 8, 0, 0};  // unframed
    // A sorted set as a bitmap over its span: 2^spread bits per id.
    const double span_words = count * std::exp2(shape.spread_bits) / 64;
    return {span_words * 8 + kHeaderBytes, span_words * words_encode_s_ + count * extract_s_per_id_,
            span_words * words_decode_s_};
  }
  if (codec == CodecId::kRoaring && shape.order == IdOrder::kSequence) return {kInfinity, kInfinity, kInfinity};
  if (codec == CodecId::kNone && shape.bitmap_words == 0) return {count * 8, 0, 0};  // unframed
  const CodecPoint p = interpolate(codec, shape.order, shape.spread_bits);
  e.bytes = count * p.bits_per_id / 8 + kHeaderBytes;
  e.encode_s = count * p.encode_s_per_id;
  e.decode_s = count * p.decode_s_per_id;
  if (shape.bitmap_words > 0) {
    e.encode_s += words * scan_s_per_word_ + count * extract_s_per_id_;
    e.decode_s += words * clear_s_per_word_ + count * set_s_per_id_;
  }
  return e;
}

CodecId CodecCostModel::choose(const MessageShape& shape, const LinkCost& link, double cpu_scale) const {
  CodecId best = shape.bitmap_words > 0 ? CodecId::kBitmap : CodecId::kNone;
  double best_s = estimate(best, shape).total_s(link, cpu_scale);
  for (const CodecId codec : kAllCodecs) {
    const double t = estimate(codec, shape).total_s(link, cpu_scale);
    if (t < best_s) {
      best_s = t;
      best = codec;
    }
  }
  return best;
}

}  // namespace zbfs
