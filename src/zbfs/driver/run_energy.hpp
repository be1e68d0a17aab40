// The run's energy counters (metrics/energy_meter.hpp), opened from its configuration:
// which ranks read what, and the Green Graph500 figure taken from them.
#pragma once

#include <string>

#include "zbfs/metrics/energy_meter.hpp"

namespace zbfs {

// This rank's meter: the host's RAPL domains under `powercap_root` when `read_host` (one
// rank a node reads them: they count the whole node), and the board of the GPU at
// `device_pci_bus_id` when it is not empty (one rank a device). What could not be opened
// is said in `why`, the first reason only.
EnergyMeter open_energy_meter(const std::string& powercap_root, bool read_host, const std::string& device_pci_bus_id,
                              std::string& why);

}  // namespace zbfs
