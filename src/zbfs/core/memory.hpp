// What this process may use and has used: the memory available to it (the smaller of the
// kernel's MemAvailable and a cgroup limit) and its peak resident set size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zbfs {

// Bytes this process can still allocate without swapping; nullopt when unknown.
std::optional<std::uint64_t> available_memory_bytes();

// High-water mark of the resident set size of this process, in bytes (0 when unknown).
std::uint64_t peak_rss_bytes();

// "3.50 GiB" style rendering for messages.
std::string format_bytes(std::uint64_t bytes);

}  // namespace zbfs
