// End-to-end tests of the zbfs program: every CLI error path gives one line on stderr
// and exit status 2; a small run prints exactly the result block on stdout and writes
// a JSON record.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Outcome run_zbfs(const std::string& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto out_path = dir / ("zbfs_cli_" + tag + ".out");
  const auto err_path = dir / ("zbfs_cli_" + tag + ".err");
  const std::string command =
      std::string(ZBFS_BINARY) + " " + args + " >" + out_path.string() + " 2>" + err_path.string() + " </dev/null";
  const int raw = std::system(command.c_str());
  Outcome o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = slurp(out_path);
  o.err = slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return o;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (const char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

void expect_usage_error(const std::string& args, const std::string& mention) {
  const Outcome o = run_zbfs(args);
  EXPECT_EQ(o.status, 2) << args << "\nstderr: " << o.err;
  EXPECT_EQ(count_lines(o.err), 1) << args << "\nstderr: " << o.err;
  EXPECT_NE(o.err.find("zbfs: error:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(mention), std::string::npos) << args << "\nstderr: " << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(CliErrors, UnknownFlag) { expect_usage_error("run --frobnicate", "--frobnicate"); }
TEST(CliErrors, NonNumericScale) { expect_usage_error("run --scale abc", "abc"); }
TEST(CliErrors, ScaleZero) { expect_usage_error("run --scale 0", "--scale"); }
TEST(CliErrors, ScaleAbove42) { expect_usage_error("run --scale 43", "--scale"); }
TEST(CliErrors, NegativeScale) { expect_usage_error("run --scale -3", "--scale"); }
TEST(CliErrors, EdgefactorZero) { expect_usage_error("run --edgefactor 0", "--edgefactor"); }
TEST(CliErrors, RootsZero) { expect_usage_error("run --roots 0", "--roots"); }
TEST(CliErrors, RootsMoreThanVertices) { expect_usage_error("run --scale 3 --roots 9", "--roots"); }
TEST(CliErrors, RootsMoreThanConnectedVertices) {
  expect_usage_error("run --scale 5 --edgefactor 1 --roots 32 -q", "vertices with edges");
}
TEST(CliErrors, UnknownDirection) { expect_usage_error("run --direction sideways", "sideways"); }
TEST(CliErrors, NegativeAlpha) { expect_usage_error("run --alpha -1", "--alpha"); }
TEST(CliErrors, MissingCommand) { expect_usage_error("", "subcommand"); }
TEST(CliErrors, UnknownCommand) { expect_usage_error("fly", "fly"); }
TEST(CliErrors, UnwritableJson) {
  expect_usage_error("run --scale 6 --roots 4 --json /nonexistent-dir/x.json", "/nonexistent-dir/x.json");
}

TEST(CliErrors, ImpossibleSizeIsRefusedWithBothNumbers) {
  const Outcome o = run_zbfs("run --scale 42");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("needs about"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("TiB"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("available"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--force"), std::string::npos) << o.err;
}

TEST(Cli, HelpAndVersionSucceed) {
  const Outcome help = run_zbfs("run --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--scale"), std::string::npos);
  const Outcome version = run_zbfs("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.rfind("zbfs ", 0), 0U) << version.out;
}

TEST(Cli, SmallRunPrintsOnlyTheResultBlockAndWritesJson) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_run.json";
  std::filesystem::remove(json_path);
  const Outcome o = run_zbfs("run --scale 10 --roots 8 --threads 2 --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(count_lines(o.out), 34) << o.out;
  EXPECT_EQ(o.out.rfind("SCALE:                          10\n", 0), 0U) << o.out;
  EXPECT_NE(o.out.find("NBFS:                           8\n"), std::string::npos);
  EXPECT_NE(o.out.find("bfs  harmonic_mean_TEPS:     !  "), std::string::npos);
  EXPECT_EQ(o.out.find("bfs  min_validate:              -1"), std::string::npos) << "validation should have run";
  EXPECT_NE(o.err.find("BFS 8/8"), std::string::npos) << "progress goes to stderr: " << o.err;

  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["schema"], "zbfs.run");
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["config"]["scale"], 10);
  EXPECT_EQ(j["threads"], 2);
  ASSERT_EQ(j["searches"].size(), 8U);
  for (const auto& s : j["searches"]) {
    EXPECT_GT(s["time_s"].get<double>(), 0.0);
    EXPECT_GT(s["teps"].get<double>(), 0.0);
    EXPECT_GE(s["levels"].get<int>(), 2);
    EXPECT_FALSE(s["steps"].empty());
    EXPECT_TRUE(s.contains("validate_time_s"));
  }
  EXPECT_GT(j["memory"]["peak_rss_bytes"].get<double>(), 0.0);
  EXPECT_GT(j["summary"]["teps"]["harmonic_mean"].get<double>(), 0.0);
  std::filesystem::remove(json_path);
}

TEST(Cli, SameSeedGivesTheSameTraversedEdgesAtAnyThreadCount) {
  const auto nedge_line = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 60); };
  const Outcome one = run_zbfs("run --scale 11 --roots 4 --threads 1 -q --seed 5");
  const Outcome two = run_zbfs("run --scale 11 --roots 4 --threads 2 -q --seed 5");
  const Outcome other = run_zbfs("run --scale 11 --roots 4 --threads 2 -q --seed 6");
  ASSERT_EQ(one.status, 0);
  ASSERT_EQ(two.status, 0);
  EXPECT_EQ(nedge_line(one.out), nedge_line(two.out));
  EXPECT_NE(nedge_line(one.out), nedge_line(other.out));
  EXPECT_TRUE(one.err.empty()) << "--quiet must silence progress: " << one.err;
}

TEST(Cli, NoValidatePrintsMinusOneAndEveryDirectionRuns) {
  for (const char* direction : {"auto", "top-down", "bottom-up"}) {
    const Outcome o = run_zbfs(std::string("run --scale 9 --roots 4 -q --no-validate --direction ") + direction);
    ASSERT_EQ(o.status, 0) << direction << ": " << o.err;
    EXPECT_NE(o.out.find("bfs  min_validate:              -1"), std::string::npos) << o.out;
  }
}

}  // namespace
