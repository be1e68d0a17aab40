#include "zbfs/exchange/exchanger.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <numeric>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

bool encoding(const MessageCodec* codec) { return codec != nullptr && !codec->passthrough(); }

// Books an exchange's codec work in the communicator's current phase.
void book_codec_work(const Communicator& comm, std::uint64_t raw_bytes, std::uint64_t wire_bytes, double encode_s,
                     double decode_s) {
  if (PhaseMetrics* metrics = comm.metrics(); metrics != nullptr && comm.size() > 1) {
    metrics->add_codec_work(raw_bytes, wire_bytes, encode_s, decode_s);
  }
}

// Books `ids` vertex ids sent to other ranks (PhaseCounters::id_bytes).
void book_ids(const Communicator& comm, std::uint64_t ids) {
  if (PhaseMetrics* metrics = comm.metrics(); metrics != nullptr && comm.size() > 1) metrics->add_ids(ids);
}

void book_frame(const Communicator& comm, CodecId codec) {
  if (PhaseMetrics* metrics = comm.metrics(); metrics != nullptr) metrics->add_frame(codec);
}

// Refuses, before allocating, a total the machine cannot hold. Asking the system
// (/proc/meminfo, the cgroup) costs tens of microseconds, far more than a small exchange,
// so totals below 64 MiB, which any machine running zbfs holds, go unasked.
void check_room_for(std::uint64_t ids) {
  constexpr std::uint64_t kAlwaysRoomIds = (std::uint64_t{64} << 20) / sizeof(std::uint64_t);
  if (ids <= kAlwaysRoomIds) return;
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (available && ids > *available / sizeof(std::uint64_t)) {
    throw Error(ExitCode::kFailure, "received frames announce " + std::to_string(ids) +
                                        " ids, more than memory holds (" + format_bytes(*available) + " available)");
  }
}

// Before its data, every message's descriptor travels: its length in bytes and whether
// it is a frame or unframed 64-bit words (MessageCodec::Encoding). When nothing that
// arrives is framed, the data lands straight where it belongs, as in passthrough.
std::uint64_t describe(std::uint64_t bytes, bool framed) { return bytes << 1 | (framed ? 1U : 0U); }
std::uint64_t described_bytes(std::uint64_t descriptor) { return descriptor >> 1; }
bool described_framed(std::uint64_t descriptor) { return (descriptor & 1) != 0; }
bool any_framed(std::span<const std::uint64_t> descriptors) {
  return std::any_of(descriptors.begin(), descriptors.end(), described_framed);
}
// Every member's descriptor of what it sends in a gather, in rank order.
std::vector<std::uint64_t> gather_descriptors(const Communicator& comm, std::span<const std::uint8_t> sent,
                                              bool framed) {
  return comm.allgather_value(describe(sent.size(), framed));
}
std::uint64_t total_of(std::span<const std::uint64_t> counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}
std::vector<std::uint64_t> described_byte_counts(std::span<const std::uint64_t> descriptors) {
  std::vector<std::uint64_t> bytes(descriptors.size());
  std::transform(descriptors.begin(), descriptors.end(), bytes.begin(), described_bytes);
  return bytes;
}
// Ids in an unframed piece of `bytes` bytes.
std::uint64_t unframed_ids(std::uint64_t bytes, std::uint64_t max_ids) {
  if (bytes % sizeof(std::uint64_t) != 0) throw DecodeError("unframed message of " + std::to_string(bytes) + " bytes");
  if (bytes / sizeof(std::uint64_t) > max_ids) throw DecodeError("unframed message longer than any message can be");
  return bytes / sizeof(std::uint64_t);
}

std::span<const std::uint8_t> byte_view(std::span<const std::uint64_t> words) {
  return {reinterpret_cast<const std::uint8_t*>(words.data()), words.size_bytes()};
}
std::span<std::uint8_t> byte_view(std::span<std::uint64_t> words) {
  return {reinterpret_cast<std::uint8_t*>(words.data()), words.size_bytes()};
}

