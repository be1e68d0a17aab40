// zstd: the general-purpose baseline, level 1 over the residuals' little-endian bytes.
// The decoder accepts exactly one frame whose declared content size is 8 bytes per id
// and decompresses into a buffer of exactly that size.
#include <zstd.h>

#include <vector>

#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"

namespace zbfs::codec_detail {

void encode_zstd(const PayloadInput& in, ByteBuffer& out) {
  const std::size_t n = in.ids.size();
  std::vector<std::uint64_t> r(n);
  compute_residuals(in.ids.data(), 0, n, in.order, in.base, r.data());
  const std::size_t bound = ZSTD_compressBound(n * 8);
  std::uint8_t* at = out.extend(bound);
  const std::size_t used = ZSTD_compress(at, bound, r.data(), n * 8, 1);
  if (ZSTD_isError(used) != 0) throw Error(ExitCode::kFailure, std::string("zstd: ") + ZSTD_getErrorName(used));
  out.shrink_to(out.size() - (bound - used));
}

void decode_zstd(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  const std::uint64_t expected = out.count * 8;
  const unsigned long long declared = ZSTD_getFrameContentSize(payload.data(), payload.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN || declared != expected) {
    throw DecodeError("zstd frame does not declare " + std::to_string(expected) + " bytes");
  }
  const std::size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
  if (ZSTD_isError(frame) != 0 || frame != payload.size()) throw DecodeError("zstd payload is not exactly one frame");
  std::vector<std::uint64_t> r(out.count);
  const std::size_t got = ZSTD_decompress(r.data(), expected, payload.data(), payload.size());
  if (ZSTD_isError(got) != 0 || got != expected) throw DecodeError("zstd frame does not decompress");
  IdRebuilder rebuild(out.order, out.base);
  rebuild.apply(r.data(), r.size(), out.ids);
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
}

}  // namespace zbfs::codec_detail
