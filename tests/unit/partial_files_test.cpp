// The table of partial files a signal's handler removes (output/partial_files.hpp): a
// file is listed from before it is created until it is renamed or removed, whichever way
// OutputFile ends; and one folder of numbered files at a time (zbfs trace's; a signal
// removing it is tests/e2e/signal_test.py's).
#include "zbfs/output/partial_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/output/output_file.hpp"

namespace zbfs {
namespace {

std::string scratch(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("zbfs_partial_files_" + name)).string();
}

TEST(PartialFiles, AGuardListsItsPathWhileItLives) {
  const int before = listed_partial_files();
  {
    const PartialFileGuard one(scratch("a.partial"));
    const PartialFileGuard two(scratch("b.partial"));
    EXPECT_EQ(listed_partial_files(), before + 2);
  }
  EXPECT_EQ(listed_partial_files(), before);
  // A path no slot holds is not listed (and not cut short).
  const PartialFileGuard too_long(std::string(5000, 'x'));
  EXPECT_EQ(listed_partial_files(), before);
}

TEST(PartialFiles, AnOutputFileIsListedUntilItIsNamedOrRemoved) {
  const int before = listed_partial_files();
  const std::string path = scratch("out.txt");
  {
    OutputFile file(path);
    file.write_text("0 1\n");
    EXPECT_EQ(listed_partial_files(), before + 1);
    file.commit();
    EXPECT_EQ(listed_partial_files(), before);
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  {
    OutputFile abandoned(scratch("abandoned.txt"));  // an exception on its way: removed
    EXPECT_EQ(listed_partial_files(), before + 1);
  }
  EXPECT_EQ(listed_partial_files(), before);
  EXPECT_FALSE(std::filesystem::exists(partial_path_of(scratch("abandoned.txt"))));
  EXPECT_THROW(OutputFile(scratch("no-such-folder") + "/x/y.txt"), Error);
  EXPECT_EQ(listed_partial_files(), before);
  std::filesystem::remove(path);
}

TEST(PartialFiles, OneFolderOfNumberedFilesIsListedAtATime) {
  {
    PartialFolderGuard folder(scratch("traces"), "rank-", ".trace");
    EXPECT_TRUE(folder.listed());
    folder.written(3);
    const PartialFolderGuard second(scratch("other"), "rank-", ".trace");
    EXPECT_FALSE(second.listed());
  }
  const PartialFolderGuard again(scratch("traces"), "rank-", ".trace");
  EXPECT_TRUE(again.listed());
  // Names no slot holds are not listed (and not cut short).
  const PartialFolderGuard too_long(scratch("x"), std::string(100, 'p'), ".trace");
  EXPECT_FALSE(too_long.listed());
}

}  // namespace
}  // namespace zbfs
