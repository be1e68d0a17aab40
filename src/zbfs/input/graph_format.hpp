// The graph file formats zbfs reads (zbfs run --input, zbfs convert) and how a format is
// named on the command line or guessed from a file's name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zbfs {

enum class GraphFormat {
  kEdgeList,      // text: one "u v [weight...]" pair per line, '#' and '%' comments (SNAP)
  kMatrixMarket,  // text: Matrix Market coordinate file (.mtx), 1-based ids
  kBinary,        // zbfs binary edge list (input/binary_edge_file.hpp)
};

[[nodiscard]] std::optional<GraphFormat> parse_graph_format(std::string_view name);
[[nodiscard]] const char* to_string(GraphFormat format);
// By extension: .mtx is Matrix Market; .zel (zbfs edge list) and .bin binary; .txt, .el,
// .edges, .tsv and .snap text edge lists; anything else `fallback`.
[[nodiscard]] GraphFormat format_of_name(std::string_view path, GraphFormat fallback);
// By content, from the file's first bytes: the binary magic, a Matrix Market banner, or
// else a text edge list.
[[nodiscard]] GraphFormat format_of_content(std::string_view first_bytes);

// A graph file to read, and how (zbfs run --input, zbfs convert).
struct GraphFileSpec {
  std::string path;
  std::optional<GraphFormat> format;  // none: format_of_content
  bool relabel = false;               // compact the ids that occur to 0 .. n - 1 (order kept)
  // Bytes one rank may use for reading (its share of the node's memory); none: no check.
  std::optional<std::uint64_t> memory_per_rank;
  // Read each tuple's weight (SSSP): an edge list's third field, a Matrix Market file's
  // value; a file without them is refused. Binary files carry none.
  bool weights = false;
};

}  // namespace zbfs
