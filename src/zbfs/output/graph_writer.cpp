#include "zbfs/output/graph_writer.hpp"

#include <charconv>
#include <vector>

#include "zbfs/input/binary_edge_file.hpp"
#include "zbfs/output/ordered_file.hpp"

namespace zbfs {
namespace {

// "u v\n" per edge, ids plus `offset`.
std::string edge_lines(std::span<const Edge> edges, std::uint64_t offset) {
  std::string text;
  text.reserve(edges.size() * 16);
  char line[48];
  for (const Edge& e : edges) {
    char* p = std::to_chars(line, line + 20, e.u + offset).ptr;
    *p++ = ' ';
    p = std::to_chars(p, p + 20, e.v + offset).ptr;
    *p++ = '\n';
    text.append(line, p);
  }
  return text;
}

}  // namespace

void write_graph_file(const Communicator& world, const std::string& path, GraphFormat format,
                      std::span<const Edge> edges, const GraphFileShape& shape) {
  std::string header;
  std::string body;
  switch (format) {
    case GraphFormat::kBinary: {
      const BinaryEdgeHeader h{binary_id_bytes(shape.num_vertices), shape.num_vertices, shape.num_edges, shape.id_base};
      const auto head = encode_binary_edge_header(h);
      header.assign(reinterpret_cast<const char*>(head.data()), head.size());
      body.resize(edges.size() * 2 * h.id_bytes);
      encode_binary_edges(edges, h.id_bytes,
                          std::span<unsigned char>(reinterpret_cast<unsigned char*>(body.data()), body.size()));
      break;
    }
    case GraphFormat::kEdgeList:
      header = "# zbfs edge list: " + std::to_string(shape.num_vertices) + " vertices, " +
               std::to_string(shape.num_edges) + " edges\n";
      body = edge_lines(edges, shape.id_base);
      break;
    case GraphFormat::kMatrixMarket:
      header = "%%MatrixMarket matrix coordinate pattern general\n% written by zbfs\n" +
               std::to_string(shape.num_vertices) + " " + std::to_string(shape.num_vertices) + " " +
               std::to_string(shape.num_edges) + "\n";
      body = edge_lines(edges, 1);
      break;
  }
  write_ordered_file(world, path, header, body, world.rank());
}

}  // namespace zbfs
