#include "zbfs/exchange/exchanger.hpp"

#include <algorithm>
#include <iterator>

namespace zbfs {
namespace {

// Sorted union of two sorted duplicate-free lists.
std::vector<std::uint64_t> merge_union(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
  std::vector<std::uint64_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

std::vector<std::uint64_t> union_allreduce(const Communicator& comm, std::span<const std::uint64_t> mine) {
  const int p = comm.size();
  const int rank = comm.rank();
  std::uint64_t bound = mine.empty() ? 0 : mine.back() + 1;
  bound = comm.allreduce(bound, ReduceOp::kMax);
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;

  std::vector<std::uint64_t> held(mine.begin(), mine.end());
  // Ranks past the largest power of two hand their list to a partner and hold nothing.
  if (rank >= p2) {
    comm.sendrecv(std::span<const std::uint64_t>(held), rank - p2);
    held.clear();
  } else if (rank + p2 < p) {
    const std::vector<std::uint64_t> extra = comm.sendrecv(std::span<const std::uint64_t>{}, rank + p2);
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
      const std::vector<std::uint64_t> received = comm.sendrecv(given, rank ^ mask);
      held = merge_union(kept, received);
      (keep_lower ? hi : lo) = mid;
    }
  }
  // Rank order is range order: the first halving bit is the highest rank bit.
  std::vector<std::uint64_t> counts;
  return comm.allgatherv(std::span<const std::uint64_t>(held), counts);
}

IncomingIds DirectExchanger::all_to_all(const Communicator& comm, const OutgoingIds& outgoing) {
  std::vector<std::uint64_t> counts;
  IncomingIds in;
  in.ids = comm.alltoallv(std::span<const std::uint64_t>(outgoing.ids), std::span<const std::uint64_t>(outgoing.counts),
                          counts);
  in.offsets.assign(counts.size() + 1, 0);
  for (std::size_t s = 0; s < counts.size(); ++s) in.offsets[s + 1] = in.offsets[s] + counts[s];
  return in;
}

std::vector<std::uint64_t> DirectExchanger::gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) {
  if (column_gather_ == ColumnGather::kUnion) return union_allreduce(comm, mine);
  std::vector<std::uint64_t> counts;
  std::vector<std::uint64_t> all = comm.allgatherv(mine, counts);
  // Frontier pieces are disjoint and in rank order, so this is already the union; other
  // callers get it made so.
  if (!std::is_sorted(all.begin(), all.end())) std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

void DirectExchanger::gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                                    std::span<std::uint64_t> all) {
  comm.allgather(mine, all);
}

}  // namespace zbfs
