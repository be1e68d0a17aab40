// Graph file parsing without MPI: text edge lists and Matrix Market files against small
// hand-written inputs (comments, blank lines, CRLF, weights, symmetric headers), every
// malformed case with its line and message, and the binary edge list's header and
// records (round trip, wrong magic, truncation, corruption, ids out of range).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/input/binary_edge_file.hpp"
#include "zbfs/input/edge_text.hpp"
#include "zbfs/input/graph_format.hpp"
#include "zbfs/input/input_file.hpp"

namespace zbfs {
namespace {

const TextSyntax kEdgeList{GraphFormat::kEdgeList};

TextSyntax mtx(std::uint64_t size, bool value = false, bool integer = false) {
  return TextSyntax{GraphFormat::kMatrixMarket, value, integer, size};
}

void expect_error(const ParsedLines& parsed, std::uint64_t line, const std::string& mention) {
  ASSERT_TRUE(parsed.error.has_value()) << "expected an error mentioning " << mention;
  EXPECT_EQ(parsed.error->line, line) << parsed.error->message;
  EXPECT_NE(parsed.error->message.find(mention), std::string::npos) << parsed.error->message;
}

TEST(EdgeListText, SkipsCommentsBlankLinesAndWeightsAndAcceptsCrlf) {
  const std::string text = "# SNAP header\n% another comment\n\n  \t\n0 1\r\n1\t2 0.75\n  2   0  17 extra\r\n5 3";
  const ParsedLines parsed = parse_edge_lines(text, kEdgeList);
  ASSERT_FALSE(parsed.error) << parsed.error->message;
  const std::vector<Edge> expected{{0, 1}, {1, 2}, {2, 0}, {5, 3}};
  EXPECT_EQ(parsed.edges, expected);
  EXPECT_EQ(parsed.max_id, 5U);
  EXPECT_EQ(count_lines(text), 8U);
  EXPECT_EQ(count_lines("a\nb\n"), 2U);
  EXPECT_EQ(count_lines(""), 0U);
}

TEST(EdgeListText, ReportsTheFirstMalformedLine) {
  expect_error(parse_edge_lines("0 1\n\n2 x3\n4 y\n", kEdgeList), 3, "'x3' is not a vertex id");
  expect_error(parse_edge_lines("0 1\n7\n", kEdgeList), 2, "expected two vertex ids");
  expect_error(parse_edge_lines("-1 2\n", kEdgeList), 1, "'-1' is not a vertex id");
  expect_error(parse_edge_lines("1 2.5\n", kEdgeList), 1, "'2.5' is not a vertex id");
  // Bytes of a binary file read as text are shown escaped, never raw.
  const ParsedLines binary = parse_edge_lines("1 2\n\x01\xff\x1b[2J 3\n", kEdgeList);
  expect_error(binary, 2, "'\\x01\\xff\\x1b[2J' is not a vertex id");
  expect_error(parse_edge_lines("# ok\n4611686018427387904 1\n", kEdgeList), 2, "too large");
  // Ids that wrap around 2^64 while read (2^64 is 0 modulo 2^64) are too large too.
  expect_error(parse_edge_lines("0 18446744073709551616\n", kEdgeList), 1, "too large");
  expect_error(parse_edge_lines("0 36893488147419103233\n", kEdgeList), 1, "too large");
  expect_error(parse_edge_lines("0 000000000000000000000000000018446744073709551616\n", kEdgeList), 1, "too large");
  // The largest id accepted: 2^62 - 1.
  EXPECT_FALSE(parse_edge_lines("4611686018427387903 0\n", kEdgeList).error);
  // Edges before the error are kept (the caller discards them), none after.
  EXPECT_EQ(parse_edge_lines("0 1\nbad line\n2 3\n", kEdgeList).edges.size(), 1U);
}

TEST(InputFile, SaysWhatIsWrongWithAPath) {
  const auto message_of = [](const std::string& path) {
    try {
      InputFile file(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string needs = ", and the parallel reader needs a regular file (save the stream to a file first)";
  EXPECT_EQ(message_of("/"), "cannot read '/': it is a folder" + needs);
  EXPECT_EQ(message_of("/nonexistent/zbfs-graph"), "cannot open '/nonexistent/zbfs-graph': No such file or directory");
  // A FIFO with no writer: refused at once (opening it would wait for a writer forever).
  const std::string fifo =
      (std::filesystem::temp_directory_path() / ("zbfs_input_fifo_" + std::to_string(::getpid()))).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message_of(fifo), "cannot read '" + fifo + "': it is a FIFO" + needs);
  std::filesystem::remove(fifo);
}

TEST(MatrixMarketText, EntriesAreOneBasedAndChecked) {
  const ParsedLines pattern = parse_edge_lines("1 2\n%c\n3 3\r\n", mtx(3));
  ASSERT_FALSE(pattern.error);
  EXPECT_EQ(pattern.edges, (std::vector<Edge>{{0, 1}, {2, 2}}));
  const ParsedLines real = parse_edge_lines("2 1 -0.5e3\n3 2 7\n", mtx(3, true));
  ASSERT_FALSE(real.error);
  EXPECT_EQ(real.edges, (std::vector<Edge>{{1, 0}, {2, 1}}));
  expect_error(parse_edge_lines("1 2\n0 1\n", mtx(3)), 2, "id 0 is out of range for the declared size (1..3)");
  expect_error(parse_edge_lines("1 4\n", mtx(3)), 1, "id 4 is out of range");
  expect_error(parse_edge_lines("1 2\n", mtx(3, true)), 1, "expected 3 fields (row, column, value), found 2");
  expect_error(parse_edge_lines("1 2 1\n", mtx(3)), 1, "expected 2 fields");
  expect_error(parse_edge_lines("1 2 abc\n", mtx(3, true)), 1, "'abc' is not a number");
  expect_error(parse_edge_lines("1 2 1.5\n", mtx(3, true, true)), 1, "'1.5' is not an integer");
}

// Lines that end in CR alone are one line to a reader that splits at LF: refused at the
// first (a comment line too, which would hide the edges after it), never read short.
TEST(EdgeListText, RefusesCarriageReturnsInsideALine) {
  expect_error(parse_edge_lines("0 1\r1 2\r2 3\r", kEdgeList), 1, "a carriage return inside the line");
  expect_error(parse_edge_lines("0 1\n# note\r5 6\n", kEdgeList), 2, "a carriage return inside the line");
  expect_error(parse_edge_lines("1 2\n2 3\r\r4 5\n", kEdgeList), 2, "carriage return");
  const ParsedLines crlf = parse_edge_lines("0 1\r\n1 2\r\r\n", kEdgeList);
  ASSERT_FALSE(crlf.error) << crlf.error->message;
  EXPECT_EQ(crlf.edges.size(), 2U);
  const auto header =
      parse_matrix_market_header("%%MatrixMarket matrix coordinate pattern general\r2 2 1\r1 2\r", true);
  ASSERT_TRUE(header.error);
  EXPECT_EQ(header.error->line, 1U);
}

TEST(MatrixMarketHeader, ReadsBannerCommentsAndSizeLine) {
  const std::string file =
      "%%MatrixMarket matrix coordinate real symmetric\r\n% comment\n\n%another\n 4 4 3\n2 1 1\n3 1 1\n4 2 1\n";
  const MatrixMarketHeaderParse parsed = parse_matrix_market_header(file, true);
  ASSERT_TRUE(parsed.header) << parsed.error->message;
  const MatrixMarketHeader& h = *parsed.header;
  EXPECT_TRUE(h.has_value);
  EXPECT_FALSE(h.integer);
  EXPECT_TRUE(h.symmetric);
  EXPECT_EQ(h.size, 4U);
  EXPECT_EQ(h.entries, 3U);
  EXPECT_EQ(h.lines_before_data, 5U);
  EXPECT_EQ(file.substr(h.data_offset, 6), "2 1 1\n");
  const auto pattern = parse_matrix_market_header("%%matrixmarket MATRIX Coordinate Pattern General\n2 2 1\n", true);
  ASSERT_TRUE(pattern.header);
  EXPECT_FALSE(pattern.header->has_value);
  EXPECT_FALSE(pattern.header->symmetric);
}

TEST(MatrixMarketHeader, AsksForMoreWhenTheSizeLineIsNotInThePrefix) {
  const std::string file = "%%MatrixMarket matrix coordinate pattern general\n% long comment\n3 3 2\n";
  EXPECT_TRUE(parse_matrix_market_header(file.substr(0, 60), false).needs_more);
  EXPECT_TRUE(parse_matrix_market_header(file.substr(0, file.size() - 1), false).needs_more);
  EXPECT_TRUE(parse_matrix_market_header(file, false).header);
}

TEST(MatrixMarketHeader, RejectsWhatIsNotASquareCoordinateGraph) {
  const auto error_of = [](const std::string& file) {
    const auto parsed = parse_matrix_market_header(file, true);
    return parsed.error ? std::to_string(parsed.error->line) + ": " + parsed.error->message : std::string("none");
  };
  EXPECT_NE(error_of("1 2\n").find("1: not a Matrix Market file"), std::string::npos);
  EXPECT_NE(error_of("%%MatrixMarket matrix array real general\n2 2\n").find("coordinate"), std::string::npos);
  EXPECT_NE(error_of("%%MatrixMarket matrix coordinate complex general\n").find("'complex' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of("%%MatrixMarket matrix coordinate real weird\n").find("unknown symmetry"), std::string::npos);
  EXPECT_NE(error_of("%%MatrixMarket matrix coordinate real general\n%c\n3 4 1\n").find("3: the matrix is 3 x 4"),
            std::string::npos);
  EXPECT_NE(error_of("%%MatrixMarket matrix coordinate real general\n3 3\n").find("2: the size line needs 3"),
            std::string::npos);
  EXPECT_NE(error_of("%%MatrixMarket matrix coordinate real general\n% only comments\n").find("ends before its size"),
            std::string::npos);
  // The size line's numbers are named as what they are, not as vertex ids.
  const std::string banner = "%%MatrixMarket matrix coordinate pattern general\n";
  EXPECT_EQ(error_of(banner + "3 3 x\n"), "2: size line: 'x' is not an entry count (counts are non-negative integers)");
  EXPECT_EQ(error_of(banner + "-3 3 1\n"), "2: size line: '-3' is not a row count (counts are non-negative integers)");
  EXPECT_EQ(error_of(banner + "3 3.5 1\n"),
            "2: size line: '3.5' is not a column count (counts are non-negative integers)");
  EXPECT_EQ(error_of(banner + "3 3 99999999999999999999\n"),
            "2: size line: entry count '99999999999999999999' is too large (the limit is 2^62 - 1)");
}

TEST(GraphFormat, NamesExtensionsAndContent) {
  EXPECT_EQ(parse_graph_format("mtx"), GraphFormat::kMatrixMarket);
  EXPECT_FALSE(parse_graph_format("csv"));
  EXPECT_EQ(format_of_name("a/b.mtx", GraphFormat::kBinary), GraphFormat::kMatrixMarket);
  EXPECT_EQ(format_of_name("g.zel", GraphFormat::kEdgeList), GraphFormat::kBinary);
  EXPECT_EQ(format_of_name("g.txt", GraphFormat::kBinary), GraphFormat::kEdgeList);
  EXPECT_EQ(format_of_name("g.out", GraphFormat::kBinary), GraphFormat::kBinary);
  EXPECT_EQ(format_of_content("ZBFSEDGE\x01"), GraphFormat::kBinary);
  EXPECT_EQ(format_of_content("%%MatrixMarket matrix"), GraphFormat::kMatrixMarket);
  EXPECT_EQ(format_of_content("%% not quite\n1 2"), GraphFormat::kEdgeList);
  EXPECT_EQ(format_of_content("1 2\n"), GraphFormat::kEdgeList);
}

std::vector<unsigned char> binary_file(const BinaryEdgeHeader& h, const std::vector<Edge>& edges) {
  const auto head = encode_binary_edge_header(h);
  std::vector<unsigned char> file(head.begin(), head.end());
  file.resize(head.size() + edges.size() * 2 * h.id_bytes);
  encode_binary_edges(edges, h.id_bytes, std::span<unsigned char>(file).subspan(head.size()));
  return file;
}

TEST(BinaryEdgeFile, RoundTripsBothIdWidths) {
  for (const std::uint64_t n : {std::uint64_t{10}, (std::uint64_t{1} << 32) + 5}) {
    const std::uint64_t big = n - 1;
    const std::vector<Edge> edges{{0, 1}, {big, 3}, {7, big}, {0, 0}};
    const BinaryEdgeHeader h{binary_id_bytes(n), n, edges.size(), 1};
    EXPECT_EQ(h.id_bytes, n > (std::uint64_t{1} << 32) ? 8U : 4U);
    const std::vector<unsigned char> file = binary_file(h, edges);
    EXPECT_EQ(file.size(), kBinaryEdgeHeaderBytes + edges.size() * 2 * h.id_bytes);
    BinaryEdgeHeader read;
    ASSERT_FALSE(decode_binary_edge_header(file, file.size(), read));
    EXPECT_EQ(read, h);
    std::vector<Edge> back(edges.size());
    ASSERT_FALSE(
        decode_binary_edges(std::span<const unsigned char>(file).subspan(kBinaryEdgeHeaderBytes), read, 0, back));
    EXPECT_EQ(back, edges);
  }
}

TEST(BinaryEdgeFile, RejectsForeignTruncatedAndCorruptedFiles) {
  const std::vector<Edge> edges{{0, 1}, {2, 3}};
  const BinaryEdgeHeader h{4, 4, edges.size(), 0};
  const std::vector<unsigned char> good = binary_file(h, edges);
  const auto error_of = [](std::vector<unsigned char> file, std::uint64_t size) {
    BinaryEdgeHeader out;
    const auto error = decode_binary_edge_header(file, size, out);
    return error ? *error : std::string("none");
  };
  EXPECT_EQ(error_of(good, good.size()), "none");
  std::vector<unsigned char> magic = good;
  magic[0] = 'X';
  EXPECT_NE(error_of(magic, magic.size()).find("wrong magic"), std::string::npos);
  EXPECT_NE(error_of(good, good.size() - 1).find("truncated: the header declares 2 edges (64 bytes), the file has 63"),
            std::string::npos);
  EXPECT_NE(error_of(good, good.size() + 8).find("trailing bytes"), std::string::npos);
  EXPECT_NE(error_of({good.begin(), good.begin() + 20}, 20).find("truncated: 20 bytes"), std::string::npos);
  std::vector<unsigned char> corrupt = good;
  corrupt[17] ^= 1;  // the vertex count
  EXPECT_NE(error_of(corrupt, corrupt.size()).find("checksum"), std::string::npos);
  std::vector<unsigned char> version = good;
  version[8] = 9;
  EXPECT_NE(error_of(version, version.size()).find("version 9"), std::string::npos);
  // A count so large that its size overflows is still just a mismatch.
  EXPECT_NE(error_of(binary_file(BinaryEdgeHeader{8, 4, std::uint64_t{1} << 62, 0}, {}), 48).find("more than 2^64"),
            std::string::npos);
}

TEST(BinaryEdgeFile, RejectsIdsOutOfRange) {
  const BinaryEdgeHeader h{4, 3, 2, 0};
  const std::vector<unsigned char> file = binary_file(h, {{0, 2}, {1, 3}});
  std::vector<Edge> out(2);
  const auto error =
      decode_binary_edges(std::span<const unsigned char>(file).subspan(kBinaryEdgeHeaderBytes), h, 10, out);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("edge 11 (1, 3) has an id out of range for the declared 3 vertices"), std::string::npos)
      << *error;
}

}  // namespace
}  // namespace zbfs
