#include "zbfs/core/memory.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace zbfs {
namespace {

// The value of `key` (in kB) in a /proc file of "Key:   value kB" lines.
std::optional<std::uint64_t> proc_kib(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(key)) continue;
    std::istringstream fields(line.substr(key.size()));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> read_meminfo_available() {
  const auto kib = proc_kib("/proc/meminfo", "MemAvailable:");
  return kib ? std::optional<std::uint64_t>(*kib * 1024) : std::nullopt;
}

// Resident shared-memory pages mapped beyond this process's proportional share of them
// (RssShmem less Pss_Shmem), in bytes; 0 when unknown.
std::uint64_t shared_pages_beyond_share_bytes() {
  const auto resident = proc_kib("/proc/self/status", "RssShmem:");
  const auto share = proc_kib("/proc/self/smaps_rollup", "Pss_Shmem:");
  if (!resident || !share || *share > *resident) return 0;
  return (*resident - *share) * 1024;
}

// cgroup v2 (memory.max) or v1 (memory.limit_in_bytes) limit minus current usage.
std::optional<std::uint64_t> read_cgroup_headroom() {
  const std::array<std::pair<const char*, const char*>, 2> files = {{
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
  }};
  for (const auto& [limit_path, usage_path] : files) {
    std::ifstream limit_in(limit_path);
    std::string limit_text;
    if (!(limit_in >> limit_text) || limit_text == "max") continue;
    std::uint64_t limit = 0;
    std::uint64_t usage = 0;
    std::istringstream(limit_text) >> limit;
    std::ifstream usage_in(usage_path);
    usage_in >> usage;
    if (limit == 0 || limit > (std::uint64_t{1} << 60)) continue;  // v1 reports "unlimited" as a huge number
    return limit > usage ? limit - usage : 0;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> available_memory_bytes() {
  const auto meminfo = read_meminfo_available();
  const auto cgroup = read_cgroup_headroom();
  if (meminfo && cgroup) return std::min(*meminfo, *cgroup);
  return meminfo ? meminfo : cgroup;
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::uint64_t peak_share_bytes() {
  const std::uint64_t peak = peak_rss_bytes();
  return peak - std::min(peak, shared_pages_beyond_share_bytes());
}

void fix_heap_mmap_threshold() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string_view(tunables).find("malloc.mmap_threshold") != std::string_view::npos) return;
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

void release_free_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void release_pages(void* begin, std::size_t bytes) {
#if defined(__linux__)
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
  const auto last = (reinterpret_cast<std::uintptr_t>(begin) + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
  (void)begin;
  (void)bytes;
#endif
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::array<const char*, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), unit == 0 ? "%.0f %s" : "%.2f %s", value, kUnits[unit]);
  return text.data();
}

}  // namespace zbfs
