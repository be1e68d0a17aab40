// Sets of ids in the two forms exchanges use: sorting a list before a delta codec encodes
// it, and moving between bitmaps and sorted lists of their set bits. No MPI.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zbfs {

// The sorted, duplicate-free form of `ids` into `out`: through a bitmap over their range
// when that is dense enough to beat a comparison sort.
void sort_set(std::span<const std::uint64_t> ids, std::vector<std::uint64_t>& out);

// Appends base + (64w + b) for every set bit b of word w, in increasing order.
void append_set_bits(std::span<const std::uint64_t> words, std::uint64_t base, std::vector<std::uint64_t>& out);

// Appends 64w + b for every zero bit b of word w, in increasing order.
void append_clear_bits(std::span<const std::uint64_t> words, std::vector<std::uint64_t>& out);

std::uint64_t count_set_bits(std::span<const std::uint64_t> words);

}  // namespace zbfs
