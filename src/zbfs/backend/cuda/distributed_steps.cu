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

namespace zbfs::cuda_backend {
namespace {

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

// The frontier's edges: the degrees of word w's vertices.
struct WordDegrees {
  const std::uint64_t* words;
  const std::uint64_t* degree;
  ZBFS_HD std::uint64_t operator()(std::uint64_t w) const {
    std::uint64_t sum = 0;
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      sum += degree[w * 64 + static_cast<std::uint64_t>(cuda::std::countr_zero(bits))];
    }
    return sum;
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

std::uint64_t words_for(std::uint64_t bits) { return (bits + 63) / 64; }

constexpr std::uint64_t kNoMember = ~std::uint64_t{0};

}  // namespace

struct DistributedSteps::State {
  State(ExecutionTarget target, const DistributedPieceView& v)
      : stream(target),
        staging(target),
        view(v),
        words(words_for(v.block)),
        shared_graph(v.bottom_up.offsets == v.top_down.offsets),
        top_down_offsets(target, v.top_down.rows + 1),
        top_down_neighbors(target, v.top_down.offsets[v.top_down.rows]),
        bottom_up_offsets(target, shared_graph ? 0 : v.bottom_up.rows + 1),
        bottom_up_neighbors(target, shared_graph ? 0 : v.bottom_up.offsets[v.bottom_up.rows]),
        owned_original(target, v.block),
        top_down_original(target, v.top_down.rows),
        bottom_up_original(target, v.bottom_up_sources),
        owned_degree(target, v.block),
        hubs(target, v.bottom_up.rows),
        visited(target, words),
        frontier(target, words),
        next(target, words),
        sent(target, words_for(v.target_vertices)),
        sent_parent(target, v.target_vertices),
        parent(target, v.block),
        sources(target, v.top_down.rows + 1),
        scan(target, std::max(v.top_down.rows, words) + 1),
        reported(target, v.target_vertices + 1),
        claims(target, v.block + 1),
        member(target, v.block + 1),
        values(target, v.block + 1),
        source_frontier(target, words_for(v.bottom_up_sources)),
        targets_visited(target, words),
        counters(target, 3) {
    // The pieces go over once, straight from the graph's arrays; the steps' transfers
    // are staged through pinned memory.
    upload_once(top_down_offsets, v.top_down.offsets, v.top_down.rows + 1);
    upload_once(top_down_neighbors, v.top_down.neighbors, v.top_down.offsets[v.top_down.rows]);
    if (!shared_graph) {
      upload_once(bottom_up_offsets, v.bottom_up.offsets, v.bottom_up.rows + 1);
      upload_once(bottom_up_neighbors, v.bottom_up.neighbors, v.bottom_up.offsets[v.bottom_up.rows]);
    }
    upload_once(owned_original, v.owned_original, v.block);
    upload_once(top_down_original, v.top_down_original, v.top_down.rows);
    upload_once(bottom_up_original, v.bottom_up_original, v.bottom_up_sources);
    upload_once(owned_degree, v.owned_degree, v.block);
    upload_once(hubs, v.bottom_up_hubs, v.bottom_up.rows);
    if (v.source_has_edges != nullptr) {
      has_edges = DeviceArray<std::uint64_t>(target, v.bottom_up_sources / 64);
      upload_once(has_edges, v.source_has_edges, v.bottom_up_sources / 64);
    }
    if (v.id_transfer != IdTransfer::kRaw) codec.emplace(target);
    if (v.id_transfer == IdTransfer::kPriced) costs = calibrate();
  }

