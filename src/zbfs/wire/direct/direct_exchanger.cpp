#include "zbfs/wire/direct/direct_exchanger.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/bit_compaction.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/metrics/communicator_metrics.hpp"

namespace zbfs {
namespace {

bool encoding(const MessageCodec* codec) { return codec != nullptr && !codec->passthrough(); }

// Books an exchange's codec work in the communicator's current phase.
void book_codec_work(const Communicator& comm, std::uint64_t raw_bytes, std::uint64_t wire_bytes, double encode_s,
                     double decode_s) {
  if (PhaseMetrics* metrics = phase_metrics_of(comm); metrics != nullptr && comm.size() > 1) {
    metrics->add_codec_work(raw_bytes, wire_bytes, encode_s, decode_s);
  }
}

// Books `ids` vertex ids sent to other ranks (PhaseCounters::id_bytes).
void book_ids(const Communicator& comm, std::uint64_t ids) {
  if (PhaseMetrics* metrics = phase_metrics_of(comm); metrics != nullptr && comm.size() > 1) metrics->add_ids(ids);
}

void book_frame(const Communicator& comm, CodecId codec) {
  if (PhaseMetrics* metrics = phase_metrics_of(comm); metrics != nullptr) metrics->add_frame(codec);
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

using Piece = Communicator::Piece;
using Arrival = Communicator::Arrival;

// A piece is flagged when it is a frame; unframed ones are 64-bit words as they are
// (MessageCodec::Encoding).
bool any_framed(std::span<const Arrival> arrivals) {
  return std::any_of(arrivals.begin(), arrivals.end(), [](const Arrival& a) { return a.flagged; });
}

// Room for `bytes` received bytes, checked against memory first.
std::span<std::uint8_t> receive_room(ByteBuffer& buffer, std::uint64_t bytes) {
  check_room_for((bytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
  buffer.clear();
  return {buffer.extend(static_cast<std::size_t>(bytes)), static_cast<std::size_t>(bytes)};
}

// One round of id messages. When nothing that arrives is framed the ids land straight in
// `ids`, as without a codec; otherwise the bytes land in `received`, for decode_pieces.
// Returns what arrived from each member.
std::vector<Arrival> exchange_id_pieces(const Communicator& comm, std::span<const Piece> pieces, CommPattern kind,
                                        std::uint64_t max_ids, std::vector<std::uint64_t>& ids, ByteBuffer& received,
                                        PieceRounds& rounds) {
  return rounds.exchange(comm, pieces, kind, [&](std::span<const Arrival> arrivals) {
    std::uint64_t total = 0;
    if (any_framed(arrivals)) {
      for (const Arrival& a : arrivals) total += a.bytes;
      return receive_room(received, total);
    }
    for (const Arrival& a : arrivals) total += unframed_ids(a.bytes, max_ids);
    check_room_for(total);
    ids.resize(static_cast<std::size_t>(total));
    return byte_view(std::span<std::uint64_t>(ids));
  });
}

// Offsets of each member's ids when every piece arrived unframed.
std::vector<std::uint64_t> unframed_offsets(std::span<const Arrival> arrivals) {
  std::vector<std::uint64_t> offsets(arrivals.size() + 1, 0);
  for (std::size_t s = 0; s < arrivals.size(); ++s)
    offsets[s + 1] = offsets[s] + arrivals[s].bytes / sizeof(std::uint64_t);
  return offsets;
}

// The ids of every piece of `bytes` (what `arrivals` describes, in source order) into
// out. Returns the offsets of each piece's ids.
std::vector<std::uint64_t> decode_pieces(std::span<const std::uint8_t> bytes, std::span<const Arrival> arrivals,
                                         std::uint64_t max_ids, std::vector<std::uint64_t>& out) {
  const std::size_t pieces = arrivals.size();
  std::vector<FrameHeader> headers(pieces);
  std::vector<std::uint64_t> offsets(pieces + 1, 0);
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < pieces; ++s) {
    const std::uint64_t length = arrivals[s].bytes;
    std::uint64_t count = 0;
    if (arrivals[s].flagged) {
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
    const std::uint64_t length = arrivals[s].bytes;
    std::uint64_t* into = out.data() + offsets[s];
    if (arrivals[s].flagged) {
      decode_frame_into(bytes.subspan(at, length), headers[s], into);
    } else if (length != 0) {
      std::memcpy(into, bytes.data() + at, length);
    }
    at += length;
  }
  return offsets;
}

// Every rank's ids, concatenated in rank order, in one round; through frames with a
// codec (nullptr: passthrough).
std::vector<std::uint64_t> allgather_ids(const Communicator& comm, std::span<const std::uint64_t> mine,
                                         MessageCodec* codec, std::uint64_t max_ids, PieceRounds& rounds) {
  Stopwatch clock;
  ByteBuffer frame;
  MessageCodec::Encoding how{CodecId::kNone, false};
  if (encoding(codec) && !mine.empty()) {
    how = codec->encode_ids(mine, IdsAre::kSet, slowest_link_cost(comm), frame);
    book_frame(comm, how.codec);
  }
  const std::span<const std::uint8_t> sent = how.framed ? frame.bytes() : byte_view(mine);
  const double encode_s = clock.elapsed_s();
  std::vector<Piece> pieces(static_cast<std::size_t>(comm.size()), Piece{sent, how.framed});
  pieces[static_cast<std::size_t>(comm.rank())] = {byte_view(mine), false};
  std::vector<std::uint64_t> ids;
  ByteBuffer received;
  const std::vector<Arrival> arrivals =
      exchange_id_pieces(comm, pieces, CommPattern::kGather, max_ids, ids, received, rounds);
  double decode_s = 0;
  if (any_framed(arrivals)) {
    clock.restart();
    decode_pieces(received.bytes(), arrivals, max_ids, ids);
    decode_s = clock.elapsed_s();
  }
  if (encoding(codec)) {
    const auto peers = static_cast<std::uint64_t>(comm.size() - 1);
    book_codec_work(comm, peers * mine.size_bytes(), peers * sent.size(), encode_s, decode_s);
  }
  return ids;
}

// The partner's ids for mine, through frames: the descriptor (length and whether it is
// a frame) first, then the data.
std::uint64_t describe(std::uint64_t bytes, bool framed) { return bytes << 1 | (framed ? 1U : 0U); }
std::vector<std::uint64_t> sendrecv_encoded(const Communicator& comm, std::span<const std::uint64_t> mine, int partner,
                                            MessageCodec& codec, std::uint64_t max_ids) {
  Stopwatch clock;
  ByteBuffer frame;
  MessageCodec::Encoding how{CodecId::kNone, false};
  if (!mine.empty()) {
    how = codec.encode_ids(mine, IdsAre::kSet, link_cost_to(comm, partner), frame);
    book_frame(comm, how.codec);
  }
  const std::span<const std::uint8_t> sent = how.framed ? frame.bytes() : byte_view(mine);
  const double encode_s = clock.elapsed_s();
  const std::uint64_t descriptor = comm.sendrecv_value(describe(sent.size(), how.framed), partner);
  const std::uint64_t length = descriptor >> 1;
  std::vector<std::uint64_t> ids;
  double decode_s = 0;
  if ((descriptor & 1) == 0) {
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
                                           PieceRounds& rounds, MessageCodec* codec,
                                           std::uint64_t max_ids_per_message) {
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
  return allgather_ids(comm, held, codec, max_ids_per_message, rounds);
}

void DirectExchanger::record(const Communicator& comm, RecordedKind kind, std::uint32_t destination,
                             std::span<const std::uint64_t> values) const {
  if (recorder_ == nullptr || !recorder_->enabled() || comm.size() == 1) return;
  const PhaseMetrics* metrics = phase_metrics_of(comm);
  recorder_->record(metrics != nullptr ? metrics->current() : Phase::kOther, kind, destination, values);
}

IncomingIds DirectExchanger::all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) {
  return send_ids(comm, outgoing.ids, outgoing.counts, kind);
}

IncomingIds DirectExchanger::send_ids(const Communicator& comm, std::span<const std::uint64_t> outgoing_ids,
                                      std::span<const std::uint64_t> counts, IdsAre kind,
                                      std::span<const std::uint64_t> raw_words) {
  IncomingIds in;
  if (recorder_ != nullptr) {
    std::uint64_t first = 0;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      if (static_cast<int>(d) != comm.rank() && counts[d] > 0) {
        record(comm, kind == IdsAre::kSet ? RecordedKind::kSet : RecordedKind::kSequence, static_cast<std::uint32_t>(d),
               outgoing_ids.subspan(first, counts[d]));
      }
      first += counts[d];
    }
  }
  book_ids(comm, static_cast<std::uint64_t>(outgoing_ids.size()) - counts[static_cast<std::size_t>(comm.rank())]);
  Stopwatch clock;
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  // Frames for the messages auto (or a fixed codec) frames; the rest, this rank's own
  // included, go as the ids they are.
  ByteBuffer frames;
  std::vector<std::uint64_t> frame_end(ranks, 0);
  std::vector<Piece> pieces(ranks);
  std::uint64_t raw_bytes = 0;
  std::uint64_t first = 0;
  for (std::size_t d = 0; d < ranks; ++d) {
    const std::span<const std::uint64_t> ids = outgoing_ids.subspan(first, counts[d]);
    first += counts[d];
    pieces[d] = {byte_view(ids), false};
    if (codec_.passthrough() || d == me || ids.empty()) continue;
    const MessageCodec::Encoding how = codec_.encode_ids(ids, kind, link_cost_to(comm, static_cast<int>(d)), frames);
    book_frame(comm, how.codec);
    pieces[d].flagged = how.framed;
    frame_end[d] = frames.size();
    raw_bytes += raw_words.empty() ? ids.size_bytes() : raw_words[d] * sizeof(std::uint64_t);
  }
  // The frames buffer has stopped growing: point the framed pieces into it.
  std::uint64_t wire_bytes = 0;
  for (std::size_t d = 0, framed_at = 0; d < ranks; ++d) {
    if (pieces[d].flagged) {
      pieces[d].bytes = {frames.data() + framed_at, static_cast<std::size_t>(frame_end[d] - framed_at)};
      framed_at = frame_end[d];
    }
    wire_bytes += d == me ? 0 : pieces[d].bytes.size();
  }
  const double encode_s = clock.elapsed_s();
  ByteBuffer received;
  const std::vector<Arrival> arrivals =
      exchange_id_pieces(comm, pieces, CommPattern::kPersonalized, max_ids_, in.ids, received, *rounds_);
  double decode_s = 0;
  if (!any_framed(arrivals)) {
    in.offsets = unframed_offsets(arrivals);
  } else {
    clock.restart();
    in.offsets = decode_pieces(received.bytes(), arrivals, max_ids_, in.ids);
    decode_s = clock.elapsed_s();
  }
  if (!codec_.passthrough()) book_codec_work(comm, raw_bytes, wire_bytes, encode_s, decode_s);
  return in;
}

void DirectExchanger::shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                                   std::span<std::uint64_t> received) {
  if (mine.size() != received.size()) {
    throw Error(ExitCode::kFailure, "bitmap shift: " + std::to_string(mine.size()) + " words sent, " +
                                        std::to_string(received.size()) + " expected");
  }
  const int p = comm.size();
  const int next = (comm.rank() + 1) % p;
  const int previous = (comm.rank() + p - 1) % p;
  record(comm, RecordedKind::kBitmap, static_cast<std::uint32_t>(next), mine);
  if (p > 1) book_ids(comm, count_set_bits(mine));
  if (codec_.passthrough()) {
    rounds_->shift_words(comm, mine, next, received, previous);
    return;
  }
  // One byte says whether a frame follows or the words as they are.
  Stopwatch clock;
  ByteBuffer sent;
  sent.put_u8(0);
  const MessageCodec::Encoding how = codec_.encode_bitmap(mine, link_cost_to(comm, next), sent);
  if (p > 1) book_frame(comm, how.codec);
  if (how.framed) {
    sent.data()[0] = 1;
  } else {
    sent.shrink_to(1);
    sent.append(mine.data(), mine.size_bytes());
  }
  const double encode_s = clock.elapsed_s();
  const std::vector<std::uint8_t> arrived = comm.shift_bytes(sent.bytes(), next, previous);
  clock.restart();
  if (arrived.empty() || arrived[0] > 1) throw DecodeError("bitmap shift: malformed message");
  const std::span<const std::uint8_t> body = std::span<const std::uint8_t>(arrived).subspan(1);
  if (arrived[0] == 1) {
    decode_bitmap_frame(body, received);
  } else if (body.size() == received.size_bytes()) {
    std::memcpy(received.data(), body.data(), body.size());
  } else {
    throw DecodeError("bitmap shift: " + std::to_string(body.size()) + " bytes, expected " +
                      std::to_string(received.size_bytes()));
  }
  book_codec_work(comm, p > 1 ? mine.size_bytes() : 0, p > 1 ? sent.size() : 0, encode_s, clock.elapsed_s());
}

std::vector<KeyedItem> DirectExchanger::update(const Communicator& comm, std::span<const KeyedItem> items,
                                               std::span<const std::uint64_t> counts) {
  check_exchange_counts(comm, items.size(), counts);
  // Without a codec each item travels as its two words. With one, a destination's items
  // are merged first (one per key, the smallest value) and travel as columns
  // (update_columns.hpp), so that a block codec's frame of reference sees each column's
  // narrow range apart (a relaxation request's key gaps, distance bits and parent: at
  // scale 20 the columns take under a third of the interleaved words' bits, where
  // interleaved they did not compress).
  const bool columns = !codec_.passthrough();
  std::vector<std::uint64_t> words;
  std::vector<std::uint64_t> word_counts(counts.size());
  // The raw size booked for each message is the two words an item is.
  std::vector<std::uint64_t> raw_words(counts.size());
  if (!columns) {
    words.resize(2 * items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      words[2 * i] = items[i].key;
      words[2 * i + 1] = items[i].value;
    }
    for (std::size_t d = 0; d < counts.size(); ++d) word_counts[d] = raw_words[d] = 2 * counts[d];
  } else {
    words.reserve(3 * items.size() + counts.size());
    std::uint64_t first = 0;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      merged_.assign(items.begin() + static_cast<std::ptrdiff_t>(first),
                     items.begin() + static_cast<std::ptrdiff_t>(first + counts[d]));
      first += counts[d];
      merge_by_key(merged_, merge_scratch_);
      const std::size_t before = words.size();
      append_update_columns(merged_, words, columns_scratch_);
      word_counts[d] = words.size() - before;
      raw_words[d] = 2 * merged_.size();
    }
  }
  const IncomingIds arrived = send_ids(comm, words, word_counts, IdsAre::kSequence, raw_words);
  std::vector<KeyedItem> mine;
  mine.reserve(arrived.ids.size() / (columns ? 3 : 2));
  for (int s = 0; s < arrived.num_sources(); ++s) {
    const std::span<const std::uint64_t> from = arrived.from(s);
    if (columns) {
      read_update_columns(from, mine);
      continue;
    }
    if (from.size() % 2 != 0) {
      throw DecodeError("an update message of " + std::to_string(from.size()) + " words, not items of 2");
    }
    for (std::size_t i = 0; i < from.size(); i += 2) mine.push_back({from[i], from[i + 1]});
  }
  merge_by_key(mine, merge_scratch_);
  return mine;
}

std::vector<std::uint64_t> DirectExchanger::read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                                       std::span<const std::uint64_t> counts, std::size_t width,
                                                       const ReadBatchAnswer& answer) {
  check_exchange_counts(comm, keys.size(), counts);
  const IncomingIds asked = send_ids(comm, keys, counts, IdsAre::kSequence);
  std::vector<std::uint64_t> answers(asked.ids.size() * width);
  std::vector<std::uint64_t> answer_counts(static_cast<std::size_t>(asked.num_sources()));
  for (int s = 0; s < asked.num_sources(); ++s)
    answer_counts[static_cast<std::size_t>(s)] = asked.from(s).size() * width;
  answer(asked.ids, answers);
  // The answers come back grouped by the same ranks, in the order of the keys.
  return send_ids(comm, answers, answer_counts, IdsAre::kSequence).ids;
}

std::vector<std::uint64_t> DirectExchanger::gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) {
  record(comm, RecordedKind::kSet, MessageSink::kEveryMember, mine);
  if (column_gather_ == ColumnGather::kUnion) return union_allreduce(comm, mine, *rounds_, &codec_, max_ids_);
  book_ids(comm, static_cast<std::uint64_t>(comm.size() - 1) * mine.size());
  std::vector<std::uint64_t> all = allgather_ids(comm, mine, &codec_, max_ids_, *rounds_);
  // Frontier pieces are disjoint and in rank order, so this is already the union; other
  // callers get it made so.
  if (!std::is_sorted(all.begin(), all.end())) std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

void DirectExchanger::gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                                    std::span<std::uint64_t> all, std::span<const std::uint64_t> mask) {
  const auto members = static_cast<std::size_t>(comm.size());
  if (all.size() != members * mine.size() || (!mask.empty() && mask.size() != all.size())) {
    throw Error(ExitCode::kFailure, "gather_bitmap: " + std::to_string(mine.size()) + " words per member, " +
                                        std::to_string(all.size()) + " gathered, a mask of " +
                                        std::to_string(mask.size()));
  }
  if (mask.empty()) {
    const std::vector<std::uint64_t> words(members, mine.size());
    gather_words(comm, mine, words, all);
    return;
  }
  // Every member knows every mask slice, so each one's packed length.
  std::vector<std::uint64_t> bits(members);
  std::vector<std::uint64_t> words(members);
  for (std::size_t s = 0; s < members; ++s) {
    bits[s] = count_set_bits(mask.subspan(s * mine.size(), mine.size()));
    words[s] = packed_words(bits[s]);
  }
  const auto me = static_cast<std::size_t>(comm.rank());
  std::vector<std::uint64_t> my_packed(static_cast<std::size_t>(words[me]));
  compact_bits(mine, mask.subspan(me * mine.size(), mine.size()), my_packed);
  std::vector<std::uint64_t> gathered(static_cast<std::size_t>(std::accumulate(words.begin(), words.end(), 0ull)));
  gather_words(comm, my_packed, words, gathered);
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < members; ++s) {
    const std::span<const std::uint64_t> piece(gathered.data() + at, static_cast<std::size_t>(words[s]));
    const std::span<const std::uint64_t> slice_mask = mask.subspan(s * mine.size(), mine.size());
    // A packed piece's bits past its mask's positions are 0 as compact_bits writes them.
    if (bits[s] % 64 != 0 && (piece.back() >> (bits[s] % 64)) != 0) {
      throw DecodeError("bitmap slice has bits past the " + std::to_string(bits[s]) + " its mask selects");
    }
    expand_bits(piece, slice_mask, all.subspan(s * mine.size(), mine.size()));
    at += words[s];
  }
}

