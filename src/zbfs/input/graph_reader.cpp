#include "zbfs/input/graph_reader.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/input/binary_edge_file.hpp"
#include "zbfs/input/edge_text.hpp"
#include "zbfs/input/input_file.hpp"

namespace zbfs {
namespace {

constexpr std::size_t kScanChunk = 1 << 16;

// Lower ranks' values summed.
std::uint64_t sum_before_me(const Communicator& world, std::uint64_t mine) {
  const std::vector<std::uint64_t> all = world.allgather_value(mine);
  return std::accumulate(all.begin(), all.begin() + world.rank(), std::uint64_t{0});
}

// Opens the file on every rank; one failure fails all alike.
std::unique_ptr<InputFile> open_everywhere(const Communicator& world, const std::string& path) {
  std::unique_ptr<InputFile> file;
  std::optional<std::string> error;
  try {
    file = std::make_unique<InputFile>(path);
  } catch (const Error& e) {
    error = e.what();
  }
  world.throw_first_error(error);
  return file;
}

void check_reading_memory(const Communicator& world, const GraphFileSpec& spec, std::uint64_t needed) {
  const bool short_of = spec.memory_per_rank && needed > *spec.memory_per_rank;
  world.throw_first_error(short_of ? std::optional<std::string>("reading '" + spec.path + "' needs about " +
                                                                format_bytes(needed) +
                                                                " per rank, more than this node's available memory "
                                                                "allows (use more ranks or nodes, or --force)")
                                   : std::nullopt);
}

// The first byte of the first line that starts at or after `pos` (a line starts after a
// '\n', or at `begin`).
std::uint64_t line_start_at_or_after(const InputFile& file, std::uint64_t begin, std::uint64_t pos) {
  if (pos <= begin) return begin;
  std::vector<char> buffer(kScanChunk);
  for (std::uint64_t at = pos - 1; at < file.size();) {
    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), file.size() - at));
    file.read_at(at, std::span<char>(buffer.data(), take));
    const void* hit = std::memchr(buffer.data(), '\n', take);
    if (hit != nullptr) return at + static_cast<std::uint64_t>(static_cast<const char*>(hit) - buffer.data()) + 1;
    at += take;
  }
  return file.size();
}

// Parses `text` (whole lines) with the rank's threads, each taking a run of lines.
ParsedLines parse_in_parallel(std::string_view text, const TextSyntax& syntax) {
  const int threads = std::max(1, std::min(omp_get_max_threads(), static_cast<int>(text.size() / (1 << 20)) + 1));
  std::vector<std::size_t> cut(static_cast<std::size_t>(threads) + 1, text.size());
  cut[0] = 0;
  for (int t = 1; t < threads; ++t) {
    std::size_t at = text.size() * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
    at = std::max(at, cut[static_cast<std::size_t>(t) - 1]);
    const std::size_t newline = text.find('\n', at == 0 ? 0 : at - 1);
    cut[static_cast<std::size_t>(t)] = newline == std::string_view::npos ? text.size() : newline + 1;
  }
  std::vector<ParsedLines> parts(static_cast<std::size_t>(threads));
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const auto i = static_cast<std::size_t>(t);
    parts[i] = parse_edge_lines(text.substr(cut[i], cut[i + 1] - cut[i]), syntax);
  }
  // The first part's edges stay where they are (with one thread, nothing is copied); the
  // others are appended in order, each freed once copied.
  ParsedLines all = std::move(parts[0]);
  if (all.error) return all;
  std::uint64_t lines_before = count_lines(text.substr(0, cut[1]));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].error) {
      all.error = parts[i].error;
      all.error->line += lines_before;
      break;
    }
    lines_before += count_lines(text.substr(cut[i], cut[i + 1] - cut[i]));
    all.edges.insert(all.edges.end(), parts[i].edges.begin(), parts[i].edges.end());
    all.weights.insert(all.weights.end(), parts[i].weights.begin(), parts[i].weights.end());
    all.max_id = std::max(all.max_id, parts[i].max_id);
    std::vector<Edge>().swap(parts[i].edges);
    std::vector<float>().swap(parts[i].weights);
  }
  return all;
}

// This rank's lines of [begin, file end), parsed; `lines_before_begin` numbers the lines.
FileEdges read_text_lines(const Communicator& world, const InputFile& file, const GraphFileSpec& spec,
                          std::uint64_t begin, std::uint64_t lines_before_begin, const TextSyntax& syntax) {
  const auto r = static_cast<unsigned __int128>(world.rank());
  const auto p = static_cast<unsigned __int128>(world.size());
  const std::uint64_t span = file.size() - begin;
  const auto cut_at = [&](unsigned __int128 k) { return begin + static_cast<std::uint64_t>(span * k / p); };
  const std::uint64_t start = line_start_at_or_after(file, begin, cut_at(r));
  const std::uint64_t end = line_start_at_or_after(file, begin, cut_at(r + 1));
  const std::uint64_t bytes = end > start ? end - start : 0;
  // The text, then up to about one Edge (16 bytes, and a weight) per 6 bytes of it.
  check_reading_memory(world, spec, bytes + bytes / 6 * (sizeof(Edge) + (spec.weights ? sizeof(float) : 0)));
  std::string text(bytes, '\0');
  file.read_at(start, std::span<char>(text.data(), text.size()));

  ParsedLines parsed = parse_in_parallel(text, syntax);
  const std::uint64_t my_lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
  const std::uint64_t lines_before = lines_before_begin + sum_before_me(world, my_lines);
  std::string().swap(text);
  world.throw_first_error(parsed.error ? std::optional<std::string>(spec.path + ":" +
                                                                    std::to_string(lines_before + parsed.error->line) +
                                                                    ": " + parsed.error->message)
                                       : std::nullopt);
  FileEdges out;
  out.num_input_edges = world.allreduce(std::uint64_t{parsed.edges.size()}, ReduceOp::kSum);
  out.num_vertices = world.allreduce(parsed.max_id, ReduceOp::kMax) + 1;
  out.edges = std::move(parsed.edges);
  out.weights = std::move(parsed.weights);
  return out;
}

