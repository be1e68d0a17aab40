// `zbfs trace`: one process plans a hypothetical P-rank job's searches on the whole graph
// (replay/search_plan.hpp) and writes what each rank would send, and its counted work, as
// SimGrid time-independent traces (one file a rank and traces.txt, which `smpirun
// -replay` reads; zbfs-lab replay runs it), with a JSON summary of each search's levels
// and per-phase traffic as a run's record books it.
#pragma once

#include <string>

#include "zbfs/driver/run_config.hpp"

namespace zbfs {

struct TraceOptions {
  int ranks = 0;
  // The traces' folder (made; it must not exist); empty: the summary only.
  std::string trace_dir;
  // The simulated hosts' speed, which turns counted seconds into `compute` flops.
  double host_speed_flops = 1e9;
  // What the simulator charges a probe (zbfs-lab's smpi/iprobe), paid once a peer by a
  // probed exchange (0: nothing).
  double probe_s = 0;
};

// Plans every search key's search and writes the summary (config.json_path) and traces.
// Refuses (usage error) what the plan does not model: codecs, routes, pipelined or
// one-sided exchanges, the union column gather, pruning, SSSP, device backends, graph
// files.
void run_trace(const RunConfig& config, const TraceOptions& options);

}  // namespace zbfs
