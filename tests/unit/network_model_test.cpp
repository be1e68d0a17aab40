// The cost model's arithmetic against hand-computed cases.
#include "zbfs/network/network_model.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/driver/recorded_run.hpp"
#include "zbfs/mpi/collective_traffic.hpp"
#include "zbfs/network/projection.hpp"

namespace zbfs {
namespace {

TEST(NetworkModel, PresetsPriceMessagesAsLatencyPlusBytesOverBandwidth) {
  const NetworkModel gbe = network_preset("1gbe").value();
  // 10 messages, 1,175,000 bytes: 10 * 50 us + 1.175e6 / 117.5e6 = 0.0005 + 0.01.
  EXPECT_NEAR(gbe.inter_node.time_s(10, 1.175e6), 0.0105, 1e-12);
  ClassTraffic t;
  t.add(LinkClass::kIntraNode, 2, 20e9);     // 2 * 0.5 us + 2 s
  t.add(LinkClass::kInterNode, 1, 117.5e6);  // 50 us + 1 s
  EXPECT_NEAR(gbe.time_s(t), 3.0 + 1e-6 + 50e-6, 1e-12);
  for (const std::string& name : network_preset_names()) {
    const NetworkModel m = network_preset(name).value();
    EXPECT_GT(m.inter_node.bandwidth_bytes_per_s, 0) << name;
    EXPECT_GT(m.inter_node.latency_s, 0) << name;
  }
  EXPECT_FALSE(network_preset("token-ring"));
  // Slower networks cost more for the same traffic.
  const double megabyte = 1e6;
  EXPECT_GT(network_preset("1gbe")->inter_node.time_s(1, megabyte),
            network_preset("10gbe")->inter_node.time_s(1, megabyte));
  EXPECT_GT(network_preset("ib-qdr")->inter_node.time_s(1, megabyte),
            network_preset("ib-hdr")->inter_node.time_s(1, megabyte));
}

TEST(NetworkModel, ExplicitFiguresOverrideThePreset) {
  NetworkChoice c;
  c.name = "10gbe";
  c.latency_s = 5e-6;
  c.bandwidth_bytes_per_s = 2e9;
  const NetworkModel m = model_of(c);
  EXPECT_DOUBLE_EQ(m.inter_node.latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(m.inter_node.bandwidth_bytes_per_s, 2e9);
  EXPECT_DOUBLE_EQ(m.intra_node.latency_s, network_preset("shm")->intra_node.latency_s);
  c.name = "carrier-pigeon";
  EXPECT_THROW(model_of(c), Error);
  c.name = "1gbe";
  c.ranks_per_node = 0;
  EXPECT_THROW(validate_network_choice(c), Error);
}

TEST(NetworkModel, ParsesTimesAndBandwidthsWithUnits) {
  EXPECT_DOUBLE_EQ(parse_duration_s("50us", "x"), 50e-6);
  EXPECT_DOUBLE_EQ(parse_duration_s("2ms", "x"), 2e-3);
  EXPECT_DOUBLE_EQ(parse_duration_s("0.5", "x"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_s("100ns", "x"), 100e-9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("1gbit", "x"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("10Gbit/s", "x"), 1.25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("100mbps", "x"), 12.5e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("125MB/s", "x"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("3.2GB/s", "x"), 3.2e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("1e9", "x"), 1e9);
  for (const char* bad : {"", "fast", "-3us", "5 parsecs", "1e999"}) {
    EXPECT_THROW(parse_duration_s(bad, "x"), Error) << bad;
  }
  for (const char* bad : {"", "0gbit", "-1GB/s", "12furlongs"}) {
    EXPECT_THROW(parse_bandwidth_bytes_per_s(bad, "x"), Error) << bad;
  }
}

TEST(NetworkModel, FitRecoversLatencyAndBandwidthOfExactSamples) {
  // Samples made by t = 20 us + n / 1e9.
  std::vector<PingPongSample> samples;
  for (const std::uint64_t n : {8ULL, 4096ULL, 65536ULL, 1ULL << 20, 4ULL << 20}) {
    samples.push_back({n, 20e-6 + static_cast<double>(n) / 1e9});
  }
  const LinkCost fit = fit_link(samples);
  EXPECT_NEAR(fit.latency_s, 20e-6, 1e-8);  // the 8-byte sample carries 8 ns of transfer
  EXPECT_NEAR(fit.bandwidth_bytes_per_s, 1e9, 1e9 * 0.001);
  EXPECT_THROW(fit_link({}), Error);
}

TEST(NetworkModel, MeasurementFillsAClassWithoutAPairFromTheOther) {
  NetworkMeasurement m;
  m.intra_node.measured = true;
  m.intra_node.fit = {2e-6, 5e9};
  NetworkChoice c;  // measure
  const NetworkModel model = network_model_for(c, &m);
  EXPECT_EQ(model.name, "measure");
  EXPECT_DOUBLE_EQ(model.inter_node.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(model.inter_node.bandwidth_bytes_per_s, 5e9);
  m.inter_node.measured = true;
  m.inter_node.fit = {40e-6, 1e8};
  EXPECT_DOUBLE_EQ(network_model_for(c, &m).inter_node.latency_s, 40e-6);
  EXPECT_DOUBLE_EQ(network_model_for(c, &m).intra_node.latency_s, 2e-6);
}

TEST(NetworkModel, LoadedSwapSetsTheInterNodeBandwidth) {
  // Exact samples at 50 MB/s over a 40 us link; the 4 KiB one is below the fit's sizes.
  std::vector<PingPongSample> swaps;
  for (const std::uint64_t n : {4096, 65536, 1 << 20, 4 << 20})
    swaps.push_back({n, 40e-6 + static_cast<double>(n) / 5e7});
  swaps[0].one_way_s = 1.0;
  EXPECT_NEAR(fit_bandwidth(swaps, 40e-6), 5e7, 1e-3);
  // 1 MiB in 21 ms and 4 MiB in 81 ms over 1 ms: sum n^2 / sum n (t - latency).
  const double m1 = 1 << 20;
  const double m4 = 4 << 20;
  EXPECT_NEAR(fit_bandwidth({{1 << 20, 0.021}, {4 << 20, 0.081}}, 1e-3), (m1 * m1 + m4 * m4) / (m1 * 0.02 + m4 * 0.08),
              1e-6);
  EXPECT_THROW(fit_bandwidth({{8, 1e-6}}, 0), Error);

  NetworkMeasurement m;
  m.intra_node.measured = true;
  m.intra_node.fit = {2e-6, 5e9};
  m.inter_node.measured = true;
  m.inter_node.fit = {40e-6, 1.2e8};
  m.inter_node_loaded = {true, 2, {{8, 90e-6}, {4194304, 0.08}}, {90e-6, 5.5e7}};
  NetworkChoice c;  // measure
  const NetworkModel model = network_model_for(c, &m);
  EXPECT_DOUBLE_EQ(model.inter_node.latency_s, 90e-6);
  EXPECT_DOUBLE_EQ(model.inter_node.bandwidth_bytes_per_s, 5.5e7);
  EXPECT_DOUBLE_EQ(model.intra_node.bandwidth_bytes_per_s, 5e9);
  c.bandwidth_bytes_per_s = 1e9;  // explicit figures still win
  EXPECT_DOUBLE_EQ(network_model_for(c, &m).inter_node.bandwidth_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(network_model_for(c, &m).inter_node.latency_s, 90e-6);
  // A preset ignores any measurement.
  NetworkChoice preset;
  preset.name = "1gbe";
  EXPECT_DOUBLE_EQ(network_model_for(preset, &m).inter_node.bandwidth_bytes_per_s, 117.5e6);
}

TEST(CollectiveCost, RingGatherAndRecursiveDoubling) {
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(5), 3);
  EXPECT_EQ(ceil_log2(8), 3);
  EXPECT_EQ(floor_log2(7), 2);
  // A ring of 4 with one member elsewhere runs at the inter-node link: 3 steps.
  ClassTraffic ring = ring_gather_traffic(4, 1, 3000);
  EXPECT_DOUBLE_EQ(ring.messages[1], 3);
  EXPECT_DOUBLE_EQ(ring.bytes[1], 3000);
  EXPECT_DOUBLE_EQ(ring.messages[0], 0);
  ring = ring_gather_traffic(4, 0, 3000);
  EXPECT_DOUBLE_EQ(ring.messages[0], 3);
  // 8 ranks, 4 per node: rounds 1-2 stay on the node, round 3 crosses.
  const ClassTraffic d = doubling_traffic(8, 4, 100);
  EXPECT_DOUBLE_EQ(d.messages[0], 2);
  EXPECT_DOUBLE_EQ(d.messages[1], 1);
  EXPECT_DOUBLE_EQ(d.bytes[1], 100);
  EXPECT_DOUBLE_EQ(doubling_traffic(1, 1, 100).messages[0] + doubling_traffic(1, 1, 100).messages[1], 0);
}

TEST(Projection, GroupsAndNodeSharing) {
  const GridShape g{2, 4};  // ranks 0-3 form row 0; column 1 is ranks 1 and 5
  EXPECT_EQ(group_size(CommRole::kWorld, g), 8);
  EXPECT_EQ(group_size(CommRole::kRow, g), 4);
  EXPECT_EQ(group_size(CommRole::kColumn, g), 2);
  EXPECT_EQ(members_on_node(CommRole::kRow, g, 1, 4), 4);     // node 0 holds ranks 0-3
  EXPECT_EQ(members_on_node(CommRole::kColumn, g, 1, 4), 1);  // rank 5 is on node 1
  EXPECT_EQ(members_on_node(CommRole::kColumn, g, 1, 8), 2);
  EXPECT_EQ(members_on_node(CommRole::kWorld, g, 7, 3), 2);  // node 2 holds ranks 6-7
  EXPECT_EQ(members_on_node(CommRole::kRow, g, 5, 2), 2);    // ranks 4-5
}

// The closed form against counting: every rank of row-by-row and hybrid (stacked) grids,
// nodes that do and do not align with the grid's rows or stacks.
TEST(Projection, MembersOnANodeAreCountedInClosedForm) {
  std::vector<GridShape> grids;
  for (int rows = 1; rows <= 6; ++rows) {
    for (int cols = 1; cols <= 6; ++cols) grids.push_back(GridShape{rows, cols, 1});
  }
  for (int stack : {2, 3}) {
    for (int nodes_r = 1; nodes_r <= 3; ++nodes_r) {
      for (int cols = 1; cols <= 4; ++cols) grids.push_back(GridShape{nodes_r * stack, cols, stack});
    }
  }
  for (const GridShape& g : grids) {
    for (int per_node = 1; per_node <= 7; ++per_node) {
      for (int rank = 0; rank < g.size(); ++rank) {
        const int node = rank / per_node;
        int row = 0;
        int column = 0;
        for (int c = 0; c < g.cols; ++c) row += g.rank_at(g.row_of(rank), c) / per_node == node ? 1 : 0;
        for (int r = 0; r < g.rows; ++r) column += g.rank_at(r, g.col_of(rank)) / per_node == node ? 1 : 0;
        const std::string where = g.to_string() + " stack " + std::to_string(g.stack) + ", " +
                                  std::to_string(per_node) + " per node, rank " + std::to_string(rank);
        EXPECT_EQ(members_on_node(CommRole::kRow, g, rank, per_node), row) << where;
        EXPECT_EQ(members_on_node(CommRole::kColumn, g, rank, per_node), column) << where;
      }
    }
  }
  // A row of 2^31 - 1 ranks (1D): one node's share, without counting them.
  const GridShape wide{1, 2147483647, 1};
  EXPECT_EQ(members_on_node(CommRole::kRow, wide, 2147483646, 1000), 2147483647 % 1000);
  EXPECT_EQ(members_on_node(CommRole::kRow, wide, 5, 1000), 1000);
}

TEST(Projection, ScalingLawsByHand) {
  // Personalised: 1000 bytes per rank in a group of 2 of 2 ranks -> group 4 of 16 ranks:
  // 1000 * ((3/4)/16) / ((1/2)/2) = 187.5; messages 3 / 1 times.
  ScaledTraffic s = scale_traffic(CommPattern::kPersonalized, 1000, 5, 5, 2, 2, 4, 16);
  EXPECT_DOUBLE_EQ(s.bytes, 187.5);
  EXPECT_DOUBLE_EQ(s.messages, 15);
  // Gather: (g-1)/P: 1000 * (3/16) / (1/2) = 375; messages = calls * 3.
  s = scale_traffic(CommPattern::kGather, 1000, 5, 5, 2, 2, 4, 16);
  EXPECT_DOUBLE_EQ(s.bytes, 375);
  EXPECT_DOUBLE_EQ(s.messages, 15);
  // Reduce: log2 rounds: group 2 -> 16 is 1 -> 4 rounds.
  s = scale_traffic(CommPattern::kReduce, 8, 1, 1, 2, 2, 16, 16);
  EXPECT_DOUBLE_EQ(s.bytes, 32);
  EXPECT_DOUBLE_EQ(s.messages, 4);
  // Nothing to scale from a group of one.
  s = scale_traffic(CommPattern::kGather, 1000, 5, 5, 1, 2, 4, 16);
  EXPECT_DOUBLE_EQ(s.bytes, 0);
}

TEST(Projection, PricesByLinkClass) {
  NetworkModel net;
  net.intra_node = {1e-6, 1e9};
  net.inter_node = {10e-6, 1e8};
  // Personalised over 5 peers, 2 of them elsewhere (on_node 4 of 6): 40% inter.
  const double t = price_traffic(net, CommPattern::kPersonalized, {1e6, 5}, 6, 4);
  EXPECT_NEAR(t, 3 * 1e-6 + 0.6e6 / 1e9 + 2 * 10e-6 + 0.4e6 / 1e8, 1e-12);
  // A gather with any member elsewhere runs at the inter-node link.
  EXPECT_NEAR(price_traffic(net, CommPattern::kGather, {1e6, 3}, 4, 3), 30e-6 + 0.01, 1e-12);
  EXPECT_NEAR(price_traffic(net, CommPattern::kGather, {1e6, 3}, 4, 4), 3e-6 + 0.001, 1e-12);
}

RecordedRun two_by_two_run() {
  RecordedRun run;
  run.ranks = 4;
  run.partition = Partition::k2D;
  run.grid = {2, 2};
  run.searches = 2;
  run.mean_traversed_edges = 1e6;
  run.mean_bfs_time_s = 0.01;
  run.network = network_preset("shm").value();
  // Whole-run totals over 4 ranks and 2 searches: per rank per search 1000 bytes.
  run.traffic.push_back({Phase::kRowExchange, CommRole::kRow, CommPattern::kPersonalized, 8, 8, 8000});
  run.traffic.push_back({Phase::kColumnExchange, CommRole::kColumn, CommPattern::kGather, 8, 8, 8000});
  run.traffic.push_back({Phase::kTerminationCheck, CommRole::kWorld, CommPattern::kReduce, 8, 16, 128});
  run.max_time_s[static_cast<std::size_t>(Phase::kRowExchange)] = 0.004;
  run.max_model_s[static_cast<std::size_t>(Phase::kRowExchange)] = 0.002;
  return run;
}

TEST(Projection, ARunProjectedToItselfKeepsItsTrafficAndTime) {
  const RecordedRun run = two_by_two_run();
  ProjectionTarget same{4, {2, 2}, network_preset("1gbe").value(), 1};
  const Projection p = project_run(run, same);
  ASSERT_EQ(p.phases.size(), 3U);
  const PhaseProjection& col = p.phases[0];
  EXPECT_EQ(col.phase, Phase::kColumnExchange);
  EXPECT_DOUBLE_EQ(col.bytes_per_rank, 1000);
  EXPECT_DOUBLE_EQ(col.messages_per_rank, 1);
  EXPECT_NEAR(col.model_s, 50e-6 + 1000 / 117.5e6, 1e-12);
  const PhaseProjection& row = p.phases[1];
  EXPECT_DOUBLE_EQ(row.recorded_time_s, 0.002);
  EXPECT_DOUBLE_EQ(row.recorded_model_s, 0.001);
  EXPECT_NEAR(row.model_s, 50e-6 + 1000 / 117.5e6, 1e-12);
  // Termination: 2 rounds of 8 bytes per search and rank.
  EXPECT_NEAR(p.phases[2].model_s, 2 * 50e-6 + 16 / 117.5e6, 1e-12);
  EXPECT_NEAR(p.communication_s, col.model_s + row.model_s + p.phases[2].model_s, 1e-15);
  // The rest of the 10 ms search (its own model explained 1 ms) stays at 4 ranks.
  EXPECT_NEAR(p.local_s, 0.009, 1e-12);
  EXPECT_NEAR(p.teps, 1e6 / (0.009 + p.communication_s), 1e-3);
}

TEST(Projection, ToMoreRanksAndNodes) {
  const RecordedRun run = two_by_two_run();
  // 16 ranks on a 4 x 4 grid, 4 ranks per node: a row is one node, a column spans four.
  ProjectionTarget big{16, {4, 4}, network_preset("1gbe").value(), 4};
  const Projection p = project_run(run, big);
  const PhaseProjection& col = p.phases[0];
  // Gather: 1000 * (3/16) / (1/4) = 750 bytes, 3 messages, all inter-node.
  EXPECT_DOUBLE_EQ(col.bytes_per_rank, 750);
  EXPECT_NEAR(col.model_s, 3 * 50e-6 + 750 / 117.5e6, 1e-12);
  const PhaseProjection& row = p.phases[1];
  // Personalised: 1000 * ((3/4)/16) / ((1/2)/4) = 375 bytes, 3 messages, all on the node.
  EXPECT_DOUBLE_EQ(row.bytes_per_rank, 375);
  EXPECT_NEAR(row.model_s, 3 * 0.5e-6 + 375 / 10e9, 1e-12);
  EXPECT_NEAR(p.local_s, 0.009 * 4 / 16, 1e-12);
  EXPECT_THROW(project_run(run, ProjectionTarget{16, {2, 4}, big.network, 1}), Error);
}

// The overlap term: a recording whose row exchange ran 60% hidden (pipelined folds)
// keeps that share hidden at the target, up to the local work; the recorded time its
// model explained is then only the part that showed.
TEST(Projection, PipelinedFoldsKeepTheirHiddenShare) {
  RecordedRun run = two_by_two_run();
  const ProjectionTarget same{4, {2, 2}, network_preset("1gbe").value(), 1};
  const Projection plain = project_run(run, same);
  run.hidden_share[static_cast<std::size_t>(Phase::kRowExchange)] = 0.6;
  const Projection p = project_run(run, same);
  ASSERT_EQ(p.phases.size(), plain.phases.size());
  const PhaseProjection& row = p.phases[1];
  EXPECT_NEAR(row.hidden_s, 0.6 * row.model_s, 1e-15);
  EXPECT_EQ(p.phases[0].hidden_s, 0.0);
  EXPECT_NEAR(p.hidden_s, row.hidden_s, 1e-15);
  EXPECT_NEAR(p.communication_s, plain.communication_s, 1e-15);
  // The recording's own model explained 1 ms of row exchange, of which 0.6 ms was hidden.
  EXPECT_NEAR(p.local_s, 0.01 - 0.0004, 1e-12);
  EXPECT_NEAR(p.bfs_time_s, p.local_s + p.communication_s - p.hidden_s, 1e-15);
  // No more hides than there is work to hide under: on a slow network everything showed.
  run.hidden_share[static_cast<std::size_t>(Phase::kRowExchange)] = 1.0;
  run.mean_bfs_time_s = 0.0012;
  const Projection slow =
      project_run(run, ProjectionTarget{4, {2, 2}, NetworkModel{"slow", {1e-3, 1e6}, {1e-3, 1e6}}, 1});
  EXPECT_NEAR(slow.hidden_s, slow.local_s, 1e-15);
  EXPECT_GT(slow.phases[1].hidden_s, slow.local_s);
}

// One-sided rounds: four latencies a call and three posted operations a piece, by hand;
// against two-sided they lose with few peers and win with many where the network does
// RDMA, and never win where each operation is a message.
TEST(Projection, OneSidedRoundsByHand) {
  const NetworkModel hdr = network_preset("ib-hdr").value();
  EXPECT_DOUBLE_EQ(one_sided_op_s(hdr, LinkClass::kInterNode), 0.1e-6);
  const NetworkModel gbe = network_preset("1gbe").value();
  EXPECT_DOUBLE_EQ(one_sided_op_s(gbe, LinkClass::kInterNode), 50e-6);
  EXPECT_DOUBLE_EQ(one_sided_op_s(gbe, LinkClass::kIntraNode), 0.1e-6);
  // 2 calls, 6 pieces of 1000 bytes in all, a group of 4 on 4 nodes.
  EXPECT_NEAR(price_one_sided(hdr, {6000, 6}, 2, 4, 1), 2 * 4 * 1e-6 + 18 * 0.1e-6 + 6000 / 24e9, 1e-15);
  for (const auto& [network, ranks, wins] : {std::tuple{hdr, 4, false}, std::tuple{hdr, 1024, true},
                                             std::tuple{gbe, 4, false}, std::tuple{gbe, 1024, false}}) {
    // A personalised exchange per call, its messages to every other member, small.
    const double calls = 1;
    const ScaledTraffic traffic{100.0 * (ranks - 1), static_cast<double>(ranks - 1)};
    const double two_sided = price_traffic(network, CommPattern::kPersonalized, traffic, ranks, 1);
    const double one_sided = price_one_sided(network, traffic, calls, ranks, 1);
    EXPECT_EQ(one_sided < two_sided, wins) << network.name << " at " << ranks << " ranks: one-sided " << one_sided
                                           << " s, two-sided " << two_sided << " s";
  }
  // Through a projection: the same recording priced both ways at 1,024 ranks on ib-hdr.
  const RecordedRun run = two_by_two_run();
  ProjectionTarget target{1024, most_square_grid(1024), hdr, 1};
  const Projection matched = project_run(run, target);
  target.one_sided = true;
  const Projection puts = project_run(run, target);
  EXPECT_LT(puts.communication_s, matched.communication_s);
  // Reductions stay collectives: the termination check is priced alike.
  EXPECT_DOUBLE_EQ(puts.phases[2].model_s, matched.phases[2].model_s);
}

TEST(Projection, WarnsWhenTheRecordingHadNoColumnTraffic) {
  RecordedRun run = two_by_two_run();
  run.grid = {1, 4};
  run.traffic.erase(run.traffic.begin() + 1);
  const Projection p = project_run(run, ProjectionTarget{16, {4, 4}, network_preset("1gbe").value(), 1});
  ASSERT_FALSE(p.warnings.empty());
  EXPECT_NE(p.warnings.front().find("column"), std::string::npos);
}

TEST(Projection, WarnsOnceWhenTheRecordingHadOneRank) {
  RecordedRun run = two_by_two_run();
  run.ranks = 1;
  run.grid = {1, 1};
  run.traffic.clear();  // one rank sends nothing
  const Projection p = project_run(run, ProjectionTarget{16, {4, 4}, network_preset("1gbe").value(), 1});
  ASSERT_EQ(p.warnings.size(), 1U);
  EXPECT_NE(p.warnings.front().find("had one rank"), std::string::npos) << p.warnings.front();
  EXPECT_EQ(p.communication_s, 0.0);
  // Projected to one rank too, there is nothing to warn about.
  EXPECT_TRUE(project_run(run, ProjectionTarget{1, {1, 1}, network_preset("1gbe").value(), 1}).warnings.empty());
}

TEST(RecordedRun, RefusesFilesThatAreNotRunRecords) {
  const std::string path = ::testing::TempDir() + "/zbfs_recorded_run_test.json";
  for (const char* text : {"not json", "{\"schema\": \"other\"}", "{\"schema\": \"zbfs.run\", \"schema_version\": 2}",
                           "{\"schema\": \"zbfs.run\", \"schema_version\": 3}"}) {
    std::ofstream(path) << text;
    EXPECT_THROW(read_recorded_run(path), Error) << text;
  }
  std::remove(path.c_str());
  EXPECT_THROW(read_recorded_run(path), Error);
}

}  // namespace
}  // namespace zbfs
