#include "zbfs/replay/search_calls.hpp"

#include <algorithm>
#include <vector>

#include "zbfs/core/bit_compaction.hpp"
#include "zbfs/mpi/collective_traffic.hpp"

namespace zbfs {
namespace {

// Each exchange's tag, so that a replay matches every message to its own receive.
// (A hop's messages take kHop + 1 too.) zbfs-lab replay --phases reads each action's
// phase from its tag (python/zbfs_lab/replay.py's TAG_PHASES): keep them in step.
enum Tag : int {
  kGatherIds = 1,
  kFold = 2,
  kGatherBits = 3,
  kRing = 4,
  kAsk = 5,
  kAnswer = 6,
  kHop = 7,
  kUnionBound = 9,
  kUnionSize = 10,
  kUnionIds = 11,
  kFoldHop = 12
};

constexpr std::uint64_t kWord = sizeof(std::uint64_t);

class CallWalk {
 public:
  CallWalk(const SearchPlan& plan, const ReplayLayout& layout, int piece, SearchCallVisitor& visitor)
      : plan_(plan),
        layout_(layout),
        visitor_(visitor),
        piece_(piece),
        row_(layout.row_of_piece(piece)),
        col_(layout.col_of_piece(piece)),
        rows_(layout.rows()),
        cols_(layout.cols()) {}

  void walk() {
    if (!plan_.start_work.empty()) visitor_.compute(plan_.start_work[static_cast<std::size_t>(piece_)]);
    // The root's degree, summed (DistributedBfs::search).
    if (layout_.ranks() > 1) visitor_.allreduce(Phase::kTerminationCheck, kWord);
    for (const PlannedLevel& level : plan_.levels) {
      if (level.kind == StepKind::kTopDown) {
        top_down(level);
      } else {
        bottom_up(level);
      }
      if (layout_.ranks() > 1) visitor_.allreduce(Phase::kTerminationCheck, 2 * kWord);
    }
    if (plan_.reduce_after) reduce_predecessors();
    if (!plan_.end_work.empty()) visitor_.compute(plan_.end_work[static_cast<std::size_t>(piece_)]);
  }

 private:
  [[nodiscard]] std::size_t slot(int piece, int member) const {
    return static_cast<std::size_t>(piece) * static_cast<std::size_t>(cols_) + static_cast<std::size_t>(member);
  }
  [[nodiscard]] int row_member(int m) const { return layout_.world_rank_of_piece(layout_.piece_at(row_, m)); }

  void compute(const std::vector<WorkCounts>& work) {
    if (!work.empty()) visitor_.compute(work[static_cast<std::size_t>(piece_)]);
  }

  void top_down(const PlannedLevel& level) {
    compute(level.work_before_gather);
    if (layout_.union_gather()) {
      union_gather(level);
    } else if (rows_ > 1) {
      // Every column member's frontier ids to every other (allgather_ids's pieces).
      peers_.clear();
      for (int r = 0; r < rows_; ++r) {
        if (r == row_) continue;
        const int other = layout_.piece_at(r, col_);
        peers_.push_back({layout_.world_rank_of_piece(other), kWord * level.gathered[static_cast<std::size_t>(piece_)],
                          kWord * level.gathered[static_cast<std::size_t>(other)]});
      }
      visitor_.exchange(Phase::kColumnExchange, kGatherIds, peers_);
    }
    compute(level.work);
    fold(level);
    compute(level.work_after_fold);
  }

