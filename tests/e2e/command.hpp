// Running the zbfs program from an end-to-end test: the command's exit status, stdout and
// stderr, through the shell (so tests can prefix env, timeout or mpirun).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace zbfs_test {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline Outcome run_command(const std::string& command_prefix, const std::string& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto out_path = dir / ("zbfs_cli_" + tag + ".out");
  const auto err_path = dir / ("zbfs_cli_" + tag + ".err");
  const std::string command =
      command_prefix + " " + args + " >" + out_path.string() + " 2>" + err_path.string() + " </dev/null";
  const int raw = std::system(command.c_str());
  Outcome o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = slurp(out_path);
  o.err = slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return o;
}

inline int count_lines(const std::string& text) {
  int n = 0;
  for (const char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

}  // namespace zbfs_test
