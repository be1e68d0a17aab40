#include "zbfs/graph/compressed_csr_builder.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/graph/list_placement.hpp"
#include "zbfs/graph/list_sort.hpp"

namespace zbfs {
namespace {

// The most bytes a list of `entries` ids can take: a varint per id, a header entry per
// block past the first.
std::uint64_t encoded_bound(std::uint64_t entries, unsigned vertex_bytes) {
  const std::uint64_t widest_varint = vertex_bytes == 4 ? 5 : 10;
  return entries * widest_varint + 2 * gap_blocks(entries);
}

// Cuts the ids [0, n) into consecutive ranges of at most `pass_entries` entries (a vertex
// with more is a range of its own); returns the ranges' bounds, 0 first, n last.
template <class V>
std::vector<std::uint64_t> pass_bounds(const V* count, std::uint64_t n, std::uint64_t pass_entries) {
  std::vector<std::uint64_t> bounds{0};
  std::uint64_t held = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    if (held > 0 && held + count[v] > pass_entries) {
      bounds.push_back(v);
      held = 0;
    }
    held += count[v];
  }
  bounds.push_back(n);
  return bounds;
}

}  // namespace

double compressed_bytes_per_entry(std::uint64_t num_vertices, std::uint64_t num_edges, bool skewed) {
  if (skewed) return 2.0;
  const double mean_degree =
      std::max(1.0, 2.0 * static_cast<double>(num_edges) / std::max(1.0, static_cast<double>(num_vertices)));
  const double mean_gap = static_cast<double>(num_vertices) / mean_degree;
  return varint_bytes(static_cast<std::uint64_t>(mean_gap)) + 2.0 / static_cast<double>(kGapBlock);
}

std::uint64_t compressed_csr_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes,
                                   double bytes_per_entry, CsrOrder order) {
  const std::uint64_t tables = (order == CsrOrder::kDegree ? 3 : 1) * num_vertices * vertex_bytes;
  const auto lists = static_cast<std::uint64_t>(bytes_per_entry * 2 * static_cast<double>(num_edges));
  return (num_vertices + 1) * sizeof(std::uint64_t) + num_vertices * vertex_bytes + lists + tables;
}

std::uint64_t compressed_csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges,
                                              unsigned vertex_bytes, double bytes_per_entry, CsrOrder order) {
  const std::uint64_t n = num_vertices;
  const std::uint64_t entries = 2 * num_edges;
  const std::uint64_t lists = static_cast<std::uint64_t>(bytes_per_entry * static_cast<double>(entries));
  // Kept throughout: the tuple degrees and the order's tables.
  const std::uint64_t tables = (order == CsrOrder::kDegree ? 3 : 1) * n * vertex_bytes;
  // The count: the counts of the input's ids.
  const std::uint64_t count = (n + 1) * sizeof(std::uint64_t);
  // The passes: each vertex's pass, the list lengths and starts, one pass's entries and
  // its rows' cursors and encoded sizes (the rows of a pass's share of the entries, on
  // average), the placement's round buffers, and the lists encoded.
  const std::uint64_t pass_entries =
      std::min(entries, std::max(kMinPassEntries, (entries + kCompressedPasses - 1) / kCompressedPasses));
  const std::uint64_t pass_rows = entries == 0 ? n : n * pass_entries / entries + 1;
  const std::uint64_t passes = n + n * vertex_bytes + (n + 1) * sizeof(std::uint64_t) + pass_entries * vertex_bytes +
                               2 * (pass_rows + 1) * sizeof(std::uint64_t) +
                               placement_buffer_bytes(pass_rows, num_edges, vertex_bytes) + lists;
  return tables + std::max(count, passes);
}

