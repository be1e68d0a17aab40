// Cumulative energy counters a run reads between its phases (the Green Graph500 figure,
// TEPS per watt): the host's RAPL domains through Linux's powercap files, and a GPU
// board's counter through NVML. A counter counts microjoules since some point of its own
// and may wrap; only differences between two readings mean anything.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zbfs {

// What a counter measures: the host's packages and memory, or an accelerator's board.
enum class EnergyScope { kHost, kDevice };

class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  // "package-0", "package-0/dram", "GPU 00000000:19:00.0".
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual EnergyScope scope() const = 0;
  // The count now in microjoules; nullopt with the reason in `why` when it cannot be read.
  virtual std::optional<std::uint64_t> read_microjoules(std::string& why) = 0;
  // The count after which it starts again at 0 (RAPL's max_energy_range_uj); 0: it does
  // not wrap within a run.
  [[nodiscard]] virtual std::uint64_t range_microjoules() const = 0;
};

// The microjoules a counter that wraps past `range` (0: never) advanced from `before` to
// `after`: at most one wrap between two readings (a RAPL package counter wraps after
// hours at full power; a run reads it at every phase).
[[nodiscard]] std::uint64_t counter_advance(std::uint64_t before, std::uint64_t after, std::uint64_t range);

// RAPL's package domains and their DRAM subdomains under a powercap tree (Linux:
// /sys/class/powercap, the `root` argument so that tests can point at a fixture):
// directories `intel-rapl:N` whose `name` starts with "package" (AMD's RAPL shows under
// the same control type), and their `intel-rapl:N:M` children named "dram". Core and
// uncore domains count inside their package's figure and are skipped, as are the
// intel-rapl-mmio copies of a package. Each counter is read once here: empty, with the
// reason in `why`, when there are none or one cannot be read (kernels since 5.10 let
// only root read energy_uj).
std::vector<std::unique_ptr<EnergyCounter>> find_rapl_counters(const std::string& root, std::string& why);

// The board energy of the GPU at PCI bus id `pci_bus_id` ("0000:19:00.0", as the CUDA
// runtime gives it) through NVML, loaded at run time (libnvidia-ml.so.1, the driver's: a
// build needs no NVML). nullptr, with the reason in `why`, without the library, the
// device, or its counter (boards before Volta have none).
std::unique_ptr<EnergyCounter> open_nvml_counter(const std::string& pci_bus_id, std::string& why);

}  // namespace zbfs
