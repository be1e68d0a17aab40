#include "zbfs/driver/recorded_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/driver/json_report.hpp"

namespace zbfs {
namespace {

// The oldest record schema a projection can read (version 3 added the traffic records).
constexpr int kOldestProjectableSchema = 3;

// Reads a record's fields by dotted name ("network.inter_node.latency_s"): a missing
// field, or one of the wrong JSON type, is refused naming the file and the field, never
// with the JSON library's own message.
class RecordFields {
 public:
  explicit RecordFields(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void refuse(const std::string& what) const { throw_usage_error("'" + path_ + "' " + what); }

  // `prefix` names `from` in messages ("searches[3]."; empty at the top).
  [[nodiscard]] const nlohmann::json& at(const nlohmann::json& from, std::string_view dotted,
                                         const std::string& prefix = {}) const {
    const nlohmann::json* node = &from;
    std::size_t start = 0;
    while (start <= dotted.size()) {
      const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
      const std::string key(dotted.substr(start, dot - start));
      if (!node->is_object() || !node->contains(key)) {
        refuse("lacks the field '" + prefix + std::string(dotted.substr(0, dot)) + "' that a projection needs");
      }
      node = &(*node)[key];
      start = dot + 1;
    }
    return *node;
  }
  [[nodiscard]] double number(const nlohmann::json& from, std::string_view dotted,
                              const std::string& prefix = {}) const {
    const nlohmann::json& value = at(from, dotted, prefix);
    if (!value.is_number()) refuse("has a non-numeric '" + prefix + std::string(dotted) + "'");
    return value.get<double>();
  }
  [[nodiscard]] int integer(const nlohmann::json& from, std::string_view dotted, const std::string& prefix = {}) const {
    const nlohmann::json& value = at(from, dotted, prefix);
    if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 1'000'000'000) {
      refuse("has a malformed '" + prefix + std::string(dotted) + "' (not a count)");
    }
    return value.get<int>();
  }
  [[nodiscard]] std::string text(const nlohmann::json& from, std::string_view dotted,
                                 const std::string& prefix = {}) const {
    const nlohmann::json& value = at(from, dotted, prefix);
    if (!value.is_string()) refuse("has a non-text '" + prefix + std::string(dotted) + "'");
    return value.get<std::string>();
  }
  template <class E>
  [[nodiscard]] E named(const std::string& name, std::size_t count, const std::string& what) const {
    for (std::size_t i = 0; i < count; ++i) {
      if (to_string(static_cast<E>(i)) == name) return static_cast<E>(i);
    }
    refuse("names an unknown " + what + " '" + name + "'");
  }

