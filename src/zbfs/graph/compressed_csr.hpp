// CompressedCsr<V>: the graph of Csr<V> (graph/csr.hpp) with each sorted adjacency list
// stored as byte-coded gaps in blocks (graph/gap_list.hpp), as Ligra+ and GBBS store
// theirs: a Kronecker graph's lists take about half the bytes (docs/performance.md), so
// a node holds a bigger graph (--adjacency compressed). Each vertex keeps its list's
// start in the byte stream and its degree; the lists lie in vertex order. Searches read
// them through rows(), which decodes on the fly and stops where the caller stops.
// Built by graph/compressed_csr_builder.hpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/adjacency_rows.hpp"
#include "zbfs/graph/degree_order.hpp"
#include "zbfs/graph/gap_list.hpp"
#include "zbfs/graph/vertex_tables.hpp"

namespace zbfs {

template <class V>
class CompressedCsr : public VertexTables<V> {
 public:
  using Vertex = V;

  CompressedCsr() = default;
  // `starts`: n + 1 byte offsets into `bytes` (the last one its length); `degrees`: each
  // list's length in ids.
  CompressedCsr(std::uint64_t num_vertices, LargeArray<std::uint64_t> starts, LargeArray<V> degrees,
                LargeArray<std::uint8_t> bytes, std::uint64_t num_directed_edges, LargeArray<V> input_tuple_degree,
                DegreeOrder<V> order = {})
      : VertexTables<V>(num_vertices, std::move(input_tuple_degree), std::move(order)),
        starts_(std::move(starts)),
        degrees_(std::move(degrees)),
        bytes_(std::move(bytes)),
        num_directed_edges_(num_directed_edges) {}

  // Each undirected edge counts twice (once per direction).
  [[nodiscard]] std::uint64_t num_directed_edges() const { return num_directed_edges_; }
  [[nodiscard]] std::uint64_t degree(std::uint64_t v) const { return degrees_[v]; }
  // v's list, decoded (tests and cold paths; searches scan rows()).
  [[nodiscard]] std::vector<V> neighbors(std::uint64_t v) const {
    std::vector<V> out;
    out.reserve(degree(v));
    rows().scan(v, [&out](V w) {
      out.push_back(w);
      return false;
    });
    return out;
  }

  [[nodiscard]] GapRows<V> rows() const { return {starts_.data(), degrees_.data(), bytes_.data()}; }
  // The encoded lists' bytes.
  [[nodiscard]] std::uint64_t list_bytes() const { return bytes_.size(); }
  // Bytes the lists take (starts, degrees and the encoded lists), the vertex tables not
  // included.
  [[nodiscard]] std::uint64_t adjacency_bytes() const {
    return starts_.size() * sizeof(std::uint64_t) + degrees_.size() * sizeof(V) + bytes_.size();
  }

 private:
  LargeArray<std::uint64_t> starts_;
  LargeArray<V> degrees_;
  LargeArray<std::uint8_t> bytes_;
  std::uint64_t num_directed_edges_ = 0;
};

}  // namespace zbfs
