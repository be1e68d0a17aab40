#include "zbfs/output/bfs_output.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "zbfs/output/ordered_file.hpp"

namespace zbfs {
namespace {

template <class T>
void append_le(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>(static_cast<std::uint64_t>(value) >> (8 * i)));
}

}  // namespace

namespace {

// One rank's records in `format`, after the header both formats start with; `source`
// holds the source ids of my `owned` vertices first, `value(o)` gives vertex o's value
// as text and `bits(o)` as the binary record's 8 bytes.
template <class Text, class Bits>
void write_records(const ProcessGrid& grid, const std::string& path, BfsOutputKind kind, BfsOutputFormat format,
                   std::uint64_t source_root, std::span<const std::uint64_t> source, std::uint64_t owned,
                   const Text& value, const Bits& bits) {
  const std::uint64_t n = grid.blocks().num_vertices();
  std::string body;
  body.reserve(owned * 16);
  if (format == BfsOutputFormat::kText) {
    for (std::uint64_t o = 0; o < owned; ++o) fmt::format_to(std::back_inserter(body), "{} {}\n", source[o], value(o));
  } else {
    for (std::uint64_t o = 0; o < owned; ++o) {
      append_le<std::uint64_t>(body, source[o]);
      append_le<std::uint64_t>(body, bits(o));
    }
  }
  std::string header;
  if (format == BfsOutputFormat::kText) {
    const char* what = kind == BfsOutputKind::kParents  ? "parent"
                       : kind == BfsOutputKind::kLevels ? "level"
                                                        : "distance";
    header =
        fmt::format("# zbfs {}s: search key {}, {} vertices; vertex {} (-1: unreached)\n", what, source_root, n, what);
  } else {
    header = "ZBFSBFSR";
    append_le<std::uint32_t>(header, 1);
    append_le<std::uint32_t>(header, static_cast<std::uint32_t>(kind));
    append_le<std::uint64_t>(header, n);
    append_le<std::uint64_t>(header, source_root);
  }
  write_ordered_file(grid.world(), path, header, body, grid.my_piece());
}

}  // namespace

void write_bfs_output(const ProcessGrid& grid, const VertexIds& ids, const std::string& path, BfsOutputKind kind,
                      BfsOutputFormat format, std::uint64_t root, std::span<const std::int64_t> values) {
  const Communicator& world = grid.world();
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t owned = grid.blocks().piece_vertices(grid.my_piece());
  const bool parents = kind == BfsOutputKind::kParents;

  // Source ids of my vertices, of their parents, and of the search key.
  std::vector<std::uint64_t> wanted;
  wanted.reserve(2 * owned + 1);
  for (std::uint64_t o = 0; o < owned; ++o) wanted.push_back(first + o);
  if (parents) {
    for (std::uint64_t o = 0; o < owned; ++o) {
      if (values[o] >= 0) wanted.push_back(static_cast<std::uint64_t>(values[o]));
    }
  }
  wanted.push_back(root);
  const std::vector<std::uint64_t> source = ids.to_source(world, wanted);
  // Parents' source ids follow the vertices' in the order the records are written.
  std::vector<std::int64_t> out(owned);
  std::size_t next_parent = owned;
  for (std::uint64_t o = 0; o < owned; ++o) {
    out[o] = values[o] < 0 ? -1 : parents ? static_cast<std::int64_t>(source[next_parent++]) : values[o];
  }
  write_records(
      grid, path, kind, format, source.back(), source, owned, [&](std::uint64_t o) { return out[o]; },
      [&](std::uint64_t o) { return static_cast<std::uint64_t>(out[o]); });
}

void write_distance_output(const ProcessGrid& grid, const VertexIds& ids, const std::string& path,
                           BfsOutputFormat format, std::uint64_t root, std::span<const float> distance) {
  const std::uint64_t first = grid.my_first_vertex();
  const std::uint64_t owned = grid.blocks().piece_vertices(grid.my_piece());
  std::vector<std::uint64_t> wanted;
  wanted.reserve(owned + 1);
  for (std::uint64_t o = 0; o < owned; ++o) wanted.push_back(first + o);
  wanted.push_back(root);
  const std::vector<std::uint64_t> source = ids.to_source(grid.world(), wanted);
  const auto reached = [&](std::uint64_t o) { return std::isfinite(distance[o]); };
  // Text: 9 significant digits read back as the same float.
  write_records(
      grid, path, BfsOutputKind::kDistances, format, source.back(), source, owned,
      [&](std::uint64_t o) { return reached(o) ? fmt::format("{:.9g}", distance[o]) : std::string("-1"); },
      [&](std::uint64_t o) { return std::bit_cast<std::uint64_t>(reached(o) ? double{distance[o]} : -1.0); });
}

}  // namespace zbfs