  // union_allreduce along the column: the ids' bound, the fold-in past the largest power
  // of two, the halvings (a size word, then the ids, each a swap), then the allgather of
  // what each member holds.
  void union_gather(const PlannedLevel& level) {
    members_.clear();
    for (int r = 0; r < rows_; ++r) members_.push_back(layout_.world_rank_of_piece(layout_.piece_at(r, col_)));
    visitor_.group_allreduce(Phase::kColumnExchange, kUnionBound, members_, row_, kWord);
    const auto given = [&](std::size_t step, int member) {
      return kWord * level.union_given[step][static_cast<std::size_t>(layout_.piece_at(member, col_))];
    };
    const auto swap_ids = [&](int member, std::uint64_t sent, std::uint64_t received) {
      const int partner = members_[static_cast<std::size_t>(member)];
      visitor_.swap(Phase::kColumnExchange, kUnionSize, partner, kWord, kWord);
      visitor_.swap(Phase::kColumnExchange, kUnionIds, partner, sent, received);
    };
    int p2 = 1;
    while (p2 * 2 <= rows_) p2 *= 2;
    if (row_ >= p2) {
      swap_ids(row_ - p2, given(0, row_), 0);
    } else if (row_ + p2 < rows_) {
      swap_ids(row_ + p2, 0, given(0, row_ + p2));
    }
    if (row_ < p2) {
      std::size_t step = 1;
      for (int mask = p2 / 2; mask >= 1; mask /= 2, ++step)
        swap_ids(row_ ^ mask, given(step, row_), given(step, row_ ^ mask));
    }
    peers_.clear();
    for (int r = 0; r < rows_; ++r) {
      if (r == row_) continue;
      const int other = layout_.piece_at(r, col_);
      peers_.push_back({members_[static_cast<std::size_t>(r)],
                        kWord * level.union_held[static_cast<std::size_t>(piece_)],
                        kWord * level.union_held[static_cast<std::size_t>(other)]});
    }
    visitor_.exchange(Phase::kColumnExchange, kGatherIds, peers_);
  }

  void bottom_up(const PlannedLevel& level) {
    // The masked frontier bits along the expand group: the column in 2D, the job in 1D.
    const bool ring = layout_.bottom_up_ring();
    const int group = ring ? rows_ : cols_;
    if (group > 1) {
      members_.clear();
      blocks_.clear();
      for (int k = 0; k < group; ++k) {
        const int other = ring ? layout_.piece_at(k, col_) : layout_.piece_at(0, k);
        members_.push_back(layout_.world_rank_of_piece(other));
        blocks_.push_back(kWord * packed_words(level.gathered[static_cast<std::size_t>(other)]));
      }
      visitor_.gather(Phase::kColumnExchange, kGatherBits, members_, ring ? row_ : col_, blocks_);
    }
    compute(level.work);
    if (ring && cols_ > 1) {
      const std::uint64_t bitmap = kWord * layout_.blocks().words_per_block();
      // Each step's piece searched after its shift: the ring's work in equal parts.
      WorkCounts step{};
      if (!level.work_ring.empty()) {
        const WorkCounts& all = level.work_ring[static_cast<std::size_t>(piece_)];
        for (std::size_t k = 0; k < step.size(); ++k) step[k] = all[k] / static_cast<std::uint64_t>(cols_ - 1);
      }
      for (int k = 1; k < cols_; ++k) {
        visitor_.shift(Phase::kRowExchange, kRing, row_member((col_ + 1) % cols_),
                       row_member((col_ + cols_ - 1) % cols_), bitmap);
        if (!level.work_ring.empty()) visitor_.compute(step);
      }
      fold(level);
    }
    compute(level.work_after_fold);
  }

  // The row's other members, with the words `counts` ([piece * C + member]) has this rank
  // send each and receive from each.
  void row_peers(const std::vector<std::uint32_t>& counts) {
    peers_.clear();
    for (int m = 0; m < cols_; ++m) {
      if (m == col_) continue;
      peers_.push_back(
          {row_member(m), kWord * counts[slot(piece_, m)], kWord * counts[slot(layout_.piece_at(row_, m), col_)]});
    }
  }

