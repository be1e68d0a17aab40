// zbfs_route_setup: what one rank's route setup costs at a given rank count, without
// running those ranks (issue 57: at most 1 s a rank at P = 65,536). For each route and
// P, a sample of ranks each build what a rank builds before its first routed exchange:
// the plan, its hop peers (the lanes of a routed stream) and the stream's slot table
// (where each destination's items go next, for routes of up to three hops). Prints one
// line per route and P: the slowest sampled rank's time, and the most peers and bytes
// (slot table and empty buckets) a sampled rank holds.
//
//   zbfs_route_setup                       P = 1,024 to 65,536, every route
//   zbfs_route_setup --ranks 65536 --samples 16

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "zbfs/core/timer.hpp"
#include "zbfs/wire/routed/route_plan.hpp"
#include "zbfs/wire/routed/routed_update_stream.hpp"

namespace {

using zbfs::RouteKind;
using zbfs::RoutePlan;

// gridk's dims for P: as square a 3D grid as divides it (1 x 1 x P at worst).
std::vector<int> cube_dims(int p) {
  std::vector<int> best = {1, 1, p};
  int best_spread = p;
  for (int a = 1; a * a * a <= p; ++a) {
    if (p % a != 0) continue;
    for (int b = a; a * b * b <= p; ++b) {
      if ((p / a) % b != 0) continue;
      const int c = p / a / b;
      if (c - a < best_spread) {
        best = {a, b, c};
        best_spread = c - a;
      }
    }
  }
  return best;
}

struct Setup {
  double seconds = 0;
  std::size_t peers = 0;
  std::size_t table_bytes = 0;
};

Setup set_up(RouteKind kind, int p, int me) {
  const zbfs::Stopwatch clock;
  const RoutePlan plan(kind, p, kind == RouteKind::kGridK ? cube_dims(p) : std::vector<int>{});
  const zbfs::StreamRoute route(plan, me);
  Setup setup;
  setup.seconds = clock.elapsed_s();
  for (const RoutePlan::HopPeers& hop : route.peers)
    setup.peers = std::max(setup.peers, hop.to.size() + hop.from.size());
  for (const std::vector<std::int32_t>& slots : route.slots) setup.table_bytes += slots.size() * sizeof(std::int32_t);
  setup.table_bytes += route.buckets * sizeof(std::vector<int>);  // a stream's empty buckets
  return setup;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ranks = {1024, 4096, 16384, 65536};
  int samples = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ranks" && i + 1 < argc) {
      ranks = {std::atoi(argv[++i])};
    } else if (arg == "--samples" && i + 1 < argc) {
      samples = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: zbfs_route_setup [--ranks P] [--samples N]\n");
      return 2;
    }
  }
  if (ranks[0] < 1) {
    std::fprintf(stderr, "zbfs_route_setup: --ranks must be at least 1\n");
    return 2;
  }
  std::printf("%-9s %7s %12s %10s %12s\n", "route", "P", "slowest s", "most peers", "table KiB");
  for (const RouteKind kind : {RouteKind::kDirect, RouteKind::kGrid2, RouteKind::kGridK, RouteKind::kHypercube}) {
    for (const int p : ranks) {
      Setup worst;
      for (int s = 0; s < samples; ++s) {
        // Spread over the ranks, the last one included (a short row, a handed-in rank).
        const int me = samples == 1 ? p - 1 : static_cast<int>(static_cast<long long>(p - 1) * s / (samples - 1));
        const Setup setup = set_up(kind, p, me);
        worst.seconds = std::max(worst.seconds, setup.seconds);
        worst.peers = std::max(worst.peers, setup.peers);
        worst.table_bytes = std::max(worst.table_bytes, setup.table_bytes);
      }
      std::printf("%-9s %7d %12.6f %10zu %12.1f\n", std::string(zbfs::to_string(kind)).c_str(), p, worst.seconds,
                  worst.peers, static_cast<double>(worst.table_bytes) / 1024);
    }
  }
  return 0;
}