  // Median of a few timings of `work`.
  template <class Work>
  static double median_time(int repeats, const Work& work) {
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      const Stopwatch clock;
      work();
      times.push_back(clock.elapsed_s());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

  // The target's copy and frame costs: small and large copies through the staging buffer,
  // and small and large sorted lists (gaps of 8) as frames both ways, fitted as latency
  // plus size over rate. The sample goes through `reported` and `sources`.
  PcieCosts calibrate() {
    constexpr std::uint64_t kSmall = 128;
    constexpr std::uint64_t kLarge = std::uint64_t{1} << 18;
    const HostDeviceTraffic before = traffic;
    const HostDeviceTraffic codec_before = codec->traffic();
    reserve(reported, kLarge);
    reserve(sources, kLarge);
    for_each_index(stream, kLarge, Spread{reported.data(), 8});
    stream.synchronize();
    std::vector<std::uint64_t> host(kLarge);
    PcieCosts c;
    const double copy_small =
        median_time(5, [&] { staging.to_host(stream, host.data(), reported.data(), kSmall * 8); });
    const double copy_large =
        median_time(3, [&] { staging.to_host(stream, host.data(), reported.data(), kLarge * 8); });
    c.copy_bytes_per_s = static_cast<double>((kLarge - kSmall) * 8) / std::max(copy_large - copy_small, 1e-9);
    c.copy_latency_s = std::max(copy_small - static_cast<double>(kSmall * 8) / c.copy_bytes_per_s, 0.0);
    const auto round_trip = [&](std::uint64_t count) {
      ByteBuffer frame;
      codec->encode(CodecId::kBitpack, reported.data(), count, IdOrder::kSortedSet, frame);
      const std::vector<std::uint64_t> ids = decode_frame(frame.bytes(), count);
      ByteBuffer back;
      encode_frame(CodecId::kBitpack, ids, IdOrder::kSortedSet, back);
      codec->decode(back.bytes(), read_frame_header(back.bytes(), count), sources.data());
      return static_cast<double>(frame.size());
    };
    double small_bytes = 0;
    double large_bytes = 0;
    const double frame_small = median_time(5, [&] { small_bytes = round_trip(kSmall); }) / 2;
    const double frame_large = median_time(3, [&] { large_bytes = round_trip(kLarge); }) / 2;
    const double small_rest = frame_small - c.copy_latency_s - small_bytes / c.copy_bytes_per_s;
    const double large_rest = frame_large - c.copy_latency_s - large_bytes / c.copy_bytes_per_s;
    c.frame_s_per_id = std::max((large_rest - small_rest) / static_cast<double>(kLarge - kSmall), 0.0);
    c.frame_latency_s = std::max(small_rest - c.frame_s_per_id * kSmall, 0.0);
    // The calibration's copies are kernel 1's, not the searches': not counted.
    traffic = before;
    codec_traffic_offset = codec->traffic();
    codec_traffic_offset.to_device -= codec_before.to_device;
    codec_traffic_offset.to_host -= codec_before.to_host;
    return c;
  }

  // Room for `count` elements (reports from several members can outnumber a piece).
  template <class T>
  void reserve(DeviceArray<T>& array, std::uint64_t count) {
    if (array.size() < count) array = DeviceArray<T>(stream.target(), count + count / 4);
  }
  template <class T>
  void upload_once(DeviceArray<T>& array, const T* host, std::uint64_t count) {
    traffic.to_device += array.upload(stream, host, count);
  }
  template <class T>
  void upload(DeviceArray<T>& array, const T* host, std::uint64_t count) {
    staging.to_target(stream, array.data(), host, count * sizeof(T));
    traffic.to_device += count * sizeof(T);
  }
  template <class T>
  std::vector<T> download(const DeviceArray<T>& array, std::uint64_t count) {
    std::vector<T> host(count);
    staging.to_host(stream, host.data(), array.data(), count * sizeof(T));
    traffic.to_host += count * sizeof(T);
    return host;
  }
  std::uint64_t counter(int which) {
    std::uint64_t value = 0;
    staging.to_host(stream, &value, counters.data() + which, 8);
    traffic.to_host += 8;
    return value;
  }
  template <class T>
  void fill(const DeviceArray<T>& array, std::uint64_t count, T value, std::uint64_t first = 0) {
    T* at = array.data() + first;
    on_policy(stream, [&](auto policy) { thrust::fill(policy, at, at + count, value); });
  }
  std::uint64_t exclusive_scan(std::uint64_t count) { return scan_counts(stream, scan.data(), count, traffic.to_host); }
  template <class Transform>
  std::uint64_t sum_over_words(const Transform& transform) {
    return on_policy(stream, [&](auto policy) {
      return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                      thrust::counting_iterator<std::uint64_t>(words), transform, std::uint64_t{0},
                                      cuda::std::plus<std::uint64_t>());
    });
  }
  [[nodiscard]] const std::uint64_t* bottom_up_offsets_data() const {
    return shared_graph ? top_down_offsets.data() : bottom_up_offsets.data();
  }
  [[nodiscard]] const Vertex* bottom_up_neighbors_data() const {
    return shared_graph ? top_down_neighbors.data() : bottom_up_neighbors.data();
  }

  // Bottom-up over one member's piece of the target rows (from first_row): in this rank's
  // own piece (`own`) found rows are claimed, in another's marked in `piece_visited` and
  // reported (SearchParent).
  void search_rows(std::uint64_t first_row, bool own, std::uint64_t* piece_visited) {
    for_each_index(
        stream, std::min(view.block, view.bottom_up.rows - first_row),
        SearchParent{bottom_up_offsets_data(), bottom_up_neighbors_data(), hubs.data(), searched_frontier, first_row,
                     own, piece_visited, next.data(), parent.data(), owned_original.data(), bottom_up_original.data(),
                     view.bottom_up_source_base, sent.data(), sent_parent.data(), reported.data(), counters.data()});
  }

