// Csr<V>: the undirected graph of kernel 1 in compressed sparse rows, with local vertex
// ids of type V (32-bit whenever the vertex count fits). Adjacency lists are sorted and
// free of duplicates and self-loops; input_tuple_degree keeps how many input tuples
// (duplicates included, self-loops excluded) touch each vertex, which is what Graph500
// counts as traversed edges.
//
// A Csr built with CsrOrder::kDegree (graph/csr_builder.hpp) numbers its vertices by
// descending degree (graph/degree_order.hpp): every id it takes and returns is then an
// internal id, and internal_id / original_id translate from and to the input's ids.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/degree_order.hpp"

namespace zbfs {

template <class V>
class Csr {
 public:
  using Vertex = V;

  Csr() = default;
  Csr(std::uint64_t num_vertices, LargeArray<std::uint64_t> offsets, LargeArray<V> neighbors,
      LargeArray<V> input_tuple_degree, DegreeOrder<V> order = {})
      : num_vertices_(num_vertices),
        offsets_(std::move(offsets)),
        neighbors_(std::move(neighbors)),
        input_tuple_degree_(std::move(input_tuple_degree)),
        order_(std::move(order)) {}

  [[nodiscard]] std::uint64_t num_vertices() const { return num_vertices_; }
  // Each undirected edge counts twice (once per direction).
  [[nodiscard]] std::uint64_t num_directed_edges() const { return offsets_[num_vertices_]; }
  [[nodiscard]] std::uint64_t degree(std::uint64_t v) const { return offsets_[v + 1] - offsets_[v]; }
  [[nodiscard]] std::span<const V> neighbors(std::uint64_t v) const {
    return {neighbors_.data() + offsets_[v], static_cast<std::size_t>(degree(v))};
  }
  [[nodiscard]] std::uint64_t input_tuple_degree(std::uint64_t v) const { return input_tuple_degree_[v]; }

  // Whether ids are renumbered (internal ids differ from the input's).
  [[nodiscard]] bool reordered() const { return order_.size() != 0; }
  [[nodiscard]] std::uint64_t internal_id(std::uint64_t original) const {
    return reordered() ? order_.sorted_offset(original) : original;
  }
  [[nodiscard]] std::uint64_t original_id(std::uint64_t internal) const {
    return reordered() ? order_.original_offset(internal) : internal;
  }
  // Internal id -> original id, or nullptr when they are the same.
  [[nodiscard]] const V* original_ids() const { return reordered() ? order_.original_offsets().data() : nullptr; }

  [[nodiscard]] const std::uint64_t* offsets() const { return offsets_.data(); }
  [[nodiscard]] const V* neighbor_data() const { return neighbors_.data(); }

 private:
  std::uint64_t num_vertices_ = 0;
  LargeArray<std::uint64_t> offsets_;
  LargeArray<V> neighbors_;
  LargeArray<V> input_tuple_degree_;
  DegreeOrder<V> order_;
};

}  // namespace zbfs
