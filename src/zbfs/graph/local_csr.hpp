// LocalCsr<V>: one rank's block of the adjacency matrix in compressed sparse rows. Rows
// and neighbours are local indices of two piece groups (topology/vertex_partition.hpp),
// stored as V (32-bit whenever the groups fit). Lists are sorted and duplicate-free.
// build_local_csr sorts a list of directed (row, neighbour) pairs into one, and
// transpose_local_csr turns one around; OpenMP parallel, not collective. compress() turns
// the lists into byte-coded gaps in blocks (graph/gap_list.hpp, --adjacency compressed);
// searches read either through with_rows() (graph/adjacency_rows.hpp). by_position()
// keeps the rows with a list only (doubly compressed rows, graph/row_index.hpp). A CSR built with
// build_weighted_local_csr also holds a float weight beside each entry (SSSP): the
// lightest of the input tuples that gave the entry; its lists are ordered by weight
// instead (then by neighbour), still free of duplicates, until order_weighted_rows puts
// their heavy tails in neighbour order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/adjacency_rows.hpp"
#include "zbfs/graph/row_index.hpp"

namespace zbfs {

template <class V>
class LocalCsr {
 public:
  LocalCsr() = default;
  LocalCsr(std::uint64_t num_rows, LargeArray<std::uint64_t> offsets, LargeArray<V> neighbors)
      : num_rows_(num_rows), offsets_(std::move(offsets)), neighbors_(std::move(neighbors)) {
    num_entries_ = num_rows_ == 0 ? 0 : offsets_[num_rows_];
  }
  // With one weight per entry.
  LocalCsr(std::uint64_t num_rows, LargeArray<std::uint64_t> offsets, LargeArray<V> neighbors,
           LargeArray<float> weights)
      : LocalCsr(num_rows, std::move(offsets), std::move(neighbors)) {
    weights_ = std::move(weights);
    weighted_ = true;
  }

  [[nodiscard]] std::uint64_t num_rows() const { return num_rows_; }
  [[nodiscard]] std::uint64_t num_entries() const { return num_entries_; }
  [[nodiscard]] bool compressed() const { return compressed_; }
  // Hypersparse (by_position()): only the rows with a list are kept, by position
  // (row_rank()); offsets(), and a compressed CSR's starts and degrees, are by position.
  [[nodiscard]] bool hypersparse() const { return hypersparse_; }
  // Row r's position in the arrays kept by row: r itself unless hypersparse.
  [[nodiscard]] RowRank row_rank() const { return hypersparse_ ? index_.rank() : RowRank{}; }
  // The rows kept: every row, or those with a list.
  [[nodiscard]] std::uint64_t positions() const { return hypersparse_ ? index_.count() : num_rows_; }
  [[nodiscard]] std::uint64_t degree(std::uint64_t row) const {
    if (hypersparse_) {
      const RowRank rank = index_.rank();
      return rank.has(row) ? degree_at(rank.position(row)) : 0;
    }
    return degree_at(row);
  }
  // Plain lists only (compressed(): read them through with_rows()).
  [[nodiscard]] std::span<const V> neighbors(std::uint64_t row) const {
    if (hypersparse_) {
      const RowRank rank = index_.rank();
      return rank.has(row) ? neighbors_at(rank.position(row)) : std::span<const V>{};
    }
    return neighbors_at(row);
  }
  // Raw arrays for hot loops, where member accesses would be reloaded after every store
  // (plain lists only; by position when hypersparse()).
  [[nodiscard]] const std::uint64_t* offsets() const { return offsets_.data(); }
  [[nodiscard]] const V* neighbor_data() const { return neighbors_.data(); }
  // The entries' weights, beside neighbor_data() (weighted() only).
  [[nodiscard]] bool weighted() const { return weighted_; }
  [[nodiscard]] const float* weight_data() const { return weights_.data(); }
  // step(rows) with the lists' rows view by row: PlainRows or GapRows, each within
  // IndexedRows when hypersparse.
  template <class Step>
  auto with_rows(const Step& step) const {
    if (hypersparse_) {
      const RowRank rank = index_.rank();
      return compressed_ ? step(IndexedRows<GapRows<V>>{gap_rows(), rank})
                         : step(IndexedRows<PlainRows<V>>{plain_rows(), rank});
    }
    return compressed_ ? step(gap_rows()) : step(plain_rows());
  }
  // step(lists) with the rows view by position, over positions() rows.
  template <class Step>
  auto with_positions(const Step& step) const {
    return compressed_ ? step(gap_rows()) : step(plain_rows());
  }
  // Re-encodes the lists as byte-coded gaps and frees the plain ones (both are held while
  // it runs). Unweighted lists only.
  void compress();
  // A hypersparse CSR from lists built over positions: `by_position` has one row per id
  // `rows` has, in order; the result has rows.size() rows, and keeps the offsets (or
  // starts and degrees) of the rows with a list only (graph/row_index.hpp): what a 2D
  // block's rows cost then grows with its entries, not with its row group. Unweighted.
  static LocalCsr by_position(LocalCsr by_position, RowIndex rows);
  // The rows with a list (a pass over them unless hypersparse).
  [[nodiscard]] std::uint64_t rows_with_lists() const;
  // Weighted 32-bit lists only: orders each row by weight (then neighbour), and with
  // `heavy_by_neighbour` its entries of weight `light_below` and above by neighbour
  // instead (the light ones stay a prefix, by weight). Rows already in that order are left
  // as they are. A search that only pushes reads the heavy tails in neighbour order (its
  // writes then sweep memory); one that pulls stops a row's scan at a weight.
  void order_weighted_rows(float light_below, bool heavy_by_neighbour);
  // Bytes the lists take: offsets and ids, or starts, degrees and the encoded lists (and
  // the row index when hypersparse).
  [[nodiscard]] std::uint64_t list_bytes() const {
    return (compressed_ ? starts_.size() * sizeof(std::uint64_t) + degrees_.size() * sizeof(V) + bytes_.size()
                        : offsets_.size() * sizeof(std::uint64_t) + neighbors_.size() * sizeof(V) +
                              weights_.size() * sizeof(float)) +
           (hypersparse_ ? index_.bytes() : 0);
  }