// Room for `bytes` received bytes, checked against memory first.
std::span<std::uint8_t> receive_room(ByteBuffer& buffer, std::uint64_t bytes) {
  check_room_for((bytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
  buffer.clear();
  return {buffer.extend(static_cast<std::size_t>(bytes)), static_cast<std::size_t>(bytes)};
}

// The ids of every piece of `bytes` (described by `descriptors`, in source order) into
// out, with piece `own` (if any) taken from own_ids instead. Returns the offsets of each
// piece's ids.
std::vector<std::uint64_t> decode_pieces(std::span<const std::uint8_t> bytes,
                                         std::span<const std::uint64_t> descriptors, int own,
                                         std::span<const std::uint64_t> own_ids, std::uint64_t max_ids,
                                         std::vector<std::uint64_t>& out) {
  const std::size_t pieces = descriptors.size();
  std::vector<FrameHeader> headers(pieces);
  std::vector<std::uint64_t> offsets(pieces + 1, 0);
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < pieces; ++s) {
    const std::uint64_t length = described_bytes(descriptors[s]);
    std::uint64_t count = 0;
    if (static_cast<int>(s) == own) {
      count = own_ids.size();
    } else if (described_framed(descriptors[s])) {
      const std::span<const std::uint8_t> piece = bytes.subspan(at, length);
      headers[s] = read_frame_header(piece, max_ids);
      if (headers[s].frame_bytes() != piece.size()) throw DecodeError("message is not exactly one frame");
      count = headers[s].count;
    } else {
      count = unframed_ids(length, max_ids);
    }
    at += length;
    offsets[s + 1] = offsets[s] + count;
  }
  check_room_for(offsets[pieces]);
  out.resize(static_cast<std::size_t>(offsets[pieces]));
  at = 0;
  for (std::size_t s = 0; s < pieces; ++s) {
    const std::uint64_t length = described_bytes(descriptors[s]);
    std::uint64_t* into = out.data() + offsets[s];
    if (static_cast<int>(s) == own) {
      if (!own_ids.empty()) std::memcpy(into, own_ids.data(), own_ids.size_bytes());
    } else if (described_framed(descriptors[s])) {
      decode_frame_into(bytes.subspan(at, length), headers[s], into);
    } else if (length != 0) {
      std::memcpy(into, bytes.data() + at, length);
    }
    at += length;
  }
  return offsets;
}

// Every rank's ids, concatenated in rank order, through frames.
std::vector<std::uint64_t> allgather_encoded(const Communicator& comm, std::span<const std::uint64_t> mine,
                                             MessageCodec& codec, std::uint64_t max_ids) {
  Stopwatch clock;
  ByteBuffer frame;
  MessageCodec::Encoding how{CodecId::kNone, false};
  if (!mine.empty()) {
    how = codec.encode_ids(mine, IdsAre::kSet, comm.slowest_link(), frame);
    book_frame(comm, how.codec);
  }
  const std::span<const std::uint8_t> sent = how.framed ? frame.bytes() : byte_view(mine);
  const double encode_s = clock.elapsed_s();
  const std::vector<std::uint64_t> descriptors = gather_descriptors(comm, sent, how.framed);
  const std::vector<std::uint64_t> byte_counts = described_byte_counts(descriptors);
  std::vector<std::uint64_t> ids;
  double decode_s = 0;
  if (!any_framed(descriptors)) {
    std::uint64_t total = 0;
    for (const std::uint64_t bytes : byte_counts) total += unframed_ids(bytes, max_ids);
    check_room_for(total);
    ids.resize(static_cast<std::size_t>(total));
    comm.allgatherv_into(sent, byte_counts, byte_view(std::span<std::uint64_t>(ids)));
  } else {
    ByteBuffer received;
    comm.allgatherv_into(sent, byte_counts, receive_room(received, total_of(byte_counts)));
    clock.restart();
    decode_pieces(received.bytes(), descriptors, comm.rank(), mine, max_ids, ids);
    decode_s = clock.elapsed_s();
  }
  const auto peers = static_cast<std::uint64_t>(comm.size() - 1);
  book_codec_work(comm, peers * mine.size_bytes(), peers * sent.size(), encode_s, decode_s);
  return ids;
}

// The partner's ids for mine, through frames.
std::vector<std::uint64_t> sendrecv_encoded(const Communicator& comm, std::span<const std::uint64_t> mine, int partner,
                                            MessageCodec& codec, std::uint64_t max_ids) {
  Stopwatch clock;
  ByteBuffer frame;
  MessageCodec::Encoding how{CodecId::kNone, false};
  if (!mine.empty()) {
    how = codec.encode_ids(mine, IdsAre::kSet, comm.link_cost_to(partner), frame);
    book_frame(comm, how.codec);
  }
  const std::span<const std::uint8_t> sent = how.framed ? frame.bytes() : byte_view(mine);
  const double encode_s = clock.elapsed_s();
  const std::uint64_t descriptor = comm.sendrecv_value(describe(sent.size(), how.framed), partner);
  const std::uint64_t length = described_bytes(descriptor);
  std::vector<std::uint64_t> ids;
  double decode_s = 0;
  if (!described_framed(descriptor)) {
    const std::uint64_t count = unframed_ids(length, max_ids);
    check_room_for(count);
    ids.resize(static_cast<std::size_t>(count));
    comm.sendrecv_into(sent, partner, byte_view(std::span<std::uint64_t>(ids)));
  } else {
    ByteBuffer received;
    comm.sendrecv_into(sent, partner, receive_room(received, length));
    clock.restart();
    ids = decode_frame(received.bytes(), max_ids);
    decode_s = clock.elapsed_s();
  }
  book_codec_work(comm, mine.size_bytes(), sent.size(), encode_s, decode_s);
  return ids;
}

// Sorted union of two sorted duplicate-free lists.
std::vector<std::uint64_t> merge_union(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
  std::vector<std::uint64_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

std::vector<std::uint64_t> union_allreduce(const Communicator& comm, std::span<const std::uint64_t> mine,
                                           MessageCodec* codec, std::uint64_t max_ids_per_message) {
  const auto swap_with = [&](std::span<const std::uint64_t> given, int partner) {
    book_ids(comm, given.size());
    return encoding(codec) ? sendrecv_encoded(comm, given, partner, *codec, max_ids_per_message)
                           : comm.sendrecv(given, partner);
  };
  const int p = comm.size();
  const int rank = comm.rank();
  std::uint64_t bound = mine.empty() ? 0 : mine.back() + 1;
  bound = comm.allreduce(bound, ReduceOp::kMax);
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;

  std::vector<std::uint64_t> held(mine.begin(), mine.end());
  // Ranks past the largest power of two hand their list to a partner and hold nothing.
  if (rank >= p2) {
    swap_with(std::span<const std::uint64_t>(held), rank - p2);
    held.clear();
  } else if (rank + p2 < p) {
    const std::vector<std::uint64_t> extra = swap_with(std::span<const std::uint64_t>{}, rank + p2);
    held = merge_union(held, extra);
  }
  if (rank < p2) {
    std::uint64_t lo = 0;
    std::uint64_t hi = bound;
    for (int mask = p2 / 2; mask >= 1; mask /= 2) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const auto split = std::lower_bound(held.begin(), held.end(), mid);
      const bool keep_lower = (rank & mask) == 0;
      std::vector<std::uint64_t> kept =
          keep_lower ? std::vector<std::uint64_t>(held.begin(), split) : std::vector<std::uint64_t>(split, held.end());
      const auto split_at = static_cast<std::size_t>(split - held.begin());
      const std::span<const std::uint64_t> given = keep_lower ? std::span<const std::uint64_t>(held).subspan(split_at)
                                                              : std::span<const std::uint64_t>(held).first(split_at);
      const std::vector<std::uint64_t> received = swap_with(given, rank ^ mask);
      held = merge_union(kept, received);
      (keep_lower ? hi : lo) = mid;
    }
  }
  // Rank order is range order: the first halving bit is the highest rank bit.
  book_ids(comm, static_cast<std::uint64_t>(p - 1) * held.size());
  if (encoding(codec)) return allgather_encoded(comm, held, *codec, max_ids_per_message);
  std::vector<std::uint64_t> counts;
  return comm.allgatherv(std::span<const std::uint64_t>(held), counts);
}

void DirectExchanger::record(const Communicator& comm, RecordedKind kind, std::uint32_t destination,
                             std::span<const std::uint64_t> values) const {
  if (recorder_ == nullptr || !recorder_->enabled() || comm.size() == 1) return;
  recorder_->record(comm.metrics() != nullptr ? comm.metrics()->current() : Phase::kOther, kind, destination, values);
}

IncomingIds DirectExchanger::all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) {
  IncomingIds in;
  if (recorder_ != nullptr) {
    std::uint64_t first = 0;
    for (std::size_t d = 0; d < outgoing.counts.size(); ++d) {
      if (static_cast<int>(d) != comm.rank() && outgoing.counts[d] > 0) {
        record(comm, kind == IdsAre::kSet ? RecordedKind::kSet : RecordedKind::kSequence, static_cast<std::uint32_t>(d),
               std::span<const std::uint64_t>(outgoing.ids).subspan(first, outgoing.counts[d]));
      }
      first += outgoing.counts[d];
    }
  }
  book_ids(comm,
           static_cast<std::uint64_t>(outgoing.ids.size()) - outgoing.counts[static_cast<std::size_t>(comm.rank())]);
  if (codec_.passthrough()) {
    std::vector<std::uint64_t> counts;
    in.ids = comm.alltoallv(std::span<const std::uint64_t>(outgoing.ids),
                            std::span<const std::uint64_t>(outgoing.counts), counts);
    in.offsets.assign(counts.size() + 1, 0);
    for (std::size_t s = 0; s < counts.size(); ++s) in.offsets[s + 1] = in.offsets[s] + counts[s];
    return in;
  }
  Stopwatch clock;
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  // Frames for this rank's framed messages; unframed ones stay where they are.
  ByteBuffer frames;
  std::vector<MessageCodec::Encoding> how(ranks, {CodecId::kNone, false});
  std::vector<std::uint64_t> frame_bytes(ranks, 0);
  std::uint64_t raw_bytes = 0;
  std::uint64_t first = 0;
  const std::span<const std::uint64_t> all_ids(outgoing.ids);
  for (std::size_t d = 0; d < ranks; ++d) {
    const std::span<const std::uint64_t> ids = all_ids.subspan(first, outgoing.counts[d]);
    first += outgoing.counts[d];
    if (d == me || ids.empty()) continue;
    const std::size_t before = frames.size();
    how[d] = codec_.encode_ids(ids, kind, comm.link_cost_to(static_cast<int>(d)), frames);
    book_frame(comm, how[d].codec);
    frame_bytes[d] = frames.size() - before;
    raw_bytes += ids.size_bytes();
  }
  // Own ids travel unframed through MPI like the rest (a local copy).
  std::vector<std::uint64_t> descriptors(ranks);
  std::vector<std::uint64_t> send_bytes(ranks);
  bool framing = false;
  for (std::size_t d = 0; d < ranks; ++d) {
    send_bytes[d] = how[d].framed ? frame_bytes[d] : outgoing.counts[d] * sizeof(std::uint64_t);
    descriptors[d] = describe(send_bytes[d], how[d].framed);
    framing |= how[d].framed;
  }
  // With any frame, one buffer in destination order; else the ids as they are.
  ByteBuffer mixed;
  std::span<const std::uint8_t> sent = byte_view(all_ids.first(first));
  if (framing) {
    first = 0;
    std::uint64_t framed_at = 0;
    for (std::size_t d = 0; d < ranks; ++d) {
      if (how[d].framed) {
        mixed.append(frames.data() + framed_at, frame_bytes[d]);
        framed_at += frame_bytes[d];
      } else {
        mixed.append(all_ids.data() + first, outgoing.counts[d] * sizeof(std::uint64_t));
      }
      first += outgoing.counts[d];
    }
    sent = mixed.bytes();
  }
  const double encode_s = clock.elapsed_s();
  std::vector<std::uint64_t> arriving(ranks);
  comm.alltoall(std::span<const std::uint64_t>(descriptors), std::span<std::uint64_t>(arriving));
  const std::vector<std::uint64_t> received_bytes = described_byte_counts(arriving);
  double decode_s = 0;
  if (!any_framed(arriving)) {
    in.offsets.assign(ranks + 1, 0);
    for (std::size_t s = 0; s < ranks; ++s)
      in.offsets[s + 1] = in.offsets[s] + unframed_ids(received_bytes[s], max_ids_);
    check_room_for(in.offsets[ranks]);
    in.ids.resize(static_cast<std::size_t>(in.offsets[ranks]));
    comm.alltoallv_into(sent, send_bytes, received_bytes, byte_view(std::span<std::uint64_t>(in.ids)));
  } else {
    ByteBuffer received;
    comm.alltoallv_into(sent, send_bytes, received_bytes, receive_room(received, total_of(received_bytes)));
    clock.restart();
    in.offsets = decode_pieces(received.bytes(), arriving, -1, {}, max_ids_, in.ids);
    decode_s = clock.elapsed_s();
  }
  std::uint64_t wire_bytes = 0;
  for (std::size_t d = 0; d < ranks; ++d) wire_bytes += d == me ? 0 : send_bytes[d];
  book_codec_work(comm, raw_bytes, wire_bytes, encode_s, decode_s);
  return in;
}

