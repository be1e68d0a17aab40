#include "zbfs/network/network_probe.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <span>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

constexpr int kPingTag = 7331;
constexpr std::array<std::uint64_t, 5> kSizes = {8, 4096, 65536, 1 << 20, 4 << 20};
// Repetitions per size: more for small messages, whose time is noisier.
constexpr std::array<int, 5> kRepeats = {51, 21, 11, 7, 5};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Rank 0's side (`leader`) or the peer's side of one ping-pong series.
std::vector<PingPongSample> ping_pong(const Communicator& comm, int partner, bool leader) {
  std::vector<char> buffer(kSizes.back());
  std::vector<PingPongSample> samples;
  for (std::size_t s = 0; s < kSizes.size(); ++s) {
    const std::span<char> message(buffer.data(), kSizes[s]);
    std::vector<double> times;
    for (int rep = 0; rep <= kRepeats[s]; ++rep) {  // the first is a warm-up
      Stopwatch clock;
      if (leader) {
        comm.send_bytes(message, partner, kPingTag);
        comm.receive_bytes(message, partner, kPingTag);
      } else {
        comm.receive_bytes(message, partner, kPingTag);
        comm.send_bytes(message, partner, kPingTag);
      }
      if (rep > 0) times.push_back(clock.elapsed_s() / 2);
    }
    samples.push_back({kSizes[s], median(times)});
  }
  return samples;
}

// `world` here and below is the probe's unmetered duplicate: its traffic is not booked.
LinkMeasurement measure_pair(const Communicator& world, int peer) {
  LinkMeasurement m;
  if (peer < 0) return m;
  m.peer = peer;
  m.measured = true;
  if (world.rank() == 0) m.samples = ping_pong(world, peer, true);
  if (world.rank() == peer) ping_pong(world, 0, false);
  world.quiet_barrier();
  // Everyone learns rank 0's samples.
  std::vector<double> times(kSizes.size());
  if (world.rank() == 0) {
    for (std::size_t i = 0; i < kSizes.size(); ++i) times[i] = m.samples[i].one_way_s;
  }
  world.broadcast(std::span<double>(times), 0);
  m.samples.clear();
  for (std::size_t i = 0; i < kSizes.size(); ++i) m.samples.push_back({kSizes[i], times[i]});
  m.fit = fit_link(m.samples);
  return m;
}

// Swaps go the way Communicator::exchange_probed moves a message, which is what the
// exchanges the model prices use: the send posted first, then the partner's message
// probed and received (swap_bytes_probed). The order matters: on emulated hosts an
// MPI_Sendrecv (receive posted first) swapped large messages at about half the rate this
// order reaches, which is close to plain TCP both ways at once (docs/network-model.md).

// The loaded swaps: the ping-pong's smallest size (the latency) and its sizes of 64 KiB
// and more (the bandwidth fit). A timed repetition runs a burst of swaps back to back,
// so the pairs pace each other and the start's skew is spread over the burst.
constexpr std::array<std::uint64_t, 4> kLoadedSizes = {8, 65536, 1 << 20, 4 << 20};
constexpr std::array<int, 4> kLoadedBursts = {64, 8, 2, 1};
constexpr std::array<int, 4> kLoadedRepeats = {9, 7, 5, 5};

// Rank r < P/2 pairs with r + P/2 (with P odd the last rank sits out); the pairs whose
// ranks are on different nodes swap each size both ways at once, after a warm-up. Ranks
// outside those pairs wait quietly.
LoadedMeasurement measure_loaded(const Communicator& world, const std::vector<int>& node_of_world) {
  const int half = world.size() / 2;
  const int me = world.rank();
  const int partner = me < half ? me + half : (me < 2 * half ? me - half : -1);
  const bool swaps =
      partner >= 0 && node_of_world[static_cast<std::size_t>(me)] != node_of_world[static_cast<std::size_t>(partner)];
  const int pairs = world.allreduce(swaps && me < half ? 1 : 0, ReduceOp::kSum);
  LoadedMeasurement m;
  if (pairs == 0) return m;
  std::vector<char> sent(swaps ? kLoadedSizes.back() : 0);
  std::vector<char> received(sent.size());
  for (std::size_t s = 0; s < kLoadedSizes.size(); ++s) {
    const std::size_t count = kLoadedSizes[s];
    std::vector<double> mine;                             // this rank's time per swap, per repetition
    for (int rep = 0; rep <= kLoadedRepeats[s]; ++rep) {  // the first is a warm-up
      world.quiet_barrier();
      Stopwatch clock;
      for (int swap = 0; swaps && swap < kLoadedBursts[s]; ++swap) {
        world.swap_bytes_probed(std::span<const char>(sent.data(), count), std::span<char>(received.data(), count),
                                partner, kPingTag);
      }
      if (rep > 0) mine.push_back(swaps ? clock.elapsed_s() / kLoadedBursts[s] : 0.0);
    }
    // Each rank's typical swap first, then the slowest of those: a pair that is slow every
    // time (a worse link) sets the figure, while which pair happens to lag in one
    // repetition does not. The slowest pair of each repetition would read high and noisy,
    // where the model prices sums over a thousand messages, in which such lags average
    // out.
    m.samples.push_back({kLoadedSizes[s], world.quiet_max(median(mine))});
  }
  m.measured = true;
  m.pairs = pairs;
  m.fit = fit_link(m.samples);
  return m;
}

}  // namespace

std::vector<int> node_of_world_ranks(const Communicator& world, std::optional<int> ranks_per_node) {
  std::vector<int> nodes(static_cast<std::size_t>(world.size()));
  if (ranks_per_node) {
    for (int r = 0; r < world.size(); ++r) nodes[static_cast<std::size_t>(r)] = r / *ranks_per_node;
    return nodes;
  }
  // Unmetered: finding the layout is not the run's traffic.
  const Communicator quiet = world.unmetered();
  const int leader = quiet.split_shared().allreduce(world.rank(), ReduceOp::kMin);
  const std::vector<int> leaders = quiet.allgather_value(leader);
  std::map<int, int> number_of_leader;
  for (const int l : leaders) number_of_leader.emplace(l, 0);
  int next = 0;
  for (auto& [l, n] : number_of_leader) n = next++;
  for (std::size_t r = 0; r < nodes.size(); ++r) nodes[r] = number_of_leader[leaders[r]];
  return nodes;
}

NetworkMeasurement measure_network(const Communicator& metered_world, const std::vector<int>& node_of_world) {
  const Communicator world = metered_world.unmetered();
  NetworkMeasurement result;
  Stopwatch clock;
  int intra_peer = -1;
  int inter_peer = -1;
  for (int r = 1; r < world.size(); ++r) {
    const bool same = node_of_world[static_cast<std::size_t>(r)] == node_of_world[0];
    if (same && intra_peer < 0) intra_peer = r;
    if (!same && inter_peer < 0) inter_peer = r;
  }
  result.intra_node = measure_pair(world, intra_peer);
  result.inter_node = measure_pair(world, inter_peer);
  if (result.inter_node.measured) {
    result.inter_node_loaded = measure_loaded(world, node_of_world);
  }
  world.barrier();
  result.elapsed_s = clock.elapsed_s();
  return result;
}

}  // namespace zbfs
