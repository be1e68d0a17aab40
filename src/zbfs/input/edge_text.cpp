#include "zbfs/input/edge_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace zbfs {
namespace {

constexpr bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// One line's fields, split at blanks; at most kMaxFields are kept, the rest only counted.
struct Fields {
  static constexpr std::size_t kMaxFields = 5;  // the Matrix Market banner has 5
  std::array<std::string_view, kMaxFields> field;
  std::size_t count = 0;
};

Fields split_fields(std::string_view line) {
  Fields f;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (f.count < Fields::kMaxFields) f.field[f.count] = line.substr(start, i - start);
    ++f.count;
  }
  return f;
}

// A token as an error message shows it: at most kShown bytes, and bytes that are not
// printable ASCII as \xNN, so that a binary file read as text cannot garble a terminal.
std::string quoted(std::string_view token) {
  constexpr std::size_t kShown = 40;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "'";
  for (const char c : token.substr(0, kShown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      text += c;
    } else {
      text += "\\x";
      text += kHex[byte >> 4];
      text += kHex[byte & 0xf];
    }
  }
  if (token.size() > kShown) text += "...";
  return text + "'";
}

// What a number in a file is, for its error messages.
struct NumberKind {
  const char* noun;     // "vertex id"
  const char* article;  // "a"
  const char* plural;   // "ids"
};
constexpr NumberKind kVertexId{"vertex id", "a", "ids"};
constexpr NumberKind kRowCount{"row count", "a", "counts"};
constexpr NumberKind kColumnCount{"column count", "a", "counts"};
constexpr NumberKind kEntryCount{"entry count", "an", "counts"};

// Decimal digits only (no sign), at most kMaxFileVertexId.
std::optional<std::string> parse_number(std::string_view token, const NumberKind& kind, std::uint64_t& number) {
  std::uint64_t value = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') {
      return quoted(token) + " is not " + kind.article + " " + kind.noun + " (" + kind.plural +
             " are non-negative integers)";
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    // Checked before the step: past 2^64 the product would wrap (2^64 read as 0).
    if (value > (kMaxFileVertexId - digit) / 10) {
      return std::string(kind.noun) + " " + quoted(token) + " is too large (the limit is 2^62 - 1)";
    }
    value = value * 10 + digit;
  }
  number = value;
  return std::nullopt;
}

std::optional<std::string> parse_id(std::string_view token, std::uint64_t& id) {
  return parse_number(token, kVertexId, id);
}

bool is_number(std::string_view token, bool integer) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;  // from_chars takes '-' but not '+'
  if (integer) {
    long long value = 0;
    const auto [end, ec] = std::from_chars(first, last, value);
    return ec == std::errc() && end == last;
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(first, last, value);
  return (ec == std::errc() || ec == std::errc::result_out_of_range) && end == last;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The next line of `text` from `pos` (without its '\n'); advances `pos` past it.
std::string_view next_line(std::string_view text, std::size_t& pos) {
  const std::size_t start = pos;
  const void* hit = std::memchr(text.data() + start, '\n', text.size() - start);
  const std::size_t end =
      hit == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
  pos = end == text.size() ? end : end + 1;
  return text.substr(start, end - start);
}

// A carriage return with more of the line after it: the file's lines end in CR alone (as
// classic Mac OS wrote them), which would read as one long line whose later edges are
// extra fields, dropped without a word. A CRLF line's CR is its last byte (a blank).
std::optional<std::string> refuse_bare_carriage_return(std::string_view line) {
  std::size_t end = line.size();
  while (end > 0 && line[end - 1] == '\r') --end;
  if (line.substr(0, end).find('\r') == std::string_view::npos) return std::nullopt;
  return "a carriage return inside the line: the file's lines end in CR alone; zbfs reads LF and CRLF line ends "
         "(convert it: tr '\\r' '\\n' < IN > OUT)";
}

bool skippable(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_blank(line[i])) ++i;
  return i == line.size() || line[i] == '#' || line[i] == '%';
}

// A weight: a finite number, not negative, that a float holds.
std::optional<std::string> parse_weight(std::string_view token, float& weight) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;
  double value = 0;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last || !std::isfinite(value)) {
    return quoted(token) + " is not a weight (weights are finite numbers)";
  }
  if (value < 0) return "weight " + quoted(token) + " is negative (shortest paths need weights of 0 or more)";
  if (value > std::numeric_limits<float>::max()) return "weight " + quoted(token) + " is too large for a float";
  weight = static_cast<float>(value);
  return std::nullopt;
}

std::optional<std::string> parse_entry(std::string_view line, const TextSyntax& syntax, Edge& edge, float& weight) {
  const Fields f = split_fields(line);
  if (syntax.format == GraphFormat::kEdgeList) {
    if (f.count < 2) return "expected two vertex ids, found " + quoted(line);
    if (syntax.weights && f.count < 3) {
      return "expected a weight after the two vertex ids (a third field; or use --weights uniform)";
    }
  } else {
    const std::size_t expected = syntax.mtx_has_value ? 3 : 2;
    if (f.count != expected) {
      return "expected " + std::to_string(expected) + " fields (row, column" + (syntax.mtx_has_value ? ", value" : "") +
             "), found " + std::to_string(f.count);
    }
  }
  if (auto error = parse_id(f.field[0], edge.u)) return error;
  if (auto error = parse_id(f.field[1], edge.v)) return error;
  if (syntax.format == GraphFormat::kMatrixMarket) {
    for (std::uint64_t* id : {&edge.u, &edge.v}) {
      if (*id == 0 || *id > syntax.mtx_size) {
        return "id " + std::to_string(*id) + " is out of range for the declared size (1.." +
               std::to_string(syntax.mtx_size) + ")";
      }
      --*id;
    }
    if (syntax.mtx_has_value && !is_number(f.field[2], syntax.mtx_integer)) {
      return quoted(f.field[2]) + " is not " + (syntax.mtx_integer ? "an integer" : "a number");
    }
  }
  if (syntax.weights) return parse_weight(f.field[2], weight);
  return std::nullopt;
}

}  // namespace

