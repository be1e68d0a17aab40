// DistributedSteps::State: a distributed search's piece and search state in target
// memory, and its staging buffers. For distributed_steps.cu only.
#pragma once

#include "zbfs/backend/cuda/distributed_kernels.cuh"

namespace zbfs::cuda_backend {

struct DistributedSteps::State {
  State(ExecutionTarget target, const DistributedPieceView& v)
      : stream(target),
        staging(target),
        view(v),
        words(distributed_kernels::words_for(v.block)),
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
        sent(target, distributed_kernels::words_for(v.target_vertices)),
        sent_parent(target, v.target_vertices),
        parent(target, v.block),
        sources(target, v.top_down.rows + 1),
        scan(target, std::max(v.top_down.rows, words) + 1),
        reported(target, v.target_vertices + 1),
        claims(target, v.block + 1),
        member(target, v.block + 1),
        values(target, v.block + 1),
        source_frontier(target, distributed_kernels::words_for(v.bottom_up_sources)),
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
    if (v.source_core != nullptr) {
      core_sources = DeviceArray<std::uint64_t>(target, v.bottom_up_sources / 64);
      upload_once(core_sources, v.source_core, v.bottom_up_sources / 64);
    }
    if (v.forest != nullptr) {
      has_forest = true;
      const ForestView& f = *v.forest;
      pruned_visited = DeviceArray<std::uint64_t>(target, words);
      pruned_sent = DeviceArray<std::uint64_t>(target, distributed_kernels::words_for(v.target_vertices));
      heights = DeviceArray<std::uint8_t>(target, v.block);
      attach_to = DeviceArray<std::uint64_t>(target, v.block);
      peeled = DeviceArray<PeeledVertexView>(target, f.num_peeled);
      anchors = DeviceArray<std::uint64_t>(target, f.anchor_words);
      upload_once(pruned_visited, f.peeled_bits, words);
      upload_once(pruned_sent, f.row_group_peeled, distributed_kernels::words_for(v.target_vertices));
      upload_once(heights, f.heights, v.block);
      upload_once(attach_to, f.attach, v.block);
      upload_once(peeled, f.peeled, f.num_peeled);
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
    for_each_index(stream, kLarge, distributed_kernels::Spread{reported.data(), 8});
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
  [[nodiscard]] const distributed_kernels::Vertex* bottom_up_neighbors_data() const {
    return shared_graph ? top_down_neighbors.data() : bottom_up_neighbors.data();
  }

  // Bottom-up over one member's piece of the target rows (from first_row): in this rank's
  // own piece (`own`) found rows are claimed, in another's marked in `piece_visited` and
  // reported (SearchParent).
  void search_rows(std::uint64_t first_row, bool own, std::uint64_t* piece_visited) {
    for_each_index(stream, std::min(view.block, view.bottom_up.rows - first_row),
                   distributed_kernels::SearchParent{
                       bottom_up_offsets_data(), bottom_up_neighbors_data(), hubs.data(), searched_frontier, first_row,
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
    for_each_index(stream, members + 1, distributed_kernels::MemberBounds{keys, count, view.block, bounds.data()});
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
    // The codec runs on its own stream: the kernels still writing the ids on this one
    // must be done before it reads them (the race between streams it had before).
    stream.synchronize();
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
  DeviceArray<distributed_kernels::Vertex> top_down_neighbors;
  DeviceArray<std::uint64_t> bottom_up_offsets;
  DeviceArray<distributed_kernels::Vertex> bottom_up_neighbors;
  DeviceArray<distributed_kernels::Vertex> owned_original;
  DeviceArray<distributed_kernels::Vertex> top_down_original;
  DeviceArray<distributed_kernels::Vertex> bottom_up_original;
  DeviceArray<std::uint64_t> owned_degree;
  DeviceArray<distributed_kernels::Vertex> hubs;
  DeviceArray<std::uint64_t> visited;
  DeviceArray<std::uint64_t> frontier;
  DeviceArray<std::uint64_t> next;
  DeviceArray<std::uint64_t> sent;
  DeviceArray<distributed_kernels::Vertex> sent_parent;
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
  DeviceArray<std::uint64_t> core_sources;   // of those, the core's (--prune)
  DeviceArray<std::uint64_t> source_open;    // of those, in no frontier gathered yet
  DeviceArray<std::uint64_t> open_scan;      // the scan of source_open's populations
  DeviceArray<std::uint64_t> piece_first;    // members + 1: each slice's first packed bit
  DeviceArray<std::uint64_t> piece_at;       // members + 1: each packed piece's first word
  bool source_open_current = false;
  DeviceArray<std::uint64_t> request_keys;  // the reduction's requests, sorted by reporter
  std::uint64_t requests = 0;
  // --prune's trees (view.forest), and whether the current search is pruned.
  DeviceArray<std::uint64_t> pruned_visited;  // the owned peeled bits
  DeviceArray<std::uint64_t> pruned_sent;     // the row group's
  DeviceArray<std::uint8_t> heights;
  DeviceArray<std::uint64_t> attach_to;  // each owned vertex's attach vertex (global sorted id)
  DeviceArray<PeeledVertexView> peeled;
  DeviceArray<std::uint64_t> anchors;  // the gathered anchors' bits
  DeviceArray<std::uint64_t> links;    // a chain's links and the start
  bool has_forest = false;
  bool pruned_search = false;
};

}  // namespace zbfs::cuda_backend
