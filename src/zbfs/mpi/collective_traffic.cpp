#include "zbfs/mpi/collective_traffic.hpp"

#include <algorithm>

namespace zbfs {

int ceil_log2(std::uint64_t n) {
  int r = 0;
  while (r < 63 && (std::uint64_t{1} << r) < n) ++r;
  return r;
}

int floor_log2(std::uint64_t n) {
  int r = 0;
  while (n > 1) {
    n >>= 1;
    ++r;
  }
  return r;
}

ClassTraffic ring_gather_traffic(int group, int off_node, double received_bytes) {
  ClassTraffic t;
  if (group <= 1) return t;
  t.add(off_node > 0 ? LinkClass::kInterNode : LinkClass::kIntraNode, group - 1, received_bytes);
  return t;
}

ClassTraffic doubling_traffic(int group, int on_node, double bytes_per_round) {
  ClassTraffic t;
  if (group <= 1) return t;
  const int rounds = ceil_log2(static_cast<std::uint64_t>(group));
  const int local = std::min(rounds, floor_log2(static_cast<std::uint64_t>(std::max(on_node, 1))));
  t.add(LinkClass::kIntraNode, local, local * bytes_per_round);
  t.add(LinkClass::kInterNode, rounds - local, (rounds - local) * bytes_per_round);
  return t;
}

}  // namespace zbfs
