// Parsing of text graph files, without I/O or MPI: lines of "u v" pairs (SNAP-style edge
// lists) and Matrix Market coordinate files (banner, comments, size line, entries).
// Callers hand over whole lines (a rank's share of the file, cut at line boundaries) and
// get the edges with 0-based ids, or the first malformed line: its number within the
// text and what is wrong, for an error message of the form FILE:LINE: what.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zbfs/core/edge.hpp"
#include "zbfs/input/graph_format.hpp"

namespace zbfs {

// Ids above this are refused: n = id + 1 must fit the 62-bit packed edge lists.
constexpr std::uint64_t kMaxFileVertexId = (std::uint64_t{1} << 62) - 1;

struct TextError {
  std::uint64_t line = 0;  // 1-based, counted within the text handed to the parser
  std::string message;
};

// How the lines of one text file read.
struct TextSyntax {
  GraphFormat format = GraphFormat::kEdgeList;  // kEdgeList or kMatrixMarket (its entry lines)
  // Matrix Market only: whether each entry carries a value after its two ids (real and
  // integer files), whether that value is an integer, and the declared size (ids 1..size).
  bool mtx_has_value = false;
  bool mtx_integer = false;
  std::uint64_t mtx_size = 0;
  // Whether each entry's weight is read (SSSP): an edge list's third field, a Matrix
  // Market file's value; a finite number, not negative, as a float.
  bool weights = false;
};

struct ParsedLines {
  std::vector<Edge> edges;         // 0-based ids (Matrix Market's minus one), in file order
  std::vector<float> weights;      // with TextSyntax::weights: one per edge
  std::uint64_t max_id = 0;        // the largest id of `edges` (0 when there are none)
  std::optional<TextError> error;  // the first malformed line; parsing stopped there
};

// Blank lines and comment lines ('#' or '%' first, after blanks) are skipped; CRLF line
// ends are accepted. Edge lists: the first two fields are the ids, the third the weight
// when weights are read, further fields are ignored. Matrix Market: exactly two ids and,
// when the file has values, one number, with ids in [1, size].
[[nodiscard]] ParsedLines parse_edge_lines(std::string_view text, const TextSyntax& syntax);

// Lines in `text`: its newlines, plus one for a last line without one.
[[nodiscard]] std::uint64_t count_lines(std::string_view text);

struct MatrixMarketHeader {
  bool has_value = false;  // real or integer entries (pattern: none)
  bool integer = false;
  bool symmetric = false;  // symmetric, skew-symmetric or hermitian: one triangle is stored
  std::uint64_t size = 0;  // rows = columns
  std::uint64_t entries = 0;
  std::uint64_t data_offset = 0;        // the first byte after the size line
  std::uint64_t lines_before_data = 0;  // banner, comments and size line
};

struct MatrixMarketHeaderParse {
  std::optional<MatrixMarketHeader> header;
  std::optional<TextError> error;
  bool needs_more = false;  // the size line is not within `prefix`: read more and retry
};

// From the first bytes of the file (`at_eof`: `prefix` is the whole file).
[[nodiscard]] MatrixMarketHeaderParse parse_matrix_market_header(std::string_view prefix, bool at_eof);

}  // namespace zbfs
