// What --write-levels and --write-parents write, and in which of the two formats
// (output/bfs_output.hpp documents both).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zbfs {

enum class BfsOutputKind : std::uint32_t { kLevels = 1, kParents = 2, kDistances = 3 };
enum class BfsOutputFormat { kText, kBinary };

[[nodiscard]] std::optional<BfsOutputFormat> parse_bfs_output_format(std::string_view name);
[[nodiscard]] const char* to_string(BfsOutputFormat format);

}  // namespace zbfs
