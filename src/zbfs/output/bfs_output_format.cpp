#include "zbfs/output/bfs_output_format.hpp"

namespace zbfs {

std::optional<BfsOutputFormat> parse_bfs_output_format(std::string_view name) {
  if (name == "text") return BfsOutputFormat::kText;
  if (name == "binary") return BfsOutputFormat::kBinary;
  return std::nullopt;
}

const char* to_string(BfsOutputFormat format) { return format == BfsOutputFormat::kText ? "text" : "binary"; }

}  // namespace zbfs