std::vector<std::uint64_t> DirectExchanger::gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) {
  record(comm, RecordedKind::kSet, MessageRecorder::kEveryMember, mine);
  if (column_gather_ == ColumnGather::kUnion) return union_allreduce(comm, mine, &codec_, max_ids_);
  std::vector<std::uint64_t> all;
  book_ids(comm, static_cast<std::uint64_t>(comm.size() - 1) * mine.size());
  if (codec_.passthrough()) {
    std::vector<std::uint64_t> counts;
    all = comm.allgatherv(mine, counts);
  } else {
    all = allgather_encoded(comm, mine, codec_, max_ids_);
  }
  // Frontier pieces are disjoint and in rank order, so this is already the union; other
  // callers get it made so.
  if (!std::is_sorted(all.begin(), all.end())) std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

void DirectExchanger::gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                                    std::span<std::uint64_t> all) {
  record(comm, RecordedKind::kBitmap, MessageRecorder::kEveryMember, mine);
  book_ids(comm, static_cast<std::uint64_t>(comm.size() - 1) * count_set_bits(mine));
  if (codec_.passthrough()) {
    comm.allgather(mine, all);
    return;
  }
  Stopwatch clock;
  ByteBuffer frame;
  const MessageCodec::Encoding how = codec_.encode_bitmap(mine, comm.slowest_link(), frame);
  book_frame(comm, how.codec);
  const std::span<const std::uint8_t> sent = how.framed ? frame.bytes() : byte_view(mine);
  const double encode_s = clock.elapsed_s();
  const std::vector<std::uint64_t> descriptors = gather_descriptors(comm, sent, how.framed);
  for (const std::uint64_t d : descriptors) {
    if (!described_framed(d) && described_bytes(d) != mine.size_bytes()) {
      throw DecodeError("unframed bitmap slice of " + std::to_string(described_bytes(d)) + " bytes, expected " +
                        std::to_string(mine.size_bytes()));
    }
  }
  double decode_s = 0;
  if (!any_framed(descriptors)) {
    comm.allgather(mine, all);
  } else {
    const std::vector<std::uint64_t> byte_counts = described_byte_counts(descriptors);
    ByteBuffer received;
    comm.allgatherv_into(sent, byte_counts, receive_room(received, total_of(byte_counts)));
    clock.restart();
    std::uint64_t at = 0;
    for (std::size_t s = 0; s < byte_counts.size(); ++s) {
      const std::span<std::uint64_t> slice = all.subspan(s * mine.size(), mine.size());
      if (static_cast<int>(s) == comm.rank()) {
        if (!mine.empty()) std::memcpy(slice.data(), mine.data(), slice.size_bytes());
      } else if (described_framed(descriptors[s])) {
        decode_bitmap_frame(received.bytes().subspan(at, byte_counts[s]), slice);
      } else {
        std::memcpy(slice.data(), received.data() + at, slice.size_bytes());
      }
      at += byte_counts[s];
    }
    decode_s = clock.elapsed_s();
  }
  const auto peers = static_cast<std::uint64_t>(comm.size() - 1);
  book_codec_work(comm, peers * mine.size_bytes(), peers * sent.size(), encode_s, decode_s);
}

}  // namespace zbfs
