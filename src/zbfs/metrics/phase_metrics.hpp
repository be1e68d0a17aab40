// Per-phase counters of one rank: time, messages and bytes (raw, and on the wire once
// codecs exist) for each phase of the distributed benchmark. Communicators add their
// traffic to whatever phase is current; ScopedPhase makes a phase current and times it.
// Nothing here is collective; metrics/rank_aggregation.hpp aggregates over ranks.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "zbfs/codec/codec_id.hpp"
#include "zbfs/core/link_cost.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/metrics/work_counts.hpp"
#include "zbfs/mpi/traffic.hpp"

namespace zbfs {

enum class Phase : int {
  kGeneration,
  kConstruction,
  kLocalExpansion,        // BFS work on local data (frontier expansion, bottom-up checks)
  kColumnExchange,        // gathering the frontier along the processor column (expand)
  kRowExchange,           // sending discovered vertices to their owners (fold)
  kTerminationCheck,      // the per-level allreduce of frontier sizes
  kPredecessorReduction,  // bringing parents to the vertex owners after a search
  kValidation,
  kOther,
};
constexpr std::size_t kPhaseCount = 9;

std::string_view to_string(Phase phase);

// The communicator roles and collective patterns traffic is tallied by (mpi/traffic.hpp).
std::string_view to_string(CommRole role);
std::string_view to_string(CommPattern pattern);

// Routed exchanges (wire/routed/routed_exchange.hpp) book bytes per hop; a read's replies
// count as the hops after its requests'. Hops past the last slot add to it.
constexpr std::size_t kMaxRouteHops = 32;

// One rank's calls, messages and bytes of one (phase, role, pattern).
struct TrafficTally {
  std::uint64_t calls = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

struct PhaseCounters {
  double time_s = 0;
  std::uint64_t messages = 0;
  std::uint64_t raw_bytes = 0;   // payload bytes this rank sent to other ranks
  std::uint64_t wire_bytes = 0;  // the same after encoding (equal to raw without a codec)
  double model_s = 0;            // the same traffic's time under the run's network model
  double mpi_s = 0;              // time inside MPI calls (communication and waiting for peers)
  // With wait timing on (--time-waits): time in the barrier before each collective, that
  // is, waiting for the last rank to arrive. It is not part of mpi_s, which is then the
  // collective itself once everyone is there.
  double wait_s = 0;
  double encode_s = 0;  // encoding messages (sorting sets included)
  double decode_s = 0;  // decoding them
  // The exchanged vertex ids as plain 64-bit ids (a bitmap's set bits times 8): the
  // volume a 64-bit id exchange would send, control words aside.
  std::uint64_t id_bytes = 0;
  std::array<std::uint64_t, kCodecCount> frames{};       // frames sent, by the codec that encoded them
  std::uint64_t merged_items = 0;                        // routed items removed by merging on this rank
  std::array<std::uint64_t, kMaxRouteHops> hop_bytes{};  // routed bytes sent, per hop
  // A device backend's copies between host and device memory (backend/).
  std::uint64_t to_device_bytes = 0;
  std::uint64_t to_host_bytes = 0;
  // Pipelined exchanges (--overlap on; mpi/message_stream.hpp), already counted above:
  // their traffic's time under the network model, the time they held the rank (inside
  // their MPI calls and blocked at their ends), and the overlap, the modelled time that
  // did not show as held time, having run while the rank computed.
  double stream_model_s = 0;
  double stream_held_s = 0;
  double stream_wait_s = 0;  // of the held time, blocked at their ends
  double overlap_s = 0;
  // Counted work (metrics/work_counts.hpp).
  WorkCounts work{};

