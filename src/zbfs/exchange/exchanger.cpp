#include "zbfs/exchange/exchanger.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

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

void book_frame(const Communicator& comm, CodecId codec) {
  if (PhaseMetrics* metrics = comm.metrics(); metrics != nullptr) metrics->add_frame(codec);
}

// Refuses, before allocating, a total the machine cannot hold.
void check_room_for(std::uint64_t ids) {
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (available && ids > *available / sizeof(std::uint64_t)) {
    throw Error(ExitCode::kFailure, "received frames announce " + std::to_string(ids) +
                                        " ids, more than memory holds (" + format_bytes(*available) + " available)");
  }
}

// One frame per non-empty piece of `bytes` (piece s is byte_counts[s] long); the ids of
// each piece go to out in piece order, with piece `own` (if any) taken from own_ids
// instead. Returns the offsets of each piece's ids.
std::vector<std::uint64_t> decode_pieces(std::span<const std::uint8_t> bytes,
                                         std::span<const std::uint64_t> byte_counts, int own,
                                         std::span<const std::uint64_t> own_ids, std::uint64_t max_ids,
                                         std::vector<std::uint64_t>& out) {
  const std::size_t pieces = byte_counts.size();
  std::vector<FrameHeader> headers(pieces);
  std::vector<std::uint64_t> offsets(pieces + 1, 0);
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < pieces; ++s) {
    std::uint64_t count = 0;
    if (static_cast<int>(s) == own) {
      count = own_ids.size();
    } else if (byte_counts[s] != 0) {
      const std::span<const std::uint8_t> piece = bytes.subspan(at, byte_counts[s]);
      headers[s] = read_frame_header(piece, max_ids);
      if (headers[s].frame_bytes() != piece.size()) throw DecodeError("message is not exactly one frame");
      count = headers[s].count;
    }
    at += byte_counts[s];
    offsets[s + 1] = offsets[s] + count;
  }
  check_room_for(offsets[pieces]);
  out.resize(static_cast<std::size_t>(offsets[pieces]));
  at = 0;
  for (std::size_t s = 0; s < pieces; ++s) {
    std::uint64_t* into = out.data() + offsets[s];
    if (static_cast<int>(s) == own) {
      std::copy(own_ids.begin(), own_ids.end(), into);
    } else if (byte_counts[s] != 0) {
      decode_frame_into(bytes.subspan(at, byte_counts[s]), headers[s], into);
    }
    at += byte_counts[s];
  }
  return offsets;
}

// Every rank's ids, concatenated in rank order, through frames.
std::vector<std::uint64_t> allgather_encoded(const Communicator& comm, std::span<const std::uint64_t> mine,
                                             MessageCodec& codec, std::uint64_t max_ids) {
  Stopwatch clock;
  ByteBuffer frame;
  if (!mine.empty()) book_frame(comm, codec.encode_ids(mine, IdsAre::kSet, comm.slowest_link(), frame));
  const double encode_s = clock.elapsed_s();
  std::vector<std::uint64_t> byte_counts;
  const std::vector<std::uint8_t> all = comm.allgatherv(frame.bytes(), byte_counts);
  clock.restart();
  std::vector<std::uint64_t> ids;
  decode_pieces(all, byte_counts, comm.rank(), mine, max_ids, ids);
  const auto peers = static_cast<std::uint64_t>(comm.size() - 1);
  book_codec_work(comm, peers * mine.size_bytes(), peers * frame.size(), encode_s, clock.elapsed_s());
  return ids;
}

// The partner's ids for mine, through frames.
std::vector<std::uint64_t> sendrecv_encoded(const Communicator& comm, std::span<const std::uint64_t> mine, int partner,
                                            MessageCodec& codec, std::uint64_t max_ids) {
  Stopwatch clock;
  ByteBuffer frame;
  if (!mine.empty()) book_frame(comm, codec.encode_ids(mine, IdsAre::kSet, comm.link_cost_to(partner), frame));
  const double encode_s = clock.elapsed_s();
  const std::vector<std::uint8_t> received = comm.sendrecv(frame.bytes(), partner);
  clock.restart();
  std::vector<std::uint64_t> ids;
  if (!received.empty()) ids = decode_frame(received, max_ids);
  book_codec_work(comm, mine.size_bytes(), frame.size(), encode_s, clock.elapsed_s());
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
  ByteBuffer frames;
  std::vector<std::uint64_t> byte_counts(ranks, 0);
  std::uint64_t raw_bytes = 0;
  std::uint64_t first = 0;
  std::span<const std::uint64_t> own;
  for (std::size_t d = 0; d < ranks; ++d) {
    const std::span<const std::uint64_t> ids =
        std::span<const std::uint64_t>(outgoing.ids).subspan(first, outgoing.counts[d]);
    first += outgoing.counts[d];
    if (d == me) {
      own = ids;
    } else if (!ids.empty()) {
      const std::size_t before = frames.size();
      book_frame(comm, codec_.encode_ids(ids, kind, comm.link_cost_to(static_cast<int>(d)), frames));
      byte_counts[d] = frames.size() - before;
      raw_bytes += ids.size_bytes();
    }
  }
  const double encode_s = clock.elapsed_s();
  std::vector<std::uint64_t> received_counts;
  const std::vector<std::uint8_t> received = comm.alltoallv(frames.bytes(), byte_counts, received_counts);
  clock.restart();
  in.offsets = decode_pieces(received, received_counts, comm.rank(), own, max_ids_, in.ids);
  book_codec_work(comm, raw_bytes, frames.size(), encode_s, clock.elapsed_s());
  return in;
}

std::vector<std::uint64_t> DirectExchanger::gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) {
  record(comm, RecordedKind::kSet, MessageRecorder::kEveryMember, mine);
  if (column_gather_ == ColumnGather::kUnion) return union_allreduce(comm, mine, &codec_, max_ids_);
  std::vector<std::uint64_t> all;
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
  if (codec_.passthrough()) {
    comm.allgather(mine, all);
    return;
  }
  Stopwatch clock;
  ByteBuffer frame;
  book_frame(comm, codec_.encode_bitmap(mine, comm.slowest_link(), frame));
  const double encode_s = clock.elapsed_s();
  std::vector<std::uint64_t> byte_counts;
  const std::vector<std::uint8_t> received = comm.allgatherv(frame.bytes(), byte_counts);
  clock.restart();
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < byte_counts.size(); ++s) {
    const std::span<std::uint64_t> slice = all.subspan(s * mine.size(), mine.size());
    if (static_cast<int>(s) == comm.rank()) {
      for (std::size_t w = 0; w < mine.size(); ++w) slice[w] = mine[w];
    } else {
      decode_bitmap_frame(std::span<const std::uint8_t>(received).subspan(at, byte_counts[s]), slice);
    }
    at += byte_counts[s];
  }
  const auto peers = static_cast<std::uint64_t>(comm.size() - 1);
  book_codec_work(comm, peers * mine.size_bytes(), peers * frame.size(), encode_s, clock.elapsed_s());
}

}  // namespace zbfs
