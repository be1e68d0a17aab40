// What one single-source shortest-path search did (Graph500's kernel 3): the bucket width,
// the buckets it settled, its rounds and relaxations, and where its time went. Kernels
// fill this; the driver turns it into JSON.
#pragma once

#include <cstdint>

namespace zbfs {

struct SsspStats {
  double delta = 0;                // the bucket width
  std::uint64_t buckets = 0;       // buckets settled (a bucket visited again counts again)
  std::uint64_t light_rounds = 0;  // rounds of light relaxations over all buckets
  std::uint64_t light_edges = 0;   // light edges scanned (w < delta)
  std::uint64_t heavy_edges = 0;   // heavy edges scanned (w >= delta), once per settled vertex
  std::uint64_t improvements = 0;  // relaxations that lowered a distance
  std::uint64_t pull_buckets = 0;  // buckets whose heavy edges the open vertices pulled
  std::uint64_t reached_vertices = 0;
  double light_time_s = 0;
  double heavy_time_s = 0;
  double export_time_s = 0;  // writing parents and distances in the input's ids
};

}  // namespace zbfs