  // Whether `count` ids over `span` positions cross as a frame.
  bool framed(std::uint64_t count, std::uint64_t span) {
    const bool yes = codec && (view.id_transfer == IdTransfer::kFrames || frames_pay(costs, count, span));
    ++(yes ? lists_framed : lists_raw);
    return yes;
  }
  // Id lists (within `span` positions) to host memory: as they are, or as one bitpack
  // frame (a set's: `sorted`, or sorted here first) encoded on the device and decoded on
  // the host.
  std::vector<std::uint64_t> ids_to_host(std::uint64_t* ids, std::uint64_t count, bool sorted, std::uint64_t span) {
    if (!framed(count, span)) {
      std::vector<std::uint64_t> host(count);
      staging.to_host(stream, host.data(), ids, count * 8);
      traffic.to_host += count * 8;
      return host;
    }
    if (!sorted) on_policy(stream, [&](auto policy) { thrust::sort(policy, ids, ids + count); });
    stream.synchronize();
    ByteBuffer frame;
    codec->encode(CodecId::kBitpack, ids, count, IdOrder::kSortedSet, frame);
    return decode_frame(frame.bytes(), count);
  }
  // An id list (within `span` positions) from host memory into `at`: as it is, or as a
  // bitpack frame (of a set: `sorted`, or sorted here first) encoded on the host and
  // decoded on the device.
  void ids_to_target(std::span<const std::uint64_t> ids, std::uint64_t* at, std::uint64_t span, bool sorted) {
    if (ids.empty()) return;
    if (!framed(ids.size(), span)) {
      staging.to_target(stream, at, ids.data(), ids.size() * 8);
      traffic.to_device += ids.size() * 8;
      return;
    }
    stream.synchronize();
    std::vector<std::uint64_t> in_order;
    if (!sorted) {
      in_order.assign(ids.begin(), ids.end());
      std::sort(in_order.begin(), in_order.end());
      ids = in_order;
    }
    ByteBuffer frame;
    encode_frame(CodecId::kBitpack, ids, IdOrder::kSortedSet, frame);
    codec->decode(frame.bytes(), read_frame_header(frame.bytes(), ids.size()), at);
  }

  // The members' messages in the inbox (member m's: member_bytes[m] bytes) as ids, one
  // after another, into `out`: member `words_member` (every member's, kIds) as 64-bit
  // words, the others as frames, whose headers are read on the host. Returns each
  // member's first id (members + 1 offsets).
  std::vector<std::uint64_t> decode_inbox(std::span<const std::uint64_t> member_bytes, WireForm form,
                                          std::uint64_t words_member, DeviceArray<std::uint64_t>& out,
                                          std::uint64_t max_ids) {
    const std::size_t members = member_bytes.size();
    std::vector<std::uint64_t> byte_at(members + 1, 0);
    std::vector<std::uint64_t> id_at(members + 1, 0);
    std::vector<std::vector<std::uint8_t>> frames(members);
    std::vector<FrameHeader> headers(members);
    for (std::size_t m = 0; m < members; ++m) {
      const std::uint64_t bytes = member_bytes[m];
      byte_at[m + 1] = byte_at[m] + bytes;
      std::uint64_t count = 0;
      if (bytes != 0 && (form == WireForm::kIds || m == words_member)) {
        if (bytes % 8 != 0) throw DecodeError("unframed message of " + std::to_string(bytes) + " bytes");
        count = bytes / 8;
      } else if (bytes != 0) {
        // The frame's header and checksum are checked where the CPU checks them.
        frames[m].resize(bytes);
        copy_bytes(stream, frames[m].data(), inbox_bytes.data() + byte_at[m], bytes, cudaMemcpyDeviceToHost);
        traffic.to_host += bytes;
        headers[m] = read_frame_header(frames[m], max_ids);
        if (headers[m].frame_bytes() != bytes) throw DecodeError("message is not exactly one frame");
        count = headers[m].count;
      }
      id_at[m + 1] = id_at[m] + count;
      if (id_at[m + 1] > max_ids) throw DecodeError("messages announce more ids than there are vertices");
    }
    reserve(out, id_at[members] + 1);
    if (form == WireForm::kFrames && !codec) codec.emplace(stream.target());
    for (std::size_t m = 0; m < members; ++m) {
      if (!frames[m].empty()) {
        codec->decode(frames[m], headers[m], out.data() + id_at[m], inbox_bytes.data() + byte_at[m]);
      } else {
        copy_bytes(stream, out.data() + id_at[m], inbox_bytes.data() + byte_at[m], member_bytes[m],
                   cudaMemcpyDeviceToDevice);
      }
    }
    stream.synchronize();
    return id_at;
  }
  // The frontier's vertices as sorted global ids in `reported`; returns how many.
  std::uint64_t frontier_to_reported() {
    for_each_index(stream, words, StorePopulation{frontier.data(), scan.data()});
    const std::uint64_t count = exclusive_scan(words);
    for_each_index(stream, words,
                   WritePositions<std::uint64_t>{frontier.data(), scan.data(), view.first_vertex, reported.data()});
    return count;
  }
  // Sorts keys[0, count) (member m's keys are [m * block, (m + 1) * block)) and returns
  // where each member's start (members + 1 offsets, the last `count`).
  std::vector<std::uint64_t> sort_by_member(std::uint64_t* keys, std::uint64_t count, std::uint64_t members) {
    on_policy(stream, [&](auto policy) { thrust::sort(policy, keys, keys + count); });
    reserve(bounds, members + 1);
    for_each_index(stream, members + 1, MemberBounds{keys, count, view.block, bounds.data()});
    return download(bounds, members + 1);
  }
  // Messages of ids[at[m], at[m + 1]) (target memory; sorted sets, or sequences in
  // `order`) for each member: member
  // `words_member`'s (every member's, kIds) as the words they are, the others' as bitpack
  // frames encoded on the device, put together in the outbox.
  TargetMessages encode_messages(const std::uint64_t* ids, std::span<const std::uint64_t> at, WireForm form,
                                 std::uint64_t words_member, IdOrder order = IdOrder::kSortedSet) {
    const std::size_t members = at.size() - 1;
    TargetMessages out;
    out.bytes.resize(members);
    out.ids.resize(members);
    for (std::size_t m = 0; m < members; ++m) out.ids[m] = at[m + 1] - at[m];
    if (form == WireForm::kIds) {
      for (std::size_t m = 0; m < members; ++m) out.bytes[m] = 8 * out.ids[m];
      out.data = reinterpret_cast<const std::uint8_t*>(ids + at[0]);
      stream.synchronize();
      return out;
    }
    if (!codec) codec.emplace(stream.target());
    std::uint64_t room = 0;
    for (std::size_t m = 0; m < members; ++m) {
      room += m == words_member ? 8 * out.ids[m] : DeviceCodec::max_frame_bytes(out.ids[m]);
    }
    reserve(outbox, room + 1);
    // Each frame is written in place as it is encoded, one after another in member order.
    ByteBuffer frame;
    std::uint64_t into = 0;
    for (std::size_t m = 0; m < members; ++m) {
      if (m == words_member || out.ids[m] == 0) {
        out.bytes[m] = 8 * out.ids[m];
        copy_bytes(stream, outbox.data() + into, ids + at[m], out.bytes[m], cudaMemcpyDeviceToDevice);
      } else {
        frame.clear();
        codec->encode(CodecId::kBitpack, ids + at[m], out.ids[m], order, frame, outbox.data() + into);
        out.bytes[m] = frame.size();
      }
      into += out.bytes[m];
    }
    stream.synchronize();
    out.data = outbox.data();
    return out;
  }

