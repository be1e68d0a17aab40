// Bitmap: one bit per vertex in 64-bit words. Plain accessors are for code that owns the
// word it touches (bottom-up steps own whole words); the *_atomic accessors are for code
// where threads share words (top-down claims). Words are accessed through atomic_ref.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "zbfs/core/large_array.hpp"

namespace zbfs {

class Bitmap {
 public:
  Bitmap() = default;
  explicit Bitmap(std::size_t num_bits) : num_bits_(num_bits), words_(word_count(num_bits)) {}

  static constexpr std::size_t word_count(std::size_t bits) { return (bits + 63) / 64; }
  static constexpr std::size_t word_of(std::uint64_t bit) { return static_cast<std::size_t>(bit >> 6); }
  static constexpr std::uint64_t mask_of(std::uint64_t bit) { return std::uint64_t{1} << (bit & 63); }

  [[nodiscard]] std::size_t size() const noexcept { return num_bits_; }
  [[nodiscard]] std::size_t num_words() const noexcept { return words_.size(); }

  [[nodiscard]] bool test(std::uint64_t bit) const { return (load_word(word_of(bit)) & mask_of(bit)) != 0; }
  void set(std::uint64_t bit) { words_[word_of(bit)] |= mask_of(bit); }
  // Returns true when this call changed the bit from 0 to 1.
  bool set_atomic(std::uint64_t bit) {
    std::atomic_ref<std::uint64_t> word(words_[word_of(bit)]);
    const std::uint64_t mask = mask_of(bit);
    return (word.fetch_or(mask, std::memory_order_relaxed) & mask) == 0;
  }

  // Test-and-set for claims: returns true when this call changed the bit from 0 to 1.
  // `shared`: other threads may set bits of the same words meanwhile (then the set is a
  // locked instruction). A search on one thread passes false: a locked read-modify-write
  // waits for every earlier store to drain, and those waits were half of a one-thread
  // top-down step.
  bool claim(std::uint64_t bit, bool shared) {
    if (test(bit)) return false;
    if (shared) return set_atomic(bit);
    words_[word_of(bit)] |= mask_of(bit);
    return true;
  }

  [[nodiscard]] std::uint64_t load_word(std::size_t w) const {
    // atomic_ref needs a non-const object; the load itself does not modify it.
    auto& word = const_cast<std::uint64_t&>(words_[w]);
    return std::atomic_ref<std::uint64_t>(word).load(std::memory_order_relaxed);
  }
  std::uint64_t& word(std::size_t w) { return words_[w]; }
  [[nodiscard]] const std::uint64_t* data() const { return words_.data(); }
  std::uint64_t* data() { return words_.data(); }
  [[nodiscard]] std::uint64_t word(std::size_t w) const { return words_[w]; }

  // Mask of the bits of word w that belong to the bitmap (the last word may be partial).
  [[nodiscard]] std::uint64_t valid_mask(std::size_t w) const {
    const std::size_t tail = num_bits_ & 63;
    return (w + 1 == words_.size() && tail != 0) ? (std::uint64_t{1} << tail) - 1 : ~std::uint64_t{0};
  }

  // The bits set.
  [[nodiscard]] std::uint64_t count() const {
    std::uint64_t set = 0;
    for (std::size_t w = 0; w < words_.size(); ++w) set += static_cast<std::uint64_t>(std::popcount(words_[w]));
    return set;
  }
  void clear() {
    std::uint64_t* p = words_.data();
    const auto n = static_cast<std::int64_t>(words_.size());
    // Up to 512 KiB, clearing alone is faster than waking other threads.
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (std::int64_t i = 0; i < n; ++i) p[i] = 0;
  }

  void swap(Bitmap& other) noexcept {
    std::swap(num_bits_, other.num_bits_);
    words_.swap(other.words_);
  }

 private:
  std::size_t num_bits_ = 0;
  LargeArray<std::uint64_t> words_;
};

}  // namespace zbfs
