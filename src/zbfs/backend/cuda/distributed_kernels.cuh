// The distributed search's device kernels (cuda/distributed_steps.hpp): functors over an
// index space, run by the launcher on the device or the host (launch.cuh). For
// distributed_steps.cu only.
#pragma once

#include <thrust/fill.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cuda/std/bit>
#include <cuda/std/functional>
#include <optional>
#include <utility>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/bitmap_kernels.cuh"
#include "zbfs/backend/cuda/device_codec.hpp"
#include "zbfs/backend/cuda/distributed_steps.hpp"
#include "zbfs/backend/cuda/launch.cuh"
#include "zbfs/core/timer.hpp"

namespace zbfs::cuda_backend::distributed_kernels {

using Vertex = std::uint32_t;

struct BeginSearch {
  std::uint64_t* visited;
  std::uint64_t* frontier;
  std::int64_t* parent;
  const Vertex* owned_original;
  std::uint64_t offset;
  std::int64_t start_parent;
  ZBFS_HD void operator()(std::uint64_t) const {
    visited[offset >> 6] |= bit_of(offset);
    frontier[offset >> 6] |= bit_of(offset);
    parent[owned_original[offset]] = start_parent;
  }
};

struct SourceDegree {
  const std::uint64_t* offsets;
  const std::uint64_t* sources;
  std::uint64_t* degree;
  ZBFS_HD void operator()(std::uint64_t i) const { degree[i] = offsets[sources[i] + 1] - offsets[sources[i]]; }
};

// Top-down, one index per edge of the gathered frontier (sources: column-group local
// ids; scan: the exclusive scan of their degrees). An owned target is claimed; another
// rank's is reported once per search, with the source it was reached from.
struct ExpandEdge {
  const std::uint64_t* offsets;
  const Vertex* neighbors;
  const std::uint64_t* sources;
  const std::uint64_t* scan;
  std::uint64_t count;
  std::uint64_t block;
  std::uint64_t my_first;
  std::uint64_t* visited;
  std::uint64_t* next;
  std::int64_t* parent;
  const Vertex* owned_original;
  const Vertex* source_original;
  std::uint64_t source_base;
  std::uint64_t* sent;
  Vertex* sent_parent;
  std::uint64_t* reported;
  std::uint64_t* tail;
  ZBFS_HD void operator()(std::uint64_t e) const {
    const std::uint64_t lo = entry_of_edge(scan, count, e);
    const std::uint64_t source = sources[lo];
    const std::uint64_t target = neighbors[offsets[source] + (e - scan[lo])];
    const std::uint64_t offset = target - my_first;  // wraps past `block` for other pieces
    if (offset < block) {
      if (!claim_bit(visited, offset)) return;
      parent[owned_original[offset]] = static_cast<std::int64_t>(source_base + source_original[source]);
      claim_bit(next, offset);
      return;
    }
    if (!claim_bit(sent, target)) return;
    sent_parent[target] = static_cast<Vertex>(source);
    reported[shared_word(*tail).fetch_add(1, cuda::std::memory_order_relaxed)] = target;
  }
};

// Bottom-up, one index per row of one member's piece of the target group (rows
// first_row + i): an unvisited row looks for a parent in the sources' frontier, its hub
// first, then its list, and stops at the first. In this rank's own piece (`own`) a found
// row is claimed (parent, next); in another member's, whose visited bits as the members
// before left them are `piece_visited`, it is marked there, and reported to the owner.
struct SearchParent {
  const std::uint64_t* offsets;
  const Vertex* neighbors;
  const Vertex* hubs;
  const std::uint64_t* frontier;  // the bottom-up sources' bitmap
  std::uint64_t first_row;
  bool own;
  std::uint64_t* piece_visited;  // own: the visited bitmap (read only here)
  std::uint64_t* next;
  std::int64_t* parent;
  const Vertex* owned_original;
  const Vertex* source_original;
  std::uint64_t source_base;
  std::uint64_t* sent;
  Vertex* sent_parent;
  std::uint64_t* reported;
  std::uint64_t* tail;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t row = first_row + i;
    if ((shared_word(piece_visited[i >> 6]).load(cuda::std::memory_order_relaxed) & bit_of(i)) != 0) return;
    if (offsets[row] == offsets[row + 1]) return;
    std::uint64_t by = hubs[row];
    bool found = test_bit(frontier, by);
    for (std::uint64_t e = offsets[row], end = offsets[row + 1]; !found && e < end; ++e) {
      by = neighbors[e];
      found = test_bit(frontier, by);
    }
    if (!found) return;
    if (own) {
      parent[owned_original[i]] = static_cast<std::int64_t>(source_base + source_original[by]);
      shared_word(next[i >> 6]).fetch_or(bit_of(i), cuda::std::memory_order_relaxed);
      return;
    }
    shared_word(piece_visited[i >> 6]).fetch_or(bit_of(i), cuda::std::memory_order_relaxed);
    shared_word(sent[row >> 6]).fetch_or(bit_of(row), cuda::std::memory_order_relaxed);
    sent_parent[row] = static_cast<Vertex>(by);
    reported[shared_word(*tail).fetch_add(1, cuda::std::memory_order_relaxed)] = row;
  }
};

