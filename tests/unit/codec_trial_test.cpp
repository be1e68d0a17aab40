// --codec auto's trial (driver/codec_trial.hpp): when it runs, what the plain path is,
// and how two paths' timings pick one.
#include "zbfs/driver/codec_trial.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

RunConfig auto_run() {
  RunConfig config;
  config.codec = CodecChoice{};  // auto
  return config;
}

TEST(CodecTrial, RunsUnderAutoOnMeasuredLinksOfTheCpuBackendsTwoSidedExchanges) {
  EXPECT_TRUE(runs_codec_trial(auto_run(), 4));
  EXPECT_TRUE(runs_codec_trial(auto_run(), 2));
  EXPECT_FALSE(runs_codec_trial(auto_run(), 1));  // no exchanges to time
  RunConfig fixed = auto_run();
  fixed.codec = CodecChoice{CodecId::kBitpack};  // the user's own codec stays
  EXPECT_FALSE(runs_codec_trial(fixed, 4));
  RunConfig none = auto_run();
  none.codec = CodecChoice{CodecId::kNone};
  EXPECT_FALSE(runs_codec_trial(none, 4));
  RunConfig off = auto_run();
  off.codec_trial = false;
  EXPECT_FALSE(runs_codec_trial(off, 4));
  RunConfig preset = auto_run();
  preset.network.name = "1gbe";  // modelled links: nothing here to time
  EXPECT_FALSE(runs_codec_trial(preset, 4));
  RunConfig shared = auto_run();
  shared.shared_memory = true;
  EXPECT_FALSE(runs_codec_trial(shared, 4));
  RunConfig rma = auto_run();
  rma.transport = Transport::kRma;
  EXPECT_FALSE(runs_codec_trial(rma, 4));
  RunConfig device = auto_run();
  device.backend = Backend::kCudaHost;
  EXPECT_FALSE(runs_codec_trial(device, 4));
  RunConfig dump = auto_run();
  dump.dump_frontiers = "/tmp/frontiers";
  EXPECT_FALSE(runs_codec_trial(dump, 4));
}

TEST(CodecTrial, ThePlainPathIsTheRunWithoutACodecAndItsFoldDefault) {
  const RunConfig config = auto_run();
  const RunConfig plain = plain_path_config(config);
  EXPECT_EQ(plain.codec.fixed, CodecId::kNone);
  EXPECT_FALSE(pipelines_folds(config));  // with a codec the folds go in bulk
  EXPECT_TRUE(pipelines_folds(plain));    // without one they are pipelined
  CodecTrialRecord trial;
  EXPECT_FALSE(folds_pipelined(config, nullptr));
  EXPECT_FALSE(folds_pipelined(config, &trial));
  trial.chose_coded = false;
  EXPECT_TRUE(folds_pipelined(config, &trial));
  RunConfig off = config;
  off.overlap = false;  // --overlap as given holds on both paths
  EXPECT_FALSE(folds_pipelined(off, &trial));
}

TEST(CodecTrial, TheMedianPairedRatioPicksThePath) {
  const std::vector<double> a{1.0, 2.0, 3.0};
  EXPECT_FALSE(coded_path_wins(a, a));  // a tie keeps the plain path
  EXPECT_TRUE(coded_path_wins(std::vector<double>{0.9, 1.9, 2.9}, a));
  EXPECT_FALSE(coded_path_wins(std::vector<double>{1.1, 2.1, 3.1}, a));
  // Paired by key: one slow spell on a coded search does not outvote the others, though
  // it outweighs them in a sum.
  EXPECT_TRUE(coded_path_wins(std::vector<double>{0.9, 9.0, 2.9}, a));
  // An even count takes the middle two: ratios 0.8, 0.9, 1.05, 1.2 -> 0.975.
  EXPECT_TRUE(coded_path_wins(std::vector<double>{0.8, 0.9, 1.05, 1.2}, std::vector<double>{1, 1, 1, 1}));
  EXPECT_FALSE(coded_path_wins(std::vector<double>{0.8, 1.0, 1.05, 1.2}, std::vector<double>{1, 1, 1, 1}));
  // A search the clock could not see is a tie.
  EXPECT_FALSE(coded_path_wins(std::vector<double>{0.0}, std::vector<double>{0.0}));
  EXPECT_THROW(coded_path_wins(std::vector<double>{}, std::vector<double>{}), Error);
  EXPECT_THROW(coded_path_wins(std::vector<double>{1.0}, a), Error);
}

}  // namespace
}  // namespace zbfs