  PhaseCounters& operator+=(const PhaseCounters& o) {
    for (std::size_t k = 0; k < kWorkKindCount; ++k) work[k] += o.work[k];
    stream_model_s += o.stream_model_s;
    stream_held_s += o.stream_held_s;
    stream_wait_s += o.stream_wait_s;
    overlap_s += o.overlap_s;
    to_device_bytes += o.to_device_bytes;
    to_host_bytes += o.to_host_bytes;
    merged_items += o.merged_items;
    for (std::size_t h = 0; h < kMaxRouteHops; ++h) hop_bytes[h] += o.hop_bytes[h];
    time_s += o.time_s;
    model_s += o.model_s;
    mpi_s += o.mpi_s;
    wait_s += o.wait_s;
    encode_s += o.encode_s;
    decode_s += o.decode_s;
    id_bytes += o.id_bytes;
    for (std::size_t c = 0; c < kCodecCount; ++c) frames[c] += o.frames[c];
    messages += o.messages;
    raw_bytes += o.raw_bytes;
    wire_bytes += o.wire_bytes;
    return *this;
  }
  PhaseCounters& operator-=(const PhaseCounters& o) {
    for (std::size_t k = 0; k < kWorkKindCount; ++k) work[k] -= o.work[k];
    stream_model_s -= o.stream_model_s;
    stream_held_s -= o.stream_held_s;
    stream_wait_s -= o.stream_wait_s;
    overlap_s -= o.overlap_s;
    to_device_bytes -= o.to_device_bytes;
    to_host_bytes -= o.to_host_bytes;
    merged_items -= o.merged_items;
    for (std::size_t h = 0; h < kMaxRouteHops; ++h) hop_bytes[h] -= o.hop_bytes[h];
    time_s -= o.time_s;
    model_s -= o.model_s;
    mpi_s -= o.mpi_s;
    wait_s -= o.wait_s;
    encode_s -= o.encode_s;
    decode_s -= o.decode_s;
    id_bytes -= o.id_bytes;
    for (std::size_t c = 0; c < kCodecCount; ++c) frames[c] -= o.frames[c];
    messages -= o.messages;
    raw_bytes -= o.raw_bytes;
    wire_bytes -= o.wire_bytes;
    return *this;
  }
};

// The counters of a rank, per phase. As the TrafficObserver of the communicators it is
// attached to, it books every call in the current phase and prices it with the links
// given to price_links (0 until then, and for calls of communicators without a node
// layout).
class PhaseMetrics final : public TrafficObserver {
 public:
  void set_current(Phase phase) { current_ = phase; }

  // The network model's two link classes, which price every call from now on.
  void price_links(const LinkCost& intra_node, const LinkCost& inter_node) { links_ = {intra_node, inter_node}; }
  // The cost of a link of class `link`, or nullptr before price_links.
  [[nodiscard]] const LinkCost* link(LinkClass link) const {
    return links_ ? &(*links_)[static_cast<std::size_t>(link)] : nullptr;
  }

  void on_call(CommRole role, CommPattern pattern, std::uint64_t messages, std::uint64_t bytes,
               const ClassTraffic* by_link, double mpi_s) override {
    const double model_s = by_link != nullptr && links_ ? traffic_time_s((*links_)[0], (*links_)[1], *by_link) : 0.0;
    add_traffic(role, pattern, messages, bytes, bytes, model_s, mpi_s);
  }
  void on_wait(double seconds) override { add_wait(seconds); }
  void on_stream(CommRole role, std::uint64_t messages, std::uint64_t bytes, const ClassTraffic* by_link, double mpi_s,
                 double wait_s) override {
    const double model_s = by_link != nullptr && links_ ? traffic_time_s((*links_)[0], (*links_)[1], *by_link) : 0.0;
    // Its wait for the last messages is a point-to-point wait, which stays inside MPI
    // (wait_s is the barrier before collectives, --time-waits).
    add_traffic(role, CommPattern::kPersonalized, messages, bytes, bytes, model_s, mpi_s + wait_s);
    PhaseCounters& c = counters_[index(current_)];
    c.stream_model_s += model_s;
    c.stream_held_s += mpi_s + wait_s;
    c.stream_wait_s += wait_s;
    c.overlap_s += std::max(0.0, model_s - mpi_s - wait_s);
  }