struct FoldWord {
  std::uint64_t* visited;
  const std::uint64_t* next;
  ZBFS_HD void operator()(std::uint64_t w) const { visited[w] |= next[w]; }
};

// Owners claim reported ids (global), grouped by the fold member that reported them.
struct ClaimReported {
  const std::uint64_t* ids;
  const std::uint64_t* member_offsets;  // member m's ids: [member_offsets[m], member_offsets[m + 1])
  std::uint64_t members;
  std::uint64_t first_vertex;
  std::uint64_t block;
  std::uint64_t* visited;
  std::uint64_t* next;
  std::int64_t* parent;
  const Vertex* owned_original;
  ForeignClaim* claims;
  std::uint64_t* tail;
  std::uint64_t* misplaced;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t offset = ids[i] - first_vertex;
    if (offset >= block) {
      shared_word(*misplaced).store(1, cuda::std::memory_order_relaxed);
      return;
    }
    if (!claim_bit(visited, offset)) return;
    const std::uint64_t member = entry_of_edge(member_offsets, members, i);
    parent[owned_original[offset]] = -2 - static_cast<std::int64_t>(member);
    claim_bit(next, offset);
    claims[shared_word(*tail).fetch_add(1, cuda::std::memory_order_relaxed)] = ForeignClaim{member, offset};
  }
};

struct LookUpReported {
  const std::uint64_t* targets;
  const Vertex* sent_parent;
  std::uint64_t* out;
  ZBFS_HD void operator()(std::uint64_t i) const { out[i] = sent_parent[targets[i]]; }
};

// out[i] = i * step: a sorted sample for the calibration.
struct Spread {
  std::uint64_t* out;
  std::uint64_t step;
  ZBFS_HD void operator()(std::uint64_t i) const { out[i] = i * step; }
};

struct SetParent {
  const std::uint64_t* offsets;
  const std::int64_t* values;
  const Vertex* owned_original;
  std::int64_t* parent;
  ZBFS_HD void operator()(std::uint64_t i) const { parent[owned_original[offsets[i]]] = values[i]; }
};

// A gathered frontier's global ids to column-group local ones; an id outside the column
// would index past the graph's rows.
struct ToLocalSources {
  std::uint64_t* ids;
  std::uint64_t base;
  std::uint64_t rows;
  std::uint64_t* stray;
  ZBFS_HD void operator()(std::uint64_t i) const {
    ids[i] -= base;
    if (ids[i] >= rows) shared_word(*stray).store(1, cuda::std::memory_order_relaxed);
  }
};

// bounds[m] = the first sorted report of member m or later (m = members: the count).
struct MemberBounds {
  const std::uint64_t* sorted;
  std::uint64_t count;
  std::uint64_t block;
  std::uint64_t* bounds;
  ZBFS_HD void operator()(std::uint64_t m) const {
    const std::uint64_t key = m * block;
    std::uint64_t lo = 0;
    std::uint64_t hi = count;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (sorted[mid] < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    bounds[m] = lo;
  }
};

// Row-group local ids to global ones (member m's piece is first_piece + m * stride).
struct ToGlobalTargets {
  const std::uint64_t* local;
  std::uint64_t block;
  std::uint64_t first_piece;
  std::uint64_t stride;
  std::uint64_t* global;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t member = local[i] / block;
    global[i] = (first_piece + member * stride) * block + local[i] % block;
  }
};

