#include "zbfs/core/bit_compaction.hpp"

#include <array>
#include <bit>
#include <string>

#include "zbfs/core/error.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zbfs {
namespace bit_compaction_detail {
namespace {

using ByteTable = std::array<std::array<std::uint8_t, 256>, 256>;

// With `extract`, table[m][x] holds the bits of byte x at the positions set in byte m,
// packed from bit 0; otherwise the low popcount(m) bits of x placed at those positions
// (higher bits of x ignored).
constexpr ByteTable byte_table(bool extract) {
  ByteTable table{};
  for (unsigned m = 0; m < 256; ++m) {
    for (unsigned x = 0; x < 256; ++x) {
      unsigned out = 0;
      unsigned at = 0;
      for (unsigned bit = 0; bit < 8; ++bit) {
        if (((m >> bit) & 1) == 0) continue;
        out |= extract ? ((x >> bit) & 1) << at : ((x >> at) & 1) << bit;
        ++at;
      }
      table[m][x] = static_cast<std::uint8_t>(out);
    }
  }
  return table;
}
constexpr ByteTable kExtract = byte_table(true);
constexpr ByteTable kDeposit = byte_table(false);

std::uint64_t extract_by_tables(std::uint64_t x, std::uint64_t m) {
  std::uint64_t out = 0;
  unsigned at = 0;
  for (unsigned byte = 0; byte < 64; byte += 8) {
    const auto mb = static_cast<std::uint8_t>(m >> byte);
    out |= std::uint64_t{kExtract[mb][static_cast<std::uint8_t>(x >> byte)]} << at;
    at += static_cast<unsigned>(std::popcount(mb));
  }
  return out;
}

std::uint64_t deposit_by_tables(std::uint64_t v, std::uint64_t m) {
  std::uint64_t out = 0;
  for (unsigned byte = 0; byte < 64; byte += 8) {
    const auto mb = static_cast<std::uint8_t>(m >> byte);
    out |= std::uint64_t{kDeposit[mb][static_cast<std::uint8_t>(v)]} << byte;
    // popcount(mb) is at most 8: a shift by 8 of a 64-bit value is defined.
    v >>= std::popcount(mb);
  }
  return out;
}

#if defined(__x86_64__)
__attribute__((target("bmi2"))) std::uint64_t extract_by_hardware(std::uint64_t x, std::uint64_t m) {
  return _pext_u64(x, m);
}
__attribute__((target("bmi2"))) std::uint64_t deposit_by_hardware(std::uint64_t v, std::uint64_t m) {
  return _pdep_u64(v, m);
}
#endif

void check_lengths(std::span<const std::uint64_t> words, std::span<const std::uint64_t> mask) {
  if (words.size() != mask.size()) {
    throw Error(ExitCode::kFailure, "bit compaction: " + std::to_string(words.size()) + " words against a mask of " +
                                        std::to_string(mask.size()));
  }
}

// The packed words are checked as they are reached, in the pass that packs or unpacks:
// counting the mask's bits first would read every mask word once more.
[[noreturn]] void too_few_packed_words(std::size_t have) {
  throw Error(ExitCode::kFailure,
              "bit compaction: " + std::to_string(have) + " packed words, fewer than the mask's positions need");
}

// Appends up to 64 bits to packed words, a whole word at a time.
class PackedWriter {
 public:
  explicit PackedWriter(std::span<std::uint64_t> out) : out_(out) {}
  // The low `count` bits of v (v has no bits above them), count at most 64.
  void append(std::uint64_t v, unsigned count) {
    pending_ |= v << filled_;
    filled_ += count;
    if (filled_ >= 64) {
      store();
      filled_ -= 64;
      // The bits of v that did not fit (none when the word was empty before).
      pending_ = filled_ > 0 ? v >> (count - filled_) : 0;
    }
  }
  void finish() {
    if (filled_ > 0) store();
  }

 private:
  void store() {
    if (next_ == out_.size()) too_few_packed_words(out_.size());
    out_[next_++] = pending_;
  }

  std::span<std::uint64_t> out_;
  std::size_t next_ = 0;
  std::uint64_t pending_ = 0;
  unsigned filled_ = 0;
};

// Returns the bits packed.
template <class Extract>
std::uint64_t compact_with(std::span<const std::uint64_t> words, std::span<const std::uint64_t> mask,
                           std::span<std::uint64_t> packed, Extract extract) {
  check_lengths(words, mask);
  PackedWriter writer(packed);
  std::uint64_t bits = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::uint64_t m = mask[w];
    const auto count = static_cast<unsigned>(std::popcount(m));
    writer.append(extract(words[w], m), count);
    bits += count;
  }
  writer.finish();
  return bits;
}

template <class Deposit>
void expand_with(std::span<const std::uint64_t> packed, std::span<const std::uint64_t> mask,
                 std::span<std::uint64_t> words, Deposit deposit) {
  check_lengths(words, mask);
  std::uint64_t at = 0;  // bit position in packed
  for (std::size_t w = 0; w < mask.size(); ++w) {
    const std::uint64_t m = mask[w];
    const auto count = static_cast<unsigned>(std::popcount(m));
    if (count == 0) {
      words[w] = 0;
      continue;
    }
    const auto first = static_cast<std::size_t>(at / 64);
    const auto offset = static_cast<unsigned>(at % 64);
    // The next word is read only when the bits run into it.
    const bool straddles = offset + count > 64;
    if (first + (straddles ? 1 : 0) >= packed.size()) too_few_packed_words(packed.size());
    std::uint64_t v = packed[first] >> offset;
    if (straddles) v |= packed[first + 1] << (64 - offset);
    words[w] = deposit(v, m);  // deposit takes only the low `count` bits
    at += count;
  }
}

}  // namespace

bool hardware_available() {
#if defined(__x86_64__)
  // Zen 1 and 2 implement pext and pdep in microcode (about 8 cycles per set mask bit).
  static const bool fast = __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
  return fast;
#else
  return false;
#endif
}

std::uint64_t compact_bits(std::span<const std::uint64_t> words, std::span<const std::uint64_t> mask,
                           std::span<std::uint64_t> packed, Method method) {
#if defined(__x86_64__)
  if (method == Method::kHardware) return compact_with(words, mask, packed, extract_by_hardware);
#endif
  (void)method;
  return compact_with(words, mask, packed, extract_by_tables);
}

void expand_bits(std::span<const std::uint64_t> packed, std::span<const std::uint64_t> mask,
                 std::span<std::uint64_t> words, Method method) {
#if defined(__x86_64__)
  if (method == Method::kHardware) {
    expand_with(packed, mask, words, deposit_by_hardware);
    return;
  }
#endif
  (void)method;
  expand_with(packed, mask, words, deposit_by_tables);
}

}  // namespace bit_compaction_detail

namespace {
bit_compaction_detail::Method machine_method() {
  return bit_compaction_detail::hardware_available() ? bit_compaction_detail::Method::kHardware
                                                     : bit_compaction_detail::Method::kTables;
}
}  // namespace

std::uint64_t compact_bits(std::span<const std::uint64_t> words, std::span<const std::uint64_t> mask,
                           std::span<std::uint64_t> packed) {
  return bit_compaction_detail::compact_bits(words, mask, packed, machine_method());
}

void expand_bits(std::span<const std::uint64_t> packed, std::span<const std::uint64_t> mask,
                 std::span<std::uint64_t> words) {
  bit_compaction_detail::expand_bits(packed, mask, words, machine_method());
}

}  // namespace zbfs
