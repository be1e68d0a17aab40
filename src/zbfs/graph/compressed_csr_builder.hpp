// Kernel 1 for compressed adjacency: builds a CompressedCsr<V> (graph/compressed_csr.hpp)
// from an edge list (stored or produced) without ever holding the plain lists whole.
// After the degree count (and the degree order), the internal ids are cut into ranges of
// about `pass_entries` list entries, and each range is one pass over the edge list: its
// entries are placed (graph/list_placement.hpp), sorted, deduplicated and encoded at the
// end of the byte stream, and the pass's buffer is reused by the next. So the lists lie
// in internal order, the order bottom-up steps read them in (lists left in the input's
// order, each pass a range of its ids, searched at half the speed at scale 22), and the
// build's peak is the finished graph and one pass's plain entries. OpenMP parallel.
#pragma once

#include <cstdint>

#include "zbfs/core/input_edges.hpp"
#include "zbfs/graph/compressed_csr.hpp"
#include "zbfs/graph/csr_builder.hpp"

namespace zbfs {

// By default the build takes kCompressedPasses passes, of kMinPassEntries entries at
// least: each pass holds an eighth of the plain lists (with their duplicates), and each
// reads the edge list again (produces it again, when it is not held).
inline constexpr std::uint64_t kCompressedPasses = 8;
inline constexpr std::uint64_t kMinPassEntries = std::uint64_t{1} << 22;

// `edges` is read once for the degrees and once per pass; `pass_entries`: the most list
// entries one pass holds (a vertex with more gets a pass of its own; 0: the default
// above; raised where it would take more than 255 passes).
template <class V>
CompressedCsr<V> build_compressed_csr(const InputEdges& edges, CsrOrder order = CsrOrder::kInput,
                                      std::uint64_t pass_entries = 0);

// Bytes per list entry of the encoded lists that memory estimates assume. A skewed graph
// (Kronecker, R-MAT) in degree order has most entries in hubs' lists, whose gaps take a
// byte: scale 26 measured 1.9 bytes per input entry, and 2.0 leaves a margin. Otherwise
// (G(n, m), files) a list's gaps are about n over the mean degree, so a varint of that,
// and the block headers.
double compressed_bytes_per_entry(std::uint64_t num_vertices, std::uint64_t num_edges, bool skewed);

// Bytes build_compressed_csr needs at its peak for this edge list shape, the encoded lists
// estimated at `bytes_per_entry` per input entry, excluding the edge list itself.
std::uint64_t compressed_csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges,
                                              unsigned vertex_bytes, double bytes_per_entry,
                                              CsrOrder order = CsrOrder::kInput);

// Bytes the finished graph holds (lists and vertex tables), estimated the same way.
std::uint64_t compressed_csr_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes,
                                   double bytes_per_entry, CsrOrder order = CsrOrder::kInput);

extern template CompressedCsr<std::uint32_t> build_compressed_csr<std::uint32_t>(const InputEdges&, CsrOrder,
                                                                                 std::uint64_t);
extern template CompressedCsr<std::uint64_t> build_compressed_csr<std::uint64_t>(const InputEdges&, CsrOrder,
                                                                                 std::uint64_t);

}  // namespace zbfs