  Stream stream;
  PinnedStaging staging;
  std::optional<DeviceCodec> codec;        // unless IdTransfer::kRaw
  PcieCosts costs;                         // IdTransfer::kPriced
  HostDeviceTraffic codec_traffic_offset;  // the calibration's, left out of traffic()
  std::uint64_t lists_framed = 0;
  std::uint64_t lists_raw = 0;
  DistributedPieceView view;  // its pointers are used by the constructor only
  std::uint64_t words;
  bool shared_graph;  // 1D: bottom-up steps read the top-down graph
  DeviceArray<std::uint64_t> top_down_offsets;
  DeviceArray<Vertex> top_down_neighbors;
  DeviceArray<std::uint64_t> bottom_up_offsets;
  DeviceArray<Vertex> bottom_up_neighbors;
  DeviceArray<Vertex> owned_original;
  DeviceArray<Vertex> top_down_original;
  DeviceArray<Vertex> bottom_up_original;
  DeviceArray<std::uint64_t> owned_degree;
  DeviceArray<Vertex> hubs;
  DeviceArray<std::uint64_t> visited;
  DeviceArray<std::uint64_t> frontier;
  DeviceArray<std::uint64_t> next;
  DeviceArray<std::uint64_t> sent;
  DeviceArray<Vertex> sent_parent;
  DeviceArray<std::int64_t> parent;
  DeviceArray<std::uint64_t> sources;
  DeviceArray<std::uint64_t> scan;
  DeviceArray<std::uint64_t> reported;
  DeviceArray<ForeignClaim> claims;
  DeviceArray<std::uint64_t> member;  // claim(): each id's member; set_parents(): offsets
  DeviceArray<std::int64_t> values;
  DeviceArray<std::uint64_t> source_frontier;
  DeviceArray<std::uint64_t> targets_visited;        // a ring piece's visited bits
  const std::uint64_t* searched_frontier = nullptr;  // the bottom-up step's sources' bitmap
  DeviceArray<std::uint64_t> counters;               // 0: reported, 1: claims, 2: a misplaced id
  HostDeviceTraffic traffic;
  // The device wires' buffers (allocated at first use).
  DeviceArray<std::uint8_t> inbox_bytes;
  DeviceArray<std::uint8_t> outbox;
  DeviceArray<std::uint64_t> global_ids;     // the reports as global ids, by owner
  DeviceArray<std::uint64_t> bounds;         // members + 1 report offsets
  DeviceArray<std::uint64_t> ring_held;      // the ring's visited bits, passed on
  DeviceArray<std::uint64_t> ring_arriving;  // and arriving
  DeviceArray<std::uint64_t> has_edges;      // the bottom-up sources with edges
  DeviceArray<std::uint64_t> source_open;    // of those, in no frontier gathered yet
  DeviceArray<std::uint64_t> open_scan;      // the scan of source_open's populations
  DeviceArray<std::uint64_t> piece_first;    // members + 1: each slice's first packed bit
  DeviceArray<std::uint64_t> piece_at;       // members + 1: each packed piece's first word
  bool source_open_current = false;
  DeviceArray<std::uint64_t> request_keys;  // the reduction's requests, sorted by reporter
  std::uint64_t requests = 0;
};

std::uint64_t DistributedSteps::memory_bytes(const DistributedPieceView& v) {
  const bool shared = v.bottom_up.offsets == v.top_down.offsets;
  const std::uint64_t edges =
      v.top_down.offsets[v.top_down.rows] + (shared ? 0 : v.bottom_up.offsets[v.bottom_up.rows]);
  const std::uint64_t rows = v.top_down.rows + (shared ? 0 : v.bottom_up.rows);
  return 8 * (rows + 2) + 4 * edges + 4 * v.bottom_up.rows + 4 * (v.block + v.top_down.rows + v.bottom_up_sources) +
         8 * v.block + 3 * v.block / 8 + v.target_vertices / 8 + 4 * v.target_vertices + 8 * v.block +
         16 * v.top_down.rows + 8 * v.target_vertices + 40 * v.block + v.bottom_up_sources / 8 + v.bottom_up.rows / 8 +
         (256ULL << 20);
}

DistributedSteps::DistributedSteps(ExecutionTarget target, const DistributedPieceView& view)
    : state_(std::make_unique<State>(target, view)) {}

DistributedSteps::~DistributedSteps() = default;

HostDeviceTraffic DistributedSteps::traffic() const {
  HostDeviceTraffic total = state_->traffic;
  if (state_->codec) {
    total.to_device += state_->codec->traffic().to_device - state_->codec_traffic_offset.to_device;
    total.to_host += state_->codec->traffic().to_host - state_->codec_traffic_offset.to_host;
  }
  return total;
}

const PcieCosts& DistributedSteps::pcie_costs() const { return state_->costs; }

std::pair<std::uint64_t, std::uint64_t> DistributedSteps::lists_framed_and_raw() const {
  return {state_->lists_framed, state_->lists_raw};
}

void DistributedSteps::begin(bool owns_start, std::uint64_t start_offset, std::int64_t start_parent) {
  State& s = *state_;
  s.fill(s.visited, s.words, std::uint64_t{0});
  s.fill(s.frontier, s.words, std::uint64_t{0});
  s.fill(s.next, s.words, std::uint64_t{0});
  s.fill(s.sent, words_for(s.view.target_vertices), std::uint64_t{0});
  s.fill(s.parent, s.view.block, std::int64_t{-1});
  s.fill(s.counters, 3, std::uint64_t{0});
  s.source_open_current = false;
  if (owns_start) {
    for_each_index(s.stream, 1,
                   BeginSearch{s.visited.data(), s.frontier.data(), s.parent.data(), s.owned_original.data(),
                               start_offset, start_parent});
  }
  s.stream.synchronize();
}

std::vector<std::uint64_t> DistributedSteps::frontier_ids() {
  State& s = *state_;
  return s.ids_to_host(s.reported.data(), s.frontier_to_reported(), true, s.view.block);
}

std::vector<std::uint64_t> DistributedSteps::frontier_words() {
  return state_->download(state_->frontier, state_->words);
}

std::vector<std::uint64_t> DistributedSteps::visited_words() {
  return state_->download(state_->visited, state_->words);
}

std::vector<std::uint64_t> DistributedSteps::expand(std::span<const std::uint64_t> sources) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  // The gathered frontier must lie in this rank's column group: a stray id would index
  // past the graph's rows on the device.
  std::vector<std::uint64_t> local(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    local[i] = sources[i] - v.top_down_source_base;
    if (local[i] >= v.top_down.rows) throw Error(ExitCode::kFailure, "a gathered frontier vertex outside the column");
  }
  if (local.size() > v.top_down.rows) throw Error(ExitCode::kFailure, "a gathered frontier larger than its column");
  s.reserve(s.sources, local.size());
  s.ids_to_target(local, s.sources.data(), v.top_down.rows, true);
  expand_sources(local.size());
  return s.ids_to_host(s.reported.data(), s.counter(0), false, v.target_vertices);
}

void DistributedSteps::expand_sources(std::uint64_t count) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  for_each_index(s.stream, count, SourceDegree{s.top_down_offsets.data(), s.sources.data(), s.scan.data()});
  const std::uint64_t edges = s.exclusive_scan(count);
  s.fill(s.counters, 1, std::uint64_t{0});
  for_each_index(s.stream, edges,
                 ExpandEdge{s.top_down_offsets.data(), s.top_down_neighbors.data(), s.sources.data(), s.scan.data(),
                            count, v.block, v.top_down_my_first, s.visited.data(), s.next.data(), s.parent.data(),
                            s.owned_original.data(), s.top_down_original.data(), v.top_down_source_base, s.sent.data(),
                            s.sent_parent.data(), s.reported.data(), s.counters.data()});
}

