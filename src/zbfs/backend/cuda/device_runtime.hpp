// What the CUDA runtime says about this process's device: whether one is visible, its
// name and memory, and selecting one. Plain C++ (implemented in device_runtime.cu), so the
// driver and the checks of configuration call it without CUDA headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zbfs::cuda_backend {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

// The number of visible devices; 0 with the runtime's reason in `why` when there are none
// (no driver, no device, CUDA_VISIBLE_DEVICES empty).
int visible_devices(std::string& why);

// Makes `index` this process's device and describes it (free memory as of now).
DeviceInfo use_device(int index);
// Makes `index` this process's device and creates its context now (the runtime would
// create it at the first call that needs one, hundreds of milliseconds on a large
// device), so that no phase's timer pays for it.
void open_device(int index);

// Device `index`'s PCI bus id ("0000:19:00.0", where NVML finds the same board); "" when
// the runtime cannot say.
std::string pci_bus_id(int index);

}  // namespace zbfs::cuda_backend
