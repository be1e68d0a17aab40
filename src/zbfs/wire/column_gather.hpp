// How the top-down frontier is gathered along a processor column: one allgatherv of the
// owners' id lists, or the set-union allreduce (recursive halving over the id range).
#pragma once

#include <optional>
#include <string_view>

namespace zbfs {

enum class ColumnGather { kAllgatherv, kUnion };

constexpr std::string_view to_string(ColumnGather gather) {
  return gather == ColumnGather::kUnion ? "union" : "allgatherv";
}

constexpr std::optional<ColumnGather> parse_column_gather(std::string_view text) {
  if (text == "allgatherv") return ColumnGather::kAllgatherv;
  if (text == "union") return ColumnGather::kUnion;
  return std::nullopt;
}

}  // namespace zbfs
