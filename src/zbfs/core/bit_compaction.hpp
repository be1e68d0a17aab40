// Bit compaction: the bits of a bitmap at the positions a mask selects, packed one after
// another, and back. A bitmap exchange whose receivers already know that some positions
// must be 0 (a vertex with no edges is never discovered; a vertex in an earlier frontier
// is in no later one) sends only the other positions: the mask, identical on both
// sides, tells the receiver where each packed bit belongs.
//
// Packing is BMI2's pext and unpacking its pdep, word by word, where the CPU runs them in
// a cycle or two; elsewhere (no BMI2, or AMD Zen 1 and 2, which microcode them at tens to
// hundreds of cycles) byte-wise tables do the same.
#pragma once

#include <cstdint>
#include <span>

namespace zbfs {

// Words needed for `bits` packed bits.
constexpr std::uint64_t packed_words(std::uint64_t bits) { return (bits + 63) / 64; }

// Writes the bits of words[w] at the positions set in mask[w] (words and mask equally
// long) into `packed`, in order from bit 0 of packed[0]; returns how many bits that is
// (the mask's set bits). `packed` needs packed_words(that) words; its bits past the last
// packed bit are written 0.
std::uint64_t compact_bits(std::span<const std::uint64_t> words, std::span<const std::uint64_t> mask,
                           std::span<std::uint64_t> packed);

// The inverse: the i-th packed bit goes to the position of the mask's i-th set bit; every
// other position of `words` (as long as mask) is written 0. `packed` must hold at least
// the mask's set bits; bits past them are ignored.
void expand_bits(std::span<const std::uint64_t> packed, std::span<const std::uint64_t> mask,
                 std::span<std::uint64_t> words);

namespace bit_compaction_detail {
// The two implementations, for tests: `hardware` uses pext/pdep (only where built with
// BMI2), `tables` the byte tables. compact_bits and expand_bits pick one per machine.
enum class Method { kTables, kHardware };
bool hardware_available();
std::uint64_t compact_bits(std::span<const std::uint64_t> words, std::span<const std::uint64_t> mask,
                           std::span<std::uint64_t> packed, Method method);
void expand_bits(std::span<const std::uint64_t> packed, std::span<const std::uint64_t> mask,
                 std::span<std::uint64_t> words, Method method);
}  // namespace bit_compaction_detail

}  // namespace zbfs
