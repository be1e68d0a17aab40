// Bytes for the wire: ByteBuffer, a growable buffer whose new space is left uninitialised
// (encoders write every byte they claim, so zero-filling would be a wasted pass), and
// ByteReader, a cursor over received bytes that checks every read against the end and
// throws DecodeError instead of reading past it. Little-endian throughout; LEB128 varints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {

// A received buffer is malformed (truncated, corrupted or hostile). Never a crash.
class DecodeError : public Error {
 public:
  explicit DecodeError(const std::string& message)
      : Error(ExitCode::kFailure, "malformed buffer: " + message), detail_(message) {}
  // The message without the "malformed buffer: " prefix, to be set in a wider context.
  [[nodiscard]] const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&&) noexcept = default;
  ByteBuffer& operator=(ByteBuffer&&) noexcept = default;
  ByteBuffer(const ByteBuffer&) = delete;  // buffers are large: move them
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  [[nodiscard]] std::uint8_t* data() { return bytes_.get(); }
  [[nodiscard]] const std::uint8_t* data() const { return bytes_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return {bytes_.get(), size_}; }
  void clear() { size_ = 0; }
  void reserve(std::size_t capacity) {
    if (capacity > capacity_) reallocate(capacity);
  }

  // Claims n more bytes at the end and returns where they start (contents unspecified).
  std::uint8_t* extend(std::size_t n) {
    if (size_ + n > capacity_) reallocate(std::max(size_ + n, capacity_ * 2));
    std::uint8_t* at = bytes_.get() + size_;
    size_ += n;
    return at;
  }
  // Gives back the bytes past new_size (after extend() claimed a worst case).
  void shrink_to(std::size_t new_size) { size_ = new_size < size_ ? new_size : size_; }

  void append(const void* src, std::size_t n) {
    if (n != 0) std::memcpy(extend(n), src, n);
  }
  void put_u8(std::uint8_t v) { *extend(1) = v; }
  void put_u32(std::uint32_t v) { append(&v, sizeof v); }  // x86-64 and ARM64: little-endian
  void put_u64(std::uint64_t v) { append(&v, sizeof v); }
  void put_varint(std::uint64_t v) {
    std::uint8_t* at = extend(10);
    const std::size_t used = write_varint(at, v);
    size_ -= 10 - used;
  }

  // Writes v as LEB128 at `at` (room for 10 bytes); returns the bytes used.
  static std::size_t write_varint(std::uint8_t* at, std::uint64_t v) {
    std::size_t i = 0;
    while (v >= 0x80) {
      at[i++] = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    at[i++] = static_cast<std::uint8_t>(v);
    return i;
  }

 private:
  void reallocate(std::size_t capacity) {
    // new[] without () leaves the bytes uninitialised, which is the point.
    std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[capacity]);
    if (size_ != 0) std::memcpy(grown.get(), bytes_.get(), size_);
    bytes_ = std::move(grown);
    capacity_ = capacity;
  }

  std::unique_ptr<std::uint8_t[]> bytes_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  [[nodiscard]] std::size_t position() const { return at_; }
  [[nodiscard]] std::size_t remaining() const { return bytes_.size() - at_; }
  [[nodiscard]] const std::uint8_t* here() const { return bytes_.data() + at_; }
  // The bytes read so far.
  [[nodiscard]] std::span<const std::uint8_t> consumed() const { return bytes_.first(at_); }

  // The next n bytes; `what` names them in the error.
  std::span<const std::uint8_t> take(std::size_t n, const char* what) {
    if (n > remaining()) [[unlikely]]
      throw_short(n, what);
    const std::span<const std::uint8_t> out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }
  std::uint8_t u8(const char* what) { return take(1, what)[0]; }
  std::uint32_t u32(const char* what) {
    std::uint32_t v = 0;
    std::memcpy(&v, take(sizeof v, what).data(), sizeof v);
    return v;
  }
  std::uint64_t u64(const char* what) {
    std::uint64_t v = 0;
    std::memcpy(&v, take(sizeof v, what).data(), sizeof v);
    return v;
  }
  // LEB128 of at most 10 bytes whose value fits in 64 bits.
  std::uint64_t varint(const char* what) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t byte = u8(what);
      const std::uint64_t bits = byte & 0x7fu;
      if (shift == 63 && bits > 1) throw DecodeError(std::string(what) + ": varint overflows 64 bits");
      v |= bits << shift;
      if ((byte & 0x80u) == 0) return v;
    }
    throw DecodeError(std::string(what) + ": varint longer than 10 bytes");
  }
  void skip(std::size_t n, const char* what) { take(n, what); }

 private:
  // Out of line, so that the checks inline into decoders' loops.
  [[noreturn]] __attribute__((noinline, cold)) void throw_short(std::size_t n, const char* what) const {
    throw DecodeError(std::string(what) + " needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
                      " left");
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

}  // namespace zbfs