 private:
  std::string path_;
};

// The document's schema: a zbfs run record of a version this zbfs can project.
void check_schema(const nlohmann::json& j, const RecordFields& fields) {
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "zbfs.run") {
    fields.refuse("is a JSON document but not a zbfs run record (zbfs run --json writes those)");
  }
  const nlohmann::json& version = fields.at(j, "schema_version");
  if (!version.is_number_integer()) fields.refuse("has a malformed schema_version " + version.dump());
  const long long v = version.get<long long>();
  const std::string supported = "this zbfs reads versions " + std::to_string(kOldestProjectableSchema) + " to " +
                                std::to_string(kRunSchemaVersion);
  if (v > kRunSchemaVersion) {
    fields.refuse("has schema version " + std::to_string(v) + ", newer than this zbfs knows; " + supported);
  }
  if (v < kOldestProjectableSchema) {
    fields.refuse("has schema version " + std::to_string(v) + "; " + supported + " (rerun with this zbfs)");
  }
}

void read_network(const nlohmann::json& j, const RecordFields& fields, NetworkModel& network) {
  network.name = fields.text(j, "network.name");
  for (auto [link, key] :
       {std::pair{&network.intra_node, "network.intra_node"}, std::pair{&network.inter_node, "network.inter_node"}}) {
    const nlohmann::json& figures = fields.at(j, key);
    const std::string prefix = std::string(key) + ".";
    link->latency_s = fields.number(figures, "latency_s", prefix);
    link->bandwidth_bytes_per_s = fields.number(figures, "bandwidth_bytes_per_s", prefix);
    if (!(link->latency_s >= 0) || !(link->bandwidth_bytes_per_s > 0)) fields.refuse("has an impossible network model");
  }
}

void read_searches(const nlohmann::json& j, const RecordFields& fields, RecordedRun& run) {
  // Iterating a JSON value that is not an array or an object would go over the value
  // itself (a string in place of `phases` read as one phase named '').
  for (const char* key : {"searches", "traffic"}) {
    if (!fields.at(j, key).is_array()) fields.refuse(std::string("has a malformed ") + key + " field");
  }
  if (!fields.at(j, "phases").is_object()) fields.refuse("has a malformed phases field");
  std::size_t index = 0;
  for (const auto& s : j["searches"]) {
    const std::string prefix = "searches[" + std::to_string(index++) + "].";
    run.searches += 1;
    const double edges = fields.number(s, "traversed_edges", prefix);
    const double time_s = fields.number(s, "time_s", prefix);
    if (!(edges >= 0) || !(time_s > 0)) fields.refuse("has a search with impossible figures");
    run.mean_traversed_edges += edges;
    run.mean_bfs_time_s += time_s;
    if (s.is_object() && s.contains("validate_time_s")) run.validations += 1;
  }
  if (run.searches > 0) {
    run.mean_traversed_edges /= run.searches;
    run.mean_bfs_time_s /= run.searches;
  }
}

void read_phases_and_traffic(const nlohmann::json& j, const RecordFields& fields, RecordedRun& run) {
  for (const auto& [name, p] : j["phases"].items()) {
    const auto phase = fields.named<Phase>(name, kPhaseCount, "phase");
    const std::string prefix = "phases." + name + ".";
    const double time_s = fields.number(p, "time_s.max", prefix);
    const double model_s = fields.number(p, "modelled_time_s.max", prefix);
    if (!(time_s >= 0) || !(model_s >= 0)) fields.refuse("has a negative time in phase " + name);
    run.max_time_s[static_cast<std::size_t>(phase)] = time_s;
    run.max_model_s[static_cast<std::size_t>(phase)] = model_s;
    // Records from before --overlap have no overlap figures: nothing ran hidden.
    if (p.is_object() && p.contains("overlap_time_s")) {
      const double hidden = fields.number(p, "overlap_time_s.sum", prefix);
      const double modelled = fields.number(p, "modelled_time_s.sum", prefix);
      if (!(hidden >= 0) || !(modelled >= 0)) fields.refuse("has a negative time in phase " + name);
      run.hidden_share[static_cast<std::size_t>(phase)] = modelled > 0 ? std::min(1.0, hidden / modelled) : 0.0;
    }
  }
  std::size_t index = 0;
  for (const auto& t : j["traffic"]) {
    const std::string prefix = "traffic[" + std::to_string(index++) + "].";
    TrafficRecord r;
    r.phase = fields.named<Phase>(fields.text(t, "phase", prefix), kPhaseCount, "phase");
    r.role = fields.named<CommRole>(fields.text(t, "communicator", prefix), kCommRoleCount, "communicator");
    r.pattern = fields.named<CommPattern>(fields.text(t, "pattern", prefix), kCommPatternCount, "pattern");
    r.calls = fields.number(t, "calls", prefix);
    r.messages = fields.number(t, "messages", prefix);
    r.bytes = fields.number(t, "bytes", prefix);
    if (r.calls < 0 || r.messages < 0 || r.bytes < 0) fields.refuse("has negative traffic");
    run.traffic.push_back(r);
  }
}

}  // namespace