void DistributedSteps::search_own(std::span<const std::uint64_t> source_frontier) {
  State& s = *state_;
  if (!source_frontier.empty()) s.upload(s.source_frontier, source_frontier.data(), source_frontier.size());
  search_own_gathered(!source_frontier.empty());
}

std::vector<std::uint64_t> DistributedSteps::search_piece(std::uint64_t member,
                                                          std::span<std::uint64_t> piece_visited) {
  State& s = *state_;
  s.upload(s.targets_visited, piece_visited.data(), piece_visited.size());
  s.fill(s.counters, 1, std::uint64_t{0});
  s.search_rows(member * s.view.block, false, s.targets_visited.data());
  const std::vector<std::uint64_t> marked = s.download(s.targets_visited, piece_visited.size());
  std::copy(marked.begin(), marked.end(), piece_visited.begin());
  return s.ids_to_host(s.reported.data(), s.counter(0), false, s.view.target_vertices);
}

void DistributedSteps::claim(std::span<const std::uint64_t> ids, std::span<const std::uint64_t> offsets) {
  State& s = *state_;
  if (ids.empty()) return;
  const std::uint64_t members = offsets.size() - 1;
  s.reserve(s.sources, ids.size());
  s.reserve(s.member, offsets.size());
  for (std::uint64_t m = 0; m < members; ++m) {
    s.ids_to_target(ids.subspan(offsets[m], offsets[m + 1] - offsets[m]), s.sources.data() + offsets[m], s.view.block,
                    false);
  }
  s.upload(s.member, offsets.data(), offsets.size());
  for_each_index(s.stream, ids.size(),
                 ClaimReported{s.sources.data(), s.member.data(), members, s.view.first_vertex, s.view.block,
                               s.visited.data(), s.next.data(), s.parent.data(), s.owned_original.data(),
                               s.claims.data(), s.counters.data() + 1, s.counters.data() + 2});
  if (s.counter(2) != 0) throw Error(ExitCode::kFailure, "a vertex arrived at a rank that does not own it");
}

