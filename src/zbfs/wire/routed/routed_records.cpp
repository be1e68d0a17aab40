#include "zbfs/wire/routed/routed_records.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// A run of records one rank started for one destination, as a rank holds it: `words`
// words from `begin` of the holder's buffer.
struct RecordGroup {
  std::uint64_t origin;
  std::uint64_t destination;
  std::size_t begin;
  std::size_t words;
};

// What a rank holds between hops: the groups and their words.
struct HeldRecords {
  std::vector<RecordGroup> groups;
  std::vector<std::uint64_t> words;

  void append(std::uint64_t origin, std::uint64_t destination, std::span<const std::uint64_t> run) {
    groups.push_back({origin, destination, words.size(), run.size()});
    words.insert(words.end(), run.begin(), run.end());
  }
};

Error malformed() { return Error(ExitCode::kFailure, "routed records: malformed hop message"); }

// One message for `groups` (of `held`): G, G (origin, destination, words) triples, the
// groups' words.
std::vector<std::uint64_t> hop_message(const HeldRecords& held, std::span<const RecordGroup* const> groups) {
  std::size_t total = 1 + 3 * groups.size();
  for (const RecordGroup* g : groups) total += g->words;
  std::vector<std::uint64_t> message;
  message.reserve(total);
  message.push_back(groups.size());
  for (const RecordGroup* g : groups) {
    message.push_back(g->origin);
    message.push_back(g->destination);
    message.push_back(g->words);
  }
  for (const RecordGroup* g : groups) {
    const auto begin = held.words.begin() + static_cast<std::ptrdiff_t>(g->begin);
    message.insert(message.end(), begin, begin + static_cast<std::ptrdiff_t>(g->words));
  }
  return message;
}

// Appends the groups of one arrived message to `held`; refuses a malformed one.
void read_hop_message(std::span<const std::uint64_t> message, int ranks, std::size_t width, HeldRecords& held) {
  if (message.empty()) throw malformed();
  const std::uint64_t count = message[0];
  if (count > (message.size() - 1) / 3) throw malformed();
  std::size_t at = 1 + 3 * count;
  for (std::uint64_t g = 0; g < count; ++g) {
    const std::uint64_t origin = message[1 + 3 * g];
    const std::uint64_t destination = message[2 + 3 * g];
    const std::uint64_t words = message[3 + 3 * g];
    const auto p = static_cast<std::uint64_t>(ranks);
    if (origin >= p || destination >= p || words % width != 0 || words > message.size() - at) throw malformed();
    held.append(origin, destination, message.subspan(at, words));
    at += words;
  }
  if (at != message.size()) throw malformed();
}

// Sends every group whose next rank at `hop` is another rank, keeps the others, and adds
// what arrives.
HeldRecords route_one_hop(const Communicator& comm, const RoutePlan& plan, int hop, const RoutePlan::HopPeers& peers,
                          std::size_t width, HeldRecords held) {
  const int me = comm.rank();
  std::vector<std::pair<int, const RecordGroup*>> by_next;
  by_next.reserve(held.groups.size());
  for (const RecordGroup& g : held.groups)
    by_next.emplace_back(plan.next(hop, me, static_cast<int>(g.destination)), &g);
  std::stable_sort(by_next.begin(), by_next.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  HeldRecords next;
  std::size_t staying = 0;
  for (const auto& [to, g] : by_next) staying += to == me ? g->words : 0;
  next.words.reserve(staying);
  std::vector<Communicator::SparseMessage> outgoing;
  std::vector<const RecordGroup*> run;
  for (std::size_t begin = 0; begin < by_next.size();) {
    const int to = by_next[begin].first;
    run.clear();
    std::size_t end = begin;
    for (; end < by_next.size() && by_next[end].first == to; ++end) run.push_back(by_next[end].second);
    if (to == me) {
      for (const RecordGroup* g : run) {
        next.append(g->origin, g->destination, std::span(held.words).subspan(g->begin, g->words));
      }
    } else {
      outgoing.push_back({to, hop_message(held, run)});
    }
    begin = end;
  }
  // Each word is held at most twice at once: what leaves, then what arrived as it is read.
  by_next.clear();
  held = HeldRecords();
  std::vector<Communicator::SparseMessage> incoming = comm.peer_exchange(outgoing, peers.to, peers.from);
  outgoing = {};
  // Room for all of it at once: growing by doubling would hold up to three times a
  // hop's words while a grown buffer is copied.
  std::size_t arriving = 0;
  for (const Communicator::SparseMessage& m : incoming) arriving += m.words.size();
  next.words.reserve(next.words.size() + arriving);
  for (Communicator::SparseMessage& m : incoming) {
    read_hop_message(m.words, comm.size(), width, next);
    m.words = {};
  }
  return next;
}

}  // namespace

std::vector<std::uint64_t> route_records(const Communicator& comm, const RoutePlan& plan,
                                         std::vector<std::uint64_t> records, std::span<const std::uint64_t> counts,
                                         std::size_t width) {
  const int ranks = comm.size();
  const auto me = static_cast<std::uint64_t>(comm.rank());
  if (plan.ranks() != ranks) throw Error(ExitCode::kFailure, "routed records: plan for another rank count");
  if (counts.size() != static_cast<std::size_t>(ranks) || width == 0) {
    throw Error(ExitCode::kFailure, "routed records: one count per rank expected");
  }
  HeldRecords held;
  std::size_t at = 0;
  for (std::size_t d = 0; d < counts.size(); ++d) {
    if (counts[d] > records.size() - at || counts[d] % width != 0) {
      throw Error(ExitCode::kFailure, "routed records: counts that do not cover whole records");
    }
    if (counts[d] > 0) held.groups.push_back({me, d, at, static_cast<std::size_t>(counts[d])});
    at += counts[d];
  }
  if (at != records.size()) throw Error(ExitCode::kFailure, "routed records: counts do not cover the records");
  held.words = std::move(records);

  const std::vector<RoutePlan::HopPeers> peers = plan.hop_peers(comm.rank());
  for (int hop = 0; hop < plan.hops(); ++hop) {
    held = route_one_hop(comm, plan, hop, peers[static_cast<std::size_t>(hop)], width, std::move(held));
  }

  std::stable_sort(held.groups.begin(), held.groups.end(),
                   [](const RecordGroup& a, const RecordGroup& b) { return a.origin < b.origin; });
  std::vector<std::uint64_t> mine;
  std::size_t total = 0;
  for (const RecordGroup& g : held.groups) total += g.words;
  mine.reserve(total);
  for (const RecordGroup& g : held.groups) {
    if (g.destination != me) throw Error(ExitCode::kFailure, "routed records: a record ended on the wrong rank");
    const auto begin = held.words.begin() + static_cast<std::ptrdiff_t>(g.begin);
    mine.insert(mine.end(), begin, begin + static_cast<std::ptrdiff_t>(g.words));
  }
  return mine;
}

}  // namespace zbfs
