// NetworkModel: the alpha-beta (latency-bandwidth) cost of sending messages, one link
// class for pairs of ranks on the same node and one for pairs on different nodes. A
// message of n bytes over a link costs latency + n / bandwidth; a rank's sends in one
// call are serialised on its link (the one-port model), so k messages of b bytes in all
// cost k * latency + b / bandwidth. Presets name common networks; where each figure
// comes from is in docs/network-model.md. No MPI here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zbfs/core/link_cost.hpp"

namespace zbfs {

struct NetworkModel {
  std::string name = "shm";
  LinkCost intra_node;
  LinkCost inter_node;

  [[nodiscard]] const LinkCost& link(LinkClass c) const { return c == LinkClass::kIntraNode ? intra_node : inter_node; }
  [[nodiscard]] double time_s(const ClassTraffic& t) const { return traffic_time_s(intra_node, inter_node, t); }
};

// What one one-sided operation (a put, a remote atomic) costs its issuer on a link of
// class `link`: where the network does RDMA (the InfiniBand presets, NVLink) and within a
// node (shared memory) the hardware carries it and the issuer only posts it; elsewhere
// (Ethernet, figures given by hand, a measured network) MPI carries each operation as a
// message (osc/pt2pt), at a message's latency. docs/network-model.md has the figures.
double one_sided_op_s(const NetworkModel& network, LinkClass link);

// The preset called `name` (shm, 1gbe, 10gbe, ib-qdr, ib-hdr, tofu-d, nvlink), if there is one.
std::optional<NetworkModel> network_preset(std::string_view name);
const std::vector<std::string>& network_preset_names();

// What the user asked for: a preset, "measure" (ping-pong at start-up), or explicit
// inter-node figures on top of either; and how many consecutive ranks share a node.
struct NetworkChoice {
  std::string name = "measure";
  std::optional<double> latency_s;              // --network-latency, overrides inter-node
  std::optional<double> bandwidth_bytes_per_s;  // --network-bandwidth, overrides inter-node
  std::optional<int> ranks_per_node;            // default: 1 for presets, the real layout for measure

  [[nodiscard]] bool measure() const { return name == "measure"; }
};

// Throws a usage error for an unknown name or a non-positive figure.
void validate_network_choice(const NetworkChoice& choice);
// Puts the choice's explicit inter-node figures, if any, into `model`.
void apply_inter_node_overrides(const NetworkChoice& choice, NetworkModel& model);
// The model of a preset choice with its overrides applied (not for "measure").
NetworkModel model_of(const NetworkChoice& choice);

// Parses "1.5us", "50us", "2ms", "0.000002" (seconds) into seconds, and "1gbit",
// "10Gbit/s", "125MB/s", "3.2GB/s", "1e9" (bytes/s) into bytes per second. Throws a
// usage error naming `what` when the text is not a positive quantity.
double parse_duration_s(std::string_view text, std::string_view what);
double parse_bandwidth_bytes_per_s(std::string_view text, std::string_view what);

// One-way time of one message size, the median over repetitions.
struct PingPongSample {
  std::uint64_t bytes = 0;
  double one_way_s = 0;
};

struct LinkMeasurement {
  bool measured = false;  // false: no pair of this class exists in the job
  int peer = -1;          // the world rank rank 0 measured against
  LinkCost fit;
  std::vector<PingPongSample> samples;
};

// Every rank that has a partner on another node swaps messages with it, all pairs at
// once: what one rank's inter-node link delivers while every rank communicates, as in
// the BFS exchanges. Latency and bandwidth can be far worse than a lone ping-pong's when
// the pairs share something (a NIC per node, a switch uplink, cores that also run the
// network stack, or an emulator's cores).
struct LoadedMeasurement {
  bool measured = false;  // false: no two ranks on different nodes could pair up
  int pairs = 0;          // pairs swapping at once
  // Per size, the slowest rank's typical time per swap (one_way_s: a swap sends and
  // receives the size at once): each rank's median over repetitions, then the largest of
  // those. A repetition is a burst of swaps whose mean time it keeps: the model adds up
  // thousands of messages, so the occasional slow one counts, while the median drops
  // repetitions something else disturbed.
  std::vector<PingPongSample> samples;
  LinkCost fit;  // latency: the smallest swap; bandwidth: fitted through the large ones
};

struct NetworkMeasurement {
  LinkMeasurement intra_node;
  LinkMeasurement inter_node;
  LoadedMeasurement inter_node_loaded;
  double elapsed_s = 0;
};

// The model a run uses for `choice`: the preset with overrides, or the measurement (a
// class not measured takes the other's figures; with neither, the shm preset). The
// inter-node link is the loaded one when measured: exchanges run with every rank
// communicating, and a lone ping-pong overstates what each of them gets.
NetworkModel network_model_for(const NetworkChoice& choice, const NetworkMeasurement* measured);

// Fits latency (the smallest message's time) and bandwidth (least squares over the
// messages of 64 KiB and more) to samples; pure, for tests.
LinkCost fit_link(const std::vector<PingPongSample>& samples);
// The bandwidth that fits samples of 64 KiB and more to latency_s + bytes / bandwidth
// (least squares of the transfer times); throws without such a sample.
double fit_bandwidth(const std::vector<PingPongSample>& samples, double latency_s);

// "50 us", "1.18 GB/s": short human forms for tables.
std::string format_duration(double seconds);
std::string format_bandwidth(double bytes_per_s);

}  // namespace zbfs