std::pair<std::uint64_t, std::uint64_t> DistributedSteps::finish_level(bool with_edges) {
  State& s = *state_;
  std::swap(s.frontier, s.next);
  s.fill(s.next, s.words, std::uint64_t{0});
  const std::uint64_t vertices = s.sum_over_words(WordPopulation{s.frontier.data()});
  const std::uint64_t edges = with_edges ? s.sum_over_words(WordDegrees{s.frontier.data(), s.owned_degree.data()}) : 0;
  return {vertices, edges};
}

std::uint8_t* DistributedSteps::inbox(std::uint64_t bytes) {
  State& s = *state_;
  s.reserve(s.inbox_bytes, bytes + 1);
  return s.inbox_bytes.data();
}

TargetMessages DistributedSteps::frontier_message(WireForm form) {
  State& s = *state_;
  const std::uint64_t at[2] = {0, s.frontier_to_reported()};
  return s.encode_messages(s.reported.data(), at, form, kNoMember);
}

void DistributedSteps::expand_inbox(std::span<const std::uint64_t> member_bytes, WireForm form) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  const std::vector<std::uint64_t> at = s.decode_inbox(member_bytes, form, kNoMember, s.sources, v.top_down.rows);
  const std::uint64_t count = at.back();
  s.fill(s.counters, 1, std::uint64_t{0}, 2);
  for_each_index(s.stream, count,
                 ToLocalSources{s.sources.data(), v.top_down_source_base, v.top_down.rows, s.counters.data() + 2});
  if (s.counter(2) != 0) throw Error(ExitCode::kFailure, "a gathered frontier vertex outside the column");
  expand_sources(count);
}

