// VertexTables<V>: what kernel 1's one-process graphs (Csr<V>, CompressedCsr<V>) know of
// their vertices besides the lists: how many there are, each one's input tuple degree
// (duplicates included, self-loops excluded: what Graph500 counts as traversed edges),
// and, for a graph built in degree order (graph/degree_order.hpp), the tables between
// internal ids (highest degree first) and the input's ids.
#pragma once

#include <cstdint>
#include <utility>

#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/degree_order.hpp"

namespace zbfs {

template <class V>
class VertexTables {
 public:
  VertexTables() = default;
  VertexTables(std::uint64_t num_vertices, LargeArray<V> input_tuple_degree, DegreeOrder<V> order)
      : num_vertices_(num_vertices), input_tuple_degree_(std::move(input_tuple_degree)), order_(std::move(order)) {}

  [[nodiscard]] std::uint64_t num_vertices() const { return num_vertices_; }
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

  // Bytes the tables hold.
  [[nodiscard]] std::uint64_t table_bytes() const {
    return (input_tuple_degree_.size() + 2 * order_.size()) * sizeof(V);
  }

 private:
  std::uint64_t num_vertices_ = 0;
  LargeArray<V> input_tuple_degree_;
  DegreeOrder<V> order_;
};

}  // namespace zbfs
