#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/driver/distributed_runner.hpp"
#include "zbfs/driver/json_report.hpp"
#include "zbfs/driver/phase_table.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/version.hpp"

namespace zbfs::cli {
namespace {

struct TextOptions {
  std::string direction = "auto";
  std::string partition = "1d";
  std::string grid;
  std::string column_gather = "allgatherv";
  bool no_validate = false;
};

void add_run_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  run.add_option("-s,--scale", config.scale, "log2 of the number of vertices (1..42)")->capture_default_str();
  run.add_option("-e,--edgefactor", config.edgefactor, "edges per vertex (1..1024)")->capture_default_str();
  run.add_option("--seed", config.seed, "seed of the generator and of the search keys")->capture_default_str();
  run.add_option("-r,--roots", config.num_roots, "number of BFS search keys (NBFS)")->capture_default_str();
  run.add_option("-d,--direction", text.direction, "traversal: auto (direction-optimizing), top-down or bottom-up")
      ->check(CLI::IsMember({"auto", "top-down", "bottom-up"}))
      ->capture_default_str();
  run.add_option("--alpha", config.bfs.alpha, "go bottom-up when frontier edges > unexplored edges / alpha")
      ->capture_default_str();
  run.add_option("--beta", config.bfs.beta, "go top-down when the frontier < vertices / beta")->capture_default_str();
  run.add_option("-t,--threads", config.threads, "OpenMP threads (0: the OpenMP default)")->capture_default_str();
  run.add_flag("--no-validate", text.no_validate, "skip Graph500 validation of the BFS trees");
  run.add_option("--json", config.json_path, "write a machine-readable record of the run to this file");
  run.add_flag("-q,--quiet", config.quiet, "no progress messages on stderr");
  run.add_flag("--force", config.force, "run even when the memory estimate exceeds available memory");
  run.add_option("-p,--partition", text.partition,
                 "how the graph is split over MPI ranks: 1d (vertex blocks), 2d (R x C grid of the adjacency "
                 "matrix), or shared (the single-process kernel; one rank only)")
      ->check(CLI::IsMember({"1d", "2d", "shared"}))
      ->capture_default_str();
  run.add_option("--grid", text.grid, "2D process grid RxC (default: the most square factorisation of the ranks)");
  run.add_option("--column-gather", text.column_gather,
                 "how the top-down frontier is gathered along a processor column: allgatherv or union "
                 "(set-union allreduce)")
      ->check(CLI::IsMember({"allgatherv", "union"}))
      ->capture_default_str();
  run.add_option("--fail-on-rank", config.fail_on_rank,
                 "testing aid: make this rank fail at the first search (the job must end with an error)")
      ->group("Testing");
}

// Whether rank 0 can write the JSON report, agreed by every rank.
bool json_path_writable(const std::string& path, int rank) {
  int writable = 0;
  if (rank == 0) {
    std::ofstream probe(path, std::ios::app);
    writable = probe ? 1 : 0;
  }
  check_mpi(MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return writable != 0;
}

int run_command(RunConfig config, const TextOptions& text, int rank, int ranks) {
  config.bfs.direction = *parse_direction(text.direction);
  config.validate = !text.no_validate;
  config.shared_memory = text.partition == "shared";
  if (!config.shared_memory) config.partition = *parse_partition(text.partition);
  config.column_gather = *parse_column_gather(text.column_gather);
  if (!text.grid.empty()) {
    config.grid = parse_grid_shape(text.grid);
    if (!config.grid) throw_usage_error("--grid must look like RxC with positive R and C, got '" + text.grid + "'");
  }
  validate_config(config, ranks);
  // Fail now rather than after a long run.
  if (!config.json_path.empty() && !json_path_writable(config.json_path, rank)) {
    throw_usage_error("cannot write JSON report to '" + config.json_path + "'");
  }
  const RunResult result = config.shared_memory ? run_benchmark(config) : run_distributed_benchmark(config);
  if (rank != 0) return 0;
  std::fputs(format_result_block(result.result_block).c_str(), stdout);
  std::fflush(stdout);
  if (!config.json_path.empty()) write_json_report(result, config.json_path);
  if (!config.quiet) {
    std::fputs(format_phase_table(result.phases, result.num_processes).c_str(), stderr);
    std::fprintf(stderr, "zbfs: peak memory %s per rank\n", format_bytes(result.peak_rss_bytes).c_str());
  }
  return 0;
}

}  // namespace

int run_cli(int argc, char** argv, int rank, int ranks) {
  CLI::App app{"zbfs: Graph500 breadth-first search with compressed communication"};
  app.set_version_flag("--version", std::string("zbfs ") + kVersion);
  app.require_subcommand(1);
  RunConfig config;
  TextOptions text;
  CLI::App* run = app.add_subcommand("run", "run the Graph500 BFS benchmark and print the official result block");
  add_run_options(*run, config, text);
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; }).empty()) {
    throw_usage_error(std::string("unknown command '") + argv[1] + "' (commands: run; see 'zbfs --help')");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion&) {
    if (rank == 0) std::printf("zbfs %s\n", kVersion);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (message.find("subcommand") != std::string::npos) message += " (see 'zbfs --help')";
    throw_usage_error(message);
  }
  if (run->parsed()) return run_command(config, text, rank, ranks);
  return 0;
}

}  // namespace zbfs::cli
