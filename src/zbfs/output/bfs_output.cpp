#include "zbfs/output/bfs_output.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>
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

void write_bfs_output(const ProcessGrid& grid, const VertexIds& ids, const std::string& path, BfsOutputKind kind,
                      BfsOutputFormat format, std::uint64_t root, std::span<const std::int64_t> values) {
  const Communicator& world = grid.world();
  const std::uint64_t n = grid.blocks().num_vertices();
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
  const std::uint64_t source_root = source.back();

  std::string body;
  std::size_t next_parent = owned;
  auto value_of = [&](std::uint64_t o) -> std::int64_t {
    if (values[o] < 0) return -1;
    return parents ? static_cast<std::int64_t>(source[next_parent++]) : values[o];
  };
  if (format == BfsOutputFormat::kText) {
    body.reserve(owned * 16);
    for (std::uint64_t o = 0; o < owned; ++o)
      fmt::format_to(std::back_inserter(body), "{} {}\n", source[o], value_of(o));
  } else {
    body.reserve(owned * 16);
    for (std::uint64_t o = 0; o < owned; ++o) {
      append_le<std::uint64_t>(body, source[o]);
      append_le<std::int64_t>(body, value_of(o));
    }
  }
  std::string header;
  if (format == BfsOutputFormat::kText) {
    header = fmt::format("# zbfs {}: search key {}, {} vertices; vertex {} (-1: unreached)\n",
                         parents ? "parents" : "levels", source_root, n, parents ? "parent" : "level");
  } else {
    header = "ZBFSBFSR";
    append_le<std::uint32_t>(header, 1);
    append_le<std::uint32_t>(header, static_cast<std::uint32_t>(kind));
    append_le<std::uint64_t>(header, n);
    append_le<std::uint64_t>(header, source_root);
  }
  write_ordered_file(world, path, header, body, grid.my_piece());
}

}  // namespace zbfs