TargetMessages DistributedSteps::packed_frontier(std::uint64_t member, std::uint64_t members) {
  State& s = *state_;
  const std::uint64_t source_words = s.view.bottom_up_sources / 64;
  if (s.has_edges.size() < source_words || members * s.words != source_words) {
    throw Error(ExitCode::kFailure, "a masked frontier gather without its mask");
  }
  if (!s.source_open_current) {
    s.reserve(s.source_open, source_words);
    copy_bytes(s.stream, s.source_open.data(), s.has_edges.data(), source_words * 8, cudaMemcpyDeviceToDevice);
    s.source_open_current = true;
  }
  // Every member's slice: its open positions' scan, its first packed bit and word.
  s.reserve(s.open_scan, source_words + 1);
  for_each_index(s.stream, source_words, StorePopulation{s.source_open.data(), s.open_scan.data()});
  scan_counts(s.stream, s.open_scan.data(), source_words, s.traffic.to_host);
  // The scan at each slice's start, gathered on the target and copied out at once.
  s.reserve(s.piece_first, members + 1);
  for_each_index(s.stream, members + 1, EveryNth{s.open_scan.data(), s.words, s.piece_first.data()});
  const std::vector<std::uint64_t> piece_first = s.download(s.piece_first, members + 1);
  TargetMessages out;
  std::vector<std::uint64_t> piece_at(members + 1, 0);
  for (std::uint64_t m = 0; m < members; ++m) {
    const std::uint64_t packed_words = words_for(piece_first[m + 1] - piece_first[m]);
    out.bytes.push_back(8 * packed_words);
    out.ids.push_back(0);
    piece_at[m + 1] = piece_at[m] + packed_words;
  }
  s.reserve(s.piece_at, members + 1);
  s.upload(s.piece_at, piece_at.data(), members + 1);
  const std::uint64_t mine = out.bytes[member] / 8;
  s.reserve(s.global_ids, mine + 1);
  s.fill(s.global_ids, mine, std::uint64_t{0});
  for_each_index(s.stream, s.words,
                 CompactWord{s.frontier.data(), s.source_open.data() + member * s.words,
                             s.open_scan.data() + member * s.words, piece_first[member], s.global_ids.data()});
  // The frontier vertices that travel (for the exchange's id count).
  const std::uint64_t* packed = s.global_ids.data();
  out.ids[member] = on_policy(s.stream, [&](auto policy) {
    return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                    thrust::counting_iterator<std::uint64_t>(mine), WordPopulation{packed},
                                    std::uint64_t{0}, cuda::std::plus<std::uint64_t>());
  });
  s.stream.synchronize();
  out.data = reinterpret_cast<const std::uint8_t*>(s.global_ids.data());
  return out;
}

void DistributedSteps::unpack_inbox(std::span<const std::uint64_t> member_bytes) {
  State& s = *state_;
  const std::uint64_t source_words = s.view.bottom_up_sources / 64;
  const std::uint64_t members = member_bytes.size();
  const auto* packed = reinterpret_cast<const std::uint64_t*>(s.inbox_bytes.data());
  s.fill(s.counters, 1, std::uint64_t{0}, 2);
  for_each_index(s.stream, members,
                 CheckPackedTail{packed, s.piece_at.data(), s.piece_first.data(), s.counters.data() + 2});
  if (s.counter(2) != 0) throw DecodeError("a gathered bitmap slice has bits past the positions its mask selects");
  for_each_index(s.stream, source_words,
                 ExpandWord{packed, s.source_open.data(), s.open_scan.data(), s.piece_first.data(), s.piece_at.data(),
                            s.words, s.source_frontier.data()});
  for_each_index(s.stream, source_words, CloseGathered{s.source_open.data(), s.source_frontier.data()});
  s.stream.synchronize();
}

void DistributedSteps::search_own_gathered(bool gathered) {
  State& s = *state_;
  s.searched_frontier = gathered ? s.source_frontier.data() : s.frontier.data();
  s.fill(s.counters, 1, std::uint64_t{0});
  s.search_rows(s.view.bottom_up_my_first, true, s.visited.data());
  for_each_index(s.stream, s.words, FoldWord{s.visited.data(), s.next.data()});
  s.stream.synchronize();
}

void DistributedSteps::ring_start() {
  State& s = *state_;
  s.reserve(s.ring_held, s.words);
  s.reserve(s.ring_arriving, s.words);
  copy_bytes(s.stream, s.ring_held.data(), s.visited.data(), s.words * 8, cudaMemcpyDeviceToDevice);
  s.stream.synchronize();
}

std::uint8_t* DistributedSteps::ring_held() { return reinterpret_cast<std::uint8_t*>(state_->ring_held.data()); }

std::uint8_t* DistributedSteps::ring_arriving() {
  return reinterpret_cast<std::uint8_t*>(state_->ring_arriving.data());
}

std::uint64_t DistributedSteps::ring_population() {
  State& s = *state_;
  return s.sum_over_words(WordPopulation{s.ring_held.data()});
}

void DistributedSteps::ring_turn() { std::swap(state_->ring_held, state_->ring_arriving); }

void DistributedSteps::search_ring_piece(std::uint64_t member) {
  State& s = *state_;
  s.search_rows(member * s.view.block, false, s.ring_held.data());
  s.stream.synchronize();
}

TargetMessages DistributedSteps::report_messages(std::uint64_t my_member, std::uint64_t members, WireForm form) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  const std::uint64_t count = s.counter(0);
  std::uint64_t* reported = s.reported.data();
  const std::vector<std::uint64_t> at = s.sort_by_member(reported, count, members);
  s.reserve(s.global_ids, count + 1);
  for_each_index(s.stream, count,
                 ToGlobalTargets{reported, v.block, v.target_first_piece, v.target_stride, s.global_ids.data()});
  return s.encode_messages(s.global_ids.data(), at, form, my_member);
}

