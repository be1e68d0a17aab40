#include "zbfs/input/binary_edge_file.hpp"

#include <bit>
#include <cstring>

#include "zbfs/generator/counter_rng.hpp"

namespace zbfs {
namespace {

constexpr std::array<char, 8> kMagic = {'Z', 'B', 'F', 'S', 'E', 'D', 'G', 'E'};

template <class T>
T load_le(const unsigned char* p) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
  return value;
}

template <class T>
void store_le(unsigned char* p, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(value >> (8 * i));
}

std::uint64_t header_checksum(const BinaryEdgeHeader& h) {
  std::uint64_t sum = mix64(kBinaryEdgeVersion);
  for (const std::uint64_t word : {std::uint64_t{h.id_bytes}, h.num_vertices, h.num_edges, h.id_base})
    sum = mix64(sum ^ word);
  return sum;
}

}  // namespace

std::uint32_t binary_id_bytes(std::uint64_t num_vertices) { return num_vertices <= (std::uint64_t{1} << 32) ? 4 : 8; }

std::array<unsigned char, kBinaryEdgeHeaderBytes> encode_binary_edge_header(const BinaryEdgeHeader& h) {
  std::array<unsigned char, kBinaryEdgeHeaderBytes> out{};
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  store_le<std::uint32_t>(out.data() + 8, kBinaryEdgeVersion);
  store_le<std::uint32_t>(out.data() + 12, h.id_bytes);
  store_le<std::uint64_t>(out.data() + 16, h.num_vertices);
  store_le<std::uint64_t>(out.data() + 24, h.num_edges);
  store_le<std::uint64_t>(out.data() + 32, h.id_base);
  store_le<std::uint64_t>(out.data() + 40, header_checksum(h));
  return out;
}

std::optional<std::string> decode_binary_edge_header(std::span<const unsigned char> bytes, std::uint64_t file_size,
                                                     BinaryEdgeHeader& out) {
  if (bytes.size() >= kMagic.size() && std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    return "wrong magic: not a zbfs binary edge list (convert text files with 'zbfs convert')";
  if (bytes.size() < kBinaryEdgeHeaderBytes || file_size < kBinaryEdgeHeaderBytes) {
    return "truncated: " + std::to_string(file_size) + " bytes, shorter than the " +
           std::to_string(kBinaryEdgeHeaderBytes) + "-byte header of a zbfs binary edge list";
  }
  const auto version = load_le<std::uint32_t>(bytes.data() + 8);
  if (version != kBinaryEdgeVersion) {
    return "format version " + std::to_string(version) + " is not supported (this zbfs reads version " +
           std::to_string(kBinaryEdgeVersion) + ")";
  }
  BinaryEdgeHeader h;
  h.id_bytes = load_le<std::uint32_t>(bytes.data() + 12);
  h.num_vertices = load_le<std::uint64_t>(bytes.data() + 16);
  h.num_edges = load_le<std::uint64_t>(bytes.data() + 24);
  h.id_base = load_le<std::uint64_t>(bytes.data() + 32);
  if (load_le<std::uint64_t>(bytes.data() + 40) != header_checksum(h)) return "corrupted header (checksum mismatch)";
  if (h.id_bytes != 4 && h.id_bytes != 8) return "id width " + std::to_string(h.id_bytes) + " is not 4 or 8";
  if (h.id_base > 1) return "id base " + std::to_string(h.id_base) + " is not 0 or 1";
  if (h.num_vertices > (std::uint64_t{1} << 62))
    return "vertex count " + std::to_string(h.num_vertices) + " is too large";
  if (h.id_bytes == 4 && h.num_vertices > (std::uint64_t{1} << 32))
    return "4-byte ids cannot name " + std::to_string(h.num_vertices) + " vertices";
  const unsigned __int128 expected =
      static_cast<unsigned __int128>(h.num_edges) * (2ULL * h.id_bytes) + kBinaryEdgeHeaderBytes;
  if (expected != file_size) {
    const std::string expected_text = expected >= (static_cast<unsigned __int128>(1) << 64)
                                          ? std::string("more than 2^64")
                                          : std::to_string(static_cast<std::uint64_t>(expected));
    return std::string(expected > file_size ? "truncated" : "trailing bytes") + ": the header declares " +
           std::to_string(h.num_edges) + " edges (" + expected_text + " bytes), the file has " +
           std::to_string(file_size) + " bytes";
  }
  out = h;
  return std::nullopt;
}

std::optional<std::string> decode_binary_edges(std::span<const unsigned char> bytes, const BinaryEdgeHeader& header,
                                               std::uint64_t first_edge, std::span<Edge> out) {
  const std::size_t width = header.id_bytes;
  if (bytes.size() != out.size() * 2 * width) return std::string("internal: edge buffer size mismatch");
  const std::uint64_t n = header.num_vertices;
  const unsigned char* p = bytes.data();
  std::uint64_t bad = 0;  // 1 + index of the first bad edge
  if (width == 4) {
    for (std::size_t i = 0; i < out.size(); ++i, p += 8) {
      out[i] = {load_le<std::uint32_t>(p), load_le<std::uint32_t>(p + 4)};
      if ((out[i].u >= n || out[i].v >= n) && bad == 0) bad = i + 1;
    }
  } else {
    for (std::size_t i = 0; i < out.size(); ++i, p += 16) {
      out[i] = {load_le<std::uint64_t>(p), load_le<std::uint64_t>(p + 8)};
      if ((out[i].u >= n || out[i].v >= n) && bad == 0) bad = i + 1;
    }
  }
  if (bad == 0) return std::nullopt;
  const Edge e = out[bad - 1];
  return "edge " + std::to_string(first_edge + bad - 1) + " (" + std::to_string(e.u) + ", " + std::to_string(e.v) +
         ") has an id out of range for the declared " + std::to_string(n) + " vertices";
}

void encode_binary_edges(std::span<const Edge> edges, std::uint32_t id_bytes, std::span<unsigned char> out) {
  unsigned char* p = out.data();
  if (id_bytes == 4) {
    for (const Edge& e : edges) {
      store_le<std::uint32_t>(p, static_cast<std::uint32_t>(e.u));
      store_le<std::uint32_t>(p + 4, static_cast<std::uint32_t>(e.v));
      p += 8;
    }
  } else {
    for (const Edge& e : edges) {
      store_le<std::uint64_t>(p, e.u);
      store_le<std::uint64_t>(p + 8, e.v);
      p += 16;
    }
  }
}

}  // namespace zbfs
