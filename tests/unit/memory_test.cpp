// The heap policy zbfs sets at start-up (core/memory.hpp): a freed large buffer must not
// turn later large buffers into heap pieces that stay resident.
#include "zbfs/core/memory.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace zbfs {
namespace {

// Keeps the compiler from dropping an allocation it can see is never read.
void keep(void* p) { asm volatile("" : : "r"(p) : "memory"); }

TEST(HeapPolicy, LargeBuffersStayMappedAfterALargerOneIsFreed) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's malloc only";
#else
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string_view(tunables).find("malloc.mmap_threshold") != std::string_view::npos) {
    GTEST_SKIP() << "GLIBC_TUNABLES sets the threshold";
  }
  fix_heap_mmap_threshold();
  // glibc's own policy would raise its threshold to 8 MiB here, and carve the 1 MiB
  // buffer below from the heap.
  constexpr std::size_t kLarge = std::size_t{8} << 20;
  char* large = static_cast<char*>(std::malloc(kLarge));
  ASSERT_NE(large, nullptr);
  std::memset(large, 1, kLarge);
  keep(large);
  std::free(large);

  const std::size_t mapped_before = mallinfo2().hblks;
  char* buffer = static_cast<char*>(std::malloc(std::size_t{1} << 20));
  ASSERT_NE(buffer, nullptr);
  keep(buffer);
  EXPECT_EQ(mallinfo2().hblks, mapped_before + 1) << "a 1 MiB buffer came from the heap";
  std::free(buffer);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);
  release_free_heap();
#endif
}

}  // namespace
}  // namespace zbfs
