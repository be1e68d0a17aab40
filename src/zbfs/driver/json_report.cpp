#include "zbfs/driver/json_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>

#ifdef ZBFS_SIMGRID
#include <simgrid/version.h>
#endif

#include "zbfs/core/error.hpp"
#include "zbfs/driver/search_harness.hpp"
#include "zbfs/output/output_file.hpp"
#include "zbfs/version.hpp"

namespace zbfs {
namespace {

nlohmann::json to_json(const SummaryStatistics& s) {
  return {{"min", s.min},       {"firstquartile", s.first_quartile},
          {"median", s.median}, {"thirdquartile", s.third_quartile},
          {"max", s.max},       {"mean", s.mean},
          {"stddev", s.stddev}};
}

nlohmann::json to_json(const Spread& s) { return {{"min", s.min}, {"max", s.max}, {"sum", s.sum}}; }

nlohmann::json to_json(const MaxMean& m) { return {{"max", m.max}, {"mean", m.mean}}; }

// A step's phases with anything in them: time, time inside MPI, traffic and counted work,
// each the largest rank's and the mean over ranks, and each work kind's imbalance.
nlohmann::json to_json(const LevelSummary& level) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    const LevelPhaseSummary& s = level.phases[p];
    if (s.empty()) continue;
    nlohmann::json work = nlohmann::json::object();
    for (const WorkKind kind : kAllWorkKinds) {
      const MaxMean& w = s.work[static_cast<std::size_t>(kind)];
      if (w.max > 0)
        work[std::string(to_string(kind))] = {{"max", w.max}, {"mean", w.mean}, {"imbalance", w.imbalance()}};
    }
    j[std::string(to_string(static_cast<Phase>(p)))] = {
        {"time_s", to_json(s.time_s)},         {"mpi_time_s", to_json(s.mpi_s)}, {"messages", to_json(s.messages)},
        {"wire_bytes", to_json(s.wire_bytes)}, {"peers", to_json(s.peers)},      {"work", work}};
  }
  return j;
}

// Phases with any time, traffic, device copies or counted work, each with min / max / sum over ranks.
nlohmann::json to_json(const PhaseBreakdown& b) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseSummary& p = b.phases[i];
    const bool worked = std::any_of(p.work.begin(), p.work.end(), [](const Spread& w) { return w.max > 0; });
    if (p.time_s.max == 0 && p.messages.sum == 0 && p.to_device_bytes.sum + p.to_host_bytes.sum == 0 && !worked) {
      continue;
    }
    j[std::string(to_string(static_cast<Phase>(i)))] = {{"time_s", to_json(p.time_s)},
                                                        {"messages", to_json(p.messages)},
                                                        {"raw_bytes", to_json(p.raw_bytes)},
                                                        {"wire_bytes", to_json(p.wire_bytes)},
                                                        {"modelled_time_s", to_json(p.model_s)},
                                                        {"mpi_time_s", to_json(p.mpi_s)},
                                                        {"wait_time_s", to_json(p.wait_s)},
                                                        {"encode_time_s", to_json(p.encode_s)},
                                                        {"decode_time_s", to_json(p.decode_s)},
                                                        {"id_bytes", to_json(p.id_bytes)},
                                                        {"host_to_device_bytes", to_json(p.to_device_bytes)},
                                                        {"device_to_host_bytes", to_json(p.to_host_bytes)},
                                                        {"stream_modelled_time_s", to_json(p.stream_model_s)},
                                                        {"stream_held_time_s", to_json(p.stream_held_s)},
                                                        {"stream_wait_time_s", to_json(p.stream_wait_s)},
                                                        {"overlap_time_s", to_json(p.overlap_s)}};
    nlohmann::json frames = nlohmann::json::object();
    for (const CodecId codec : kAllCodecs) {
      const double n = p.frames[static_cast<std::size_t>(codec)];
      if (n > 0) frames[std::string(to_string(codec))] = n;
    }
    j[std::string(to_string(static_cast<Phase>(i)))]["frames"] = frames;
    nlohmann::json work = nlohmann::json::object();
    for (const WorkKind kind : kAllWorkKinds) {
      const Spread& w = p.work[static_cast<std::size_t>(kind)];
      if (w.max > 0) work[std::string(to_string(kind))] = to_json(w);
    }
    j[std::string(to_string(static_cast<Phase>(i)))]["work"] = work;
    // Routed exchanges: items merged away and bytes per hop (empty when none ran).
    nlohmann::json hops = nlohmann::json::array();
    for (std::size_t h = 0; h < p.routed_hops(); ++h) hops.push_back(p.hop_bytes[h]);
    j[std::string(to_string(static_cast<Phase>(i)))]["route"] = {{"merged_items", to_json(p.merged_items)},
                                                                 {"hop_bytes", hops}};
  }
  return j;
}

