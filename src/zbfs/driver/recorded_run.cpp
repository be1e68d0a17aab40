#include "zbfs/driver/recorded_run.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "zbfs/core/error.hpp"
#include "zbfs/driver/json_report.hpp"

namespace zbfs {
namespace {

template <class E>
E enum_named(const std::string& name, std::size_t count, const std::string& what, const std::string& path) {
  for (std::size_t i = 0; i < count; ++i) {
    if (to_string(static_cast<E>(i)) == name) return static_cast<E>(i);
  }
  throw_usage_error("'" + path + "' names an unknown " + what + " '" + name + "'");
}

}  // namespace

RecordedRun read_recorded_run(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_usage_error("cannot read '" + path + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw_usage_error("'" + path + "' is not a JSON document");
  if (j.value("schema", "") != "zbfs.run") throw_usage_error("'" + path + "' is not a zbfs run record");
  const int version = j.value("schema_version", 0);
  if (version < 3) {
    throw_usage_error("'" + path + "' has schema version " + std::to_string(version) +
                      "; projections need version 3 or later (rerun with this zbfs)");
  }
  RecordedRun run;
  try {
    run.ranks = j.at("num_mpi_processes").get<int>();
    const auto& config = j.at("config");
    const std::string partition = config.at("partition").get<std::string>();
    if (partition == "shared")
      throw_usage_error("'" + path + "' is a single-process run (--partition shared): no traffic to project");
    run.partition = parse_partition(partition).value();
    const auto grid = parse_grid_shape(config.at("grid").get<std::string>());
    if (!grid) throw_usage_error("'" + path + "' has a malformed grid");
    run.grid = *grid;
    run.scale = config.at("scale").get<int>();
    const auto& network = j.at("network");
    run.network.name = network.at("name").get<std::string>();
    for (auto [link, key] :
         {std::pair{&run.network.intra_node, "intra_node"}, std::pair{&run.network.inter_node, "inter_node"}}) {
      link->latency_s = network.at(key).at("latency_s").get<double>();
      link->bandwidth_bytes_per_s = network.at(key).at("bandwidth_bytes_per_s").get<double>();
      if (!(link->latency_s >= 0) || !(link->bandwidth_bytes_per_s > 0)) {
        throw_usage_error("'" + path + "' has an impossible network model");
      }
    }
    const auto& searches = j.at("searches");
    // Iterating a JSON value that is not an array or an object would go over the value
    // itself (a string in place of `phases` read as one phase named '').
    for (const char* key : {"searches", "traffic"}) {
      if (!j.at(key).is_array()) throw_usage_error("'" + path + "' has a malformed " + key + " field");
    }
    if (!j.at("phases").is_object()) throw_usage_error("'" + path + "' has a malformed phases field");
    for (const auto& s : searches) {
      run.searches += 1;
      const double edges = s.at("traversed_edges").get<double>();
      const double time_s = s.at("time_s").get<double>();
      if (!(edges >= 0) || !(time_s > 0)) throw_usage_error("'" + path + "' has a search with impossible figures");
      run.mean_traversed_edges += edges;
      run.mean_bfs_time_s += time_s;
      if (s.contains("validate_time_s")) run.validations += 1;
    }
    if (run.searches > 0) {
      run.mean_traversed_edges /= run.searches;
      run.mean_bfs_time_s /= run.searches;
    }
    for (const auto& [name, p] : j.at("phases").items()) {
      const auto phase = enum_named<Phase>(name, kPhaseCount, "phase", path);
      const double time_s = p.at("time_s").at("max").get<double>();
      const double model_s = p.at("modelled_time_s").at("max").get<double>();
      if (!(time_s >= 0) || !(model_s >= 0)) throw_usage_error("'" + path + "' has a negative time in phase " + name);
      run.max_time_s[static_cast<std::size_t>(phase)] = time_s;
      run.max_model_s[static_cast<std::size_t>(phase)] = model_s;
    }
    for (const auto& t : j.at("traffic")) {
      TrafficRecord r;
      r.phase = enum_named<Phase>(t.at("phase").get<std::string>(), kPhaseCount, "phase", path);
      r.role = enum_named<CommRole>(t.at("communicator").get<std::string>(), kCommRoleCount, "communicator", path);
      r.pattern = enum_named<CommPattern>(t.at("pattern").get<std::string>(), kCommPatternCount, "pattern", path);
      r.calls = t.at("calls").get<double>();
      r.messages = t.at("messages").get<double>();
      r.bytes = t.at("bytes").get<double>();
      if (r.calls < 0 || r.messages < 0 || r.bytes < 0) throw_usage_error("negative traffic in '" + path + "'");
      run.traffic.push_back(r);
    }
  } catch (const nlohmann::json::exception& e) {
    throw_usage_error("'" + path + "' lacks a field a projection needs (" + e.what() + ")");
  } catch (const std::bad_optional_access&) {
    throw_usage_error("'" + path + "' has a malformed partition");
  }
  if (run.ranks < 1 || run.grid.size() != run.ranks)
    throw_usage_error("'" + path + "': the grid does not match the ranks");
  if (run.searches == 0) throw_usage_error("'" + path + "' records no searches");
  return run;
}

std::string format_projection(const std::string& path, const RecordedRun& run, const ProjectionTarget& target,
                              const Projection& p) {
  std::string out = fmt::format("recorded: {} ({} rank{}, {} grid {}, scale {}, network {}, {} searches)\n", path,
                                run.ranks, run.ranks == 1 ? "" : "s", to_string(run.partition), run.grid.to_string(),
                                run.scale, run.network.name, static_cast<long long>(run.searches));
  out += fmt::format(
      "projected: {} ranks, grid {}, network {} (inter-node {} + bytes / {}, intra-node {} + bytes / {}), "
      "{} rank{} per node\n",
      target.ranks, target.grid.to_string(), target.network.name, format_duration(target.network.inter_node.latency_s),
      format_bandwidth(target.network.inter_node.bandwidth_bytes_per_s),
      format_duration(target.network.intra_node.latency_s),
      format_bandwidth(target.network.intra_node.bandwidth_bytes_per_s), target.ranks_per_node,
      target.ranks_per_node == 1 ? "" : "s");
  out += fmt::format("per search (construction and generation: per run); per rank: the busiest of {} sampled\n",
                     p.sampled_ranks);
  out += fmt::format("{:<22} {:>12} {:>12} {:>14} {:>12} {:>12}\n", "phase", "recorded_s", "rec_model_s", "bytes/rank",
                     "msgs/rank", "model_s");
  for (const PhaseProjection& ph : p.phases) {
    out += fmt::format("{:<22} {:>12.6f} {:>12.6f} {:>14.0f} {:>12.1f} {:>12.6f}\n",
                       std::string(to_string(ph.phase)) + (ph.per_search ? "" : " (once)"), ph.recorded_time_s,
                       ph.recorded_model_s, ph.bytes_per_rank, ph.messages_per_rank, ph.model_s);
  }
  out += fmt::format(
      "BFS per search: communication {:.6f} s + other work {:.6f} s (recorded time less its modelled "
      "communication, x {}/{}) = {:.6f} s\n",
      p.communication_s, p.local_s, run.ranks, target.ranks, p.bfs_time_s);
  out += fmt::format("predicted TEPS: {:.4g} (recorded: {:.4g} mean over searches)\n", p.teps,
                     run.mean_bfs_time_s > 0 ? run.mean_traversed_edges / run.mean_bfs_time_s : 0.0);
  for (const std::string& w : p.warnings) out += "note: " + w + "\n";
  return out;
}

}  // namespace zbfs
