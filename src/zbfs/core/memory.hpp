// What this process may use and has used: the memory available to it (the smaller of the
// kernel's MemAvailable and a cgroup limit), its peak resident set size, and how much of
// that other processes' resident sets count too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zbfs {

// Bytes this process can still allocate without swapping; nullopt when unknown.
std::optional<std::uint64_t> available_memory_bytes();

// High-water mark of the resident set size of this process, in bytes (0 when unknown).
std::uint64_t peak_rss_bytes();

// The peak resident size less the resident shared-memory pages this process maps beyond
// its proportional share of them (RssShmem less Pss_Shmem, now), in bytes: its part of the
// node's memory. Those pages are other processes' too, an MPI library's shared segments
// above all (each rank on a node maps its peers'), so the node holds them once while every
// mapping rank's resident size counts them.
std::uint64_t peak_share_bytes();

// "3.50 GiB" style rendering for messages.
std::string format_bytes(std::uint64_t bytes);

}  // namespace zbfs