// Bit compaction (core/bit_compaction.hpp) on the target, one index per word of a slice:
// the word's bits at its mask's positions go, in order, to bit `at[w] - first` of the
// packed piece (zeroed first), over at most two of its words.
struct CompactWord {
  const std::uint64_t* words;
  const std::uint64_t* mask;
  const std::uint64_t* at;  // the scan of the mask's populations
  std::uint64_t first;      // the slice's first packed bit in that scan
  std::uint64_t* packed;
  ZBFS_HD void operator()(std::uint64_t w) const {
    const std::uint64_t m = mask[w];
    if (m == 0) return;
    std::uint64_t bits = 0;
    unsigned k = 0;
    for (std::uint64_t left = m; left != 0; left &= left - 1, ++k) {
      bits |= ((words[w] >> cuda::std::countr_zero(left)) & 1) << k;
    }
    const std::uint64_t position = at[w] - first;
    const std::uint64_t offset = position % 64;
    shared_word(packed[position / 64]).fetch_or(bits << offset, cuda::std::memory_order_relaxed);
    if (offset != 0 && k > 64 - offset) {
      shared_word(packed[position / 64 + 1]).fetch_or(bits >> (64 - offset), cuda::std::memory_order_relaxed);
    }
  }
};

// The inverse over every member's slice (`slice_words` words each): word w's mask
// positions take their bits from member w / slice_words's packed piece, which starts at
// word piece_at[member] of `packed` and at bit first[member] of the scan.
struct ExpandWord {
  const std::uint64_t* packed;
  const std::uint64_t* mask;
  const std::uint64_t* at;
  const std::uint64_t* first;
  const std::uint64_t* piece_at;
  std::uint64_t slice_words;
  std::uint64_t* words;
  ZBFS_HD void operator()(std::uint64_t w) const {
    const std::uint64_t m = mask[w];
    if (m == 0) {
      words[w] = 0;
      return;
    }
    const std::uint64_t member = w / slice_words;
    const std::uint64_t position = at[w] - first[member];
    const std::uint64_t* piece = packed + piece_at[member];
    const std::uint64_t offset = position % 64;
    const auto k = static_cast<unsigned>(cuda::std::popcount(m));
    std::uint64_t bits = piece[position / 64] >> offset;
    if (offset != 0 && k > 64 - offset) bits |= piece[position / 64 + 1] << (64 - offset);
    std::uint64_t out = 0;
    unsigned j = 0;
    for (std::uint64_t left = m; left != 0; left &= left - 1, ++j) {
      out |= ((bits >> j) & 1) << cuda::std::countr_zero(left);
    }
    words[w] = out;
  }
};

// A packed piece's bits past its mask's positions must be 0, as compaction writes them.
struct CheckPackedTail {
  const std::uint64_t* packed;
  const std::uint64_t* piece_at;  // members + 1
  const std::uint64_t* first;     // members + 1: each piece's first bit in the scan
  std::uint64_t* damaged;
  ZBFS_HD void operator()(std::uint64_t member) const {
    const std::uint64_t bits = first[member + 1] - first[member];
    if (bits % 64 == 0) return;
    if ((packed[piece_at[member + 1] - 1] >> (bits % 64)) != 0) {
      shared_word(*damaged).store(1, cuda::std::memory_order_relaxed);
    }
  }
};

// out[i] = in[i * stride].
struct EveryNth {
  const std::uint64_t* in;
  std::uint64_t stride;
  std::uint64_t* out;
  ZBFS_HD void operator()(std::uint64_t i) const { out[i] = in[i * stride]; }
};

struct CloseGathered {
  std::uint64_t* open;
  const std::uint64_t* gathered;
  ZBFS_HD void operator()(std::uint64_t w) const { open[w] &= ~gathered[w]; }
};

// A claim's request key: its reporter, then the vertex (sorting groups by reporter).
struct ClaimKey {
  const ForeignClaim* claims;
  std::uint64_t block;
  std::uint64_t* keys;
  ZBFS_HD void operator()(std::uint64_t i) const { keys[i] = claims[i].member * block + claims[i].offset; }
};

// out[i] = base + key[i] % block: an owned vertex's global id.
struct KeyToVertex {
  const std::uint64_t* keys;
  std::uint64_t block;
  std::uint64_t base;
  std::uint64_t* out;
  ZBFS_HD void operator()(std::uint64_t i) const { out[i] = base + keys[i] % block; }
};

