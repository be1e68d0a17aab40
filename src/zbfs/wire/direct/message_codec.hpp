// MessageCodec: how an exchange turns its messages into frames. The codec is the one
// --codec names, or with `auto` the one the cost model finds cheapest for this message
// over the link it will cross. Sets may be reordered: an unsorted set is sorted (and
// duplicates merged) before encoding, so the delta codecs apply; sequences keep their
// order and are encoded as sorted sets when they happen to be increasing. With
// `--codec none` exchanges bypass frames altogether (passthrough); under `auto` a message
// that no codec pays for leaves unframed too (ids or bitmap words as they are), so that
// not compressing costs nothing over passthrough. auto also learns as it goes: the
// calibration times codecs alone on a quiet core with warm caches, while in a run they
// share cores with other ranks and read cold messages, so the encode time auto measures
// on the messages it compresses corrects (scales) the encode and decode times it predicts
// for the next ones. Local, no MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/codec/frame.hpp"
#include "zbfs/core/link_cost.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/wire/id_messages.hpp"

namespace zbfs {

class MessageCodec {
 public:
  MessageCodec() = default;  // passthrough
  // `model` is required for auto and used by nothing else.
  MessageCodec(CodecChoice choice, std::shared_ptr<const CodecCostModel> model);

  [[nodiscard]] bool passthrough() const { return choice_.fixed == CodecId::kNone; }
  // What auto's encoding has cost in this run against the model's prediction (1 until
  // enough has been measured); auto multiplies predicted codec times by it.
  [[nodiscard]] double cpu_scale() const;
  [[nodiscard]] const CodecChoice& choice() const { return choice_; }

  // How one message leaves: as a frame appended to the caller's buffer, or unframed (the
  // 64-bit words as they are; only `auto` chooses that, when no codec pays).
  struct Encoding {
    CodecId codec = CodecId::kNone;
    bool framed = true;
  };

  // Appends one frame of `ids` to `out`, or nothing when they go unframed; `link`
  // (nullptr: shared memory) is what the message crosses.
  Encoding encode_ids(std::span<const std::uint64_t> ids, IdsAre kind, const LinkCost* link, ByteBuffer& out);
  // The same for a bitmap; unframed, the words go as they are.
  Encoding encode_bitmap(std::span<const std::uint64_t> words, const LinkCost* link, ByteBuffer& out);

 private:
  // auto's choice for a message of this shape over `link`, and the encode time the
  // model predicts for it (unscaled).
  struct Pick {
    CodecId codec = CodecId::kNone;
    double predicted_encode_s = 0;
  };
  Pick pick(const MessageShape& shape, const LinkCost* link) const;
  // Books one encoding auto chose: what the model predicted and what it took.
  void learn(double predicted_s, double actual_s);
  // Runs `encode` (which appends auto's chosen frame and returns the codec it used) and
  // learns from its time.
  template <class Encode>
  Encoding timed(const Pick& chosen, Encode&& encode) {
    const Stopwatch clock;
    const CodecId used = encode();
    learn(chosen.predicted_encode_s, clock.elapsed_s());
    return {used, true};
  }

  CodecChoice choice_{CodecId::kNone};
  double predicted_s_ = 0;  // sums over the encodings auto timed
  double actual_s_ = 0;
  std::shared_ptr<const CodecCostModel> model_;
  std::vector<std::uint64_t> sorted_;  // scratch for sets that arrive unsorted
};

}  // namespace zbfs
