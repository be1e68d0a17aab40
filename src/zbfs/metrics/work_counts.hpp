// Counted work: what a rank's local steps do, in units that do not depend on time (lists
// opened, list entries read, bitmap words scanned, ...). Counts are booked into the
// current phase next to its traffic (metrics/phase_metrics.hpp), per level too (a level's
// record, metrics/level_work.hpp), and price simulated computation from per-unit costs
// (WorkCosts, calibrated by `zbfs-lab calibrate` on the host being simulated).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zbfs {

enum class WorkKind : int {
  kSteps,           // local steps entered (a phase of local work begun: its fixed cost)
  kLists,           // adjacency lists opened (a random access each)
  kListEntries,     // adjacency list entries read
  kHubChecks,       // bottom-up hub tests (a frontier bit read per unvisited row)
  kBitmapWords,     // bitmap words scanned, cleared or copied
  kClaimed,         // vertices this rank claimed (its next frontier)
  kQueued,          // entries written to outgoing queues (ids, updates, frontier lists)
  kArrivals,        // arrived ids, updates and answers applied
  kExchangedBytes,  // bytes this rank handed to exchanges (packing and unpacking)
  kCodecBytes,      // bytes a codec encoded
  kRoutedBytes,     // bytes a route's hops forwarded (sorting and merging on relays)
};
constexpr std::size_t kWorkKindCount = 11;

constexpr std::array<WorkKind, kWorkKindCount> kAllWorkKinds = {
    WorkKind::kSteps,          WorkKind::kLists,      WorkKind::kListEntries, WorkKind::kHubChecks,
    WorkKind::kBitmapWords,    WorkKind::kClaimed,    WorkKind::kQueued,      WorkKind::kArrivals,
    WorkKind::kExchangedBytes, WorkKind::kCodecBytes, WorkKind::kRoutedBytes};

// The record's and the cost file's name of each kind.
constexpr std::string_view to_string(WorkKind kind) {
  constexpr std::array<std::string_view, kWorkKindCount> names = {
      "steps",  "lists",    "list_entries",    "hub_checks",  "bitmap_words", "claimed",
      "queued", "arrivals", "exchanged_bytes", "codec_bytes", "routed_bytes"};
  return names[static_cast<std::size_t>(kind)];
}
constexpr std::optional<WorkKind> work_kind_named(std::string_view name) {
  for (const WorkKind kind : kAllWorkKinds) {
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

using WorkCounts = std::array<std::uint64_t, kWorkKindCount>;

// Seconds per unit of each kind: the price of counted work on one core of the host the
// costs were calibrated on.
struct WorkCosts {
  std::array<double, kWorkKindCount> seconds_per_unit{};
  [[nodiscard]] double price_s(WorkKind kind, std::uint64_t units) const {
    return seconds_per_unit[static_cast<std::size_t>(kind)] * static_cast<double>(units);
  }
};

}  // namespace zbfs
