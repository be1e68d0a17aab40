// libFuzzer target for the text graph parsers (src/zbfs/input/edge_text.cpp): edge lists,
// Matrix Market entry lines and headers. Besides never crashing, an edge list must parse
// exactly as a plain reference reader does (std::from_chars, which reports overflow): the
// same edges, or an error at the same line. That comparison is what catches ids that
// wrap around 2^64 while read, which no sanitizer sees.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "zbfs/input/edge_text.hpp"

namespace {

using zbfs::Edge;
using zbfs::GraphFormat;
using zbfs::TextSyntax;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "edge_text_fuzzer: %s\n", what);
  std::abort();
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A field as the reference reads an id: decimal digits only, at most 2^62 - 1.
std::optional<std::uint64_t> reference_id(std::string_view field) {
  if (field.empty() || !std::all_of(field.begin(), field.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || value > zbfs::kMaxFileVertexId) return std::nullopt;
  return value;
}

struct ReferenceParse {
  std::vector<Edge> edges;
  std::uint64_t error_line = 0;  // 0: none
};

// The edge-list grammar written plainly: lines at '\n'; a line with a carriage return
// before its last non-CR byte is an error (a file whose lines end in CR alone); blank and
// '#' / '%' lines skipped; the first two blank-separated fields are the ids, the rest
// ignored.
ReferenceParse reference_edge_list(std::string_view text) {
  ReferenceParse out;
  std::uint64_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const std::size_t content = line.find_last_not_of('\r');
    if (content != std::string_view::npos && line.substr(0, content).find('\r') != std::string_view::npos) {
      out.error_line = number;
      return out;
    }
    std::vector<std::string_view> fields;
    for (std::size_t i = 0; i < line.size();) {
      while (i < line.size() && blank(line[i])) ++i;
      const std::size_t first = i;
      while (i < line.size() && !blank(line[i])) ++i;
      if (i > first) fields.push_back(line.substr(first, i - first));
    }
    if (fields.empty() || fields[0][0] == '#' || fields[0][0] == '%') continue;
    const std::optional<std::uint64_t> u = fields.size() >= 2 ? reference_id(fields[0]) : std::nullopt;
    const std::optional<std::uint64_t> v = fields.size() >= 2 ? reference_id(fields[1]) : std::nullopt;
    if (!u || !v) {
      out.error_line = number;
      return out;
    }
    out.edges.push_back(Edge{*u, *v});
  }
  return out;
}

void check_edge_list(std::string_view text) {
  const zbfs::ParsedLines parsed = zbfs::parse_edge_lines(text, TextSyntax{});
  const ReferenceParse reference = reference_edge_list(text);
  if (parsed.error.has_value() != (reference.error_line != 0)) fail("error or not: differs from the reference");
  if (parsed.error && parsed.error->line != reference.error_line) fail("error line differs from the reference");
  if (parsed.edges.size() != reference.edges.size()) fail("edge count differs from the reference");
  std::uint64_t max_id = 0;
  for (std::size_t i = 0; i < parsed.edges.size(); ++i) {
    if (parsed.edges[i].u != reference.edges[i].u || parsed.edges[i].v != reference.edges[i].v) {
      fail("an edge differs from the reference");
    }
    max_id = std::max({max_id, parsed.edges[i].u, parsed.edges[i].v});
  }
  if (!parsed.error && parsed.max_id != max_id) fail("max_id is not the largest id");
  if (parsed.error && parsed.error->message.empty()) fail("an error without a message");
}

// Matrix Market entries: no reference, but every accepted id is within the declared size.
void check_matrix_market_entries(std::string_view text, std::uint8_t flags, std::uint64_t size) {
  TextSyntax syntax;
  syntax.format = GraphFormat::kMatrixMarket;
  syntax.mtx_has_value = (flags & 1) != 0;
  syntax.mtx_integer = (flags & 2) != 0;
  syntax.mtx_size = size;
  const zbfs::ParsedLines parsed = zbfs::parse_edge_lines(text, syntax);
  for (const Edge& e : parsed.edges) {
    if (e.u >= size || e.v >= size) fail("a Matrix Market id past the declared size");
  }
  if (parsed.error && parsed.error->line > zbfs::count_lines(text)) fail("error line past the text");
}

void check_matrix_market_header(std::string_view text, bool at_eof) {
  const zbfs::MatrixMarketHeaderParse h = zbfs::parse_matrix_market_header(text, at_eof);
  const int outcomes = (h.header ? 1 : 0) + (h.error ? 1 : 0) + (h.needs_more ? 1 : 0);
  if (outcomes != 1) fail("a header parse must give exactly one of header, error, needs_more");
  if (at_eof && h.needs_more) fail("needs more bytes at the end of the file");
  if (h.header && h.header->data_offset > text.size()) fail("data offset past the text");
  if (h.header && h.header->size > zbfs::kMaxFileVertexId) fail("size past the id limit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first two bytes pick the Matrix Market flags and a declared size; the rest is text.
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  check_edge_list(text);
  check_matrix_market_entries(text, data[0], static_cast<std::uint64_t>(data[1]) + 1);
  check_matrix_market_header(text, (data[0] & 4) != 0);
  return 0;
}
