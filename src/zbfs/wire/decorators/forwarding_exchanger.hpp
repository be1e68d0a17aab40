// ForwardingExchanger: an Exchanger that hands every operation to another one, target(),
// for the wrappers that change one thing and pass the rest on (OverlappedExchanger
// pipelines update folds; SwitchingExchanger picks one of two paths). A wrapper overrides
// what it changes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

class ForwardingExchanger : public Exchanger {
 public:
  [[nodiscard]] ExchangeTraits traits() const override { return target().traits(); }
  [[nodiscard]] TransportStats transport_stats() const override { return target().transport_stats(); }
  IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) override {
    return target().all_to_all(comm, outgoing, kind);
  }
  std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) override {
    return target().gather_ids(comm, mine);
  }
  void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<std::uint64_t> all,
                     std::span<const std::uint64_t> mask = {}) override {
    target().gather_bitmap(comm, mine, all, mask);
  }
  void shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                    std::span<std::uint64_t> received) override {
    target().shift_bitmap(comm, mine, received);
  }
  std::vector<KeyedItem> update(const Communicator& comm, std::span<const KeyedItem> items,
                                std::span<const std::uint64_t> counts) override {
    return target().update(comm, items, counts);
  }
  std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                        std::span<const std::uint64_t> counts, std::size_t width,
                                        const ReadBatchAnswer& answer) override {
    return target().read_batch(comm, keys, counts, width, answer);
  }
  std::unique_ptr<UpdateStream> open_updates(const Communicator& comm, std::uint64_t key_bound,
                                             std::uint64_t value_bound) override {
    return target().open_updates(comm, key_bound, value_bound);
  }

 protected:
  // The exchanger the operations go to now.
  [[nodiscard]] virtual Exchanger& target() const = 0;
};

}  // namespace zbfs