namespace {

// The input's tuple degrees, the degree order they give (CsrOrder::kDegree), and the
// tuple degrees at internal ids.
template <class V>
void order_tuple_degrees(const InputEdges& edges, CsrOrder order, DegreeOrder<V>& degree_order,
                         LargeArray<V>& tuple_degree) {
  const std::uint64_t n = edges.num_vertices();
  const auto vertices = static_cast<std::int64_t>(n);
  {
    const LargeArray<std::uint64_t> counts = count_tuple_degrees(edges);
    const std::uint64_t* count = counts.data();
    std::uint64_t largest = 0;
#pragma omp parallel for schedule(static) reduction(max : largest)
    for (std::int64_t v = 0; v < vertices; ++v) largest = std::max(largest, count[v]);
    if (largest > std::numeric_limits<V>::max()) {
      throw Error(ExitCode::kFailure, "a vertex's input tuple degree does not fit the local id type");
    }
    if (order == CsrOrder::kDegree) degree_order = DegreeOrder<V>(std::span<const std::uint64_t>(count, n));
    const V* sorted = order == CsrOrder::kDegree ? degree_order.sorted_offsets().data() : nullptr;
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < vertices; ++v) {
      const auto at = static_cast<std::uint64_t>(v);
      tuple_degree[sorted != nullptr ? sorted[at] : at] = static_cast<V>(count[v]);
    }
  }
}

// Kernel 1's passes over ranges of internal ids: their bounds, each vertex's pass by the
// input's id (one byte, which is all an entry outside the pass costs), and the most rows
// and entries a pass holds.
struct PassPlan {
  std::vector<std::uint64_t> bounds;
  LargeArray<std::uint8_t> pass_of;
  std::uint64_t total_entries = 0;
  std::uint64_t most_rows = 0;
  std::uint64_t most_entries = 0;
};

template <class V>
PassPlan plan_passes(const V* tdeg, std::uint64_t n, const V* original, std::uint64_t pass_entries) {
  const auto vertices = static_cast<std::int64_t>(n);
  std::uint64_t total_entries = 0;
#pragma omp parallel for schedule(static) reduction(+ : total_entries)
  for (std::int64_t s = 0; s < vertices; ++s) total_entries += tdeg[s];
  if (pass_entries == 0)
    pass_entries = std::max(kMinPassEntries, (total_entries + kCompressedPasses - 1) / kCompressedPasses);
  // Ranges closed greedily: two in a row hold more than a pass, so this bound keeps them
  // within a byte's 255.
  pass_entries = std::max(pass_entries, (2 * total_entries + 253) / 254);
  PassPlan plan;
  plan.total_entries = total_entries;
  plan.bounds = pass_bounds(tdeg, n, pass_entries);
  const std::vector<std::uint64_t>& bounds = plan.bounds;
  const std::size_t passes = bounds.size() - 1;
  plan.pass_of = LargeArray<std::uint8_t>(n);
  LargeArray<std::uint8_t>& pass_of = plan.pass_of;
  std::uint64_t& most_rows = plan.most_rows;
  std::uint64_t& most_entries = plan.most_entries;
  for (std::size_t p = 0; p < passes; ++p) {
    std::uint64_t entries = 0;
    const auto first = static_cast<std::int64_t>(bounds[p]);
    const auto last = static_cast<std::int64_t>(bounds[p + 1]);
#pragma omp parallel for schedule(static) reduction(+ : entries)
    for (std::int64_t s = first; s < last; ++s) {
      pass_of[original != nullptr ? original[s] : static_cast<std::uint64_t>(s)] = static_cast<std::uint8_t>(p);
      entries += tdeg[s];
    }
    most_rows = std::max(most_rows, bounds[p + 1] - bounds[p]);
    most_entries = std::max(most_entries, entries);
  }
  return plan;
}

}  // namespace