  // One call's traffic (this rank's sends) in the current phase.
  void add_traffic(CommRole role, CommPattern pattern, std::uint64_t messages, std::uint64_t raw_bytes,
                   std::uint64_t wire_bytes, double model_s, double mpi_s) {
    PhaseCounters& c = counters_[index(current_)];
    c.messages += messages;
    c.raw_bytes += raw_bytes;
    c.wire_bytes += wire_bytes;
    c.model_s += model_s;
    c.mpi_s += mpi_s;
    std::uint64_t& peers = level_peers_[index(current_)];
    peers = std::max(peers, messages);
    TrafficTally& t = tally_[tally_index(current_, role, pattern)];
    ++t.calls;
    t.messages += messages;
    t.bytes += raw_bytes;
    add_work(WorkKind::kExchangedBytes, raw_bytes);
  }
  // An exchange encoded what it sent: raw_bytes is what the plain exchange would have
  // sent, wire_bytes what the communicator carried (already counted as both by it).
  void add_codec_work(std::uint64_t raw_bytes, std::uint64_t wire_bytes, double encode_s, double decode_s) {
    PhaseCounters& c = counters_[index(current_)];
    c.raw_bytes += raw_bytes;
    c.raw_bytes -= wire_bytes;
    c.encode_s += encode_s;
    c.decode_s += decode_s;
    add_work(WorkKind::kCodecBytes, raw_bytes);
  }
  // Vertex ids exchanged in the current phase, as ids (see PhaseCounters::id_bytes).
  void add_ids(std::uint64_t ids) { counters_[index(current_)].id_bytes += ids * sizeof(std::uint64_t); }
  // One routed exchange on this rank: items merged away, bytes sent per hop.
  void add_route(std::uint64_t merged_items, std::span<const std::uint64_t> hop_bytes) {
    PhaseCounters& c = counters_[index(current_)];
    c.merged_items += merged_items;
    std::uint64_t routed = 0;
    for (std::size_t h = 0; h < hop_bytes.size(); ++h) {
      c.hop_bytes[std::min(h, kMaxRouteHops - 1)] += hop_bytes[h];
      routed += hop_bytes[h];
    }
    add_work(WorkKind::kRoutedBytes, routed);
  }
  // Counted work of the current phase; priced and charged to the simulated clock when
  // charge_work was called.
  void add_work(WorkKind kind, std::uint64_t units) {
    counters_[index(current_)].work[static_cast<std::size_t>(kind)] += units;
    if (charge_ != nullptr && units != 0) charge_(costs_.price_s(kind, units));
  }
  // From now on every count is priced at `costs` and its seconds passed to `charge` (the
  // simulated build's compute charge: mpi/simulated_compute.hpp).
  void charge_work(const WorkCosts& costs, void (*charge)(double seconds)) {
    costs_ = costs;
    charge_ = charge;
  }
  // The most peers one call of each phase sent to since the last begin_level() (a level's
  // record: metrics/level_work.hpp).
  void begin_level() { level_peers_.fill(0); }
  [[nodiscard]] std::uint64_t level_peers(Phase phase) const { return level_peers_[index(phase)]; }
  void add_frame(CodecId codec) { ++counters_[index(current_)].frames[static_cast<std::size_t>(codec)]; }
  void add_time(Phase phase, double seconds) { counters_[index(phase)].time_s += seconds; }
  // Bytes a device backend copied host to device and back, booked in `phase`.
  void add_device_copies(Phase phase, std::uint64_t to_device, std::uint64_t to_host) {
    counters_[index(phase)].to_device_bytes += to_device;
    counters_[index(phase)].to_host_bytes += to_host;
  }
  [[nodiscard]] Phase current() const { return current_; }
  // Time waiting for peers before a collective, in the current phase.
  void add_wait(double seconds) { counters_[index(current_)].wait_s += seconds; }

  [[nodiscard]] const PhaseCounters& operator[](Phase phase) const { return counters_[index(phase)]; }
  [[nodiscard]] const std::array<PhaseCounters, kPhaseCount>& all() const { return counters_; }
  [[nodiscard]] const TrafficTally& tally(Phase phase, CommRole role, CommPattern pattern) const {
    return tally_[tally_index(phase, role, pattern)];
  }

  // Counters accumulated since `earlier` (a copy taken before).
  [[nodiscard]] PhaseMetrics since(const PhaseMetrics& earlier) const {
    PhaseMetrics d = *this;
    for (std::size_t i = 0; i < kPhaseCount; ++i) d.counters_[i] -= earlier.counters_[i];
    for (std::size_t i = 0; i < kTallies; ++i) {
      d.tally_[i].calls -= earlier.tally_[i].calls;
      d.tally_[i].messages -= earlier.tally_[i].messages;
      d.tally_[i].bytes -= earlier.tally_[i].bytes;
    }
    return d;
  }

 private:
  static constexpr std::size_t kTallies = kPhaseCount * kCommRoleCount * kCommPatternCount;
  static std::size_t index(Phase phase) { return static_cast<std::size_t>(phase); }
  static std::size_t tally_index(Phase phase, CommRole role, CommPattern pattern) {
    return (index(phase) * kCommRoleCount + static_cast<std::size_t>(role)) * kCommPatternCount +
           static_cast<std::size_t>(pattern);
  }

  std::array<PhaseCounters, kPhaseCount> counters_{};
  std::array<TrafficTally, kTallies> tally_{};
  Phase current_ = Phase::kOther;
  std::optional<std::array<LinkCost, 2>> links_;  // intra-node, inter-node
  std::array<std::uint64_t, kPhaseCount> level_peers_{};
  WorkCosts costs_;
  void (*charge_)(double seconds) = nullptr;
};

// Makes `phase` current for its lifetime and adds the elapsed time to it.
class ScopedPhase {
 public:
  ScopedPhase(PhaseMetrics& metrics, Phase phase) : metrics_(metrics), phase_(phase), previous_(metrics.current()) {
    metrics_.set_current(phase);
    if (phase == Phase::kLocalExpansion) metrics_.add_work(WorkKind::kSteps, 1);
  }
  ~ScopedPhase() {
    metrics_.add_time(phase_, clock_.elapsed_s());
    metrics_.set_current(previous_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseMetrics& metrics_;
  Phase phase_;
  Phase previous_;
  Stopwatch clock_;
};

}  // namespace zbfs
