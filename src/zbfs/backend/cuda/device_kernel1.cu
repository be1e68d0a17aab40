#include <omp.h>
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/device_kernel1.hpp"
#include "zbfs/backend/cuda/launch.cuh"
#include "zbfs/backend/cuda/resident_lists.cuh"
#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs::cuda_backend {
namespace {

using Vertex = std::uint32_t;
using Word = std::uint64_t;

// Where a self-loop's entries would go: selected by no pass (no entry of a graph of at most
// 2^32 vertices is this word: it would be the last vertex's self-loop).
constexpr Word kNoEntry = ~Word{0};
// What a device's own allocations (Thrust's and CUB's temporaries, the runtime) are left.
constexpr std::uint64_t kDeviceReserve = 256ULL << 20;
// Every Thrust call here stays below 2^31 elements, where all of its algorithms count in
// 32 bits or dispatch to 64: resident pairs are visited 2^29 at a time (their entries
// 2^30), and a pass sorts fewer than 2^31 words.
constexpr std::uint64_t kVisitPairs = std::uint64_t{1} << 29;
constexpr std::uint64_t kMaxPassEntries = (std::uint64_t{1} << 31) - 1;

// The kernel bodies. Each is correct for any order of its indices (launch.cuh).

// Both ends of tuple i count, unless it is a self-loop.
struct CountDegrees {
  const Vertex* pairs;
  std::uint64_t* degree;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const Vertex u = pairs[2 * i];
    const Vertex v = pairs[2 * i + 1];
    if (u == v) return;
    shared_word(degree[u]).fetch_add(1, cuda::std::memory_order_relaxed);
    shared_word(degree[v]).fetch_add(1, cuda::std::memory_order_relaxed);
  }
};

// Pair i's row gains an entry; a row past the last counts at rows[num_rows] (an error).
struct CountRows {
  const Vertex* pairs;
  std::uint64_t num_rows;
  std::uint64_t* rows;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t row = pairs[2 * i];
    shared_word(rows[row < num_rows ? row : num_rows]).fetch_add(1, cuda::std::memory_order_relaxed);
  }
};

// Pair k as its entry's word: row << 32 | neighbour.
struct PairWord {
  const Vertex* pairs;
  ZBFS_HD Word operator()(std::uint64_t k) const { return Word{pairs[2 * k]} << 32 | pairs[2 * k + 1]; }
};

// Sorting by this key ascending orders by degree descending.
struct DescendingDegree {
  const std::uint64_t* degree;
  ZBFS_HD Word operator()(std::uint64_t v) const { return ~degree[v]; }
};

// Sorted offset s: its vertex's sorted id, and its count (the rows' starts before the scan,
// and the input tuple degree the Csr keeps).
struct DegreeTables {
  const Vertex* original;
  const std::uint64_t* degree;
  Vertex* sorted;
  std::uint64_t* starts;
  Vertex* tuple_degree;
  ZBFS_HD void operator()(std::uint64_t s) const {
    const Vertex o = original[s];
    sorted[o] = static_cast<Vertex>(s);
    starts[s] = degree[o];
    tuple_degree[s] = static_cast<Vertex>(degree[o]);
  }
};

// Entry k of a part of tuples: tuple k / 2's, from its first end (k even) or its second,
// as (row << 32 | neighbour) in sorted ids; kNoEntry for a self-loop.
struct EntryWord {
  const Vertex* pairs;
  const Vertex* sorted;
  ZBFS_HD Word operator()(std::uint64_t k) const {
    const Vertex u = pairs[k & ~std::uint64_t{1}];
    const Vertex v = pairs[k | 1];
    if (u == v) return kNoEntry;
    const Word a = sorted[u];
    const Word b = sorted[v];
    return (k & 1) == 0 ? (a << 32 | b) : (b << 32 | a);
  }
};

// A pass's rows: [first, last).
struct InRows {
  std::uint64_t first;
  std::uint64_t last;
  ZBFS_HD bool operator()(Word word) const {
    const std::uint64_t row = word >> 32;
    return word != kNoEntry && row >= first && row < last;
  }
};

struct Neighbour {
  ZBFS_HD Vertex operator()(Word word) const { return static_cast<Vertex>(word); }
};