void DirectExchanger::gather_words(const Communicator& comm, std::span<const std::uint64_t> mine,
                                   std::span<const std::uint64_t> words, std::span<std::uint64_t> all) {
  record(comm, RecordedKind::kBitmap, MessageSink::kEveryMember, mine);
  book_ids(comm, static_cast<std::uint64_t>(comm.size() - 1) * count_set_bits(mine));
  if (codec_.passthrough()) {
    rounds_->gather_words(comm, mine, words, all);
    return;
  }
  // With a codec: pieces, each member's to every member.
  Stopwatch clock;
  ByteBuffer frame;
  MessageCodec::Encoding how{CodecId::kNone, false};
  if (!codec_.passthrough()) {
    how = codec_.encode_bitmap(mine, slowest_link_cost(comm), frame);
    book_frame(comm, how.codec);
  }
  const std::span<const std::uint8_t> sent = how.framed ? frame.bytes() : byte_view(mine);
  const double encode_s = clock.elapsed_s();
  std::vector<Piece> pieces(static_cast<std::size_t>(comm.size()), Piece{sent, how.framed});
  pieces[static_cast<std::size_t>(comm.rank())] = {byte_view(mine), false};
  // Unframed slices land straight in `all` when no member sent a frame.
  ByteBuffer received;
  const std::vector<Arrival> seen =
      rounds_->exchange(comm, pieces, CommPattern::kGather, [&](std::span<const Arrival> arrivals) {
        std::uint64_t total = 0;
        for (std::size_t s = 0; s < arrivals.size(); ++s) {
          const Arrival& a = arrivals[s];
          const std::uint64_t expected = words[s] * sizeof(std::uint64_t);
          if (!a.flagged && a.bytes != expected) {
            throw DecodeError("unframed bitmap slice of " + std::to_string(a.bytes) + " bytes, expected " +
                              std::to_string(expected));
          }
          total += a.bytes;
        }
        return any_framed(arrivals) ? receive_room(received, total) : byte_view(all);
      });
  double decode_s = 0;
  if (any_framed(seen)) {
    clock.restart();
    std::uint64_t at = 0;
    std::uint64_t first_word = 0;
    for (std::size_t s = 0; s < seen.size(); ++s) {
      const std::span<std::uint64_t> slice = all.subspan(first_word, static_cast<std::size_t>(words[s]));
      if (seen[s].flagged) {
        decode_bitmap_frame(received.bytes().subspan(at, seen[s].bytes), slice);
      } else if (!slice.empty()) {
        std::memcpy(slice.data(), received.data() + at, slice.size_bytes());
      }
      at += seen[s].bytes;
      first_word += words[s];
    }
    decode_s = clock.elapsed_s();
  }
  const auto peers = static_cast<std::uint64_t>(comm.size() - 1);
  if (!codec_.passthrough()) book_codec_work(comm, peers * mine.size_bytes(), peers * sent.size(), encode_s, decode_s);
}

}  // namespace zbfs
