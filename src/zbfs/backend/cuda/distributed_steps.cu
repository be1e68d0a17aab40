#include "zbfs/backend/cuda/distributed_state.cuh"

namespace zbfs::cuda_backend {

using namespace distributed_kernels;  // NOLINT: the kernels' own translation unit

namespace {

// --prune's: the peeled bits (owned and the row group's), heights and attach vertices, the
// peeled vertices, the gathered anchors' bits, and the core's sources (a device wire's mask).
std::uint64_t forest_bytes(const DistributedPieceView& v) {
  if (v.forest == nullptr) return 0;
  return v.block / 8 + v.target_vertices / 8 + 9 * v.block + sizeof(PeeledVertexView) * v.forest->num_peeled +
         8 * v.forest->anchor_words + (v.source_core != nullptr ? v.bottom_up_sources / 8 : 0);
}

}  // namespace

std::uint64_t DistributedSteps::memory_bytes(const DistributedPieceView& v) {
  const bool shared = v.bottom_up.offsets == v.top_down.offsets;
  const std::uint64_t edges =
      v.top_down.offsets[v.top_down.rows] + (shared ? 0 : v.bottom_up.offsets[v.bottom_up.rows]);
  const std::uint64_t rows = v.top_down.rows + (shared ? 0 : v.bottom_up.rows);
  return 8 * (rows + 2) + 4 * edges + 4 * v.bottom_up.rows + 4 * (v.block + v.top_down.rows + v.bottom_up_sources) +
         8 * v.block + 3 * v.block / 8 + v.target_vertices / 8 + 4 * v.target_vertices + 8 * v.block +
         16 * v.top_down.rows + 8 * v.target_vertices + 40 * v.block + v.bottom_up_sources / 8 + v.bottom_up.rows / 8 +
         forest_bytes(v) + (256ULL << 20);
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

void DistributedSteps::begin(bool owns_start, std::uint64_t start_offset, std::int64_t start_parent, bool pruned) {
  State& s = *state_;
  if (pruned && !s.has_forest) throw Error(ExitCode::kFailure, "a pruned device search needs the forest");
  s.pruned_search = pruned;
  if (pruned) {
    // Peeled vertices start visited, and top-down steps never report them.
    s.visited.assign(s.stream, s.pruned_visited);
    s.sent.assign(s.stream, s.pruned_sent);
  } else {
    s.fill(s.visited, s.words, std::uint64_t{0});
    s.fill(s.sent, words_for(s.view.target_vertices), std::uint64_t{0});
  }
  s.fill(s.frontier, s.words, std::uint64_t{0});
  s.fill(s.next, s.words, std::uint64_t{0});
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

bool DistributedSteps::visited(std::uint64_t offset) {
  State& s = *state_;
  std::uint64_t word = 0;
  s.staging.to_host(s.stream, &word, s.visited.data() + offset / 64, sizeof(word));
  s.traffic.to_host += sizeof(word);
  return (word & bit_of(offset)) != 0;
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

LevelTally DistributedSteps::finish_level(bool with_edges) {
  State& s = *state_;
  std::swap(s.frontier, s.next);
  s.fill(s.next, s.words, std::uint64_t{0});
  // One reduction, one wait: the frontier's vertices, their edges and (pruned) the
  // tallest tree below them, word by word.
  const WordTally word{s.frontier.data(), with_edges ? s.owned_degree.data() : nullptr,
                       s.pruned_search ? s.heights.data() : nullptr};
  return on_policy(s.stream, [&](auto policy) {
    return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                    thrust::counting_iterator<std::uint64_t>(s.words), word, LevelTally{},
                                    AddLevelTallies{});
  });
}

std::pair<std::uint64_t, std::uint64_t> DistributedSteps::attach(std::span<const std::uint64_t> anchors, bool fresh,
                                                                 std::uint64_t own_tree,
                                                                 std::span<const std::uint64_t> links,
                                                                 std::uint64_t deepest) {
  State& s = *state_;
  if (!s.has_forest) throw Error(ExitCode::kFailure, "a pruned device search needs the forest");
  if (fresh) {
    if (anchors.size() != s.anchors.size())
      throw Error(ExitCode::kFailure, "the anchors' bits do not match the forest");
    s.upload(s.anchors, anchors.data(), anchors.size());
  }
  s.reserve(s.links, links.size() + 1);
  s.upload(s.links, links.data(), links.size());
  const AttachTally tally = on_policy(s.stream, [&](auto policy) {
    return thrust::transform_reduce(
        policy, thrust::counting_iterator<std::uint64_t>(0), thrust::counting_iterator<std::uint64_t>(s.peeled.size()),
        AttachPeeled{s.peeled.data(), s.anchors.data(), own_tree, s.links.data(), links.size(), s.attach_to.data(),
                     s.heights.data(), s.view.first_vertex, s.parent.data()},
        AttachTally{0, deepest}, AddTallies{});
  });
  return {tally.attached, tally.deepest};
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
  // A pruned search's open positions are the core's: peeled sources are never in a frontier.
  const DeviceArray<std::uint64_t>& mask = s.pruned_search ? s.core_sources : s.has_edges;
  if (mask.size() < source_words || members * s.words != source_words) {
    throw Error(ExitCode::kFailure, "a masked frontier gather without its mask");
  }
  if (!s.source_open_current) {
    s.reserve(s.source_open, source_words);
    copy_bytes(s.stream, s.source_open.data(), mask.data(), source_words * 8, cudaMemcpyDeviceToDevice);
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
