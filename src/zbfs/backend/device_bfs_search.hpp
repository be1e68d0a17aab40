// DeviceBfsSearch<Device>: a device's BFS (DeviceSearch on one process,
// DeviceDistributedBfs over MPI) behind BfsSearch, whose parents come to host memory,
// untimed, for the counts, the result files and the validator, as a GPU Graph500 code
// hands its tree over.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "zbfs/backend/search.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {

template <class Device>
class DeviceBfsSearch : public BfsSearch {
 public:
  // `vertices`: the parents' entries; `args`: Device's constructor's.
  template <class... Args>
  explicit DeviceBfsSearch(std::uint64_t vertices, Args&&... args)
      : device_(std::forward<Args>(args)...), parent_(vertices) {
    set_up();
  }

  BfsStats run(std::uint64_t root, const BfsOptions& options) override { return device_.run(root, options); }
  std::span<const std::int64_t> parents() override {
    device_.copy_parents(parent_.span());
    return parent_.span();
  }
  void clear() override {}
  [[nodiscard]] HostDeviceTraffic traffic() const override { return device_.traffic(); }
  // The name and the copies, in kernel 1 and over the searches.
  [[nodiscard]] std::optional<DeviceRecord> device_record() const override {
    const HostDeviceTraffic total = device_.traffic();
    DeviceRecord record;
    record.name = device_.device_name();
    record.construction = construction_;
    record.searches = {total.to_device - construction_.to_device, total.to_host - construction_.to_host};
    return record;
  }

 protected:
  // Where kernel 1's copies end: a device that warms up first says so again after it.
  void set_up() { construction_ = device_.traffic(); }

  Device device_;

 private:
  LargeArray<std::int64_t> parent_;
  HostDeviceTraffic construction_;
};

}  // namespace zbfs