void DistributedSteps::claim_inbox(std::span<const std::uint64_t> member_bytes, std::uint64_t my_member,
                                   WireForm form) {
  State& s = *state_;
  const std::uint64_t members = member_bytes.size();
  const std::vector<std::uint64_t> at =
      s.decode_inbox(member_bytes, form, my_member, s.sources, std::max(s.view.block, std::uint64_t{1}) * members);
  const std::uint64_t count = at.back();
  if (count == 0) return;
  s.reserve(s.member, at.size());
  s.upload(s.member, at.data(), at.size());
  for_each_index(s.stream, count,
                 ClaimReported{s.sources.data(), s.member.data(), members, s.view.first_vertex, s.view.block,
                               s.visited.data(), s.next.data(), s.parent.data(), s.owned_original.data(),
                               s.claims.data(), s.counters.data() + 1, s.counters.data() + 2});
  if (s.counter(2) != 0) throw Error(ExitCode::kFailure, "a vertex arrived at a rank that does not own it");
}

TargetMessages DistributedSteps::parent_requests(std::uint64_t members, WireForm form) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  const std::uint64_t count = s.counter(1);
  s.requests = count;
  s.reserve(s.request_keys, count + 1);
  std::uint64_t* keys = s.request_keys.data();
  for_each_index(s.stream, count, ClaimKey{s.claims.data(), v.block, keys});
  const std::vector<std::uint64_t> at = s.sort_by_member(keys, count, members);
  s.reserve(s.global_ids, count + 1);
  for_each_index(s.stream, count, KeyToVertex{keys, v.block, v.first_vertex, s.global_ids.data()});
  return s.encode_messages(s.global_ids.data(), at, form, kNoMember);
}

TargetMessages DistributedSteps::parent_answers(std::span<const std::uint64_t> member_bytes, WireForm form) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  const std::uint64_t pieces = v.target_vertices / std::max(v.block, std::uint64_t{1});
  const std::vector<std::uint64_t> at = s.decode_inbox(member_bytes, form, kNoMember, s.sources, v.target_vertices);
  const std::uint64_t count = at.back();
  s.reserve(s.global_ids, count + 1);
  s.fill(s.counters, 1, std::uint64_t{0}, 2);
  for_each_index(
      s.stream, count,
      AnswerParent{s.sources.data(), v.block, v.target_first_piece, v.target_stride, pieces, s.sent_parent.data(),
                   s.top_down_original.data(), v.top_down_source_base, s.global_ids.data(), s.counters.data() + 2});
  if (s.counter(2) != 0) {
    throw Error(ExitCode::kFailure, "predecessor reduction: asked for a vertex this rank never reported");
  }
  // Answers keep the requests' order: sequences.
  return s.encode_messages(s.global_ids.data(), at, form, kNoMember, IdOrder::kSequence);
}

void DistributedSteps::set_answered_parents(std::span<const std::uint64_t> member_bytes, WireForm form) {
  State& s = *state_;
  const std::vector<std::uint64_t> at = s.decode_inbox(member_bytes, form, kNoMember, s.sources, s.requests);
  if (at.back() != s.requests) throw Error(ExitCode::kFailure, "predecessor reduction: answers lost");
  for_each_index(s.stream, s.requests,
                 SetAnsweredParent{s.request_keys.data(), s.sources.data(), s.view.block, s.owned_original.data(),
                                   s.parent.data()});
  s.stream.synchronize();
}

std::vector<ForeignClaim> DistributedSteps::foreign_claims() {
  return state_->download(state_->claims, state_->counter(1));
}

std::vector<std::uint64_t> DistributedSteps::reported_parents(std::span<const std::uint64_t> targets) {
  State& s = *state_;
  if (targets.empty()) return {};
  s.reserve(s.sources, targets.size());
  s.reserve(s.member, targets.size());
  s.upload(s.sources, targets.data(), targets.size());
  for_each_index(s.stream, targets.size(), LookUpReported{s.sources.data(), s.sent_parent.data(), s.member.data()});
  return s.download(s.member, targets.size());
}

void DistributedSteps::set_parents(std::span<const std::uint64_t> offsets, std::span<const std::int64_t> values) {
  State& s = *state_;
  if (offsets.empty()) return;
  s.reserve(s.member, offsets.size());
  s.reserve(s.values, values.size());
  s.upload(s.member, offsets.data(), offsets.size());
  s.upload(s.values, values.data(), values.size());
  for_each_index(s.stream, offsets.size(),
                 SetParent{s.member.data(), s.values.data(), s.owned_original.data(), s.parent.data()});
  s.stream.synchronize();
}

void DistributedSteps::copy_parents(std::span<std::int64_t> parent) {
  State& s = *state_;
  if (parent.size() != s.view.block) throw Error(ExitCode::kFailure, "parent array size does not match the piece");
  s.staging.to_host(s.stream, parent.data(), s.parent.data(), s.view.block * sizeof(std::int64_t));
  s.traffic.to_host += s.view.block * sizeof(std::int64_t);
}

}  // namespace zbfs::cuda_backend