// The first word row r's entries can be.
struct RowFirstWord {
  ZBFS_HD Word operator()(std::uint64_t r) const { return r << 32; }
};

struct AddBase {
  std::uint64_t* values;
  std::uint64_t base;
  ZBFS_HD void operator()(std::uint64_t i) const { values[i] += base; }
};

// Page-locked host memory (the copy engine's full rate), RAII.
class PinnedArray {
 public:
  explicit PinnedArray(std::uint64_t count) {
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(Vertex)), "cudaMallocHost");
  }
  ~PinnedArray() { cudaFreeHost(data_); }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  [[nodiscard]] Vertex* data() const { return data_; }

 private:
  Vertex* data_ = nullptr;
};

class Event {
 public:
  Event() { check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Copies arrays of target memory to host memory through two staging chunks of
// `chunk_bytes`, allocated once for all of kernel 1's arrays (pinning memory costs
// milliseconds a chunk): on the device pinned ones, the copy engine filling one while the
// host's threads copy the other out. A plain copy into pageable memory goes through the
// driver's own staging buffer at a fraction of the link's rate and faults the
// destination's pages in on one thread, and the lists coming back are kernel 1's
// largest transfer (4 bytes an entry). The host target runs the same chunks with memcpy.
class FetchStaging {
 public:
  FetchStaging(ExecutionTarget target, std::uint64_t chunk_bytes)
      : device_(target == ExecutionTarget::kDevice), chunk_(std::max<std::uint64_t>(1, chunk_bytes)) {}
  FetchStaging(const FetchStaging&) = delete;
  FetchStaging& operator=(const FetchStaging&) = delete;

  // Copies from[0, count) to `to` (host memory); returns the bytes moved.
  template <class T>
  std::uint64_t fetch(const Stream& stream, const DeviceArray<T>& from, T* to, std::uint64_t count) {
    const std::uint64_t bytes = count * sizeof(T);
    if (bytes == 0) return 0;
    const std::uint64_t chunk = std::min(chunk_, bytes);
    reserve(chunk);
    const auto* source = reinterpret_cast<const std::uint8_t*>(from.data());
    auto* destination = reinterpret_cast<std::uint8_t*>(to);
    const std::uint64_t chunks = (bytes + chunk - 1) / chunk;
    const auto length = [&](std::uint64_t k) { return std::min(chunk, bytes - k * chunk); };
    const auto copy_out = [&](std::uint64_t k) {
      if (device_) check_cuda(cudaEventSynchronize(copied_[k % 2]->get()), "cudaEventSynchronize");
      const std::uint8_t* in = staging_[k % 2];
      std::uint8_t* out = destination + k * chunk;
      constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
      const auto pieces = static_cast<std::int64_t>((length(k) + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static)
      for (std::int64_t p = 0; p < pieces; ++p) {
        const std::uint64_t at = static_cast<std::uint64_t>(p) * kPiece;
        std::memcpy(out + at, in + at, std::min(kPiece, length(k) - at));
      }
    };
    for (std::uint64_t k = 0; k < chunks; ++k) {
      // The slot's last chunk (k - 2) was copied out in the last round.
      if (device_) {
        check_cuda(
            cudaMemcpyAsync(staging_[k % 2], source + k * chunk, length(k), cudaMemcpyDeviceToHost, stream.get()),
            "cudaMemcpyAsync (fetch)");
        check_cuda(cudaEventRecord(copied_[k % 2]->get(), stream.get()), "cudaEventRecord");
      } else {
        std::memcpy(staging_[k % 2], source + k * chunk, length(k));
      }
      if (k > 0) copy_out(k - 1);
    }
    copy_out(chunks - 1);
    return bytes;
  }

 private:
  void reserve(std::uint64_t bytes) {
    if (bytes <= capacity_) return;
    for (std::size_t slot = 0; slot < 2; ++slot) {
      if (device_) {
        pinned_[slot].reset();
        pinned_[slot] = std::make_unique<PinnedArray>((bytes + sizeof(Vertex) - 1) / sizeof(Vertex));
        if (!copied_[slot]) copied_[slot] = std::make_unique<Event>();
        staging_[slot] = reinterpret_cast<std::uint8_t*>(pinned_[slot]->data());
      } else {
        plain_[slot].resize(bytes);
        staging_[slot] = plain_[slot].data();
      }
    }
    capacity_ = bytes;
  }

  bool device_;
  std::uint64_t chunk_;
  std::uint64_t capacity_ = 0;
  std::array<std::unique_ptr<PinnedArray>, 2> pinned_;  // the device's
  std::array<std::vector<std::uint8_t>, 2> plain_;      // the host target's
  std::array<std::unique_ptr<Event>, 2> copied_;
  std::array<std::uint8_t*, 2> staging_{};
};

// Writes tuples [first, first + count) of `edges` as 32-bit pairs to `out` (host memory),
// in parallel; a self-loop is written (0, 0). Throws the CPU build's error when a tuple
// that is not a self-loop names a vertex outside the graph.
void convert_tuples(const InputEdges& edges, std::uint64_t first, std::uint64_t count, Vertex* out) {
  const std::uint64_t n = edges.num_vertices();
  const auto pieces = static_cast<std::int64_t>((count + InputEdges::kChunk - 1) / InputEdges::kChunk);
  std::uint64_t outside = 0;
#pragma omp parallel reduction(+ : outside)
  {
    std::vector<Edge> part(InputEdges::kChunk);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t p = 0; p < pieces; ++p) {
      const std::uint64_t at = static_cast<std::uint64_t>(p) * InputEdges::kChunk;
      const std::size_t length = std::min<std::uint64_t>(InputEdges::kChunk, count - at);
      edges.read(first + at, std::span<Edge>(part.data(), length));
      Vertex* to = out + 2 * at;
      for (std::size_t i = 0; i < length; ++i) {
        const Edge e = part[i];
        const bool loop = e.u == e.v;
        if (!loop && (e.u >= n || e.v >= n)) ++outside;
        to[2 * i] = loop || e.u >= n ? 0 : static_cast<Vertex>(e.u);
        to[2 * i + 1] = loop || e.v >= n ? 0 : static_cast<Vertex>(e.v);
      }
    }
  }
  if (outside != 0) {
    throw Error(ExitCode::kFailure, "an input tuple names a vertex outside the " + std::to_string(n) + " vertices");
  }
}

// Writes pairs [first, first + count) of the input as 32-bit pairs to `out` (host memory).
using PairFill = std::function<void(std::uint64_t first, std::uint64_t count, Vertex* out)>;

// The input's pairs (tuples, or a rank's (row, neighbour) pairs) on the target, part by
// part: sent chunk by chunk (the host writes a chunk into one pinned buffer while the
// other's copy runs), and kept there when resident, so that later visits read them where
// they are.
class PairFeed {
 public:
  PairFeed(const Stream& stream, std::uint64_t size, PairFill fill, std::uint64_t chunk, bool resident,
           HostDeviceTraffic& traffic)
      : stream_(stream),
        size_(size),
        fill_(std::move(fill)),
        resident_(resident),
        traffic_(traffic),
        chunk_(std::min(size, chunk)),
        pairs_(stream.target(), 2 * (resident ? size : chunk_)) {
    if (stream.target() == ExecutionTarget::kDevice && chunk_ > 0) {
      for (auto& buffer : pinned_) buffer = std::make_unique<PinnedArray>(2 * chunk_);
      for (auto& event : done_) event = std::make_unique<Event>();
    }
  }

  // visit(pairs, count) over every pair, a part at a time, on the stream.
  template <class Visit>
  void for_each_part(const Visit& visit) {
    if (resident_ && sent_) {
      for (std::uint64_t first = 0; first < size_; first += kVisitPairs) {
        visit(pairs_.data() + 2 * first, std::min(kVisitPairs, size_ - first));
      }
      return;
    }
    std::uint64_t k = 0;
    for (std::uint64_t first = 0; first < size_; first += chunk_, ++k) {
      const std::uint64_t count = std::min(chunk_, size_ - first);
      Vertex* to = pairs_.data() + (resident_ ? 2 * first : 0);
      send(first, count, to, k & 1);
      visit(to, count);
    }
    sent_ = true;
  }
  // Whether every pair is on the target for good (the host's may go).
  [[nodiscard]] bool resident_and_sent() const { return resident_ && sent_; }

 private:
  void send(std::uint64_t first, std::uint64_t count, Vertex* to, std::uint64_t slot) {
    traffic_.to_device += 2 * count * sizeof(Vertex);
    if (stream_.target() == ExecutionTarget::kHost) return fill_(first, count, to);
    // The pinned buffer's last copy must be done before it is written again.
    if (recorded_[slot]) check_cuda(cudaEventSynchronize(done_[slot]->get()), "cudaEventSynchronize");
    fill_(first, count, pinned_[slot]->data());
    check_cuda(
        cudaMemcpyAsync(to, pinned_[slot]->data(), 2 * count * sizeof(Vertex), cudaMemcpyHostToDevice, stream_.get()),
        "cudaMemcpyAsync (pairs)");
    check_cuda(cudaEventRecord(done_[slot]->get(), stream_.get()), "cudaEventRecord");
    recorded_[slot] = true;
  }

  const Stream& stream_;
  std::uint64_t size_;
  PairFill fill_;
  bool resident_;
  HostDeviceTraffic& traffic_;
  std::uint64_t chunk_;
  DeviceArray<Vertex> pairs_;
  std::array<std::unique_ptr<PinnedArray>, 2> pinned_;  // the device's only
  std::array<std::unique_ptr<Event>, 2> done_;          // the device's only
  std::array<bool, 2> recorded_{};
  bool sent_ = false;
};

std::uint64_t device_free_bytes(std::uint64_t* total = nullptr) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (total != nullptr) *total = total_bytes;
  return free_bytes;
}

// The degree order and its tables: `sorted` (input id -> sorted id) and `starts` (each
// sorted vertex's count) on the target, the inverse table and the tuple degrees to the
// host.
void order_by_degree(const Stream& stream, const DeviceArray<std::uint64_t>& degree, std::uint64_t n,
                     DeviceArray<Vertex>& sorted, DeviceArray<std::uint64_t>& starts, Kernel1Lists& lists,
                     DeviceArray<Vertex>& original, FetchStaging& staging) {
  const ExecutionTarget target = stream.target();
  const std::uint64_t* deg = degree.data();
  const std::uint64_t max_degree = on_policy(stream, [&](auto policy) {
    return thrust::reduce(policy, deg, deg + n, std::uint64_t{0}, thrust::maximum<std::uint64_t>());
  });
  if (max_degree > 0xffffffffULL) throw Error(ExitCode::kFailure, "vertex ids do not fit the local id type");
  original = DeviceArray<Vertex>(target, n);
  {
    DeviceArray<Word> keys(target, n);
    Word* key = keys.data();
    Vertex* value = original.data();
    on_policy(stream, [&](auto policy) {
      thrust::transform(policy, thrust::counting_iterator<std::uint64_t>(0),
                        thrust::counting_iterator<std::uint64_t>(n), key, DescendingDegree{deg});
      thrust::sequence(policy, value, value + n, Vertex{0});
      // Stable: equal degrees keep their input order, as the CPU's counting sort does.
      thrust::stable_sort_by_key(policy, key, key + n, value);
      return 0;
    });
  }
  DeviceArray<Vertex> tuple_degree(target, n);
  for_each_index(stream, n, DegreeTables{original.data(), deg, sorted.data(), starts.data(), tuple_degree.data()});
  lists.original_of = LargeArray<std::uint32_t>(n);
  lists.tuple_degree = LargeArray<std::uint32_t>(n);
  lists.traffic.to_host += staging.fetch(stream, original, lists.original_of.data(), n);
  lists.traffic.to_host += staging.fetch(stream, tuple_degree, lists.tuple_degree.data(), n);
}

void zero_words(const Stream& stream, std::uint64_t* words, std::uint64_t count) {
  on_policy(stream, [&](auto policy) {
    thrust::fill(policy, words, words + count, std::uint64_t{0});
    return 0;
  });
}

// Reads one word of target memory.
std::uint64_t read_word(const Stream& stream, const std::uint64_t* at, HostDeviceTraffic& traffic) {
  std::uint64_t value = 0;
  copy_bytes(stream, &value, at, sizeof(value), cudaMemcpyDeviceToHost);
  traffic.to_host += sizeof(value);
  return value;
}

// The lists of rows [row, last), whose entries (duplicates included) are starts[row] ..
// starts[last]: selected from every pair (select(pairs, count, out, row, last) writes a
// part's words of those rows to `out` and returns their end), sorted, deduplicated, their
// neighbours written at neighbors[out...] and their rows' starts at offsets[row, last).
// Returns the entries kept.
template <class Select>
std::uint64_t build_pass(const Stream& stream, PairFeed& feed, const Select& select, std::uint64_t row,
                         std::uint64_t last, std::uint64_t entries, std::uint64_t out, std::uint64_t* offsets,
                         Vertex* neighbors) {
  if (entries == 0) {
    on_policy(stream, [&](auto policy) {
      thrust::fill(policy, offsets + row, offsets + last, out);
      return 0;
    });
    return 0;
  }
  DeviceArray<Word> words(stream.target(), entries);
  Word* word = words.data();
  std::uint64_t filled = 0;
  feed.for_each_part([&](const Vertex* pairs, std::uint64_t count) {
    filled = static_cast<std::uint64_t>(select(pairs, count, word + filled, row, last) - word);
  });
  if (filled != entries) {
    throw Error(ExitCode::kFailure, "kernel 1 on the device: a pass found " + std::to_string(filled) +
                                        " entries where the degrees promised " + std::to_string(entries));
  }
  Word* unique_end = on_policy(stream, [&](auto policy) {
    thrust::sort(policy, word, word + entries);
    return thrust::unique(policy, word, word + entries);
  });
  const auto kept = static_cast<std::uint64_t>(unique_end - word);
  on_policy(stream, [&](auto policy) {
    thrust::transform(policy, word, word + kept, neighbors + out, Neighbour{});
    const auto rows = thrust::make_transform_iterator(thrust::counting_iterator<std::uint64_t>(row), RowFirstWord{});
    thrust::lower_bound(policy, word, word + kept, rows, rows + (last - row), offsets + row);
    return 0;
  });
  for_each_index(stream, last - row, AddBase{offsets + row, out});
  return kept;
}

// The target's budget of entries a pass sorts (the plan's, or what memory holds).
std::uint64_t pass_budget(ExecutionTarget target, const Kernel1Plan& plan) {
  if (plan.pass_entries != 0) return std::min(plan.pass_entries, kMaxPassEntries);
  if (target == ExecutionTarget::kHost) return kHostPassEntries;
  // A pass's words and the radix sort's second buffer, 8 bytes each an entry.
  const std::uint64_t free = device_free_bytes() / std::max(1U, plan.memory_share);
  return std::min(kMaxPassEntries,
                  free > kDeviceReserve ? std::max<std::uint64_t>(1, (free - kDeviceReserve) / 16) : 1);
}

// The lists of `rows` rows whose entries start at starts[...] (num_rows + 1, scanned), pass
// by pass over ranges of rows, into `offsets` and `neighbors`; returns the entries kept.
template <class Select>
std::uint64_t build_passes(const Stream& stream, PairFeed& feed, const Select& select, std::uint64_t rows,
                           const std::uint64_t* starts, const Kernel1Plan& plan, std::uint64_t* offsets,
                           Vertex* neighbors, Kernel1Lists& lists) {
  const std::uint64_t budget = pass_budget(stream.target(), plan);
  std::uint64_t row = 0;
  std::uint64_t done = 0;
  std::uint64_t out = 0;
  while (row < rows) {
    // The rows whose entries end within the budget (one row at least).
    const std::uint64_t past = on_policy(stream, [&](auto policy) {
      return static_cast<std::uint64_t>(thrust::upper_bound(policy, starts, starts + rows + 1, done + budget) - starts);
    });
    const std::uint64_t last = std::min(rows, std::max(row + 1, past - 1));
    const std::uint64_t end = read_word(stream, starts + last, lists.traffic);
    if (stream.target() == ExecutionTarget::kDevice && end - done > budget) {
      std::uint64_t total = 0;
      const std::uint64_t free = device_free_bytes(&total);
      require_device_memory(16 * (end - done) + kDeviceReserve, free, total, plan.force);
    }
    out += build_pass(stream, feed, select, row, last, end - done, out, offsets, neighbors);
    ++lists.passes;
    done = end;
    row = last;
  }
  lists.traffic.to_device += sizeof(out);
  copy_bytes(stream, offsets + rows, &out, sizeof(out), cudaMemcpyHostToDevice);
  return out;
}

}  // namespace

