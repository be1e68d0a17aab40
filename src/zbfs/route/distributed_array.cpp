#include "zbfs/route/distributed_array.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"

namespace zbfs {
namespace {

// Sorts (index, payload) pairs by owner (stable: the callers' order within an owner) and
// returns the counts per owner.
template <class T, class IndexOf>
std::vector<std::uint64_t> group_by_owner(std::vector<T>& items, int ranks, std::uint64_t block, IndexOf index_of) {
  std::stable_sort(items.begin(), items.end(),
                   [&](const T& a, const T& b) { return index_of(a) / block < index_of(b) / block; });
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(ranks), 0);
  for (const T& item : items) ++counts[static_cast<std::size_t>(index_of(item) / block)];
  return counts;
}

}  // namespace

DistributedArray::DistributedArray(const Communicator& comm, std::uint64_t size, const RoutePlan& plan, Merge merge,
                                   std::uint64_t initial)
    : size_(size),
      block_(std::max<std::uint64_t>(
          1, (size + static_cast<std::uint64_t>(comm.size()) - 1) / static_cast<std::uint64_t>(comm.size()))),
      first_(std::min(size, block_ * static_cast<std::uint64_t>(comm.rank()))),
      writes_(plan, merge),
      reads_(plan, merge) {
  const std::uint64_t mine = std::min(size_, first_ + block_) - first_;
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (available && mine > *available / sizeof(std::uint64_t)) {
    throw Error(ExitCode::kUsage,
                "distributed array of " + std::to_string(size) + " elements: this rank's block needs " +
                    format_bytes(mine * sizeof(std::uint64_t)) + ", " + format_bytes(*available) + " available");
  }
  local_.assign(static_cast<std::size_t>(mine), initial);
}

void DistributedArray::check_index(std::uint64_t index) const {
  if (index >= size_) {
    throw Error(ExitCode::kFailure,
                "distributed array: index " + std::to_string(index) + " past the end (" + std::to_string(size_) + ")");
  }
}

std::size_t DistributedArray::read(std::uint64_t index) {
  check_index(index);
  queued_reads_.push_back(index);
  return queued_reads_.size() - 1;
}

void DistributedArray::write(std::uint64_t index, std::uint64_t value) {
  check_index(index);
  queued_writes_.push_back({index, value});
}

void DistributedArray::execute(const Communicator& comm) {
  const int ranks = comm.size();
  // Writes: routed to the owners (merged on the way: the smallest value per element),
  // applied with the same rule.
  const std::vector<std::uint64_t> write_counts =
      group_by_owner(queued_writes_, ranks, block_, [](const KeyedItem& w) { return w.key; });
  for (const KeyedItem& w : writes_.exchange(comm, queued_writes_, write_counts)) {
    std::uint64_t& element = local_[static_cast<std::size_t>(w.key - first_)];
    element = std::min(element, w.value);
  }
  queued_writes_.clear();

  // Reads: grouped by owner, answered, and put back in the order they were queued.
  std::vector<std::pair<std::uint64_t, std::size_t>> order;  // (index, ticket)
  order.reserve(queued_reads_.size());
  for (std::size_t t = 0; t < queued_reads_.size(); ++t) order.emplace_back(queued_reads_[t], t);
  const std::vector<std::uint64_t> read_counts =
      group_by_owner(order, ranks, block_, [](const auto& r) { return r.first; });
  std::vector<std::uint64_t> keys;
  keys.reserve(order.size());
  for (const auto& r : order) keys.push_back(r.first);
  const std::vector<std::uint64_t> values = reads_.read(comm, keys, read_counts, [&](std::uint64_t index) {
    if (index < first_ || index - first_ >= local_.size()) {
      throw Error(ExitCode::kFailure, "distributed array: a read reached the wrong owner");
    }
    return local_[static_cast<std::size_t>(index - first_)];
  });
  results_.assign(order.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) results_[order[i].second] = values[i];
  queued_reads_.clear();
}

}  // namespace zbfs
