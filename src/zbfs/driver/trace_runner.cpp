#include "zbfs/driver/trace_runner.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/generator/search_roots.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/output/output_file.hpp"
#include "zbfs/output/partial_files.hpp"
#include "zbfs/replay/search_calls.hpp"
#include "zbfs/replay/search_plan.hpp"
#include "zbfs/topology/grid_shape.hpp"

namespace zbfs {
namespace {

// What the plan models, refused otherwise with the flag that asks for the rest.
void check_traceable(const RunConfig& config, const TraceOptions& options) {
  const auto refuse = [](const std::string& what) { throw_usage_error("zbfs trace: " + what); };
  if (options.ranks < 1) refuse("--ranks must be at least 1");
  if (!(options.host_speed_flops > 0) || !std::isfinite(options.host_speed_flops)) {
    refuse("--host-speed must be a positive number of flops");
  }
  if (!(options.probe_s >= 0) || !std::isfinite(options.probe_s)) refuse("--probe-cost must be seconds >= 0");
  if (config.shared_memory) refuse("plans MPI jobs: give --partition 1d, 2d or hybrid");
  if (config.input) refuse("plans generated graphs only, not --input");
  if (config.graph.kind == GraphKind::kRgg) refuse("cannot regenerate --graph rgg by index");
  if (!config.codec.fixed || *config.codec.fixed != CodecId::kNone) refuse("plans exchanges without a codec");
  if (config.route && !relays(config.route->kind)) refuse("plans --route grid2, gridk or hypercube only");
  if (config.route && !config.route->dedup) refuse("plans routes that merge: leave out --no-dedup");
  if (config.overlap.value_or(true)) refuse("plans the bulk folds of --overlap off; add it");
  if (config.transport != Transport::kTwoSided) refuse("plans two-sided exchanges, not --transport rma");
  if (config.prune) refuse("does not plan --prune");
  if (config.kernels.sssp) refuse("plans BFS searches only");
  if (config.backend != Backend::kCpu) refuse("plans the CPU backend's searches");
}

GridShape grid_of(const RunConfig& config, int ranks) {
  if (config.partition == Partition::kHybrid) {
    const int per_node = config.network.ranks_per_node.value_or(1);
    const std::optional<GridShape> grid = hybrid_grid(ranks, per_node);
    if (!grid) {
      throw_usage_error("--partition hybrid needs whole nodes: " + std::to_string(per_node) +
                        " ranks per node do not divide " + std::to_string(ranks));
    }
    return *grid;
  }
  if (config.partition == Partition::k1D) return GridShape{1, ranks};
  // Without --grid, as a run of the planned job would choose (its nodes: --ranks-per-node,
  // one rank a node without it).
  return config.grid ? *config.grid : default_grid(ranks, config.network.ranks_per_node.value_or(1) >= ranks);
}

Csr<std::uint32_t> build_graph(const RunConfig& config) {
  const std::optional<InputEdges> input = regenerated_graph_slice(config.graph, 0, 1);
  if (!input) throw_usage_error("zbfs trace: this graph cannot be produced by index");
  if (input->num_vertices() > (std::uint64_t{1} << 32)) throw_usage_error("zbfs trace: plans graphs up to scale 32");
  const std::uint64_t needed = csr_build_peak_bytes(input->num_vertices(), input->size(), 4);
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (available && needed > *available) {
    throw Error(ExitCode::kFailure, "zbfs trace: the whole graph needs " + format_bytes(needed) + " here, " +
                                        format_bytes(*available) + " are available");
  }
  return build_csr<std::uint32_t>(*input, CsrOrder::kInput);
}

std::vector<std::uint64_t> search_keys(const RunConfig& config, const Csr<std::uint32_t>& graph) {
  if (!config.roots.empty()) {
    for (const std::uint64_t root : config.roots) {
      if (root >= graph.num_vertices()) throw_usage_error("--root " + std::to_string(root) + " is no vertex");
    }
    return config.roots;
  }
  std::uint64_t eligible = 0;
  for (std::uint64_t v = 0; v < graph.num_vertices(); ++v) eligible += graph.degree(v) > 0 ? 1 : 0;
  return sample_search_roots(graph.num_vertices(), eligible, roots_to_draw(config, eligible), config.graph.seed,
                             [&](std::uint64_t v) { return graph.degree(v) > 0; });
}

nlohmann::json describe(const SearchPlan& plan, const ReplayLayout& layout) {
  nlohmann::json search;
  search["root"] = plan.root;
  search["levels"] = plan.levels.size();
  search["reached_vertices"] = plan.reached;
  search["traversed_edges"] = plan.traversed_edges;
  nlohmann::json steps = nlohmann::json::array();
  for (const PlannedLevel& level : plan.levels) {
    nlohmann::json step = {{"direction", std::string(to_string(level.kind))},
                           {"frontier_vertices", level.frontier},
                           {"discovered_vertices", level.discovered}};
    if (!level.work.empty()) {
      // The busiest rank's work of each kind in the level (what a record's level keeps).
      nlohmann::json most;
      for (const WorkKind kind : kAllWorkKinds) {
        const auto k = static_cast<std::size_t>(kind);
        std::uint64_t top = 0;
        for (std::size_t p = 0; p < level.work.size(); ++p) {
          top = std::max(top, level.work_before_gather[p][k] + level.work[p][k] + level.work_ring[p][k] +
                                  level.work_after_fold[p][k]);
        }
        if (top > 0) most[std::string(to_string(kind))] = top;
      }
      step["work_max"] = most;
    }
    steps.push_back(step);
  }
  search["steps"] = steps;
  const SearchTraffic traffic = book_search(plan, layout);
  nlohmann::json phases;
  for (const Phase phase :
       {Phase::kColumnExchange, Phase::kRowExchange, Phase::kTerminationCheck, Phase::kPredecessorReduction}) {
    const PhaseTraffic& t = traffic[static_cast<std::size_t>(phase)];
    phases[std::string(to_string(phase))] = {{"messages", t.messages}, {"wire_bytes", t.bytes}};
  }
  search["phases"] = phases;
  if (!plan.levels.empty() && !plan.levels.front().work.empty()) {
    // The counted work of every rank's local steps, summed (the exchanges' bytes apart).
    WorkCounts total{};
    const auto add = [&](const std::vector<WorkCounts>& work) {
      for (const WorkCounts& counts : work) {
        for (std::size_t k = 0; k < total.size(); ++k) total[k] += counts[k];
      }
    };
    add(plan.start_work);
    add(plan.end_work);
    for (const PlannedLevel& level : plan.levels) {
      add(level.work_before_gather);
      add(level.work);
      add(level.work_ring);
      add(level.work_after_fold);
    }
    nlohmann::json work;
    for (const WorkKind kind : kAllWorkKinds) {
      if (total[static_cast<std::size_t>(kind)] > 0)
        work[std::string(to_string(kind))] = total[static_cast<std::size_t>(kind)];
    }
    search["work"] = work;
  }
  return search;
}

// The traces' folder, removed again unless every file was written: by this object on a
// failure, by the signal handler on a signal (output/partial_files.hpp).
class TraceFolder {
 public:
  explicit TraceFolder(std::string path) : path_(std::move(path)) {
    if (::mkdir(path_.c_str(), 0777) != 0) {
      throw Error(ExitCode::kFailure, "cannot make the trace folder " + path_ + ": " + std::strerror(errno) +
                                          (errno == EEXIST ? " (give a new one)" : ""));
    }
    listed_.emplace(path_, kPrefix, kSuffix);
  }
  static constexpr const char* kPrefix = "rank-";
  static constexpr const char* kSuffix = ".trace";
  // Ranks 0 to count - 1 may have their files.
  void written(std::uint64_t count) { listed_->written(count); }
  ~TraceFolder() {
    if (done_) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    std::fprintf(stderr, "zbfs: removed the unfinished trace folder %s\n", path_.c_str());
  }
  TraceFolder(const TraceFolder&) = delete;
  TraceFolder& operator=(const TraceFolder&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  void done() {
    done_ = true;
    listed_.reset();
  }

 private:
  std::string path_;
  bool done_ = false;
  std::optional<PartialFolderGuard> listed_;
};

// One file a rank (rank-W.trace), then traces.txt naming them in rank order, which
// appears last: a folder with it is whole.
nlohmann::json write_traces(const std::vector<SearchPlan>& plans, const ReplayLayout& layout,
                            const TraceOptions& options, const WorkCosts* costs) {
  const TraceCharges charges{costs, options.host_speed_flops, options.probe_s};
  TraceFolder folder(options.trace_dir);
  std::string list;
  std::string text;
  std::uint64_t bytes = 0;
  std::uint64_t actions = 0;
  for (int rank = 0; rank < layout.ranks(); ++rank) {
    text.clear();
    text += std::to_string(rank) + " init\n";
    for (const SearchPlan& plan : plans) append_search_trace(plan, layout, rank, charges, text);
    text += std::to_string(rank) + " finalize\n";
    const std::string name = TraceFolder::kPrefix + std::to_string(rank) + TraceFolder::kSuffix;
    OutputFile out(folder.path() + "/" + name, text.size());
    out.write_text(text);
    // Said before the file takes its name, so that a signal in between removes it too.
    folder.written(static_cast<std::uint64_t>(rank) + 1);
    out.commit();
    list += name + "\n";
    bytes += text.size();
    for (const char c : text) actions += c == '\n' ? 1 : 0;
  }
  OutputFile index(folder.path() + "/traces.txt", list.size());
  index.write_text(list);
  index.commit();
  folder.done();
  return {{"dir", options.trace_dir},
          {"list", "traces.txt"},
          {"bytes", bytes},
          {"actions", actions},
          {"compute", costs != nullptr ? "counted" : "none"},
          {"host_speed_flops", options.host_speed_flops},
          {"probe_s", options.probe_s}};
}

}  // namespace

void run_trace(const RunConfig& config, const TraceOptions& options) {
  check_traceable(config, options);
  const GridShape shape = grid_of(config, options.ranks);
  if (shape.size() != options.ranks) {
    throw_usage_error("grid " + shape.to_string() + " has " + std::to_string(shape.size()) + " ranks, not " +
                      std::to_string(options.ranks));
  }
  Stopwatch clock;
  const Csr<std::uint32_t> graph = build_graph(config);
  const double build_s = clock.elapsed_s();
  const ReplayLayout layout(config.partition, shape, graph.num_vertices(), config.route, config.column_gather);
  const std::vector<std::uint64_t> keys = search_keys(config, graph);
  const bool count_work = config.work_costs.has_value();
  std::vector<SearchPlan> plans;
  nlohmann::json searches = nlohmann::json::array();
  clock.restart();
  std::uint64_t held = 0;
  for (const std::uint64_t root : keys) {
    plans.push_back(plan_search(graph, layout, root, config.bfs, count_work));
    held += search_plan_bytes(layout, plans.back().levels.size(), count_work);
    const std::optional<std::uint64_t> available = available_memory_bytes();
    if (available && held > *available) {
      throw Error(ExitCode::kFailure, "zbfs trace: the plans of " + std::to_string(plans.size()) + " searches hold " +
                                          format_bytes(held) + ", more than memory has left; ask for fewer --roots");
    }
    searches.push_back(describe(plans.back(), layout));
  }
  const double plan_s = clock.elapsed_s();
  nlohmann::json record;
  record["schema"] = "zbfs.trace";
  record["ranks"] = options.ranks;
  record["partition"] = std::string(to_string(config.partition));
  record["grid"] = shape.to_string();
  record["route"] = config.route ? config.route->describe() : "none";
  record["graph"] = {{"num_vertices", graph.num_vertices()},
                     {"num_directed_edges", graph.num_directed_edges()},
                     {"scale", config.graph.scale},
                     {"edgefactor", config.graph.edgefactor}};
  record["searches"] = searches;
  record["build_time_s"] = build_s;
  record["plan_time_s"] = plan_s;
  if (!options.trace_dir.empty()) {
    clock.restart();
    record["trace"] = write_traces(plans, layout, options, count_work ? &*config.work_costs : nullptr);
    record["trace"]["write_time_s"] = clock.elapsed_s();
  }
  if (count_work) record["work_costs"] = config.work_costs_path;
  const std::string text = record.dump(2) + "\n";
  if (config.json_path.empty()) {
    std::fputs(text.c_str(), stdout);
    return;
  }
  OutputFile out(config.json_path, text.size());
  out.write_text(text);
  out.commit();
}

}  // namespace zbfs