 private:
  [[nodiscard]] std::uint64_t degree_at(std::uint64_t k) const {
    return compressed_ ? degrees_[k] : offsets_[k + 1] - offsets_[k];
  }
  [[nodiscard]] std::span<const V> neighbors_at(std::uint64_t k) const {
    return {neighbors_.data() + offsets_[k], static_cast<std::size_t>(offsets_[k + 1] - offsets_[k])};
  }
  [[nodiscard]] PlainRows<V> plain_rows() const { return {offsets_.data(), neighbors_.data()}; }
  [[nodiscard]] GapRows<V> gap_rows() const { return {starts_.data(), degrees_.data(), bytes_.data()}; }

  std::uint64_t num_rows_ = 0;
  std::uint64_t num_entries_ = 0;
  LargeArray<std::uint64_t> offsets_;
  LargeArray<V> neighbors_;
  LargeArray<float> weights_;
  bool weighted_ = false;
  bool compressed_ = false;
  LargeArray<std::uint64_t> starts_;
  LargeArray<V> degrees_;
  LargeArray<std::uint8_t> bytes_;
  bool hypersparse_ = false;
  RowIndex index_;
};

// Who builds a rank's lists from its consumed pairs, when not build_local_csr on the CPU:
// a device backend builds them on its target (backend/device_csr_builder.hpp), the same
// lists. Empty: the CPU.
template <class V>
using LocalListBuilder =
    std::function<LocalCsr<V>(std::uint64_t num_rows, std::vector<V>&& rows, std::vector<V>&& cols)>;

// Builds the CSR of the pairs (rows[i], cols[i]); rows[i] < num_rows.
template <class V>
LocalCsr<V> build_local_csr(std::uint64_t num_rows, std::span<const V> rows, std::span<const V> cols);

// The same from pairs it consumes (left empty), so that the pairs and the lists never
// both stand whole (kernel 1's peak): `ranges` rounds each place the pairs of the rows
// that hold the next share of the entries, touching only those lists' pages, move the
// pairs left to the front and give the pages behind them back. Each round reads what is
// left: (ranges + 1) / 2 passes over the pairs in all.
template <class V>
LocalCsr<V> build_local_csr(std::uint64_t num_rows, std::vector<V>&& rows, std::vector<V>&& cols, int ranges);

// The rounds kernel 1 (graph/distributed_graph.hpp) places its forward lists in: at its
// peak the pairs stand whole beside a quarter of the lists.
inline constexpr int kPlacementRanges = 4;

// The same with a weight per pair: a row's duplicate entries keep the lightest weight
// (weights are finite and not negative), and each row is ordered by weight, then by
// neighbour (the light edges are a prefix). 32-bit ids only.
LocalCsr<std::uint32_t> build_weighted_local_csr(std::uint64_t num_rows, std::span<const std::uint32_t> rows,
                                                 std::span<const std::uint32_t> cols, std::span<const float> weights);

// The transpose of `csr` (hypersparse or not), whose neighbours are below num_cols: row c
// lists the rows of `csr` that have c. Built from a CSR, not from pairs, so that the
// pairs can be freed first: 2D construction peaks at pairs plus one CSR instead of pairs
// plus two. With `kept` (over num_cols ids: those some list has, ids_present), the
// transpose is hypersparse, its offsets by position from the start: nothing over all
// num_cols rows is held but the index.
template <class V>
LocalCsr<V> transpose_local_csr(const LocalCsr<V>& csr, std::uint64_t num_cols,
                                std::optional<RowIndex> kept = std::nullopt);

// The ids below `count` that `ids` holds, as bits.
template <class V>
Bitmap ids_present(std::span<const V> ids, std::uint64_t count);

extern template LocalCsr<std::uint32_t> transpose_local_csr<std::uint32_t>(const LocalCsr<std::uint32_t>&,
                                                                           std::uint64_t, std::optional<RowIndex>);
extern template LocalCsr<std::uint64_t> transpose_local_csr<std::uint64_t>(const LocalCsr<std::uint64_t>&,
                                                                           std::uint64_t, std::optional<RowIndex>);
extern template Bitmap ids_present<std::uint32_t>(std::span<const std::uint32_t>, std::uint64_t);
extern template Bitmap ids_present<std::uint64_t>(std::span<const std::uint64_t>, std::uint64_t);
extern template LocalCsr<std::uint32_t> build_local_csr<std::uint32_t>(std::uint64_t, std::span<const std::uint32_t>,
                                                                       std::span<const std::uint32_t>);
extern template LocalCsr<std::uint32_t> build_local_csr<std::uint32_t>(std::uint64_t, std::vector<std::uint32_t>&&,
                                                                       std::vector<std::uint32_t>&&, int);
extern template LocalCsr<std::uint64_t> build_local_csr<std::uint64_t>(std::uint64_t, std::vector<std::uint64_t>&&,
                                                                       std::vector<std::uint64_t>&&, int);
extern template LocalCsr<std::uint64_t> build_local_csr<std::uint64_t>(std::uint64_t, std::span<const std::uint64_t>,
                                                                       std::span<const std::uint64_t>);

}  // namespace zbfs
