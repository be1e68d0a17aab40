#include "zbfs/route/routed_exchange.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// An item on its way: where it is going, and what it is.
struct Held {
  std::uint64_t destination;
  std::uint64_t key;
  std::uint64_t value;
};

// Sorts by (next rank, destination, key, value); merging keeps the first item, the one
// with the smallest value, of each (destination, key). Returns the items removed.
std::uint64_t sort_and_merge(std::vector<Held>& held, const std::vector<int>& next_of, bool merge) {
  std::sort(held.begin(), held.end(), [&](const Held& a, const Held& b) {
    return std::tuple(next_of[a.destination], a.destination, a.key, a.value) <
           std::tuple(next_of[b.destination], b.destination, b.key, b.value);
  });
  if (!merge) return 0;
  const auto end = std::unique(held.begin(), held.end(), [](const Held& a, const Held& b) {
    return a.destination == b.destination && a.key == b.key;
  });
  const auto removed = static_cast<std::uint64_t>(held.end() - end);
  held.erase(end, held.end());
  return removed;
}

// Appends the message for held[begin, end) (all for one next rank, sorted by destination).
void append_message(std::span<const Held> items, std::vector<std::uint64_t>& words) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> groups;
  for (const Held& h : items) {
    if (groups.empty() || groups.back().first != h.destination) groups.emplace_back(h.destination, 0);
    ++groups.back().second;
  }
  words.push_back(groups.size());
  for (const auto& [destination, count] : groups) {
    words.push_back(destination);
    words.push_back(count);
  }
  for (const Held& h : items) {
    words.push_back(h.key);
    words.push_back(h.value);
  }
}

// Reads one hop message back into `held`; refuses a malformed one.
void parse_message(std::span<const std::uint64_t> words, int ranks, std::vector<Held>& held) {
  const auto malformed = [] { return Error(ExitCode::kFailure, "routed exchange: malformed hop message"); };
  if (words.empty()) throw malformed();
  const std::uint64_t groups = words[0];
  if (groups > (words.size() - 1) / 2) throw malformed();
  std::size_t at = 1 + 2 * groups;
  for (std::uint64_t g = 0; g < groups; ++g) {
    const std::uint64_t destination = words[1 + 2 * g];
    const std::uint64_t count = words[2 + 2 * g];
    if (destination >= static_cast<std::uint64_t>(ranks) || count > (words.size() - at) / 2) throw malformed();
    for (std::uint64_t i = 0; i < count; ++i, at += 2) held.push_back({destination, words[at], words[at + 1]});
  }
  if (at != words.size()) throw malformed();
}

}  // namespace

std::vector<KeyedItem> RoutedExchange::exchange(const Communicator& comm, std::span<const KeyedItem> items,
                                                std::span<const std::uint64_t> counts) {
  const int ranks = comm.size();
  const int me = comm.rank();
  if (plan_.ranks() != ranks) throw Error(ExitCode::kFailure, "routed exchange: plan for another rank count");
  if (counts.size() != static_cast<std::size_t>(ranks)) {
    throw Error(ExitCode::kFailure, "routed exchange: one count per rank expected");
  }
  const bool merge = merge_ == Merge::kOnePerKey;
  stats_ = RouteStats{};
  stats_.hop_bytes.assign(static_cast<std::size_t>(plan_.hops()), 0);
  stats_.hop_startups.assign(static_cast<std::size_t>(plan_.hops()), 0);

  std::vector<Held> held;
  held.reserve(items.size());
  std::size_t at = 0;
  for (std::size_t d = 0; d < counts.size(); ++d) {
    if (counts[d] > items.size() - at) throw Error(ExitCode::kFailure, "routed exchange: counts exceed the items");
    for (std::uint64_t i = 0; i < counts[d]; ++i, ++at) held.push_back({d, items[at].key, items[at].value});
  }
  if (at != items.size()) throw Error(ExitCode::kFailure, "routed exchange: counts do not cover the items");

  std::vector<int> next_of(static_cast<std::size_t>(ranks));
  for (int hop = 0; hop < plan_.hops(); ++hop) {
    for (int d = 0; d < ranks; ++d) next_of[static_cast<std::size_t>(d)] = plan_.next(hop, me, d);
    stats_.merged_items += sort_and_merge(held, next_of, merge);

    // One message per next rank; what stays here is kept apart.
    std::vector<Held> staying;
    std::vector<Communicator::SparseMessage> outgoing;
    for (std::size_t begin = 0; begin < held.size();) {
      const int to = next_of[held[begin].destination];
      std::size_t end = begin;
      while (end < held.size() && next_of[held[end].destination] == to) ++end;
      const std::span<const Held> run(held.data() + begin, end - begin);
      if (to == me) {
        staying.insert(staying.end(), run.begin(), run.end());
      } else {
        outgoing.push_back({to, {}});
        append_message(run, outgoing.back().words);
        stats_.hop_bytes[static_cast<std::size_t>(hop)] += outgoing.back().words.size() * sizeof(std::uint64_t);
        ++stats_.hop_startups[static_cast<std::size_t>(hop)];
      }
      begin = end;
    }
    stats_.startups += stats_.hop_startups[static_cast<std::size_t>(hop)];
    stats_.sent_bytes += stats_.hop_bytes[static_cast<std::size_t>(hop)];

    held = std::move(staying);
    const std::size_t before = held.size();
    if (plan_.kind() == RouteKind::kDirect) {
      std::vector<std::uint64_t> send;
      std::vector<std::uint64_t> send_counts(static_cast<std::size_t>(ranks), 0);
      std::sort(outgoing.begin(), outgoing.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
      for (const auto& m : outgoing) {
        send.insert(send.end(), m.words.begin(), m.words.end());
        send_counts[static_cast<std::size_t>(m.rank)] = m.words.size();
      }
      std::vector<std::uint64_t> recv_counts;
      const std::vector<std::uint64_t> recv =
          comm.alltoallv(std::span<const std::uint64_t>(send), send_counts, recv_counts);
      std::size_t offset = 0;
      for (const std::uint64_t c : recv_counts) {
        if (c > 0) parse_message({recv.data() + offset, static_cast<std::size_t>(c)}, ranks, held);
        offset += c;
      }
    } else {
      for (const auto& m : comm.sparse_exchange(outgoing)) parse_message(m.words, ranks, held);
    }
    stats_.received_items += held.size() - before;
  }

  for (const Held& h : held) {
    if (h.destination != static_cast<std::uint64_t>(me)) {
      throw Error(ExitCode::kFailure, "routed exchange: an item ended on the wrong rank");
    }
  }
  if (merge) {
    stats_.merged_items += sort_and_merge(held, next_of, true);  // one destination: by key
  }
  std::vector<KeyedItem> out;
  out.reserve(held.size());
  for (const Held& h : held) out.push_back({h.key, h.value});
  return out;
}

}  // namespace zbfs
