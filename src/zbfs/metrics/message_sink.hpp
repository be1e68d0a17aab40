// MessageSink: where an exchanger reports the messages it sends, before encoding, when a
// run records them (--dump-frontiers; output/message_recorder.hpp writes them to a file).
// Declared here, below the exchangers, so that they report without knowing the file.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/metrics/phase_metrics.hpp"

namespace zbfs {

enum class RecordedKind : std::uint8_t { kSet = 0, kSequence = 1, kBitmap = 2 };

class MessageSink {
 public:
  // A message's destination when it goes to every member (a gather).
  static constexpr std::uint32_t kEveryMember = 0xffffffffu;

  virtual ~MessageSink() = default;
  // Whether messages are taken now (recording can pause between searches).
  [[nodiscard]] virtual bool enabled() const = 0;
  virtual void record(Phase phase, RecordedKind kind, std::uint32_t destination,
                      std::span<const std::uint64_t> values) = 0;
};

}  // namespace zbfs
