// zbfs_gpu_bench: the one-process Graph500 benchmark (generation, kernel 1, the searches,
// validation, the result block) on a chosen backend, without MPI, so that it builds and
// runs on GPU machines that have no MPI installed (scripts/gpu-check). bench/gpu_bench.py
// runs it per backend and scale and prints the table.
//
//   zbfs_gpu_bench --scale 24 --backend cuda [--edgefactor 16] [--roots 64] [--threads T]
//                  [--no-validate] [--force] [--prune] [--level-loop host|device|graph] [--json FILE]
//   zbfs_gpu_bench --energy-probe SECONDS
//
// --energy-probe reads the first device's board energy counter (NVML) as fast as it can
// for SECONDS and prints one JSON line: how many reads, how often the count moved, and
// the intervals between its moves (a counter that moves every few tens of milliseconds
// cannot time a search of a few). bench/gpu_check.py reads it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/driver/json_report.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/metrics/energy_counter.hpp"
#include "zbfs/output/partial_files.hpp"

namespace {

std::uint64_t number(const std::string& flag, const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') zbfs::throw_usage_error(flag + " takes a whole number, got '" + text + "'");
  return value;
}

zbfs::RunConfig parse(int argc, char** argv) {
  zbfs::RunConfig config;
  config.shared_memory = true;
  config.quiet = true;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) zbfs::throw_usage_error(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--scale") {
      config.graph.scale = static_cast<int>(number(flag, value()));
    } else if (flag == "--edgefactor") {
      config.graph.edgefactor = number(flag, value());
    } else if (flag == "--roots") {
      config.num_roots = number(flag, value());
    } else if (flag == "--threads") {
      config.threads = static_cast<int>(number(flag, value()));
    } else if (flag == "--backend") {
      const std::string name = value();
      const auto backend = zbfs::parse_backend(name);
      if (!backend) zbfs::throw_usage_error("--backend must be cpu, cuda or cuda-host, got '" + name + "'");
      config.backend = *backend;
    } else if (flag == "--json") {
      config.json_path = value();
    } else if (flag == "--no-validate") {
      config.validate = false;
    } else if (flag == "--force") {
      config.force = true;
    } else if (flag == "--prune") {
      config.prune = true;
    } else if (flag == "--level-loop") {
      const std::string name = value();
      const auto loop = zbfs::parse_level_loop(name);
      if (!loop) zbfs::throw_usage_error("--level-loop must be host, device or graph, got '" + name + "'");
      config.level_loop = *loop;
    } else {
      zbfs::throw_usage_error("unknown flag '" + flag + "'");
    }
  }
  return config;
}

// The board counter's reads and moves over `seconds`, as one JSON object.
nlohmann::json probe_energy_counter(double seconds) {
  std::string why;
  const std::string bus = zbfs::device_pci_bus_id(0);
  if (bus.empty()) return {{"measured", false}, {"why_not", "no CUDA device is visible"}};
  const std::unique_ptr<zbfs::EnergyCounter> counter = zbfs::open_nvml_counter(bus, why);
  if (!counter) return {{"measured", false}, {"why_not", why}};
  std::vector<double> moved_at;
  std::uint64_t reads = 0;
  std::optional<std::uint64_t> last;
  const zbfs::Stopwatch clock;
  while (clock.elapsed_s() < seconds) {
    const std::optional<std::uint64_t> now = counter->read_microjoules(why);
    if (!now) return {{"measured", false}, {"why_not", why}};
    ++reads;
    if (last && *now != *last) moved_at.push_back(clock.elapsed_s());
    last = now;
  }
  nlohmann::json result = {{"measured", true},
                           {"counter", counter->name()},
                           {"reads", reads},
                           {"changes", moved_at.size()},
                           {"seconds", clock.elapsed_s()}};
  std::vector<double> intervals;
  for (std::size_t i = 1; i < moved_at.size(); ++i) intervals.push_back((moved_at[i] - moved_at[i - 1]) * 1e3);
  if (!intervals.empty()) {
    std::sort(intervals.begin(), intervals.end());
    result["interval_ms"] = {
        {"median", intervals[intervals.size() / 2]}, {"min", intervals.front()}, {"max", intervals.back()}};
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  zbfs::end_on_signals("zbfs_gpu_bench", true);
  try {
    if (argc == 3 && std::string(argv[1]) == "--energy-probe") {
      const std::uint64_t seconds = number("--energy-probe", argv[2]);
      if (seconds == 0 || seconds > 60) zbfs::throw_usage_error("--energy-probe takes 1 to 60 seconds");
      std::puts(probe_energy_counter(static_cast<double>(seconds)).dump().c_str());
      return 0;
    }
    const zbfs::RunConfig config = parse(argc, argv);
    const zbfs::RunResult result = zbfs::run_benchmark(config);
    std::fputs(zbfs::format_result_block(result.result_block).c_str(), stdout);
    if (!config.json_path.empty()) zbfs::write_json_report(result, config.json_path);
    return 0;
  } catch (const zbfs::Error& e) {
    std::fprintf(stderr, "zbfs_gpu_bench: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zbfs_gpu_bench: error: %s\n", e.what());
    return 1;
  }
}
