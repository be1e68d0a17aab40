// CodecCostModel: what each codec would cost for a message, without encoding it: the
// bytes it would produce and its encode and decode time, from ratios and speeds
// calibrated on this machine (a short measurement on synthetic sets at start-up). With a
// link's latency and bandwidth it makes `auto`'s choice: the codec with the least
// encode + transfer + decode time, which is `none` (or a plain bitmap) whenever
// compressing does not pay. Those two are priced as auto sends them: unframed, the words
// as they are, with no work at either end. No MPI; calibration is local to the process.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "zbfs/codec/codec_id.hpp"
#include "zbfs/codec/frame.hpp"
#include "zbfs/core/link_cost.hpp"

namespace zbfs {

// What the chooser knows of a message: how many ids, how spread out (log2 of the mean
// gap of a sorted set, or of the value range of a sequence), and whether it is a bitmap
// of bitmap_words words (count then being the positions a list codec would carry: its
// set bits, or its zero bits when those are fewer).
struct MessageShape {
  std::uint64_t count = 0;
  double spread_bits = 0;
  IdOrder order = IdOrder::kSortedSet;
  std::uint64_t bitmap_words = 0;
  bool needs_sort = false;  // an unsorted set: codecs other than none sort it first

  static MessageShape of_ids(std::span<const std::uint64_t> ids, IdOrder order);
  static MessageShape of_unsorted_set(std::span<const std::uint64_t> ids);
  static MessageShape of_bitmap(std::span<const std::uint64_t> words);
};

struct CodecEstimate {
  double bytes = 0;
  double encode_s = 0;
  double decode_s = 0;
  // `cpu_scale` multiplies the encode and decode time (what they cost in the run against
  // the calibration: wire/direct/message_codec.hpp).
  [[nodiscard]] double total_s(const LinkCost& link, double cpu_scale = 1.0) const {
    return cpu_scale * (encode_s + decode_s) + link.time_s(1, bytes);
  }
};

// Per-id figures of one codec at one spread.
struct CodecPoint {
  double bits_per_id = 64;
  double encode_s_per_id = 0;
  double decode_s_per_id = 0;
};

class CodecCostModel {
 public:
  static constexpr int kSpreadPoints = 17;  // spreads 0, 2, ..., 32 bits
  static constexpr int kSpreadStep = 2;

  // Measures every codec on synthetic sets and sequences (tens of milliseconds).
  static CodecCostModel calibrate();

  // Figures set by hand (tests): every codec, order and spread gets `point`, the bitmap
  // paths cost `per_word_s` per word and sorting `sort_s_per_id` per id.
  static CodecCostModel uniform(const CodecPoint& point, double per_word_s, double sort_s_per_id = 0);

  [[nodiscard]] CodecEstimate estimate(CodecId codec, const MessageShape& shape) const;
  // The cheapest codec for this message over `link` (the first one among equals), with
  // encode and decode times multiplied by `cpu_scale`.
  [[nodiscard]] CodecId choose(const MessageShape& shape, const LinkCost& link, double cpu_scale = 1.0) const;

  [[nodiscard]] const CodecPoint& point(CodecId codec, IdOrder order, int spread_index) const {
    return table_[static_cast<std::size_t>(order)][static_cast<std::size_t>(spread_index)]
                 [static_cast<std::size_t>(codec)];
  }

 private:
  [[nodiscard]] CodecEstimate estimate_sorted(CodecId codec, const MessageShape& shape) const;
  [[nodiscard]] CodecPoint interpolate(CodecId codec, IdOrder order, double spread_bits) const;

  using Row = std::array<CodecPoint, kCodecCount>;
  std::array<std::array<Row, kSpreadPoints>, 2> table_{};
  // Bitmap messages: copying words (the bitmap codec), scanning words for set bits and
  // clearing words (list codecs), per set bit extracted or set again.
  double words_encode_s_ = 0;
  double words_decode_s_ = 0;
  double scan_s_per_word_ = 0;
  double extract_s_per_id_ = 0;
  double clear_s_per_word_ = 0;
  double set_s_per_id_ = 0;
  double sort_s_per_id_ = 0;  // sorting an unsorted set (wire/direct/message_codec.hpp's sort_set)
};

}  // namespace zbfs