  // Each member's ids for the others along the row (StepProtocol::fold's all_to_all),
  // or in 1D over a route its updates hop by hop.
  void fold(const PlannedLevel& level) {
    if (cols_ == 1) return;
    if (!level.fold_hops.empty()) {
      routed_fold(level);
      return;
    }
    row_peers(level.folded);
    visitor_.exchange(Phase::kRowExchange, kFold, peers_);
  }

  // RoutedExchange::exchange's hops: to each hop peer the hop message of what it holds
  // for the destinations beyond it (a group count, a pair a group, two words an item).
  void routed_fold(const PlannedLevel& level) {
    const auto message_bytes = [&](int hop, int from, int to) -> std::uint64_t {
      const PlannedLevel::HopCounts& counts = level.fold_hops[static_cast<std::size_t>(hop)];
      const std::size_t at = layout_.hop_peer_slot(hop, from, to);
      const std::uint64_t items = counts.items[at];
      return items == 0 ? 0 : kWord * (1 + 2 * std::uint64_t{counts.groups[at]} + 2 * items);
    };
    std::vector<PeerBytes> to;
    for (int hop = 0; hop < static_cast<int>(level.fold_hops.size()); ++hop) {
      to.clear();
      peers_.clear();
      for (const int m : layout_.hop_targets(hop, col_)) to.push_back({row_member(m), message_bytes(hop, col_, m), 0});
      for (const int m : layout_.hop_sources(hop, col_)) {
        peers_.push_back({row_member(m), 0, message_bytes(hop, m, col_)});
      }
      visitor_.peer_exchange(Phase::kRowExchange, kFoldHop, to, peers_);
    }
  }

  // The owners ask each member for the parents of the claims its reports won; the
  // answers come back one word each (Exchanger::read_batch), directly or along the route.
  void reduce_predecessors() {
    if (layout_.row_route() != nullptr) {
      routed_reads();
      return;
    }
    row_peers(plan_.claimed_from);
    visitor_.exchange(Phase::kPredecessorReduction, kAsk, peers_);
    for (PeerBytes& p : peers_) std::swap(p.sent, p.received);
    visitor_.exchange(Phase::kPredecessorReduction, kAnswer, peers_);
  }

  // RoutedExchange::read_batch: the requests hop by hop (hop messages: a group count, a
  // (destination, count) pair a group, two words an item), then the replies back along
  // the same hops (owner, key and value: three words a request).
  void routed_reads() {
    const std::vector<RoutePlan::HopPeers> hop_peers = layout_.row_route()->hop_peers(col_);
    const std::size_t hops = hop_peers.size();
    const auto from_me = [&](std::size_t hop, int m) { return plan_.read_items[hop][slot(piece_, m)]; };
    const auto to_me = [&](std::size_t hop, int m) {
      return plan_.read_items[hop][slot(layout_.piece_at(row_, m), col_)];
    };
    const auto request_bytes = [&](std::size_t hop, int from, int to) -> std::uint64_t {
      const std::size_t at = slot(layout_.piece_at(row_, from), to);
      const std::uint64_t items = plan_.read_items[hop][at];
      return items == 0 ? 0 : kWord * (1 + 2 * plan_.read_groups[hop][at] + 2 * items);
    };
    std::vector<PeerBytes> to;
    for (std::size_t hop = 0; hop < hops; ++hop) {
      to.clear();
      peers_.clear();
      for (const int m : hop_peers[hop].to) to.push_back({row_member(m), request_bytes(hop, col_, m), 0});
      for (const int m : hop_peers[hop].from) peers_.push_back({row_member(m), 0, request_bytes(hop, m, col_)});
      visitor_.peer_exchange(Phase::kPredecessorReduction, kHop, to, peers_);
    }
    for (std::size_t hop = hops; hop-- > 0;) {
      to.clear();
      peers_.clear();
      for (const int m : hop_peers[hop].from) to.push_back({row_member(m), 3 * kWord * to_me(hop, m), 0});
      for (const int m : hop_peers[hop].to) peers_.push_back({row_member(m), 0, 3 * kWord * from_me(hop, m)});
      visitor_.peer_exchange(Phase::kPredecessorReduction, kHop, to, peers_);
    }
  }

