// RouteChoice: what --route, --route-dims and --no-dedup ask for, and the plan it gives
// on a communicator of any size. Exchanges run on communicators of different sizes (the
// job in 1D and for validation, a processor row in 2D), so gridk's dimensions are the
// user's where they multiply to the communicator's size, and otherwise a balanced
// factorisation of that size into as many dimensions (three when none were given).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zbfs/wire/routed/route_plan.hpp"

namespace zbfs {

struct RouteChoice {
  RouteKind kind = RouteKind::kDirect;
  std::vector<int> dims;  // gridk; empty: balanced, three dimensions
  bool dedup = true;      // merge duplicate keys at every hop

  [[nodiscard]] RoutePlan plan_for(int ranks) const;
  [[nodiscard]] Merge merge() const { return dedup ? Merge::kOnePerKey : Merge::kKeepAll; }
  // "grid2", "gridk 2x2x2", with ", no dedup" when off.
  [[nodiscard]] std::string describe() const;
};

// `ranks` as a product of `count` factors as equal as possible (largest first); factors
// of 1 pad a number with fewer prime factors than `count`.
std::vector<int> balanced_dims(int ranks, int count);

// "4x2x2" -> {4, 2, 2}; nullopt unless every part is a positive integer.
std::optional<std::vector<int>> parse_route_dims(std::string_view text);

}  // namespace zbfs
