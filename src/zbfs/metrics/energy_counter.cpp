#include "zbfs/metrics/energy_counter.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>
#include <utility>

namespace zbfs {
namespace {

namespace fs = std::filesystem;

// A powercap file's first line as an unsigned integer ("123456\n").
std::optional<std::uint64_t> read_number(const fs::path& file, std::string& why) {
  errno = 0;
  std::ifstream in(file);
  if (!in) {
    const int error = errno;
    why = "cannot read " + file.string() + ": " + (error != 0 ? std::strerror(error) : "cannot open it");
    if (error == EACCES) why += " (Linux 5.10 and later let only root read RAPL's counters)";
    return std::nullopt;
  }
  std::string text;
  std::getline(in, text);
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || at == text.data() || (at != end && *at != ' ' && *at != '\r')) {
    why = file.string() + " holds no count: \"" + text.substr(0, 40) + "\"";
    return std::nullopt;
  }
  return value;
}

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  return text;
}

// "intel-rapl:3" -> true; "intel-rapl", "intel-rapl:3:0", "intel-rapl-mmio:0" -> false.
bool is_zone_name(std::string_view name, int colons) {
  constexpr std::string_view kPrefix = "intel-rapl:";
  if (!name.starts_with(kPrefix)) return false;
  return std::count(name.begin(), name.end(), ':') == colons;
}

class RaplCounter final : public EnergyCounter {
 public:
  RaplCounter(fs::path zone, std::string name, std::uint64_t range)
      : file_(std::move(zone) / "energy_uj"), name_(std::move(name)), range_(range) {}
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] EnergyScope scope() const override { return EnergyScope::kHost; }
  std::optional<std::uint64_t> read_microjoules(std::string& why) override { return read_number(file_, why); }
  [[nodiscard]] std::uint64_t range_microjoules() const override { return range_; }

 private:
  fs::path file_;
  std::string name_;
  std::uint64_t range_;
};

// A zone as a counter, once its count and range were read.
std::unique_ptr<EnergyCounter> open_zone(const fs::path& zone, std::string name, std::string& why) {
  std::string ignored;
  const std::uint64_t range = read_number(zone / "max_energy_range_uj", ignored).value_or(0);
  auto counter = std::make_unique<RaplCounter>(zone, std::move(name), range);
  if (!counter->read_microjoules(why)) return nullptr;
  return counter;
}

// Zones named intel-rapl:... with `colons` colons directly under `dir`, in name order.
std::vector<fs::path> zones_under(const fs::path& dir, int colons) {
  std::vector<fs::path> zones;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (is_zone_name(it->path().filename().string(), colons) && fs::is_directory(it->path(), error)) {
      zones.push_back(it->path());
    }
  }
  std::sort(zones.begin(), zones.end());
  return zones;
}

// NVML, opened at run time. The library stays loaded and initialised while a counter
// holds it.
class NvmlLibrary {
 public:
  using Device = void*;  // nvmlDevice_t, an opaque pointer
  using Status = int;    // nvmlReturn_t; 0 is NVML_SUCCESS

  static std::shared_ptr<NvmlLibrary> open(std::string& why) {
    void* handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      why = "NVML (libnvidia-ml.so.1) is not installed: no NVIDIA driver";
      return nullptr;
    }
    std::shared_ptr<NvmlLibrary> library(new NvmlLibrary(handle));
    if (!library->resolve(why)) return nullptr;
    if (const Status status = library->init_(); status != 0) {
      why = "nvmlInit failed: " + library->describe(status);
      return nullptr;
    }
    library->initialised_ = true;
    return library;
  }

  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary() {
    if (initialised_) shutdown_();
    ::dlclose(handle_);
  }

  std::string describe(Status status) const {
    const char* text = error_string_ != nullptr ? error_string_(status) : nullptr;
    return text != nullptr ? text : "NVML error " + std::to_string(status);
  }
  Status device_by_pci_bus_id(const std::string& id, Device* device) const { return by_pci_(id.c_str(), device); }
  Status total_energy_mj(Device device, unsigned long long* millijoules) const {  // NOLINT(google-runtime-int)
    return total_energy_(device, millijoules);
  }

 private:
  explicit NvmlLibrary(void* handle) : handle_(handle) {}

  template <class F>
  bool find(const char* symbol, F& function, std::string& why) {
    function = reinterpret_cast<F>(::dlsym(handle_, symbol));
    if (function == nullptr) why = std::string("NVML lacks ") + symbol;
    return function != nullptr;
  }
  bool resolve(std::string& why) {
    find("nvmlErrorString", error_string_, why);
    return find("nvmlInit_v2", init_, why) && find("nvmlShutdown", shutdown_, why) &&
           find("nvmlDeviceGetHandleByPciBusId_v2", by_pci_, why) &&
           find("nvmlDeviceGetTotalEnergyConsumption", total_energy_, why);
  }

  void* handle_;
  bool initialised_ = false;
  Status (*init_)() = nullptr;
  Status (*shutdown_)() = nullptr;
  const char* (*error_string_)(Status) = nullptr;
  Status (*by_pci_)(const char*, Device*) = nullptr;
  Status (*total_energy_)(Device, unsigned long long*) = nullptr;  // NOLINT(google-runtime-int)
};

