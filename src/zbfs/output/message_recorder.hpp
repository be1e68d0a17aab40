// MessageRecorder: writes the messages an exchanger sends, before encoding, to a file per
// rank (`zbfs run --dump-frontiers DIR`), so that codecs can be measured on real BFS
// traffic (bench/codec_bench). Format, little-endian:
//
//   file:   "ZBFSDUMP" | u32 version (1) | u32 rank | records...
//   record: u8 phase (metrics/phase_metrics.hpp numbering) | u8 kind (0 set, 1 sequence,
//           2 bitmap words) | u16 zero | u32 destination (0xffffffff: every member)
//           | u64 count | count u64 values
//
// Local (each rank writes its own file); recording can be paused between searches. The
// file is written through DIR/rank-R.zbfsdump.partial (output/output_file.hpp) and takes
// its name at publish(); a write that fails stops the recording, and seal() reports it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zbfs/metrics/message_sink.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/output/output_file.hpp"

namespace zbfs {

struct RecordedMessage {
  Phase phase = Phase::kOther;
  RecordedKind kind = RecordedKind::kSet;
  std::uint32_t destination = 0;
  std::vector<std::uint64_t> values;
};

class MessageRecorder final : public MessageSink {
 public:
  // Starts DIR/rank-R.zbfsdump; throws Error when it cannot.
  MessageRecorder(const std::string& directory, int rank);
  void set_enabled(bool enabled) { enabled_ = enabled; }
  [[nodiscard]] bool enabled() const override { return enabled_ && out_.has_value(); }
  void record(Phase phase, RecordedKind kind, std::uint32_t destination,
              std::span<const std::uint64_t> values) override;
  // Ends the recording in two steps, so that the dump files of a job take their names
  // only when every rank's is complete: seal() syncs the file, publish() names it. Each
  // returns the one-line error of a write that failed on the way or now (the partial file
  // is then removed), else nothing.
  [[nodiscard]] std::optional<std::string> seal();
  [[nodiscard]] std::optional<std::string> publish();

 private:
  // One step of the ending on the open file; a failure is kept, and `last` closes it.
  void finish_step(const std::function<void(OutputFile&)>& step, bool last);

  std::optional<OutputFile> out_;
  std::optional<std::string> failure_;
  bool enabled_ = true;
};

// Reads a whole dump file; throws DecodeError on a malformed one.
std::vector<RecordedMessage> read_recorded_messages(const std::string& path);

}  // namespace zbfs
