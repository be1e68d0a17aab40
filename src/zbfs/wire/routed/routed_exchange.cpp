#include "zbfs/wire/routed/routed_exchange.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/metrics/communicator_metrics.hpp"
#include "zbfs/wire/routed/hop_message.hpp"

namespace zbfs {
namespace {

using Held = HopItem;

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

// Where this rank sends an item for each destination at `hop`.
std::vector<int> next_ranks(const RoutePlan& plan, int hop, int me) {
  std::vector<int> next_of(static_cast<std::size_t>(plan.ranks()));
  for (int d = 0; d < plan.ranks(); ++d) next_of[static_cast<std::size_t>(d)] = plan.next(hop, me, d);
  return next_of;
}

// Splits `held` (sorted by next rank) into one message per other next rank, counted in
// the start-ups of `hop`, and returns what stays here.
std::vector<Held> split_for_hop(std::span<const Held> held, const std::vector<int>& next_of, int me, std::size_t hop,
                                RouteStats& stats, std::vector<Communicator::SparseMessage>& outgoing) {
  std::vector<Held> staying;
  for (std::size_t begin = 0; begin < held.size();) {
    const int to = next_of[held[begin].destination];
    std::size_t end = begin;
    while (end < held.size() && next_of[held[end].destination] == to) ++end;
    const std::span<const Held> run = held.subspan(begin, end - begin);
    if (to == me) {
      staying.insert(staying.end(), run.begin(), run.end());
    } else {
      outgoing.push_back({to, {}});
      append_hop_message(run, outgoing.back().words);
      ++stats.hop_startups[hop];
    }
    begin = end;
  }
  return staying;
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

  std::vector<int> next_of;
  for (int hop = 0; hop < plan_.hops(); ++hop) {
    next_of = next_ranks(plan_, hop, me);
    stats_.merged_items += sort_and_merge(held, next_of, merge);
    std::vector<Communicator::SparseMessage> outgoing;
    held = split_for_hop(held, next_of, me, static_cast<std::size_t>(hop), stats_, outgoing);
    const std::size_t before = held.size();
    for (const auto& m : transport(comm, outgoing, HopLayout{}, static_cast<std::size_t>(hop))) {
      parse_hop_message(m.words, ranks, held);
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
  book(comm);
  return out;
}

void RoutedExchange::book(const Communicator& comm) {
  for (std::size_t h = 0; h < stats_.hop_bytes.size(); ++h) {
    stats_.startups += stats_.hop_startups[h];
    stats_.sent_bytes += stats_.hop_bytes[h];
  }
  if (PhaseMetrics* metrics = phase_metrics_of(comm); metrics != nullptr && comm.size() > 1) {
    metrics->add_route(stats_.merged_items, stats_.hop_bytes);
  }
}

std::vector<Communicator::SparseMessage> RoutedExchange::transport(const Communicator& comm,
                                                                   std::vector<Communicator::SparseMessage>& outgoing,
                                                                   HopLayout layout, std::size_t stats_hop) {
  PhaseMetrics* metrics = comm.size() > 1 ? phase_metrics_of(comm) : nullptr;
  const bool encoding = codec_ != nullptr && !codec_->passthrough();
  std::uint64_t raw_bytes = 0;
  std::uint64_t wire_bytes = 0;
  double encode_s = 0;
  if (encoding) {
    const Stopwatch clock;
    for (auto& m : outgoing) {
      raw_bytes += m.words.size() * sizeof(std::uint64_t);
      HopEncoding encoded = encode_hop_message(m.words, layout, *codec_, link_cost_to(comm, m.rank));
      if (metrics != nullptr) {
        for (const CodecId codec : encoded.frames) metrics->add_frame(codec);
      }
      m.words = std::move(encoded.words);
      wire_bytes += m.words.size() * sizeof(std::uint64_t);
    }
    encode_s = clock.elapsed_s();
  }
  for (const auto& m : outgoing) stats_.hop_bytes[stats_hop] += m.words.size() * sizeof(std::uint64_t);
  std::vector<Communicator::SparseMessage> incoming = deliver(comm, outgoing, stats_hop);
  if (encoding) {
    const Stopwatch clock;
    for (auto& m : incoming) m.words = decode_hop_message(m.words, layout, max_items_);
    if (metrics != nullptr) metrics->add_codec_work(raw_bytes, wire_bytes, encode_s, clock.elapsed_s());
  }
  return incoming;
}

std::vector<Communicator::SparseMessage> RoutedExchange::deliver(const Communicator& comm,
                                                                 std::vector<Communicator::SparseMessage>& outgoing,
                                                                 std::size_t stats_hop) {
  if (plan_.kind() == RouteKind::kSparse) return comm.sparse_exchange(outgoing);
  if (plan_.kind() != RouteKind::kDirect) {
    // A hop's peers are known: the forward hops' from the plan, a read's replies retrace
    // them (sent to whom the requests came from).
    if (peers_rank_ != comm.rank()) {
      peers_ = plan_.hop_peers(comm.rank());
      peers_rank_ = comm.rank();
    }
    const auto hops = static_cast<std::size_t>(plan_.hops());
    if (stats_hop < hops) {
      const RoutePlan::HopPeers& peers = peers_[stats_hop];
      return comm.peer_exchange(outgoing, peers.to, peers.from);
    }
    const RoutePlan::HopPeers& peers = peers_[2 * hops - 1 - stats_hop];
    return comm.peer_exchange(outgoing, peers.from, peers.to);
  }
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::uint64_t> send;
  std::vector<std::uint64_t> send_counts(ranks, 0);
  std::sort(outgoing.begin(), outgoing.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (const auto& m : outgoing) {
    send.insert(send.end(), m.words.begin(), m.words.end());
    send_counts[static_cast<std::size_t>(m.rank)] = m.words.size();
  }
  std::vector<std::uint64_t> recv_counts;
  const std::vector<std::uint64_t> recv =
      comm.alltoallv(std::span<const std::uint64_t>(send), send_counts, recv_counts);
  std::vector<Communicator::SparseMessage> incoming;
  std::size_t offset = 0;
  for (std::size_t s = 0; s < ranks; ++s) {
    const auto c = static_cast<std::size_t>(recv_counts[s]);
    if (c > 0) incoming.push_back({static_cast<int>(s), {recv.begin() + offset, recv.begin() + offset + c}});
    offset += c;
  }
  return incoming;
}

std::vector<std::uint64_t> RoutedExchange::route_requests(const Communicator& comm, std::span<const std::uint64_t> keys,
                                                          std::span<const std::uint64_t> counts) {
  const int ranks = comm.size();
  const auto me = static_cast<std::uint64_t>(comm.rank());
  if (plan_.ranks() != ranks || counts.size() != static_cast<std::size_t>(ranks)) {
    throw Error(ExitCode::kFailure, "routed read: plan or counts for another rank count");
  }
  stats_ = RouteStats{};
  const auto hops = static_cast<std::size_t>(plan_.hops());
  stats_.hop_bytes.assign(2 * hops, 0);  // forward hops, then the replies' hops
  stats_.hop_startups.assign(2 * hops, 0);
  own_keys_.assign(keys.begin(), keys.end());
  own_owners_.clear();
  ledger_.assign(hops + 1, {});
  for (std::size_t d = 0, at = 0; d < counts.size(); ++d) {
    if (counts[d] > keys.size() - at) throw Error(ExitCode::kFailure, "routed read: counts exceed the keys");
    for (std::uint64_t i = 0; i < counts[d]; ++i, ++at) {
      own_owners_.push_back(d);
      ledger_[0].push_back({me, d, keys[at]});
    }
  }
  if (own_owners_.size() != keys.size()) throw Error(ExitCode::kFailure, "routed read: counts do not cover the keys");

  for (std::size_t hop = 0; hop < hops; ++hop) {
    const std::vector<int> next_of = next_ranks(plan_, static_cast<int>(hop), comm.rank());
    // Merging: one request per (owner, key), whoever asked; the ledger keeps who did.
    std::vector<Held> held;
    held.reserve(ledger_[hop].size());
    for (const Asked& a : ledger_[hop]) held.push_back({a.owner, a.key, 0});
    stats_.merged_items += sort_and_merge(held, next_of, merge_ == Merge::kOnePerKey);
    std::vector<Communicator::SparseMessage> outgoing;
    for (const Held& h : split_for_hop(held, next_of, comm.rank(), hop, stats_, outgoing)) {
      ledger_[hop + 1].push_back({me, h.destination, h.key});
    }
    for (const auto& m : transport(comm, outgoing, HopLayout{}, hop)) {
      std::vector<Held> arrived;
      parse_hop_message(m.words, ranks, arrived);
      stats_.received_items += arrived.size();
      for (const Held& h : arrived)
        ledger_[hop + 1].push_back({static_cast<std::uint64_t>(m.rank), h.destination, h.key});
    }
  }
  asked_here_.clear();
  for (const Asked& a : ledger_[hops]) {
    if (a.owner != me) throw Error(ExitCode::kFailure, "routed read: a request ended on the wrong rank");
    asked_here_.push_back(a.key);
  }
  std::sort(asked_here_.begin(), asked_here_.end());
  asked_here_.erase(std::unique(asked_here_.begin(), asked_here_.end()), asked_here_.end());
  return asked_here_;
}

std::vector<std::uint64_t> RoutedExchange::route_replies(const Communicator& comm,
                                                         std::span<const std::uint64_t> values, std::size_t width) {
  const int ranks = comm.size();
  const auto me = static_cast<std::uint64_t>(comm.rank());
  const auto hops = static_cast<std::size_t>(plan_.hops());
  if (width == 0 || asked_here_.size() * width != values.size()) {
    throw Error(ExitCode::kFailure, "routed read: `width` values per key expected");
  }
  // Answers known here: (owner, key) sorted, with their values at width * index of
  // `store`; first this rank's own elements.
  struct Answer {
    std::uint64_t owner;
    std::uint64_t key;
  };
  std::vector<Answer> answers;
  std::vector<std::uint64_t> store(values.begin(), values.end());
  for (const std::uint64_t key : asked_here_) answers.push_back({me, key});
  const auto find = [](const std::vector<Answer>& table, std::uint64_t owner, std::uint64_t key) {
    const auto it = std::lower_bound(table.begin(), table.end(), std::pair(owner, key),
                                     [](const Answer& a, const auto& k) { return std::pair(a.owner, a.key) < k; });
    if (it == table.end() || it->owner != owner || it->key != key) {
      throw Error(ExitCode::kFailure, "routed read: a reply is missing");
    }
    return static_cast<std::size_t>(it - table.begin());
  };
  const std::size_t stride = 2 + width;  // a reply: owner, key, its values
  for (std::size_t hop = hops; hop-- > 0;) {
    // Every request held after this hop is answered to whoever handed it over. Replies
    // for this rank itself are gathered as words too, then sorted into the next table.
    std::vector<std::uint64_t> kept;
    std::vector<std::vector<std::uint64_t>> to_rank(static_cast<std::size_t>(ranks));
    for (const Asked& a : ledger_[hop + 1]) {
      const std::size_t at = find(answers, a.owner, a.key) * width;
      auto& words = a.origin == me ? kept : to_rank[static_cast<std::size_t>(a.origin)];
      words.push_back(a.owner);
      words.push_back(a.key);
      words.insert(words.end(), store.begin() + static_cast<std::ptrdiff_t>(at),
                   store.begin() + static_cast<std::ptrdiff_t>(at + width));
    }
    std::vector<Communicator::SparseMessage> outgoing;
    for (int r = 0; r < ranks; ++r) {
      auto& words = to_rank[static_cast<std::size_t>(r)];
      if (words.empty()) continue;
      ++stats_.hop_startups[2 * hops - 1 - hop];
      outgoing.push_back({r, std::move(words)});
    }
    std::vector<Communicator::SparseMessage> arrived =
        transport(comm, outgoing, HopLayout{HopLayout::kReplies, stride}, 2 * hops - 1 - hop);
    arrived.push_back({comm.rank(), std::move(kept)});
    // Sort the replies by (owner, key) through an index, then copy their values in order.
    std::vector<std::pair<Answer, const std::uint64_t*>> next;
    for (const auto& m : arrived) {
      if (m.words.size() % stride != 0) throw Error(ExitCode::kFailure, "routed read: malformed reply message");
      for (std::size_t i = 0; i < m.words.size(); i += stride)
        next.push_back({{m.words[i], m.words[i + 1]}, m.words.data() + i + 2});
    }
    std::sort(next.begin(), next.end(), [](const auto& a, const auto& b) {
      return std::pair(a.first.owner, a.first.key) < std::pair(b.first.owner, b.first.key);
    });
    answers.clear();
    std::vector<std::uint64_t> next_store;
    next_store.reserve(next.size() * width);
    for (const auto& [answer, words] : next) {
      answers.push_back(answer);
      next_store.insert(next_store.end(), words, words + width);
    }
    store = std::move(next_store);
  }
  book(comm);
  std::vector<std::uint64_t> out(own_keys_.size() * width);
  for (std::size_t i = 0; i < own_keys_.size(); ++i) {
    const std::size_t at = find(answers, own_owners_[i], own_keys_[i]) * width;
    std::copy_n(store.begin() + static_cast<std::ptrdiff_t>(at), width,
                out.begin() + static_cast<std::ptrdiff_t>(i * width));
  }
  return out;
}

}  // namespace zbfs