class NvmlCounter final : public EnergyCounter {
 public:
  NvmlCounter(std::shared_ptr<NvmlLibrary> library, NvmlLibrary::Device device, std::string pci_bus_id)
      : library_(std::move(library)), device_(device), name_("GPU " + std::move(pci_bus_id)) {}
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] EnergyScope scope() const override { return EnergyScope::kDevice; }
  std::optional<std::uint64_t> read_microjoules(std::string& why) override {
    unsigned long long millijoules = 0;  // NOLINT(google-runtime-int)
    if (const NvmlLibrary::Status status = library_->total_energy_mj(device_, &millijoules); status != 0) {
      why = name_ + ": nvmlDeviceGetTotalEnergyConsumption failed: " + library_->describe(status);
      return std::nullopt;
    }
    return static_cast<std::uint64_t>(millijoules) * 1000;
  }
  // NVML counts millijoules since the driver loaded in 64 bits.
  [[nodiscard]] std::uint64_t range_microjoules() const override { return 0; }

 private:
  std::shared_ptr<NvmlLibrary> library_;
  NvmlLibrary::Device device_;
  std::string name_;
};

}  // namespace

std::uint64_t counter_advance(std::uint64_t before, std::uint64_t after, std::uint64_t range) {
  if (after >= before) return after - before;
  // Wrapped: from `before` up to the range, then from 0 to `after`. A counter that went
  // back without a range (a reset) gives what it counted since.
  return range > before ? range - before + after : after;
}

std::vector<std::unique_ptr<EnergyCounter>> find_rapl_counters(const std::string& root, std::string& why) {
  std::vector<std::unique_ptr<EnergyCounter>> counters;
  std::error_code error;
  if (!fs::is_directory(root, error)) {
    why = "no powercap tree at " + root + " (the kernel exposes no RAPL counters here)";
    return {};
  }
  for (const fs::path& zone : zones_under(root, 1)) {
    const std::string name = read_line(zone / "name");
    if (!name.starts_with("package")) continue;
    auto package = open_zone(zone, name, why);
    if (!package) return {};
    counters.push_back(std::move(package));
    for (const fs::path& sub : zones_under(zone, 2)) {
      if (read_line(sub / "name") != "dram") continue;
      auto dram = open_zone(sub, name + "/dram", why);
      if (!dram) return {};
      counters.push_back(std::move(dram));
    }
  }
  if (counters.empty()) why = "no RAPL package domain under " + root;
  return counters;
}

std::unique_ptr<EnergyCounter> open_nvml_counter(const std::string& pci_bus_id, std::string& why) {
  std::shared_ptr<NvmlLibrary> library = NvmlLibrary::open(why);
  if (!library) return nullptr;
  NvmlLibrary::Device device = nullptr;
  if (const NvmlLibrary::Status status = library->device_by_pci_bus_id(pci_bus_id, &device); status != 0) {
    why = "NVML finds no GPU at " + pci_bus_id + ": " + library->describe(status);
    return nullptr;
  }
  auto counter = std::make_unique<NvmlCounter>(std::move(library), device, pci_bus_id);
  if (!counter->read_microjoules(why)) return nullptr;
  return counter;
}

}  // namespace zbfs
