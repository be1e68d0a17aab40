// The frontier dump (zbfs run --dump-frontiers): what a recorder writes reads back as
// written, and a damaged file is refused with an error that names it.
#include "zbfs/output/message_recorder.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {
namespace {

class FrontierDump : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zbfs_dump_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The bytes of a dump holding three messages, written by rank 3.
  std::string recorded() const {
    {
      MessageRecorder recorder(dir_.string(), 3);
      recorder.record(Phase::kRowExchange, RecordedKind::kSet, 1, std::vector<std::uint64_t>{2, 5, 9});
      recorder.set_enabled(false);
      recorder.record(Phase::kRowExchange, RecordedKind::kSet, 1, std::vector<std::uint64_t>{7});  // paused
      recorder.set_enabled(true);
      recorder.record(Phase::kPredecessorReduction, RecordedKind::kSequence, 0, std::vector<std::uint64_t>{4, 1});
      recorder.record(Phase::kColumnExchange, RecordedKind::kBitmap, MessageRecorder::kEveryMember,
                      std::vector<std::uint64_t>{});
      EXPECT_EQ(recorder.seal(), std::nullopt);
      recorder.record(Phase::kRowExchange, RecordedKind::kSet, 1, std::vector<std::uint64_t>{8});  // sealed: ignored
      EXPECT_EQ(recorder.publish(), std::nullopt);
    }
    std::ifstream in(path(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string path() const { return (dir_ / "rank-3.zbfsdump").string(); }
  void overwrite(const std::string& bytes) const { std::ofstream(path(), std::ios::binary | std::ios::trunc) << bytes; }
  std::string error_of_reading() const {
    try {
      (void)read_recorded_messages(path());
    } catch (const DecodeError& e) {
      return e.what();
    }
    return "no error";
  }

  std::filesystem::path dir_;
};

// The dump takes its name only when published: a recorder that ends before (an error on
// the way) leaves neither the file nor its partial one.
TEST_F(FrontierDump, AnUnpublishedDumpLeavesNoFile) {
  {
    MessageRecorder recorder(dir_.string(), 3);
    recorder.record(Phase::kRowExchange, RecordedKind::kSet, 1, std::vector<std::uint64_t>{2, 5, 9});
    EXPECT_TRUE(std::filesystem::exists(path() + ".partial"));
    EXPECT_EQ(recorder.seal(), std::nullopt);
    EXPECT_FALSE(std::filesystem::exists(path()));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(FrontierDump, ReadsBackWhatWasRecorded) {
  (void)recorded();
  const std::vector<RecordedMessage> m = read_recorded_messages(path());
  ASSERT_EQ(m.size(), 3U);
  EXPECT_EQ(m[0].phase, Phase::kRowExchange);
  EXPECT_EQ(m[0].kind, RecordedKind::kSet);
  EXPECT_EQ(m[0].destination, 1U);
  EXPECT_EQ(m[0].values, (std::vector<std::uint64_t>{2, 5, 9}));
  EXPECT_EQ(m[1].phase, Phase::kPredecessorReduction);
  EXPECT_EQ(m[1].kind, RecordedKind::kSequence);
  EXPECT_EQ(m[1].values, (std::vector<std::uint64_t>{4, 1}));
  EXPECT_EQ(m[2].kind, RecordedKind::kBitmap);
  EXPECT_EQ(m[2].destination, MessageRecorder::kEveryMember);
  EXPECT_TRUE(m[2].values.empty());
}

TEST_F(FrontierDump, DamagedFilesAreRefusedByName) {
  const std::string bytes = recorded();
  ASSERT_EQ(bytes.size(), 16U + (16U + 24U) + (16U + 16U) + 16U);
  // Every cut inside a record, and every cut of the file header, is an error naming the file.
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    if (size == 16 || size == 56 || size == 88) continue;  // record boundaries: a shorter valid dump
    overwrite(bytes.substr(0, size));
    const std::string error = error_of_reading();
    EXPECT_NE(error.find("malformed buffer: " + path() + ": "), std::string::npos) << size << ": " << error;
  }
  std::string other = bytes;
  other[0] = 'X';
  overwrite(other);
  EXPECT_NE(error_of_reading().find(path() + ": not a zbfs frontier dump"), std::string::npos);
  other = bytes;
  other[8] = 2;  // version
  overwrite(other);
  EXPECT_NE(error_of_reading().find(path() + ": unknown dump version"), std::string::npos);
  other = bytes;
  other[17] = 7;  // the first record's kind
  overwrite(other);
  EXPECT_NE(error_of_reading().find(path() + ": bad record"), std::string::npos);
  other = bytes;
  other[24 + 7] = 0x10;  // the first record's count: 2^60 values
  overwrite(other);
  EXPECT_NE(error_of_reading().find(path() + ": truncated record"), std::string::npos);
}

}  // namespace
}  // namespace zbfs
