#include "zbfs/input/graph_format.hpp"

#include <string>

namespace zbfs {

std::optional<GraphFormat> parse_graph_format(std::string_view name) {
  if (name == "edgelist") return GraphFormat::kEdgeList;
  if (name == "mtx") return GraphFormat::kMatrixMarket;
  if (name == "binary") return GraphFormat::kBinary;
  return std::nullopt;
}

const char* to_string(GraphFormat format) {
  switch (format) {
    case GraphFormat::kEdgeList: return "edgelist";
    case GraphFormat::kMatrixMarket: return "mtx";
    case GraphFormat::kBinary: return "binary";
  }
  return "edgelist";
}

GraphFormat format_of_name(std::string_view path, GraphFormat fallback) {
  if (path.ends_with(".mtx")) return GraphFormat::kMatrixMarket;
  if (path.ends_with(".zel") || path.ends_with(".bin")) return GraphFormat::kBinary;
  for (const std::string_view text : {".txt", ".el", ".edges", ".tsv", ".snap"}) {
    if (path.ends_with(text)) return GraphFormat::kEdgeList;
  }
  return fallback;
}

GraphFormat format_of_content(std::string_view first_bytes) {
  if (first_bytes.starts_with("ZBFSEDGE")) return GraphFormat::kBinary;
  if (first_bytes.size() >= 14) {
    std::string banner(first_bytes.substr(0, 14));
    for (char& c : banner) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (banner == "%%matrixmarket") return GraphFormat::kMatrixMarket;
  }
  return GraphFormat::kEdgeList;
}

}  // namespace zbfs
