#include "zbfs/wire/exchanger.hpp"

#include <limits>
#include <numeric>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {

void check_exchange_counts(const Communicator& comm, std::size_t items, std::span<const std::uint64_t> counts) {
  const std::uint64_t total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  if (counts.size() != static_cast<std::size_t>(comm.size()) || total != items) {
    throw Error(ExitCode::kFailure, "exchange: " + std::to_string(counts.size()) + " counts adding up to " +
                                        std::to_string(total) + " for " + std::to_string(items) + " items on " +
                                        std::to_string(comm.size()) + " ranks");
  }
}

void check_update_rest(const Communicator& comm, std::size_t items, std::span<const std::uint64_t> counts) {
  const std::uint64_t total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  if (counts.size() != static_cast<std::size_t>(comm.size()) || total != items ||
      counts[static_cast<std::size_t>(comm.rank())] != 0) {
    throw Error(ExitCode::kFailure, "update stream: " + std::to_string(counts.size()) + " counts adding up to " +
                                        std::to_string(total) + " for " + std::to_string(items) + " items on " +
                                        std::to_string(comm.size()) + " ranks");
  }
}

namespace {

// Exchanger::open_updates's stream: every push is kept, and the finish sends all of it
// in one update().
class BufferedUpdates final : public UpdateStream {
 public:
  BufferedUpdates(Exchanger& exchanger, const Communicator& comm)
      : exchanger_(exchanger), comm_(comm), pushed_(static_cast<std::size_t>(comm.size())) {}
  [[nodiscard]] std::size_t batch_items() const override { return std::numeric_limits<std::size_t>::max(); }
  void push(int destination, std::span<const KeyedItem> items) override {
    if (destination < 0 || destination >= comm_.size()) {
      throw Error(ExitCode::kFailure, "update stream: no member " + std::to_string(destination));
    }
    auto& to = pushed_[static_cast<std::size_t>(destination)];
    to.insert(to.end(), items.begin(), items.end());
  }
  void poll(std::vector<KeyedItem>& /*arrived*/) override {}
  void finish(std::span<const KeyedItem> rest, std::span<const std::uint64_t> counts,
              std::vector<KeyedItem>& arrived) override {
    check_exchange_counts(comm_, rest.size(), counts);
    std::vector<KeyedItem> items;
    std::vector<std::uint64_t> all_counts(counts.size());
    std::size_t first = 0;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      items.insert(items.end(), pushed_[d].begin(), pushed_[d].end());
      items.insert(items.end(), rest.begin() + static_cast<std::ptrdiff_t>(first),
                   rest.begin() + static_cast<std::ptrdiff_t>(first + counts[d]));
      all_counts[d] = pushed_[d].size() + counts[d];
      first += counts[d];
    }
    const std::vector<KeyedItem> mine = exchanger_.update(comm_, items, all_counts);
    arrived.insert(arrived.end(), mine.begin(), mine.end());
  }

 private:
  Exchanger& exchanger_;
  const Communicator& comm_;
  std::vector<std::vector<KeyedItem>> pushed_;
};

}  // namespace

std::unique_ptr<UpdateStream> Exchanger::open_updates(const Communicator& comm, std::uint64_t /*key_bound*/,
                                                      std::uint64_t /*value_bound*/) {
  return std::make_unique<BufferedUpdates>(*this, comm);
}

std::vector<std::uint64_t> Exchanger::read(const Communicator& comm, std::span<const std::uint64_t> keys,
                                           std::span<const std::uint64_t> counts, std::size_t width,
                                           const ReadAnswer& answer) {
  return read_batch(comm, keys, counts, width, [&](std::span<const std::uint64_t> asked, std::span<std::uint64_t> out) {
    const auto count = static_cast<std::int64_t>(asked.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      const auto k = static_cast<std::size_t>(i);
      answer(asked[k], &out[k * width]);
    }
  });
}

}  // namespace zbfs
