#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/driver/json_report.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/version.hpp"

namespace zbfs::cli {
namespace {

void add_run_options(CLI::App& run, RunConfig& config, std::string& direction, bool& no_validate) {
  run.add_option("-s,--scale", config.scale, "log2 of the number of vertices (1..42)")->capture_default_str();
  run.add_option("-e,--edgefactor", config.edgefactor, "edges per vertex (1..1024)")->capture_default_str();
  run.add_option("--seed", config.seed, "seed of the generator and of the search keys")->capture_default_str();
  run.add_option("-r,--roots", config.num_roots, "number of BFS search keys (NBFS)")->capture_default_str();
  run.add_option("-d,--direction", direction, "traversal: auto (direction-optimizing), top-down or bottom-up")
      ->check(CLI::IsMember({"auto", "top-down", "bottom-up"}))
      ->capture_default_str();
  run.add_option("--alpha", config.bfs.alpha, "go bottom-up when frontier edges > unexplored edges / alpha")
      ->capture_default_str();
  run.add_option("--beta", config.bfs.beta, "go top-down when the frontier < vertices / beta")->capture_default_str();
  run.add_option("-t,--threads", config.threads, "OpenMP threads (0: the OpenMP default)")->capture_default_str();
  run.add_flag("--no-validate", no_validate, "skip Graph500 validation of the BFS trees");
  run.add_option("--json", config.json_path, "write a machine-readable record of the run to this file");
  run.add_flag("-q,--quiet", config.quiet, "no progress messages on stderr");
  run.add_flag("--force", config.force, "run even when the memory estimate exceeds available memory");
}

int run_command(RunConfig config, const std::string& direction, bool no_validate) {
  config.bfs.direction = *parse_direction(direction);
  config.validate = !no_validate;
  validate_config(config);
  if (!config.json_path.empty()) {
    // Fail now rather than after a long run.
    std::ofstream probe(config.json_path, std::ios::app);
    if (!probe) throw_usage_error("cannot write JSON report to '" + config.json_path + "'");
  }
  const RunResult result = run_benchmark(config);
  std::fputs(format_result_block(result.result_block).c_str(), stdout);
  std::fflush(stdout);
  if (!config.json_path.empty()) write_json_report(result, config.json_path);
  if (!config.quiet) std::fprintf(stderr, "zbfs: peak memory %s\n", format_bytes(result.peak_rss_bytes).c_str());
  return 0;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"zbfs: Graph500 breadth-first search with compressed communication"};
  app.set_version_flag("--version", std::string("zbfs ") + kVersion);
  app.require_subcommand(1);
  RunConfig config;
  std::string direction = "auto";
  bool no_validate = false;
  CLI::App* run = app.add_subcommand("run", "run the Graph500 BFS benchmark and print the official result block");
  add_run_options(*run, config, direction, no_validate);
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; }).empty()) {
    throw_usage_error(std::string("unknown command '") + argv[1] + "' (commands: run; see 'zbfs --help')");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::printf("zbfs %s\n", kVersion);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (message.find("subcommand") != std::string::npos) message += " (see 'zbfs --help')";
    throw_usage_error(message);
  }
  if (run->parsed()) return run_command(config, direction, no_validate);
  return 0;
}

}  // namespace zbfs::cli