// A reporter answers a request (a global id of its row group) with the parent it reported
// the vertex with, as a global id; a vertex outside the row group is flagged.
struct AnswerParent {
  const std::uint64_t* asked;
  std::uint64_t block;
  std::uint64_t first_piece;
  std::uint64_t stride;
  std::uint64_t pieces;
  const Vertex* sent_parent;
  const Vertex* source_original;
  std::uint64_t source_base;
  std::uint64_t* answers;
  std::uint64_t* stray;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t piece = asked[i] / block;
    const std::uint64_t from_first = piece - first_piece;  // wraps below the group
    if (piece < first_piece || from_first % stride != 0 || from_first / stride >= pieces) {
      shared_word(*stray).store(1, cuda::std::memory_order_relaxed);
      answers[i] = 0;
      return;
    }
    const std::uint64_t local = from_first / stride * block + asked[i] % block;
    answers[i] = source_base + source_original[sent_parent[local]];
  }
};

struct SetAnsweredParent {
  const std::uint64_t* keys;
  const std::uint64_t* answers;
  std::uint64_t block;
  const Vertex* owned_original;
  std::int64_t* parent;
  ZBFS_HD void operator()(std::uint64_t i) const {
    parent[owned_original[keys[i] % block]] = static_cast<std::int64_t>(answers[i]);
  }
};

// A level's count, word by word of the frontier: its vertices, their edges (a degree
// table, or none), and the tallest tree below them (heights, or none).
struct WordTally {
  const std::uint64_t* words;
  const std::uint64_t* degree;
  const std::uint8_t* height;
  ZBFS_HD LevelTally operator()(std::uint64_t w) const {
    LevelTally tally;
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      const std::uint64_t v = w * 64 + static_cast<std::uint64_t>(cuda::std::countr_zero(bits));
      ++tally.vertices;
      if (degree != nullptr) tally.edges += degree[v];
      if (height != nullptr && height[v] > tally.tallest) tally.tallest = height[v];
    }
    return tally;
  }
};
struct AddLevelTallies {
  ZBFS_HD LevelTally operator()(const LevelTally& a, const LevelTally& b) const {
    return {a.vertices + b.vertices, a.edges + b.edges, a.tallest > b.tallest ? a.tallest : b.tallest};
  }
};

// A pruned search's attach step (DistributedSteps::attach), one index per owned peeled
// vertex: it is reached exactly when its anchor is, and then gets its parent; a vertex of
// the root's own tree also reports the level below which it reaches (the rule of
// DistributedPrunedSearch::own_tree_depth).
struct AttachTally {
  std::uint64_t attached = 0;
  std::uint64_t deepest = 0;
};
struct AddTallies {
  ZBFS_HD AttachTally operator()(const AttachTally& a, const AttachTally& b) const {
    return {a.attached + b.attached, a.deepest > b.deepest ? a.deepest : b.deepest};
  }
};
struct AttachPeeled {
  const PeeledVertexView* peeled;
  const std::uint64_t* reached;
  std::uint64_t own_tree;
  const std::uint64_t* links;  // the chain, root first, and the start
  std::uint64_t link_count;
  const std::uint64_t* attach;
  const std::uint8_t* height;
  std::uint64_t first_vertex;
  std::int64_t* parent;  // at original offsets
  ZBFS_HD AttachTally operator()(std::uint64_t i) const {
    const PeeledVertexView v = peeled[i];
    if (v.anchor_at == kNoAnchor || !test_bit(reached, v.anchor_at)) return {};
    parent[v.original] = static_cast<std::int64_t>(v.parent);
    AttachTally tally{1, 0};
    if (v.anchor_at != own_tree) return tally;
    const std::uint64_t by = attach[v.offset];
    const std::uint64_t self = first_vertex + v.offset;
    for (std::uint64_t c = 0; c < link_count; ++c) {
      if (by == links[c] && (c == 0 || self != links[c - 1])) {
        const std::uint64_t depth = c + 1 + height[v.offset];
        tally.deepest = depth > tally.deepest ? depth : tally.deepest;
      }
    }
    return tally;
  }
};

std::uint64_t words_for(std::uint64_t bits) { return (bits + 63) / 64; }

constexpr std::uint64_t kNoMember = ~std::uint64_t{0};

}  // namespace zbfs::cuda_backend::distributed_kernels
