// What a device backend's searches report of the device: where they ran and what they
// copied between host and device memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zbfs/backend/cuda/device_kernel1.hpp"
#include "zbfs/backend/cuda/pcie_pricing.hpp"
#include "zbfs/backend/execution_target.hpp"

namespace zbfs {

// Where a device backend ran and what it copied between host and device memory, in kernel
// 1 (the tuples or pairs going up and the lists coming back, the search's set-up, the
// warm-up search) and over the searches (their starts, counts, and the parents that come
// back for counting and validation).
struct DeviceRecord {
  std::string name;  // the GPU's, or "host" for cuda-host
  HostDeviceTraffic construction;
  HostDeviceTraffic searches;
  // A distributed device search: how its id lists crossed PCIe (raw, frames, priced), rank
  // 0's calibration when priced, and the lists that crossed as frames and as they were
  // (all ranks).
  std::string id_transfer = "raw";
  std::string exchange = "staged";  // --device-exchange: how the steps' messages travelled
  cuda_backend::PcieCosts pcie;
  std::uint64_t lists_framed = 0;
  std::uint64_t lists_raw = 0;
  // Opening the device (its context), before any phase's timer: the slowest rank's.
  double open_s = 0;
  // Kernel 1 on the device: where its time went (the slowest rank's, each stage).
  std::optional<cuda_backend::Kernel1Stages> kernel1;
};

}  // namespace zbfs