  const SearchPlan& plan_;
  const ReplayLayout& layout_;
  SearchCallVisitor& visitor_;
  int piece_;
  int row_;
  int col_;
  int rows_;
  int cols_;
  std::vector<PeerBytes> peers_;
  std::vector<int> members_;
  std::vector<std::uint64_t> blocks_;
};

// What one call books, as mpi/communicator.cpp books it: its messages and bytes.
PhaseTraffic booked_exchange(std::span<const PeerBytes> peers) {
  PhaseTraffic t{peers.size(), 0};
  for (const PeerBytes& p : peers) t.bytes += p.sent;
  return t;
}
// count_gather: this rank's block to every peer.
PhaseTraffic booked_gather(std::size_t members, std::uint64_t mine) { return {members - 1, (members - 1) * mine}; }
// The size words to every peer, and the messages that are not empty.
PhaseTraffic booked_peer_exchange(std::span<const PeerBytes> to) {
  PhaseTraffic t;
  for (const PeerBytes& p : to) {
    t.messages += p.sent > 0 ? 2 : 1;
    t.bytes += kWord + p.sent;
  }
  return t;
}
PhaseTraffic booked_shift(std::uint64_t bytes) { return bytes == 0 ? PhaseTraffic{} : PhaseTraffic{1, bytes}; }
// count_rounds: recursive doubling's rounds, the whole buffer each.
PhaseTraffic booked_allreduce(int ranks, std::uint64_t bytes) {
  const auto rounds = static_cast<std::uint64_t>(ceil_log2(static_cast<std::uint64_t>(ranks)));
  return {rounds, rounds * bytes};
}

// Adds the calls up per phase.
class Booking final : public SearchCallVisitor {
 public:
  explicit Booking(int ranks) : ranks_(ranks) {}
  void exchange(Phase phase, int /*tag*/, std::span<const PeerBytes> peers) override {
    add(phase, booked_exchange(peers));
  }
  void gather(Phase phase, int /*tag*/, std::span<const int> members, int me,
              std::span<const std::uint64_t> block_bytes) override {
    add(phase, booked_gather(members.size(), block_bytes[static_cast<std::size_t>(me)]));
  }
  void peer_exchange(Phase phase, int /*tag*/, std::span<const PeerBytes> to,
                     std::span<const PeerBytes> /*from*/) override {
    add(phase, booked_peer_exchange(to));
  }
  void shift(Phase phase, int /*tag*/, int /*next*/, int /*previous*/, std::uint64_t bytes) override {
    add(phase, booked_shift(bytes));
  }
  void swap(Phase phase, int /*tag*/, int /*partner*/, std::uint64_t sent, std::uint64_t /*received*/) override {
    add(phase, booked_shift(sent));
  }
  void allreduce(Phase phase, std::uint64_t bytes) override { add(phase, booked_allreduce(ranks_, bytes)); }
  void group_allreduce(Phase phase, int /*tag*/, std::span<const int> members, int /*me*/,
                       std::uint64_t bytes) override {
    add(phase, booked_allreduce(static_cast<int>(members.size()), bytes));
  }
  void compute(const WorkCounts& /*work*/) override {}

  SearchTraffic traffic{};

 private:
  void add(Phase phase, PhaseTraffic booked) {
    PhaseTraffic& t = traffic[static_cast<std::size_t>(phase)];
    t.messages += booked.messages;
    t.bytes += booked.bytes;
  }
  int ranks_;
};

// Writes the calls as SimGrid 3.x time-independent actions.
class TraceActions final : public SearchCallVisitor {
 public:
  // The exchanges' booked bytes are charged as counted work (exchanged_bytes), as the
  // online run's communicators book them into it.
  TraceActions(int rank, int ranks, const TraceCharges& charges, std::string& out)
      : rank_(std::to_string(rank) + " "),
        ranks_(ranks),
        costs_(charges.costs),
        speed_(charges.host_speed_flops),
        probe_s_(charges.probe_s),
        out_(out) {}