namespace {

// Whether the pairs stay on the device: where they leave room for passes of a quarter of
// the entries beside `least` (kAuto; streamed on the host target).
// The device's memory is checked here first, whatever the plan says.
bool keep_resident(ExecutionTarget target, const Kernel1Plan& plan, std::uint64_t least, std::uint64_t pairs,
                   std::uint64_t entries) {
  std::uint64_t free = 0;
  if (target == ExecutionTarget::kDevice) {
    std::uint64_t total = 0;
    free = device_free_bytes(&total) / std::max(1U, plan.memory_share);
    require_device_memory(least, free, total, plan.force);
  }
  if (plan.tuples != Kernel1Plan::Tuples::kAuto) return plan.tuples == Kernel1Plan::Tuples::kResident;
  return target == ExecutionTarget::kDevice && free >= least + 8 * pairs + 16 * (entries / 4);
}

std::uint64_t chunk_of(const Kernel1Plan& plan) { return plan.chunk_tuples != 0 ? plan.chunk_tuples : kChunkTuples; }

}  // namespace

Kernel1Lists build_lists(ExecutionTarget target, const InputEdges& edges, const Kernel1Plan& plan) {
  const std::uint64_t n = edges.num_vertices();
  const std::uint64_t m = edges.size();
  if (n > (std::uint64_t{1} << 32)) {
    throw_usage_error("the device backend numbers vertices in 32 bits; this graph has " + std::to_string(n));
  }
  Kernel1Lists lists;
  lists.num_vertices = n;
  if (n == 0) {
    lists.offsets = LargeArray<std::uint64_t>(1);
    lists.offsets[0] = 0;
    return lists;
  }
  const Stream stream(target);
  Stopwatch clock;
  FetchStaging staging(target, 2 * sizeof(Vertex) * chunk_of(plan));
  lists.tuples_resident = keep_resident(target, plan, kernel1_min_bytes(n, m), m, 2 * m);
  PairFeed feed(
      stream, m,
      [&edges](std::uint64_t first, std::uint64_t count, Vertex* out) { convert_tuples(edges, first, count, out); },
      chunk_of(plan), lists.tuples_resident, lists.traffic);

  // Degrees, then the order and each sorted row's start (before deduplication).
  DeviceArray<Vertex> sorted(target, n);
  DeviceArray<Vertex> original;
  DeviceArray<std::uint64_t> starts(target, n + 1);
  {
    DeviceArray<std::uint64_t> degree(target, n + 1);
    std::uint64_t* deg = degree.data();
    zero_words(stream, deg, n + 1);
    feed.for_each_part([&](const Vertex* pairs, std::uint64_t count) {
      for_each_index(stream, count, CountDegrees{pairs, deg});
    });
    stream.synchronize();
    lists.stages.send_s = clock.elapsed_s();
    clock.restart();
    order_by_degree(stream, degree, n, sorted, starts, lists, original, staging);
  }
  const std::uint64_t entries = scan_counts(stream, starts.data(), n, lists.traffic.to_host);
  lists.stages.order_s = clock.elapsed_s();
  clock.restart();

  // The lists: both directions of every tuple, in sorted ids.
  DeviceArray<std::uint64_t> offsets(target, n + 1);
  DeviceArray<Vertex> neighbors(target, entries);
  const Vertex* table = sorted.data();
  const auto select = [&](const Vertex* pairs, std::uint64_t count, Word* out, std::uint64_t row, std::uint64_t last) {
    const auto words =
        thrust::make_transform_iterator(thrust::counting_iterator<std::uint64_t>(0), EntryWord{pairs, table});
    return on_policy(stream, [&](auto policy) {
      return thrust::copy_if(policy, words, words + 2 * count, out, InRows{row, last});
    });
  };
  const std::uint64_t kept =
      build_passes(stream, feed, select, n, starts.data(), plan, offsets.data(), neighbors.data(), lists);
  lists.stages.lists_s = clock.elapsed_s();
  clock.restart();

  lists.offsets = LargeArray<std::uint64_t>(n + 1);
  lists.neighbors = LargeArray<std::uint32_t>(kept);
  lists.sorted_of = LargeArray<std::uint32_t>(n);
  lists.traffic.to_host += staging.fetch(stream, offsets, lists.offsets.data(), n + 1);
  lists.traffic.to_host += staging.fetch(stream, neighbors, lists.neighbors.data(), kept);
  lists.traffic.to_host += staging.fetch(stream, sorted, lists.sorted_of.data(), n);
  lists.stages.fetch_s = clock.elapsed_s();
  if (plan.keep_on_target) {
    lists.resident = std::make_shared<ResidentLists>();
    lists.resident->num_vertices = n;
    lists.resident->offsets = std::move(offsets);
    lists.resident->neighbors = std::move(neighbors);
    lists.resident->original = std::move(original);
  }
  return lists;
}

