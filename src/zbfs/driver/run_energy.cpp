#include "zbfs/driver/run_energy.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "zbfs/metrics/energy_counter.hpp"

namespace zbfs {

EnergyMeter open_energy_meter(const std::string& powercap_root, bool read_host, const std::string& device_pci_bus_id,
                              std::string& why) {
  std::vector<std::unique_ptr<EnergyCounter>> counters;
  if (read_host) counters = find_rapl_counters(powercap_root, why);
  if (!device_pci_bus_id.empty()) {
    std::string device_why;
    if (auto board = open_nvml_counter(device_pci_bus_id, device_why)) {
      counters.push_back(std::move(board));
    } else if (why.empty()) {
      why = std::move(device_why);
    }
  }
  return EnergyMeter(std::move(counters));
}

}  // namespace zbfs
