// zbfs_gpu_bench: the one-process Graph500 benchmark (generation, kernel 1, the searches,
// validation, the result block) on a chosen backend, without MPI, so that it builds and
// runs on GPU machines that have no MPI installed (scripts/gpu-check). bench/gpu_bench.py
// runs it per backend and scale and prints the table.
//
//   zbfs_gpu_bench --scale 24 --backend cuda [--edgefactor 16] [--roots 64] [--threads T]
//                  [--no-validate] [--force] [--prune] [--level-loop host|device|graph] [--json FILE]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/driver/json_report.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/runner.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  try {
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