// Calls, messages and bytes summed over ranks per phase, communicator and pattern: what
// `zbfs model` projects to other rank counts.
nlohmann::json traffic_json(const PhaseBreakdown& b) {
  nlohmann::json j = nlohmann::json::array();
  for (const TrafficRecord& t : b.traffic) {
    j.push_back({{"phase", std::string(to_string(t.phase))},
                 {"communicator", std::string(to_string(t.role))},
                 {"pattern", std::string(to_string(t.pattern))},
                 {"calls", t.calls},
                 {"messages", t.messages},
                 {"bytes", t.bytes}});
  }
  return j;
}

nlohmann::json to_json(const LinkCost& l) {
  return {{"latency_s", l.latency_s}, {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s}};
}

nlohmann::json to_json(const std::vector<PingPongSample>& samples) {
  nlohmann::json j = nlohmann::json::array();
  for (const PingPongSample& s : samples) j.push_back({{"bytes", s.bytes}, {"one_way_s", s.one_way_s}});
  return j;
}

nlohmann::json to_json(const LinkMeasurement& m) {
  return {{"measured", m.measured}, {"peer", m.peer}, {"fit", to_json(m.fit)}, {"samples", to_json(m.samples)}};
}

nlohmann::json to_json(const LoadedMeasurement& m) {
  return {{"measured", m.measured}, {"pairs", m.pairs}, {"fit", to_json(m.fit)}, {"samples", to_json(m.samples)}};
}

nlohmann::json network_json(const RunResult& r) {
  nlohmann::json j = {
      {"name", r.network.name},
      {"intra_node", to_json(r.network.intra_node)},
      {"inter_node", to_json(r.network.inter_node)},
      {"nodes", r.num_nodes},
      {"ranks_per_node",
       r.config.network.ranks_per_node ? nlohmann::json(*r.config.network.ranks_per_node) : nlohmann::json(nullptr)}};
  if (r.network_probe) {
    j["measurement"] = {{"intra_node", to_json(r.network_probe->intra_node)},
                        {"inter_node", to_json(r.network_probe->inter_node)},
                        {"inter_node_loaded", to_json(r.network_probe->inter_node_loaded)},
                        {"elapsed_s", r.network_probe->elapsed_s}};
  }
  return j;
}

nlohmann::json to_json(const SearchResult& s) {
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t i = 0; i < s.stats.steps.size(); ++i) {
    const BfsStep& step = s.stats.steps[i];
    steps.push_back({{"direction", to_string(step.kind)},
                     {"frontier_vertices", step.frontier_vertices},
                     {"discovered_vertices", step.discovered_vertices},
                     {"time_s", step.time_s}});
    if (i < s.levels.size()) steps.back()["work"] = to_json(s.levels[i]);
  }
  nlohmann::json j = {{"root", s.root},
                      {"time_s", s.time_s},
                      {"traversed_edges", s.traversed_edges},
                      {"teps", s.teps},
                      {"levels", s.stats.levels()},
                      {"reached_vertices", s.reached_vertices},
                      {"phases_s",
                       {{"init", s.stats.init_time_s},
                        {"top_down", s.stats.top_down_time_s},
                        {"bottom_up", s.stats.bottom_up_time_s},
                        {"conversion", s.stats.conversion_time_s},
                        {"attach", s.stats.attach_time_s},
                        {"output", s.stats.output_time_s}}},
                      {"steps", steps},
                      {"phases", to_json(s.phases)}};
  if (s.validated) j["validate_time_s"] = s.validate_time_s;
  return j;
}

