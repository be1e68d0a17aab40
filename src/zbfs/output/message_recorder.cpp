#include "zbfs/output/message_recorder.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {
namespace {

constexpr char kMagic[8] = {'Z', 'B', 'F', 'S', 'D', 'U', 'M', 'P'};
constexpr std::uint32_t kVersion = 1;

// The records of a dump file's bytes.
std::vector<RecordedMessage> parse_recorded_messages(std::span<const std::uint8_t> bytes) {
  ByteReader reader(bytes);
  const auto magic = reader.take(sizeof kMagic, "dump magic");
  if (!std::equal(magic.begin(), magic.end(), kMagic)) throw DecodeError("not a zbfs frontier dump");
  if (reader.u32("dump version") != kVersion) throw DecodeError("unknown dump version");
  reader.u32("dump rank");
  std::vector<RecordedMessage> messages;
  while (reader.remaining() > 0) {
    RecordedMessage m;
    const std::uint8_t phase = reader.u8("record phase");
    const std::uint8_t kind = reader.u8("record kind");
    if (phase >= kPhaseCount || kind > 2) throw DecodeError("bad record");
    m.phase = static_cast<Phase>(phase);
    m.kind = static_cast<RecordedKind>(kind);
    reader.skip(2, "record padding");
    m.destination = reader.u32("record destination");
    const std::uint64_t count = reader.u64("record count");
    if (count > reader.remaining() / 8) throw DecodeError("truncated record");
    m.values.resize(static_cast<std::size_t>(count));
    const auto values = reader.take(static_cast<std::size_t>(count * 8), "record values");
    std::memcpy(m.values.data(), values.data(), values.size());
    messages.push_back(std::move(m));
  }
  return messages;
}

}  // namespace

MessageRecorder::MessageRecorder(const std::string& directory, int rank) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  out_.emplace((std::filesystem::path(directory) / ("rank-" + std::to_string(rank) + ".zbfsdump")).string());
  ByteBuffer header;
  header.append(kMagic, sizeof kMagic);
  header.put_u32(kVersion);
  header.put_u32(static_cast<std::uint32_t>(rank));
  out_->write(std::span<const char>(reinterpret_cast<const char*>(header.data()), header.size()));
}

void MessageRecorder::record(Phase phase, RecordedKind kind, std::uint32_t destination,
                             std::span<const std::uint64_t> values) {
  if (!enabled()) return;
  ByteBuffer head;
  head.put_u8(static_cast<std::uint8_t>(phase));
  head.put_u8(static_cast<std::uint8_t>(kind));
  head.put_u8(0);
  head.put_u8(0);
  head.put_u32(destination);
  head.put_u64(values.size());
  try {
    out_->write(std::span<const char>(reinterpret_cast<const char*>(head.data()), head.size()));
    out_->write(std::span<const char>(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  } catch (const Error& e) {
    // Mid-search, on this rank only: kept for seal(), which every rank calls alike.
    failure_ = e.what();
    out_.reset();
  }
}

std::optional<std::string> MessageRecorder::seal() {
  enabled_ = false;
  finish_step([](OutputFile& out) { out.seal(); }, false);
  return failure_;
}

std::optional<std::string> MessageRecorder::publish() {
  finish_step([](OutputFile& out) { out.commit(); }, true);
  return failure_;
}

void MessageRecorder::finish_step(const std::function<void(OutputFile&)>& step, bool last) {
  if (!out_ || failure_) return;
  try {
    step(*out_);
  } catch (const Error& e) {
    failure_ = e.what();
    out_.reset();  // the file removed its partial name already
    return;
  }
  if (last) out_.reset();
}

std::vector<RecordedMessage> read_recorded_messages(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::kUsage, "cannot read frontier dump '" + path + "'");
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return parse_recorded_messages(bytes);
  } catch (const DecodeError& e) {
    throw DecodeError(path + ": " + e.detail());  // the reader's own errors name no file
  }
}

}  // namespace zbfs