  void exchange(Phase /*phase*/, int tag, std::span<const PeerBytes> peers) override {
    for (const PeerBytes& p : peers) {
      line("isend " + std::to_string(p.peer) + " " + std::to_string(tag) + " " + std::to_string(p.sent));
    }
    for (const PeerBytes& p : peers) {
      line("irecv " + std::to_string(p.peer) + " " + std::to_string(tag) + " " + std::to_string(p.received));
    }
    if (probe_s_ > 0) {
      // The online exchange probes each peer in turn, a probe's price once its message
      // has come: each receive waited for in member order, then the probe's price.
      for (const PeerBytes& p : peers) {
        line("wait " + std::to_string(p.peer) + " " + rank_ + std::to_string(tag));
        line("sleep " + seconds(probe_s_));
      }
    }
    line("waitall");
    charge_bytes(booked_exchange(peers).bytes);
  }
  void gather(Phase /*phase*/, int tag, std::span<const int> members, int me,
              std::span<const std::uint64_t> block_bytes) override {
    const auto g = static_cast<int>(members.size());
    const auto block = [&](int k) { return block_bytes[static_cast<std::size_t>(k % g)]; };
    for (int distance = 1; distance < g; distance *= 2) {
      const int count = std::min(distance, g - distance);
      std::uint64_t sent = 0;
      std::uint64_t received = 0;
      for (int k = 0; k < count; ++k) {
        sent += block(me + k);
        received += block(me + distance + k);
      }
      const int to = members[static_cast<std::size_t>((me - distance + g) % g)];
      const int from = members[static_cast<std::size_t>((me + distance) % g)];
      line("isend " + std::to_string(to) + " " + std::to_string(tag) + " " + std::to_string(sent));
      line("irecv " + std::to_string(from) + " " + std::to_string(tag) + " " + std::to_string(received));
      line("waitall");
    }
    charge_bytes(booked_gather(members.size(), block_bytes[static_cast<std::size_t>(me)]).bytes);
  }
  void peer_exchange(Phase /*phase*/, int tag, std::span<const PeerBytes> to,
                     std::span<const PeerBytes> from) override {
    // The sizes, then the messages that are not empty.
    for (const PeerBytes& p : from) line("irecv " + std::to_string(p.peer) + " " + std::to_string(tag) + " 8");
    for (const PeerBytes& p : to) line("isend " + std::to_string(p.peer) + " " + std::to_string(tag) + " 8");
    line("waitall");
    for (const PeerBytes& p : from) {
      if (p.received > 0) {
        line("irecv " + std::to_string(p.peer) + " " + std::to_string(tag + 1) + " " + std::to_string(p.received));
      }
    }
    for (const PeerBytes& p : to) {
      if (p.sent == 0) continue;
      line("isend " + std::to_string(p.peer) + " " + std::to_string(tag + 1) + " " + std::to_string(p.sent));
    }
    line("waitall");
    charge_bytes(booked_peer_exchange(to).bytes);
  }
  void shift(Phase /*phase*/, int tag, int next, int previous, std::uint64_t bytes) override {
    line("isend " + std::to_string(next) + " " + std::to_string(tag) + " " + std::to_string(bytes));
    line("irecv " + std::to_string(previous) + " " + std::to_string(tag) + " " + std::to_string(bytes));
    line("waitall");
    charge_bytes(booked_shift(bytes).bytes);
  }
  void swap(Phase /*phase*/, int tag, int partner, std::uint64_t sent, std::uint64_t received) override {
    line("isend " + std::to_string(partner) + " " + std::to_string(tag) + " " + std::to_string(sent));
    line("irecv " + std::to_string(partner) + " " + std::to_string(tag) + " " + std::to_string(received));
    line("waitall");
    charge_bytes(booked_shift(sent).bytes);
  }
  void allreduce(Phase /*phase*/, std::uint64_t bytes) override {
    line("allreduce " + std::to_string(bytes) + " 0");
    charge_bytes(booked_allreduce(ranks_, bytes).bytes);
  }
  // Recursive doubling as MPICH writes it (SMPI's rdb): the first 2 * rem members pair
  // off, the even one hands its value to the odd one and waits for the result.
  void group_allreduce(Phase /*phase*/, int tag, std::span<const int> members, int me, std::uint64_t bytes) override {
    const auto g = static_cast<int>(members.size());
    const auto member = [&](int k) { return std::to_string(members[static_cast<std::size_t>(k)]); };
    const std::string suffix = " " + std::to_string(tag) + " " + std::to_string(bytes);
    int p2 = 1;
    while (p2 * 2 <= g) p2 *= 2;
    const int rem = g - p2;
    int position = me - rem;
    if (me < 2 * rem) {
      if (me % 2 == 0) {
        line("isend " + member(me + 1) + suffix);
        line("waitall");
        position = -1;
      } else {
        line("irecv " + member(me - 1) + suffix);
        line("waitall");
        position = me / 2;
      }
    }
    if (position >= 0) {
      for (int mask = 1; mask < p2; mask *= 2) {
        const int other = position ^ mask;
        const int partner = other < rem ? 2 * other + 1 : other + rem;
        line("isend " + member(partner) + suffix);
        line("irecv " + member(partner) + suffix);
        line("waitall");
      }
    }
    if (me < 2 * rem) {
      line((me % 2 == 1 ? "isend " + member(me - 1) : "irecv " + member(me + 1)) + suffix);
      line("waitall");
    }
    charge_bytes(booked_allreduce(g, bytes).bytes);
  }
  void compute(const WorkCounts& work) override {
    if (costs_ == nullptr) return;
    double seconds = 0;
    for (const WorkKind kind : kAllWorkKinds) seconds += costs_->price_s(kind, work[static_cast<std::size_t>(kind)]);
    charge(seconds);
  }

