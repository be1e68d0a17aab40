#include "zbfs/network/network_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Intra-node pairs of every network preset talk through shared memory.
constexpr LinkCost kSharedMemory = kSharedMemoryLink;

struct Preset {
  const char* name;
  LinkCost intra;
  LinkCost inter;
};

// Figures and their sources: docs/network-model.md.
constexpr Preset kPresets[] = {
    {"shm", kSharedMemory, kSharedMemory},
    {"1gbe", kSharedMemory, {50.0e-6, 117.5e6}},
    {"10gbe", kSharedMemory, {12.0e-6, 1.175e9}},
    {"ib-qdr", kSharedMemory, {1.3e-6, 3.4e9}},
    {"ib-hdr", kSharedMemory, {1.0e-6, 24.0e9}},
    {"tofu-d", kSharedMemory, {1.0e-6, 6.8e9}},
    {"nvlink", {2.0e-6, 250.0e9}, {2.0e-6, 250.0e9}},
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "12.5us" into 12.5 and "us"; false when no number leads.
bool split_quantity(std::string_view text, double& value, std::string& unit) {
  const std::string t = lower(text);
  const char* begin = t.data();
  const char* end = t.data() + t.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return false;
  unit.assign(ptr, end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  return std::isfinite(value);
}

}  // namespace

double one_sided_op_s(const NetworkModel& network, LinkClass link) {
  // Posting a work request to an RDMA adapter, or a store into a shared window.
  constexpr double kPosted = 0.1e-6;
  if (network.name == "nvlink" || network.name == "ib-qdr" || network.name == "ib-hdr") return kPosted;
  if (link == LinkClass::kIntraNode && network.name != "measure") return kPosted;
  return network.link(link).latency_s;
}

std::optional<NetworkModel> network_preset(std::string_view name) {
  for (const Preset& p : kPresets) {
    if (name == p.name) return NetworkModel{p.name, p.intra, p.inter};
  }
  return std::nullopt;
}

const std::vector<std::string>& network_preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Preset& p : kPresets) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

void validate_network_choice(const NetworkChoice& choice) {
  if (!choice.measure() && !network_preset(choice.name)) {
    std::string known;
    for (const std::string& n : network_preset_names()) known += n + ", ";
    throw_usage_error("--network: unknown network '" + choice.name + "' (known: " + known + "measure)");
  }
  if (choice.latency_s && !(*choice.latency_s >= 0 && std::isfinite(*choice.latency_s))) {
    throw_usage_error("--network-latency must be a non-negative time");
  }
  if (choice.bandwidth_bytes_per_s &&
      !(*choice.bandwidth_bytes_per_s > 0 && std::isfinite(*choice.bandwidth_bytes_per_s))) {
    throw_usage_error("--network-bandwidth must be positive");
  }
  if (choice.ranks_per_node && *choice.ranks_per_node < 1) throw_usage_error("--ranks-per-node must be at least 1");
}

void apply_inter_node_overrides(const NetworkChoice& choice, NetworkModel& model) {
  if (choice.latency_s) model.inter_node.latency_s = *choice.latency_s;
  if (choice.bandwidth_bytes_per_s) model.inter_node.bandwidth_bytes_per_s = *choice.bandwidth_bytes_per_s;
}

NetworkModel model_of(const NetworkChoice& choice) {
  validate_network_choice(choice);
  NetworkModel model = network_preset(choice.measure() ? "shm" : choice.name).value();
  apply_inter_node_overrides(choice, model);
  if (choice.latency_s || choice.bandwidth_bytes_per_s) model.name += "+custom";
  return model;
}

double parse_duration_s(std::string_view text, std::string_view what) {
  double value = 0;
  std::string unit;
  double scale = 0;
  if (split_quantity(text, value, unit)) {
    if (unit.empty() || unit == "s")
      scale = 1;
    else if (unit == "ms")
      scale = 1e-3;
    else if (unit == "us" || unit == "usec")
      scale = 1e-6;
    else if (unit == "ns")
      scale = 1e-9;
  }
  if (scale == 0 || value < 0) {
    throw_usage_error(std::string(what) + ": '" + std::string(text) + "' is not a time (examples: 50us, 1.5us, 2ms)");
  }
  return value * scale;
}

double parse_bandwidth_bytes_per_s(std::string_view text, std::string_view what) {
  double value = 0;
  std::string unit;
  double scale = 0;
  if (split_quantity(text, value, unit)) {
    if (unit.ends_with("/s")) unit.resize(unit.size() - 2);
    if (unit.ends_with("bps")) {  // 10gbps
      unit.resize(unit.size() - 3);
      unit += "bit";
    }
    if (unit.empty() || unit == "b")
      scale = 1;  // bytes per second
    else if (unit == "kb")
      scale = 1e3;
    else if (unit == "mb")
      scale = 1e6;
    else if (unit == "gb")
      scale = 1e9;
    else if (unit == "bit")
      scale = 1.0 / 8;
    else if (unit == "kbit")
      scale = 1e3 / 8;
    else if (unit == "mbit")
      scale = 1e6 / 8;
    else if (unit == "gbit")
      scale = 1e9 / 8;
  }
  if (scale == 0 || value <= 0) {
    throw_usage_error(std::string(what) + ": '" + std::string(text) +
                      "' is not a bandwidth (examples: 1gbit, 10Gbit/s, 125MB/s, 3.2GB/s)");
  }
  return value * scale;
}

double fit_bandwidth(const std::vector<PingPongSample>& samples, double latency_s) {
  double num = 0;
  double den = 0;
  for (const PingPongSample& s : samples) {
    if (s.bytes < 65536) continue;
    const auto n = static_cast<double>(s.bytes);
    num += n * std::max(s.one_way_s - latency_s, 1e-12);
    den += n * n;
  }
  if (den == 0) throw Error(ExitCode::kFailure, "fit_bandwidth: no sample of 64 KiB or more");
  return den / num;
}

LinkCost fit_link(const std::vector<PingPongSample>& samples) {
  if (samples.empty()) throw Error(ExitCode::kFailure, "fit_link: no samples");
  const PingPongSample smallest =
      *std::min_element(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  const double latency = smallest.one_way_s;
  return LinkCost{latency, fit_bandwidth(samples, latency)};
}

NetworkModel network_model_for(const NetworkChoice& choice, const NetworkMeasurement* measured) {
  NetworkModel model = model_of(choice);
  if (!choice.measure() || measured == nullptr) return model;
  const LinkMeasurement& intra = measured->intra_node;
  const LinkMeasurement& inter = measured->inter_node;
  if (intra.measured) model.intra_node = intra.fit;
  if (inter.measured) model.inter_node = inter.fit;
  if (intra.measured && !inter.measured) model.inter_node = intra.fit;
  if (inter.measured && !intra.measured) model.intra_node = inter.fit;
  if (measured->inter_node_loaded.measured) model.inter_node = measured->inter_node_loaded.fit;
  apply_inter_node_overrides(choice, model);  // explicit figures still win over the measurement
  model.name = "measure";
  return model;
}

std::string format_duration(double seconds) {
  if (seconds >= 1) return fmt::format("{:.3g} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} us", seconds * 1e6);
}

std::string format_bandwidth(double bytes_per_s) {
  if (bytes_per_s >= 1e9) return fmt::format("{:.3g} GB/s", bytes_per_s / 1e9);
  if (bytes_per_s >= 1e6) return fmt::format("{:.3g} MB/s", bytes_per_s / 1e6);
  return fmt::format("{:.3g} kB/s", bytes_per_s / 1e3);
}

}  // namespace zbfs