template <class V>
CompressedCsr<V> build_compressed_csr(const InputEdges& edges, CsrOrder order, std::uint64_t pass_entries) {
  const std::uint64_t n = edges.num_vertices();
  if (n - 1 > std::numeric_limits<V>::max()) {
    throw Error(ExitCode::kFailure, "vertex ids do not fit the local id type");
  }

  // 1. Degrees, the degree order, and the tuple degrees in internal ids.
  DegreeOrder<V> degree_order;
  LargeArray<V> tuple_degree(n);
  order_tuple_degrees(edges, order, degree_order, tuple_degree);
  const V* sorted = order == CsrOrder::kDegree ? degree_order.sorted_offsets().data() : nullptr;
  const V* original = order == CsrOrder::kDegree ? degree_order.original_offsets().data() : nullptr;
  const auto internal = [sorted](std::uint64_t v) {
    return sorted != nullptr ? static_cast<std::uint64_t>(sorted[v]) : v;
  };
  const V* tdeg = tuple_degree.data();

  // 2. The passes: ranges of internal ids, so that the lists come out in the order bottom-up
  // steps read them in.
  const PassPlan plan = plan_passes(tdeg, n, original, pass_entries);
  const std::vector<std::uint64_t>& bounds = plan.bounds;
  const std::size_t passes = bounds.size() - 1;
  const std::uint64_t total_entries = plan.total_entries;
  const std::uint64_t most_rows = plan.most_rows;
  const std::uint64_t most_entries = plan.most_entries;
  const LargeArray<std::uint8_t>& pass_of = plan.pass_of;
  LargeArray<V> buffer(most_entries);
  // A pass's rows: cursor (then start) of each row's entries in `buffer`, and each list's
  // place in the pass's bytes.
  LargeArray<std::uint64_t> cursor(most_rows + 1);
  LargeArray<std::uint64_t> place(most_rows + 1);
  LargeArray<V> degrees(n);
  // Virtual until written (LargeArray maps pages on first touch): the lists' real size is
  // known only once each pass has deduplicated its own.
  LargeArray<std::uint8_t> stream(encoded_bound(total_entries, sizeof(V)));
  LargeArray<std::uint64_t> starts(n + 1);
  std::uint64_t written = 0;
  std::uint64_t directed = 0;
  V* adj = buffer.data();
  std::uint64_t* off = cursor.data();
  std::uint64_t* at = place.data();
  V* degree = degrees.data();
  const std::uint8_t* pass_table = pass_of.data();
  for (std::size_t p = 0; p < passes; ++p) {
    const std::uint64_t lo = bounds[p];
    const std::uint64_t rows = bounds[p + 1] - lo;
    const auto row_count = static_cast<std::int64_t>(rows);
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < row_count; ++r) off[r] = tdeg[lo + static_cast<std::uint64_t>(r)];
    off[rows] = exclusive_prefix_sum(off, rows);
    const auto pass = static_cast<std::uint8_t>(p);
    place_entries<V>(
        edges, rows,
        [pass_table, pass, lo, &internal](std::uint64_t u) {
          return pass_table[u] == pass ? internal(u) - lo : kNotPlaced;
        },
        internal, off, adj);
    // Each cursor ended at its row's end, the next row's start.
    std::memmove(off + 1, off, rows * sizeof(std::uint64_t));
    off[0] = 0;
    sort_and_deduplicate_lists(adj, off, rows, [&](std::uint64_t r, std::uint64_t length) {
      degree[lo + r] = static_cast<V>(length);
      at[r] = gap_list_bytes<V>({adj + off[r], static_cast<std::size_t>(length)});
    });
    at[rows] = exclusive_prefix_sum(at, rows);
    std::uint64_t kept = 0;
    std::uint8_t* out = stream.data() + written;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : kept)
    for (std::int64_t i = 0; i < row_count; ++i) {
      const auto r = static_cast<std::uint64_t>(i);
      const std::uint64_t length = degree[lo + r];
      encode_gap_list<V>({adj + off[r], static_cast<std::size_t>(length)}, out + at[r]);
      starts[lo + r] = written + at[r];
      kept += length;
    }
    directed += kept;
    written += at[rows];
  }
  starts[n] = written;
  stream.shrink(written);
  return CompressedCsr<V>(n, std::move(starts), std::move(degrees), std::move(stream), directed,
                          std::move(tuple_degree), std::move(degree_order));
}

template CompressedCsr<std::uint32_t> build_compressed_csr<std::uint32_t>(const InputEdges&, CsrOrder, std::uint64_t);
template CompressedCsr<std::uint64_t> build_compressed_csr<std::uint64_t>(const InputEdges&, CsrOrder, std::uint64_t);

}  // namespace zbfs
