// Csr<V>: the undirected graph of kernel 1 in compressed sparse rows, with local vertex
// ids of type V (32-bit whenever the vertex count fits). Adjacency lists are sorted and
// free of duplicates and self-loops; the vertex tables (graph/vertex_tables.hpp) keep
// each vertex's input tuple degree and, for a graph built with CsrOrder::kDegree
// (graph/csr_builder.hpp), the degree order: every id the graph takes and returns is
// then an internal id, and internal_id / original_id translate from and to the input's.
//
// CompressedCsr<V> (graph/compressed_csr.hpp) holds the same lists as byte-coded gaps.
// A search reads either through its rows() view (graph/adjacency_rows.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/adjacency_rows.hpp"
#include "zbfs/graph/degree_order.hpp"
#include "zbfs/graph/vertex_tables.hpp"

namespace zbfs {

template <class V>
class Csr : public VertexTables<V> {
 public:
  using Vertex = V;

  Csr() = default;
  Csr(std::uint64_t num_vertices, LargeArray<std::uint64_t> offsets, LargeArray<V> neighbors,
      LargeArray<V> input_tuple_degree, DegreeOrder<V> order = {})
      : VertexTables<V>(num_vertices, std::move(input_tuple_degree), std::move(order)),
        offsets_(std::move(offsets)),
        neighbors_(std::move(neighbors)) {}

  // Each undirected edge counts twice (once per direction).
  [[nodiscard]] std::uint64_t num_directed_edges() const { return offsets_[this->num_vertices()]; }
  [[nodiscard]] std::uint64_t degree(std::uint64_t v) const { return offsets_[v + 1] - offsets_[v]; }
  [[nodiscard]] std::span<const V> neighbors(std::uint64_t v) const {
    return {neighbors_.data() + offsets_[v], static_cast<std::size_t>(degree(v))};
  }

  [[nodiscard]] const std::uint64_t* offsets() const { return offsets_.data(); }
  [[nodiscard]] const V* neighbor_data() const { return neighbors_.data(); }
  [[nodiscard]] PlainRows<V> rows() const { return {offsets_.data(), neighbors_.data()}; }
  // Bytes the lists take (offsets and neighbours), the vertex tables not included.
  [[nodiscard]] std::uint64_t adjacency_bytes() const {
    return offsets_.size() * sizeof(std::uint64_t) + neighbors_.size() * sizeof(V);
  }

 private:
  LargeArray<std::uint64_t> offsets_;
  LargeArray<V> neighbors_;
};

}  // namespace zbfs