nlohmann::json sssp_to_json(const SearchResult& s) {
  const SsspStats& k = s.sssp;
  nlohmann::json j = {{"root", s.root},
                      {"time_s", s.time_s},
                      {"traversed_edges", s.traversed_edges},
                      {"teps", s.teps},
                      {"reached_vertices", s.reached_vertices},
                      {"delta", k.delta},
                      {"buckets", k.buckets},
                      {"light_rounds", k.light_rounds},
                      {"light_edges", k.light_edges},
                      {"heavy_edges", k.heavy_edges},
                      {"improvements", k.improvements},
                      {"pull_buckets", k.pull_buckets},
                      {"phases_s", {{"light", k.light_time_s}, {"heavy", k.heavy_time_s}, {"export", k.export_time_s}}},
                      {"phases", to_json(s.phases)}};
  if (s.validated) j["validate_time_s"] = s.validate_time_s;
  return j;
}

// One kernel's statistics in the summary (null when it did not run).
nlohmann::json kernel_summary_json(const std::optional<KernelStatistics>& k, bool validated) {
  if (!k) return nullptr;
  return {{"time_s", to_json(k->time_s)},
          {"teps",
           {{"min", k->teps.min},
            {"firstquartile", k->teps.first_quartile},
            {"median", k->teps.median},
            {"thirdquartile", k->teps.third_quartile},
            {"max", k->teps.max},
            {"harmonic_mean", k->teps.harmonic_mean},
            {"harmonic_stddev", k->teps.harmonic_stddev}}},
          {"validate_time_s", validated ? to_json(k->validate_time_s) : nlohmann::json(nullptr)}};
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

// Whether the run was simulated: null for a real one; the simulated-cluster build's
// (ZBFS_SIMGRID) names its simulator, and zbfs-lab simulate adds the platform it ran on.
nlohmann::json simulation_json() {
#ifdef ZBFS_SIMGRID
  return {{"simulator", "SimGrid SMPI " + std::to_string(SIMGRID_VERSION_MAJOR) + "." +
                            std::to_string(SIMGRID_VERSION_MINOR) + "." + std::to_string(SIMGRID_VERSION_PATCH)}};
#else
  return nullptr;
#endif
}

// Where the graph came from: a file, or a generator and its parameters.
nlohmann::json graph_source_json(const RunConfig& c) {
  if (c.input) {
    return {{"kind", "file"},
            {"path", c.input->path},
            {"format", c.input->format ? nlohmann::json(to_string(*c.input->format)) : nlohmann::json("detected")},
            {"relabel", c.input->relabel}};
  }
  const GraphSpec& spec = c.graph;
  nlohmann::json j = {{"kind", to_string(spec.kind)}, {"vertices", graph_vertices(spec)}};
  if (spec.kind == GraphKind::kRmat) j["initiator"] = {spec.a, spec.b, spec.c};
  if (spec.kind == GraphKind::kGnm) j["edges"] = expected_graph_edges(spec);
  if (spec.kind == GraphKind::kRgg) {
    if (spec.radius > 0) j["radius"] = spec.radius;
    j["degree"] = spec.radius > 0
                      ? nlohmann::json(nullptr)
                      : nlohmann::json(spec.degree > 0 ? spec.degree : 2.0 * static_cast<double>(spec.edgefactor));
  }
  return j;
}

nlohmann::json copies_json(const HostDeviceTraffic& t) {
  return {{"host_to_device_bytes", t.to_device}, {"device_to_host_bytes", t.to_host}};
}

nlohmann::json codec_trial_json(const CodecTrialRecord& t) {
  return {{"roots", t.roots},
          {"coded_time_s", t.coded_s},
          {"plain_time_s", t.plain_s},
          {"chosen", t.chose_coded ? "coded" : "plain"},
          {"time_s", t.time_s}};
}

nlohmann::json device_json(const DeviceRecord& d) {
  const nlohmann::json kernel1 = !d.kernel1 ? nlohmann::json(nullptr)
                                            : nlohmann::json{{"send_s", d.kernel1->send_s},
                                                             {"order_s", d.kernel1->order_s},
                                                             {"lists_s", d.kernel1->lists_s},
                                                             {"fetch_s", d.kernel1->fetch_s}};
  return {{"name", d.name},
          {"open_s", d.open_s},
          {"kernel1", kernel1},
          {"host_to_device_bytes", d.construction.to_device + d.searches.to_device},
          {"device_to_host_bytes", d.construction.to_host + d.searches.to_host},
          {"construction", copies_json(d.construction)},
          {"searches", copies_json(d.searches)},
          {"id_transfer", d.id_transfer},
          {"exchange", d.exchange},
          {"id_lists", {{"framed", d.lists_framed}, {"raw", d.lists_raw}}},
          {"pcie_calibration", d.id_transfer != "priced" ? nlohmann::json(nullptr)
                                                         : nlohmann::json{{"copy_latency_s", d.pcie.copy_latency_s},
                                                                          {"copy_bytes_per_s", d.pcie.copy_bytes_per_s},
                                                                          {"frame_latency_s", d.pcie.frame_latency_s},
                                                                          {"frame_s_per_id", d.pcie.frame_s_per_id}}}};
}

// The run's energy: what was measured, joules per phase, and each kernel's Green Graph500
// figure (its mean power while searching, and TEPS per watt of it).
nlohmann::json energy_json(const RunResult& r) {
  const EnergyRecord& e = r.energy;
  nlohmann::json joules = nlohmann::json::object();
  for (std::size_t p = 0; p < kEnergyPhases; ++p) {
    const auto phase = static_cast<EnergyPhase>(p);
    const EnergyJoules& j = e.joules[p];
    joules[to_string(phase)] = {{"host", e.host_measured ? nlohmann::json(j.host) : nlohmann::json(nullptr)},
                                {"device", e.device_measured ? nlohmann::json(j.device) : nlohmann::json(nullptr)},
                                {"total", e.total(phase)}};
  }
  const auto figure = [](const std::optional<KernelStatistics>& k) {
    if (!k || !k->mean_power_w || *k->mean_power_w <= 0) return nlohmann::json(nullptr);
    return nlohmann::json{{"mean_power_w", *k->mean_power_w}, {"teps_per_w", k->teps.harmonic_mean / *k->mean_power_w}};
  };
  return {{"measured", e.measured()},
          {"host_measured", e.host_measured},
          {"device_measured", e.device_in_run ? nlohmann::json(e.device_measured) : nlohmann::json(nullptr)},
          {"why_not", e.why_not.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.why_not)},
          {"counters", e.counters},
          {"joules", e.measured() ? joules : nlohmann::json(nullptr)},
          {"bfs", figure(r.result_block.bfs)},
          {"sssp", figure(r.result_block.sssp)}};
}

}  // namespace