Kernel1Lists build_local_lists(ExecutionTarget target, std::uint64_t num_rows, std::vector<std::uint32_t>&& rows,
                               std::vector<std::uint32_t>&& cols, const Kernel1Plan& plan) {
  const std::uint64_t m = rows.size();
  if (cols.size() != m) throw Error(ExitCode::kFailure, "kernel 1: rows and neighbours of different lengths");
  Kernel1Lists lists;
  lists.num_vertices = num_rows;
  const Stream stream(target);
  Stopwatch clock;
  lists.tuples_resident = keep_resident(target, plan, kernel1_local_min_bytes(num_rows, m), m, m);
  PairFeed feed(
      stream, m,
      [&rows, &cols](std::uint64_t first, std::uint64_t count, Vertex* out) {
        const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(i);
          out[2 * k] = rows[first + k];
          out[2 * k + 1] = cols[first + k];
        }
      },
      chunk_of(plan), lists.tuples_resident, lists.traffic);

  // Each row's entries (a row past the last is counted apart: an error), scanned into
  // the rows' starts.
  DeviceArray<std::uint64_t> starts(target, num_rows + 2);
  std::uint64_t* start = starts.data();
  zero_words(stream, start, num_rows + 2);
  feed.for_each_part([&](const Vertex* pairs, std::uint64_t count) {
    for_each_index(stream, count, CountRows{pairs, num_rows, start});
  });
  if (feed.resident_and_sent()) {
    // The pairs live on the target now: the host's go.
    std::vector<std::uint32_t>().swap(rows);
    std::vector<std::uint32_t>().swap(cols);
  }
  if (read_word(stream, start + num_rows, lists.traffic) != 0) {
    throw Error(ExitCode::kFailure, "kernel 1: a pair's row lies outside the rank's " + std::to_string(num_rows));
  }
  scan_counts(stream, start, num_rows, lists.traffic.to_host);
  lists.stages.send_s = clock.elapsed_s();
  clock.restart();

  DeviceArray<std::uint64_t> offsets(target, num_rows + 1);
  DeviceArray<Vertex> neighbors(target, m);
  const auto select = [&](const Vertex* pairs, std::uint64_t count, Word* out, std::uint64_t row, std::uint64_t last) {
    const auto words = thrust::make_transform_iterator(thrust::counting_iterator<std::uint64_t>(0), PairWord{pairs});
    return on_policy(stream, [&](auto policy) {
      return thrust::copy_if(policy, words, words + count, out, InRows{row, last});
    });
  };
  const std::uint64_t kept =
      build_passes(stream, feed, select, num_rows, start, plan, offsets.data(), neighbors.data(), lists);
  std::vector<std::uint32_t>().swap(rows);
  std::vector<std::uint32_t>().swap(cols);
  lists.stages.lists_s = clock.elapsed_s();
  clock.restart();

  lists.offsets = LargeArray<std::uint64_t>(num_rows + 1);
  lists.neighbors = LargeArray<std::uint32_t>(kept);
  FetchStaging staging(target, 2 * sizeof(Vertex) * chunk_of(plan));
  lists.traffic.to_host += staging.fetch(stream, offsets, lists.offsets.data(), num_rows + 1);
  lists.traffic.to_host += staging.fetch(stream, neighbors, lists.neighbors.data(), kept);
  lists.stages.fetch_s = clock.elapsed_s();
  return lists;
}

}  // namespace zbfs::cuda_backend
