// SwitchingExchanger: two complete exchangers for the same run, the coded one (--codec
// auto: frames, probed gathers, bulk folds) and the plain one (no codec: MPI_Allgather(v)
// gathers, pipelined folds where they apply), and every operation goes to the one in
// use. The run's codec trial (driver/codec_trial.hpp) times the first searches both ways
// and then settles on one; per-message choices cannot make that choice, because what a
// codec costs when ranks share cores is mostly in the paths it takes, not in the frames
// (docs/performance.md, issue 38). Switch only between searches, on every rank alike: a
// kernel reads traits() when a search starts. Once the trial is over, settle() keeps one.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "zbfs/exchange/exchanger.hpp"

namespace zbfs {

enum class ExchangePath { kCoded, kPlain };

std::string_view to_string(ExchangePath path);

class SwitchingExchanger final : public Exchanger {
 public:
  // Starts on the coded path.
  SwitchingExchanger(std::unique_ptr<Exchanger> coded, std::unique_ptr<Exchanger> plain);

  // Every rank alike, between searches. Throws once the other path was let go.
  void use(ExchangePath path);
  // Uses `path` for the rest of the run and lets the other go (its buffers, windows and
  // stream communicators). Collective: every rank settles at the same point.
  void settle(ExchangePath path);
  [[nodiscard]] ExchangePath path() const {
    return current_ == coded_.get() ? ExchangePath::kCoded : ExchangePath::kPlain;
  }

  [[nodiscard]] ExchangeTraits traits() const override { return current_->traits(); }
  [[nodiscard]] TransportStats transport_stats() const override;
  IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) override {
    return current_->all_to_all(comm, outgoing, kind);
  }
  std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) override {
    return current_->gather_ids(comm, mine);
  }
  void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<std::uint64_t> all,
                     std::span<const std::uint64_t> mask = {}) override {
    current_->gather_bitmap(comm, mine, all, mask);
  }
  void shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                    std::span<std::uint64_t> received) override {
    current_->shift_bitmap(comm, mine, received);
  }
  std::vector<KeyedItem> update(const Communicator& comm, std::span<const KeyedItem> items,
                                std::span<const std::uint64_t> counts) override {
    return current_->update(comm, items, counts);
  }
  std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                        std::span<const std::uint64_t> counts, std::size_t width,
                                        const ReadBatchAnswer& answer) override {
    return current_->read_batch(comm, keys, counts, width, answer);
  }
  std::unique_ptr<UpdateStream> open_updates(const Communicator& comm, std::uint64_t key_bound,
                                             std::uint64_t value_bound) override {
    return current_->open_updates(comm, key_bound, value_bound);
  }

 private:
  std::unique_ptr<Exchanger> coded_;
  std::unique_ptr<Exchanger> plain_;
  Exchanger* current_;
};

}  // namespace zbfs