// The run's configuration as it ran (the grid, a trial's folds and the route resolved).
nlohmann::json config_json(const RunResult& r) {
  const RunConfig& c = r.config;
  return {{"scale", c.graph.scale},
          {"edgefactor", c.graph.edgefactor},
          {"seed", c.graph.seed},
          {"roots", c.num_roots},
          {"kernels", to_string(c.kernels)},
          {"delta", c.delta ? nlohmann::json(*c.delta) : nlohmann::json(nullptr)},
          {"direction", std::string(to_string(c.bfs.direction))},
          {"alpha", c.bfs.alpha},
          {"beta", c.bfs.beta},
          {"prune", c.prune},
          {"backend", std::string(to_string(c.backend))},
          {"device_exchange", std::string(to_string(c.device_exchange))},
          {"level_loop", std::string(to_string(c.level_loop))},
          {"validate", c.validate},
          {"edge_list", std::string(to_string(c.edge_list))},
          {"adjacency", std::string(to_string(c.adjacency))},
          {"hypersparse", std::string(to_string(c.hypersparse))},
          {"partition", c.shared_memory ? std::string("shared") : std::string(to_string(c.partition))},
          {"grid", r.grid.to_string()},
          {"grid_stack", r.grid.stack},
          {"column_gather", std::string(to_string(c.column_gather))},
          {"transport", std::string(to_string(c.transport))},
          {"overlap", folds_pipelined(c, r.codec_trial ? &*r.codec_trial : nullptr)},
          {"batch_bytes", c.batch_bytes},
          {"codec", std::string(c.codec.name())},
          {"codec_trial", c.codec_trial},
          {"route", c.route ? nlohmann::json(std::string(to_string(c.route->kind))) : nlohmann::json(nullptr)},
          {"route_dims", c.route && c.route->kind == RouteKind::kGridK && !c.route->dims.empty()
                             ? nlohmann::json(RoutePlan::describe_dims(c.route->dims))
                             : nlohmann::json(nullptr)},
          {"dedup", c.route ? nlohmann::json(c.route->dedup) : nlohmann::json(nullptr)},
          {"time_waits", c.time_waits},
          {"work_costs", c.work_costs ? nlohmann::json(c.work_costs_path) : nlohmann::json(nullptr)},
          {"powercap", c.powercap_root},
          {"graph_source", graph_source_json(c)}};
}

