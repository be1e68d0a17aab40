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

std::uint64_t words_for(std::uint64_t bits) { return (bits + 63) / 64; }

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
  void fill(const DeviceArray<T>& array, std::uint64_t count, T value) {
    T* at = array.data();
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
  if (owns_start) {
    for_each_index(s.stream, 1,
                   BeginSearch{s.visited.data(), s.frontier.data(), s.parent.data(), s.owned_original.data(),
                               start_offset, start_parent});
  }
  s.stream.synchronize();
}

std::vector<std::uint64_t> DistributedSteps::frontier_ids() {
  State& s = *state_;
  for_each_index(s.stream, s.words, StorePopulation{s.frontier.data(), s.scan.data()});
  const std::uint64_t count = s.exclusive_scan(s.words);
  for_each_index(
      s.stream, s.words,
      WritePositions<std::uint64_t>{s.frontier.data(), s.scan.data(), s.view.first_vertex, s.reported.data()});
  return s.ids_to_host(s.reported.data(), count, true, s.view.block);
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
  for_each_index(s.stream, local.size(), SourceDegree{s.top_down_offsets.data(), s.sources.data(), s.scan.data()});
  const std::uint64_t edges = s.exclusive_scan(local.size());
  s.fill(s.counters, 1, std::uint64_t{0});
  for_each_index(
      s.stream, edges,
      ExpandEdge{s.top_down_offsets.data(), s.top_down_neighbors.data(), s.sources.data(), s.scan.data(), local.size(),
                 v.block, v.top_down_my_first, s.visited.data(), s.next.data(), s.parent.data(),
                 s.owned_original.data(), s.top_down_original.data(), v.top_down_source_base, s.sent.data(),
                 s.sent_parent.data(), s.reported.data(), s.counters.data()});
  return s.ids_to_host(s.reported.data(), s.counter(0), false, v.target_vertices);
}

void DistributedSteps::search_own(std::span<const std::uint64_t> source_frontier) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  s.searched_frontier = s.frontier.data();
  if (!source_frontier.empty()) {
    s.upload(s.source_frontier, source_frontier.data(), source_frontier.size());
    s.searched_frontier = s.source_frontier.data();
  }
  for_each_index(
      s.stream, std::min(v.block, v.bottom_up.rows - v.bottom_up_my_first),
      SearchParent{s.bottom_up_offsets_data(), s.bottom_up_neighbors_data(), s.hubs.data(), s.searched_frontier,
                   v.bottom_up_my_first, true, s.visited.data(), s.next.data(), s.parent.data(),
                   s.owned_original.data(), s.bottom_up_original.data(), v.bottom_up_source_base, s.sent.data(),
                   s.sent_parent.data(), s.reported.data(), s.counters.data()});
  for_each_index(s.stream, s.words, FoldWord{s.visited.data(), s.next.data()});
  s.stream.synchronize();
}

std::vector<std::uint64_t> DistributedSteps::search_piece(std::uint64_t member,
                                                          std::span<std::uint64_t> piece_visited) {
  State& s = *state_;
  const DistributedPieceView& v = s.view;
  const std::uint64_t first_row = member * v.block;
  s.upload(s.targets_visited, piece_visited.data(), piece_visited.size());
  s.fill(s.counters, 1, std::uint64_t{0});
  for_each_index(
      s.stream, std::min(v.block, v.bottom_up.rows - first_row),
      SearchParent{s.bottom_up_offsets_data(), s.bottom_up_neighbors_data(), s.hubs.data(), s.searched_frontier,
                   first_row, false, s.targets_visited.data(), s.next.data(), s.parent.data(), s.owned_original.data(),
                   s.bottom_up_original.data(), v.bottom_up_source_base, s.sent.data(), s.sent_parent.data(),
                   s.reported.data(), s.counters.data()});
  const std::vector<std::uint64_t> marked = s.download(s.targets_visited, piece_visited.size());
  std::copy(marked.begin(), marked.end(), piece_visited.begin());
  return s.ids_to_host(s.reported.data(), s.counter(0), false, v.target_vertices);
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