FileEdges read_edge_list(const Communicator& world, const InputFile& file, const GraphFileSpec& spec) {
  TextSyntax syntax{GraphFormat::kEdgeList};
  syntax.weights = spec.weights;
  return read_text_lines(world, file, spec, 0, 0, syntax);
}

FileEdges read_matrix_market(const Communicator& world, const InputFile& file, const GraphFileSpec& spec) {
  // Every rank reads the header (banner, comments, size line): a few bytes as a rule.
  std::string prefix;
  MatrixMarketHeaderParse header;
  for (std::uint64_t want = kScanChunk;; want *= 4) {
    const std::uint64_t take = std::min(want, file.size());
    prefix.resize(take);
    file.read_at(0, std::span<char>(prefix.data(), prefix.size()));
    header = parse_matrix_market_header(prefix, take == file.size());
    if (!header.needs_more) break;
  }
  if (header.error)
    throw_usage_error(spec.path + ":" + std::to_string(header.error->line) + ": " + header.error->message);
  const MatrixMarketHeader& h = *header.header;
  if (spec.weights && !h.has_value) {
    throw_usage_error(spec.path +
                      ": a pattern Matrix Market file has no values to weigh its edges with (use "
                      "--weights uniform)");
  }
  TextSyntax syntax{GraphFormat::kMatrixMarket, h.has_value, h.integer, h.size, spec.weights};
  FileEdges out = read_text_lines(world, file, spec, h.data_offset, h.lines_before_data, syntax);
  if (out.num_input_edges != h.entries) {
    throw_usage_error(spec.path + ": the size line declares " + std::to_string(h.entries) + " entries, the file has " +
                      std::to_string(out.num_input_edges));
  }
  out.num_vertices = h.size;
  out.id_base = 1;
  return out;
}

FileEdges read_binary(const Communicator& world, const InputFile& file, const GraphFileSpec& spec) {
  if (spec.weights) throw_usage_error(spec.path + ": binary graph files carry no weights (use --weights uniform)");
  std::array<unsigned char, kBinaryEdgeHeaderBytes> head{};
  const auto head_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(head.size(), file.size()));
  file.read_at(0, std::span<unsigned char>(head.data(), head_bytes));
  BinaryEdgeHeader h;
  if (auto error = decode_binary_edge_header(std::span<const unsigned char>(head.data(), head_bytes), file.size(), h))
    throw_usage_error(spec.path + ": " + *error);
  const EdgeSliceRange range = edge_slice_of(h.num_edges, world.rank(), world.size());
  const std::uint64_t record = 2ULL * h.id_bytes;
  check_reading_memory(world, spec, range.count * (record + sizeof(Edge)));
  FileEdges out;
  out.edges.resize(range.count);
  // In pieces, so that the raw bytes never take more than a few MiB next to the edges.
  constexpr std::uint64_t kPiece = 1 << 20;
  std::vector<unsigned char> raw;
  std::optional<std::string> error;
  for (std::uint64_t done = 0; done < range.count && !error; done += kPiece) {
    const std::uint64_t take = std::min(kPiece, range.count - done);
    raw.resize(take * record);
    file.read_at(kBinaryEdgeHeaderBytes + (range.first + done) * record, std::span<unsigned char>(raw));
    if (auto bad = decode_binary_edges(raw, h, range.first + done, std::span<Edge>(out.edges.data() + done, take)))
      error = spec.path + ": " + *bad;
  }
  world.throw_first_error(error);
  out.num_vertices = h.num_vertices;
  out.num_input_edges = h.num_edges;
  out.id_base = h.id_base;
  return out;
}

}  // namespace

FileEdges read_file_edges(const Communicator& world, const GraphFileSpec& spec) {
  const std::unique_ptr<InputFile> file = open_everywhere(world, spec.path);
  GraphFormat format = GraphFormat::kEdgeList;
  if (spec.format) {
    format = *spec.format;
  } else {
    std::string first(static_cast<std::size_t>(std::min<std::uint64_t>(16, file->size())), '\0');
    file->read_at(0, std::span<char>(first.data(), first.size()));
    format = format_of_content(first);
  }
  FileEdges out;
  switch (format) {
    case GraphFormat::kEdgeList: out = read_edge_list(world, *file, spec); break;
    case GraphFormat::kMatrixMarket: out = read_matrix_market(world, *file, spec); break;
    case GraphFormat::kBinary: out = read_binary(world, *file, spec); break;
  }
  if (out.num_input_edges == 0) throw_usage_error(spec.path + ": the file holds no edges");
  return out;
}

LoadedGraph read_graph_file(const Communicator& world, const GraphFileSpec& spec) {
  FileEdges file = read_file_edges(world, spec);
  LoadedGraph graph;
  graph.num_input_edges = file.num_input_edges;
  if (spec.relabel) {
    graph.ids = compact_vertex_ids(world, file.edges, graph.num_vertices, file.id_base);
  } else {
    graph.num_vertices = file.num_vertices;
    graph.ids = VertexIds::with_base(file.id_base);
  }
  graph.slice = pack_edges(file.edges, vertex_bits_for(graph.num_vertices));
  graph.weights = std::move(file.weights);
  return graph;
}

}  // namespace zbfs