std::uint64_t count_lines(std::string_view text) {
  const auto newlines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
  return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

ParsedLines parse_edge_lines(std::string_view text, const TextSyntax& syntax) {
  ParsedLines out;
  // About 12 bytes per line in typical files: reserve once rather than grow repeatedly.
  out.edges.reserve(text.size() / 12 + 1);
  std::size_t pos = 0;
  std::uint64_t line_number = 0;
  std::uint64_t max_id = 0;
  while (pos < text.size()) {
    const std::string_view line = next_line(text, pos);
    ++line_number;
    if (auto error = refuse_bare_carriage_return(line)) {
      out.error = TextError{line_number, std::move(*error)};
      break;
    }
    if (skippable(line)) continue;
    Edge edge{};
    float weight = 0;
    if (auto error = parse_entry(line, syntax, edge, weight)) {
      out.error = TextError{line_number, std::move(*error)};
      break;
    }
    max_id = std::max({max_id, edge.u, edge.v});
    out.edges.push_back(edge);
    if (syntax.weights) out.weights.push_back(weight);
  }
  out.max_id = max_id;
  return out;
}

MatrixMarketHeaderParse parse_matrix_market_header(std::string_view prefix, bool at_eof) {
  MatrixMarketHeaderParse result;
  auto fail = [&](std::uint64_t line, std::string message) {
    result.error = TextError{line, std::move(message)};
    return result;
  };
  std::size_t pos = 0;
  std::uint64_t line_number = 0;
  bool banner_seen = false;
  MatrixMarketHeader header;
  while (pos < prefix.size()) {
    const std::size_t start = pos;
    const std::string_view line = next_line(prefix, pos);
    if (pos == prefix.size() && (prefix.empty() || prefix.back() != '\n') && !at_eof) {
      pos = start;  // a line cut by the end of the prefix: read more first
      break;
    }
    ++line_number;
    if (auto error = refuse_bare_carriage_return(line)) return fail(line_number, std::move(*error));
    if (!banner_seen) {
      const Fields f = split_fields(line);
      if (f.count == 0 || lowercase(f.field[0]) != "%%matrixmarket") {
        return fail(line_number, "not a Matrix Market file (the first line must start with %%MatrixMarket)");
      }
      if (f.count != 5) return fail(line_number, "the banner needs 4 words: matrix coordinate FIELD SYMMETRY");
      if (lowercase(f.field[1]) != "matrix") return fail(line_number, "only 'matrix' objects hold graphs");
      if (lowercase(f.field[2]) != "coordinate") {
        return fail(line_number, "only 'coordinate' (sparse) matrices hold graphs, not " + quoted(f.field[2]));
      }
      const std::string field = lowercase(f.field[3]);
      if (field == "pattern") {
        header.has_value = false;
      } else if (field == "real" || field == "double" || field == "integer") {
        header.has_value = true;
        header.integer = field == "integer";
      } else {
        return fail(line_number, "field " + quoted(f.field[3]) + " is not supported (pattern, real or integer)");
      }
      const std::string symmetry = lowercase(f.field[4]);
      if (symmetry == "general") {
        header.symmetric = false;
      } else if (symmetry == "symmetric" || symmetry == "skew-symmetric" || symmetry == "hermitian") {
        header.symmetric = true;
      } else {
        return fail(line_number, "unknown symmetry " + quoted(f.field[4]));
      }
      banner_seen = true;
      continue;
    }
    if (skippable(line)) continue;
    const Fields f = split_fields(line);
    if (f.count != 3) return fail(line_number, "the size line needs 3 numbers: rows columns entries");
    std::uint64_t rows = 0;
    std::uint64_t cols = 0;
    std::uint64_t entries = 0;
    std::optional<std::string> error = parse_number(f.field[0], kRowCount, rows);
    if (!error) error = parse_number(f.field[1], kColumnCount, cols);
    if (!error) error = parse_number(f.field[2], kEntryCount, entries);
    if (error) return fail(line_number, "size line: " + *error);
    if (rows != cols) {
      return fail(line_number, "the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
                                   "; a graph's adjacency matrix is square");
    }
    header.size = rows;
    header.entries = entries;
    header.data_offset = pos;
    header.lines_before_data = line_number;
    result.header = header;
    return result;
  }
  if (!at_eof) {
    result.needs_more = true;
    return result;
  }
  if (!banner_seen) return fail(1, "not a Matrix Market file (the first line must start with %%MatrixMarket)");
  return fail(line_number, "the file ends before its size line");
}

}  // namespace zbfs