 private:
  void line(const std::string& action) {
    out_ += rank_;
    out_ += action;
    out_ += '\n';
  }
  void charge_bytes(std::uint64_t bytes) {
    if (costs_ != nullptr) charge(costs_->price_s(WorkKind::kExchangedBytes, bytes));
  }
  void charge(double charged_s) {
    if (charged_s <= 0) return;
    line("compute " + seconds(charged_s * speed_));
  }
  static std::string seconds(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
  }

  std::string rank_;
  int ranks_;
  const WorkCosts* costs_;
  double speed_;
  double probe_s_;
  std::string& out_;
};

}  // namespace

void visit_search_calls(const SearchPlan& plan, const ReplayLayout& layout, int piece, SearchCallVisitor& visitor) {
  CallWalk(plan, layout, piece, visitor).walk();
}

SearchTraffic book_search(const SearchPlan& plan, const ReplayLayout& layout) {
  Booking booking(layout.ranks());
  if (layout.ranks() == 1) return booking.traffic;
  for (int piece = 0; piece < layout.ranks(); ++piece) visit_search_calls(plan, layout, piece, booking);
  return booking.traffic;
}

void append_search_trace(const SearchPlan& plan, const ReplayLayout& layout, int world_rank,
                         const TraceCharges& charges, std::string& out) {
  TraceActions actions(world_rank, layout.ranks(), charges, out);
  // The search starts together (the harness's barrier before the timed search).
  out += std::to_string(world_rank) + " barrier\n";
  visit_search_calls(plan, layout, layout.shape().piece_of_rank(world_rank), actions);
}

}  // namespace zbfs
