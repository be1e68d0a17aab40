// How vertices are split among ranks, as pure arithmetic (no MPI). The N vertices are cut
// into P pieces of `block` vertices each, block a multiple of 64 so that every piece
// starts on a bitmap word and per-piece bitmaps concatenate into group bitmaps without
// shifting. A PieceGroup is an arithmetic progression of pieces (the pieces a processor
// column or row owns, one piece, or all of them) with a dense local numbering.
#pragma once

#include <cstdint>

#include "zbfs/core/fast_divider.hpp"

namespace zbfs {

class VertexBlocks {
 public:
  VertexBlocks() = default;
  VertexBlocks(std::uint64_t num_vertices, int num_pieces)
      : num_vertices_(num_vertices),
        num_pieces_(num_pieces),
        block_((num_vertices + static_cast<std::uint64_t>(num_pieces) - 1) / static_cast<std::uint64_t>(num_pieces)) {
    block_ = (block_ + 63) / 64 * 64;
    if (block_ == 0) block_ = 64;
    by_block_ = FastDivider(block_);
  }

  [[nodiscard]] std::uint64_t num_vertices() const { return num_vertices_; }
  [[nodiscard]] int num_pieces() const { return num_pieces_; }
  // Vertices per piece (the last pieces may hold fewer real vertices, or none).
  [[nodiscard]] std::uint64_t block() const { return block_; }
  [[nodiscard]] std::uint64_t words_per_block() const { return block_ / 64; }
  [[nodiscard]] int piece_of(std::uint64_t v) const { return static_cast<int>(by_block_.divide(v)); }
  [[nodiscard]] const FastDivider& by_block() const { return by_block_; }
  [[nodiscard]] std::uint64_t first_vertex(int piece) const { return static_cast<std::uint64_t>(piece) * block_; }
  // Real vertices in `piece` (pieces past the end of the vertex range are empty).
  [[nodiscard]] std::uint64_t piece_vertices(int piece) const {
    const std::uint64_t first = first_vertex(piece);
    if (first >= num_vertices_) return 0;
    return num_vertices_ - first < block_ ? num_vertices_ - first : block_;
  }

 private:
  std::uint64_t num_vertices_ = 0;
  int num_pieces_ = 1;
  std::uint64_t block_ = 64;
  FastDivider by_block_{64};
};

// Pieces first, first + stride, ..., first + (count - 1) * stride. Member i of the group
// holds local indices [i * block, (i + 1) * block).
class PieceGroup {
 public:
  PieceGroup() = default;
  PieceGroup(const VertexBlocks& blocks, int first_piece, int stride, int count)
      : block_(blocks.block()), by_block_(blocks.by_block()), first_(first_piece), stride_(stride), count_(count) {}

  [[nodiscard]] int count() const { return count_; }
  [[nodiscard]] std::uint64_t local_size() const { return static_cast<std::uint64_t>(count_) * block_; }
  [[nodiscard]] std::uint64_t words() const { return local_size() / 64; }
  [[nodiscard]] int piece_of_member(int member) const { return first_ + member * stride_; }
  [[nodiscard]] bool contains(std::uint64_t v) const {
    const auto piece = static_cast<std::int64_t>(by_block_.divide(v));
    const std::int64_t offset = piece - first_;
    return offset >= 0 && offset % stride_ == 0 && offset / stride_ < count_;
  }
  // Which member holds global vertex v (v must belong to the group).
  [[nodiscard]] int member_of(std::uint64_t v) const {
    return static_cast<int>((static_cast<std::int64_t>(by_block_.divide(v)) - first_) / stride_);
  }
  [[nodiscard]] int member_of_local(std::uint64_t local) const { return static_cast<int>(by_block_.divide(local)); }
  // Contiguous groups (every column group, and all of 1D) map by an offset; strided ones
  // (2D row groups) need a division, so the common case skips it.
  [[nodiscard]] std::uint64_t to_local(std::uint64_t v) const {
    if (stride_ == 1) return v - static_cast<std::uint64_t>(first_) * block_;
    const std::uint64_t piece = by_block_.divide(v);
    const auto member = static_cast<std::uint64_t>((static_cast<std::int64_t>(piece) - first_) / stride_);
    return member * block_ + (v - piece * block_);
  }
  [[nodiscard]] std::uint64_t to_global(std::uint64_t local) const {
    if (stride_ == 1) return local + static_cast<std::uint64_t>(first_) * block_;
    const std::uint64_t member = by_block_.divide(local);
    return (static_cast<std::uint64_t>(first_) + member * static_cast<std::uint64_t>(stride_)) * block_ +
           (local - member * block_);
  }

 private:
  std::uint64_t block_ = 64;
  FastDivider by_block_{64};
  int first_ = 0;
  int stride_ = 1;
  int count_ = 1;
};

}  // namespace zbfs