nlohmann::json to_json(const RunResult& r) {
  const RunConfig& c = r.config;
  nlohmann::json searches = nlohmann::json::array();
  for (const SearchResult& s : r.searches) searches.push_back(to_json(s));
  nlohmann::json sssp_searches = nlohmann::json::array();
  for (const SearchResult& s : r.sssp_searches) sssp_searches.push_back(sssp_to_json(s));
  const ResultBlock& b = r.result_block;
  const nlohmann::json bfs = kernel_summary_json(b.bfs, b.validated);
  return {
      {"schema", "zbfs.run"},
      {"schema_version", kRunSchemaVersion},
      {"software", {{"name", "zbfs"}, {"version", kVersion}}},
      {"host", host_name()},
      {"simulated", simulation_json()},
      {"threads", r.threads},
      {"num_mpi_processes", r.num_processes},
      {"config", config_json(r)},
      {"graph",
       {{"num_vertices", r.num_vertices},
        {"num_input_edges", r.num_input_edges},
        {"num_graph_edges", r.num_graph_edges},
        {"vertex_id_bits", r.vertex_id_bits}}},
      {"memory",
       {{"estimated_peak_bytes", r.estimated_peak_bytes},
        {"peak_rss_bytes", r.peak_rss_bytes},
        {"peak_share_bytes", r.peak_share_bytes},
        {"edge_list_kept", r.edge_list_kept},
        {"adjacency", r.adjacency_compressed ? "compressed" : "plain"},
        {"adjacency_bytes", r.adjacency_bytes},
        {"hypersparse_ranks", r.hypersparse_ranks}}},
      {"generation_time_s", r.generation_time_s},
      {"construction_time_s", r.construction_time_s},
      {"searches", searches},
      {"sssp_searches", sssp_searches},
      {"phases", to_json(r.phases)},
      {"traffic", traffic_json(r.phases)},
      {"network", network_json(r)},
      {"device", r.device ? device_json(*r.device) : nlohmann::json(nullptr)},
      {"codec_trial", r.codec_trial ? codec_trial_json(*r.codec_trial) : nlohmann::json(nullptr)},
      {"energy", energy_json(r)},
      {"rma_windows", c.transport != Transport::kRma
                          ? nlohmann::json(nullptr)
                          : nlohmann::json{{"bytes_max", r.rma_window_bytes}, {"growths_max", r.rma_window_growths}}},
      {"summary",
       {{"bfs_time_s", bfs.is_null() ? bfs : bfs["time_s"]},
        {"nedge", to_json(b.nedge)},
        {"teps", bfs.is_null() ? bfs : bfs["teps"]},
        {"validate_time_s", bfs.is_null() ? bfs : bfs["validate_time_s"]},
        {"small_component_keys", count_small_component_keys(b.bfs ? r.searches : r.sssp_searches)},
        {"sssp", kernel_summary_json(b.sssp, b.validated)}}},
  };
}

void write_json_report(const RunResult& result, const std::string& path) {
  const std::string text = to_json(result).dump(2) + '\n';
  OutputFile out(path, text.size());
  out.write_text(text);
  out.commit();
}

}  // namespace zbfs
