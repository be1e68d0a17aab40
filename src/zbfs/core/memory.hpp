// What this process may use and has used: the memory available to it (the smaller of the
// kernel's MemAvailable and a cgroup limit), its peak resident set size, and how much of
// that other processes' resident sets count too.
#pragma once

#include <cstddef>
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

// Fixes glibc's mmap threshold at its starting 128 KiB (M_MMAP_THRESHOLD), unless the
// environment's GLIBC_TUNABLES sets one; elsewhere nothing. Called once, first thing in
// main. glibc raises the threshold each time a large mapped block is freed, so the large
// buffers of later phases come from the heap instead, and their freed pieces stay
// resident, more of them the more peers a rank has (docs/scaling.md). Fixed, a freed
// large buffer goes back to the system at once; the searches keep their buffers from
// level to level, so they do not pay for it.
void fix_heap_mmap_threshold();

// Hands the heap's free pages back to the system (glibc's malloc_trim; elsewhere
// nothing), between phases and outside timed regions, so that what one phase freed in
// the middle of the heap does not add to the next one's peak.
void release_free_heap();

// Gives the whole pages inside [begin, begin + bytes) back to the system (madvise
// MADV_DONTNEED; elsewhere nothing): they read as zero if touched again. For the unused
// tail of a buffer that is still owned, so that a consumed part stops counting.
void release_pages(void* begin, std::size_t bytes);

// "3.50 GiB" style rendering for messages.
std::string format_bytes(std::uint64_t bytes);

}  // namespace zbfs