RecordedRun read_recorded_run(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw_usage_error("cannot read '" + path + "': it is a folder");
  std::ifstream in(path);
  if (!in) throw_usage_error("cannot read '" + path + "': " + std::strerror(errno));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw_usage_error("'" + path + "' is not a JSON document");
  const RecordFields fields(path);
  check_schema(j, fields);
  RecordedRun run;
  run.ranks = fields.integer(j, "num_mpi_processes");
  const std::string partition = fields.text(j, "config.partition");
  if (partition == "shared") fields.refuse("is a single-process run (--partition shared): no traffic to project");
  const auto parsed_partition = parse_partition(partition);
  if (!parsed_partition) fields.refuse("has a malformed partition '" + partition + "'");
  run.partition = *parsed_partition;
  const auto grid = parse_grid_shape(fields.text(j, "config.grid"));
  if (!grid) fields.refuse("has a malformed grid");
  run.grid = *grid;
  // How the grid's ranks were stacked (a hybrid grid's nodes); records before the field
  // filled their grids row by row or stacked a node's ranks by hybrid_grid's rule.
  if (j.contains("config") && j["config"].is_object() && j["config"].contains("grid_stack")) {
    const int stack = fields.integer(j, "config.grid_stack");
    if (stack < 1 || run.grid.rows % stack != 0) fields.refuse("has a grid_stack that does not divide its grid's rows");
    run.grid.stack = stack;
  }
  run.scale = fields.integer(j, "config.scale");
  // Records from before --transport were two-sided.
  if (j.contains("config") && j["config"].is_object() && j["config"].contains("transport")) {
    const std::string transport = fields.text(j, "config.transport");
    if (transport != "two-sided" && transport != "rma") fields.refuse("has a malformed transport '" + transport + "'");
    run.one_sided = transport == "rma";
  }
  // Records before the graph section: a Kronecker graph of 2^scale vertices.
  run.num_vertices = j.contains("graph") ? fields.number(j, "graph.num_vertices") : std::ldexp(1.0, run.scale);
  read_network(j, fields, run.network);
  read_searches(j, fields, run);
  read_phases_and_traffic(j, fields, run);
  if (run.ranks < 1 || run.grid.size() != run.ranks) fields.refuse("has a grid that does not match its ranks");
  if (run.searches == 0) fields.refuse("records no searches");
  return run;
}

std::string format_projection(const std::string& path, const RecordedRun& run, const ProjectionTarget& target,
                              const Projection& p) {
  std::string out = fmt::format("recorded: {} ({} rank{}, {} grid {}, scale {}, network {}, {} searches)\n", path,
                                run.ranks, run.ranks == 1 ? "" : "s", to_string(run.partition), run.grid.to_string(),
                                run.scale, run.network.name, static_cast<long long>(run.searches));
  out += fmt::format(
      "projected: {} ranks, grid {}, network {} (inter-node {} + bytes / {}, intra-node {} + bytes / {}), "
      "{} rank{} per node, transport {}\n",
      target.ranks, target.grid.to_string(), target.network.name, format_duration(target.network.inter_node.latency_s),
      format_bandwidth(target.network.inter_node.bandwidth_bytes_per_s),
      format_duration(target.network.intra_node.latency_s),
      format_bandwidth(target.network.intra_node.bandwidth_bytes_per_s), target.ranks_per_node,
      target.ranks_per_node == 1 ? "" : "s", target.one_sided ? "rma" : "two-sided");
  out += fmt::format("per search (construction and generation: per run); per rank: the busiest of {} sampled\n",
                     p.sampled_ranks);
  out += fmt::format("{:<22} {:>12} {:>12} {:>14} {:>12} {:>12}\n", "phase", "recorded_s", "rec_model_s", "bytes/rank",
                     "msgs/rank", "model_s");
  for (const PhaseProjection& ph : p.phases) {
    out += fmt::format("{:<22} {:>12.6f} {:>12.6f} {:>14.0f} {:>12.1f} {:>12.6f}\n",
                       std::string(to_string(ph.phase)) + (ph.per_search ? "" : " (once)"), ph.recorded_time_s,
                       ph.recorded_model_s, ph.bytes_per_rank, ph.messages_per_rank, ph.model_s);
  }
  const std::string hidden =
      p.hidden_s > 0
          ? fmt::format(" - {:.6f} s hidden under the work (pipelined folds, at the recorded share)", p.hidden_s)
          : std::string();
  out += fmt::format(
      "BFS per search: communication {:.6f} s + other work {:.6f} s (recorded time less its modelled "
      "communication, x {}/{}){} = {:.6f} s\n",
      p.communication_s, p.local_s, run.ranks, target.ranks, hidden, p.bfs_time_s);
  out += fmt::format("predicted TEPS: {:.4g} (recorded: {:.4g} mean over searches)\n", p.teps,
                     run.mean_bfs_time_s > 0 ? run.mean_traversed_edges / run.mean_bfs_time_s : 0.0);
  for (const std::string& w : p.warnings) out += "note: " + w + "\n";
  return out;
}

}  // namespace zbfs
