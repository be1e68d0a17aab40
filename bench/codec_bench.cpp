// Codec benchmark (Google Benchmark): every codec on synthetic sets (uniform and
// geometric gaps, clustered, Zipf-distributed gaps, and a sequence of parents) and, with --dump DIR, on the
// messages a run recorded with `zbfs run --dump-frontiers DIR`, grouped by phase and
// kind (each message encoded as its own frame, as the exchanges do). Counters per row:
// ratio (wire / raw 64-bit bytes), bits per id, the data's empirical entropy in bits per
// id (zero-order, of the gaps for sets and of the values for sequences), the mean
// message length and speed in millions of ids per second. One thread.
//
//   build/bin/zbfs_codec_bench [--dump DIR] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "zbfs/codec/frame.hpp"
#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/output/message_recorder.hpp"

namespace {

using namespace zbfs;

// A set of messages measured together: each one a frame.
struct Dataset {
  std::string name;
  std::vector<std::vector<std::uint64_t>> messages;
  IdOrder order = IdOrder::kSortedSet;
  double entropy_bits = 0;
  std::uint64_t ids = 0;
};

double empirical_entropy(const Dataset& d) {
  std::unordered_map<std::uint64_t, std::uint64_t> histogram;
  std::uint64_t n = 0;
  for (const auto& m : d.messages) {
    for (std::size_t k = 0; k < m.size(); ++k) {
      const std::uint64_t symbol = d.order == IdOrder::kSortedSet ? (k == 0 ? 0 : m[k] - m[k - 1]) : m[k];
      ++histogram[symbol];
      ++n;
    }
  }
  double h = 0;
  for (const auto& [symbol, count] : histogram) {
    const double p = static_cast<double>(count) / static_cast<double>(n);
    h -= p * std::log2(p);
  }
  return h;
}

void finish(Dataset& d) {
  for (const auto& m : d.messages) d.ids += m.size();
  d.entropy_bits = empirical_entropy(d);
}

std::vector<Dataset> synthetic_sets() {
  std::mt19937_64 rng(42);
  constexpr std::size_t kIds = 1 << 16;
  std::vector<Dataset> sets;
  {
    Dataset d{"uniform 1/16", {}, IdOrder::kSortedSet};
    std::vector<std::uint64_t> ids;
    std::uint64_t x = 0;
    while (ids.size() < kIds) {
      x += 1 + rng() % 31;  // mean gap 16
      ids.push_back(x);
    }
    d.messages.push_back(ids);
    sets.push_back(d);
  }
  {
    // A random set of density 1/4, as a frontier is: geometric gaps of mean 4 (what the
    // codec cost model calibrates on).
    Dataset d{"random 1/4", {}, IdOrder::kSortedSet};
    std::geometric_distribution<std::uint64_t> failures(0.25);
    std::vector<std::uint64_t> ids;
    std::uint64_t x = 0;
    while (ids.size() < kIds) {
      x += 1 + failures(rng);
      ids.push_back(x);
    }
    d.messages.push_back(ids);
    sets.push_back(d);
  }
  {
    Dataset d{"clustered runs", {}, IdOrder::kSortedSet};
    std::vector<std::uint64_t> ids;
    std::uint64_t x = 0;
    while (ids.size() < kIds) {
      x += 1000 + rng() % 100000;
      const std::uint64_t run = 1 + rng() % 100;
      for (std::uint64_t k = 0; k < run && ids.size() < kIds; ++k) ids.push_back(x++);
    }
    d.messages.push_back(ids);
    sets.push_back(d);
  }
  {
    // Gaps from a Zipf law (P(g) ~ 1/g^1.5 on 1..2^20), by inverse transform sampling.
    Dataset d{"zipf gaps", {}, IdOrder::kSortedSet};
    std::vector<double> cdf;
    double total = 0;
    for (std::uint64_t g = 1; g <= (1u << 20); ++g) {
      total += 1.0 / std::pow(static_cast<double>(g), 1.5);
      cdf.push_back(total);
    }
    std::uniform_real_distribution<double> u(0, total);
    std::vector<std::uint64_t> ids;
    std::uint64_t x = 0;
    while (ids.size() < kIds) {
      x += static_cast<std::uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()) + 1;
      ids.push_back(x);
    }
    d.messages.push_back(ids);
    sets.push_back(d);
  }
  {
    Dataset d{"parents (sequence)", {}, IdOrder::kSequence};
    std::vector<std::uint64_t> ids(kIds);
    for (auto& v : ids) v = (std::uint64_t{3} << 30) + rng() % (1u << 19);
    d.messages.push_back(ids);
    sets.push_back(d);
  }
  for (auto& d : sets) finish(d);
  return sets;
}

// The dump's messages by (phase, kind); bitmaps become their sets of positions.
std::vector<Dataset> recorded_sets(const std::string& directory) {
  std::map<std::string, Dataset> groups;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() != ".zbfsdump") continue;
    ++files;
    for (RecordedMessage& m : read_recorded_messages(entry.path().string())) {
      const char* kind = m.kind == RecordedKind::kSet        ? "set"
                         : m.kind == RecordedKind::kSequence ? "sequence"
                                                             : "bitmap";
      const std::string name = "recorded " + std::string(to_string(m.phase)) + " " + kind;
      Dataset& d = groups[name];
      d.name = name;
      std::vector<std::uint64_t> ids;
      if (m.kind == RecordedKind::kBitmap) {
        append_set_bits(m.values, 0, ids);
      } else {
        ids = std::move(m.values);
      }
      if (m.kind == RecordedKind::kSet) {
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      }
      const bool increasing = std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end();
      if (!increasing) d.order = IdOrder::kSequence;
      if (!ids.empty()) d.messages.push_back(std::move(ids));
    }
  }
  if (files == 0) {
    throw std::runtime_error(directory + ": no *.zbfsdump files (write them with zbfs run --dump-frontiers DIR)");
  }
  std::vector<Dataset> sets;
  for (auto& [name, d] : groups) {
    if (d.messages.empty()) continue;
    finish(d);
    sets.push_back(std::move(d));
  }
  return sets;
}

void set_counters(benchmark::State& state, const Dataset& d, std::size_t wire_bytes) {
  const auto ids = static_cast<double>(d.ids);
  state.counters["ratio"] = static_cast<double>(wire_bytes) / (ids * 8);
  state.counters["bits/id"] = static_cast<double>(wire_bytes) * 8 / ids;
  state.counters["entropy"] = d.entropy_bits;
  state.counters["ids/msg"] = ids / static_cast<double>(d.messages.size());
  state.counters["Mids/s"] = benchmark::Counter(ids / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}

void encode(benchmark::State& state, const Dataset* d, CodecId codec) {
  ByteBuffer out;
  for (auto _ : state) {
    out.clear();
    for (const auto& m : d->messages) encode_frame(codec, m, d->order, out);
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, *d, out.size());
}

void decode(benchmark::State& state, const Dataset* d, CodecId codec) {
  ByteBuffer frames;
  std::vector<FrameHeader> headers;
  std::vector<std::size_t> starts;
  for (const auto& m : d->messages) {
    starts.push_back(frames.size());
    encode_frame(codec, m, d->order, frames);
  }
  std::vector<std::uint64_t> out(d->ids);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    headers.push_back(read_frame_header(frames.bytes().subspan(starts[i]), d->ids));
  }
  for (auto _ : state) {
    std::uint64_t* at = out.data();
    for (std::size_t i = 0; i < starts.size(); ++i) {
      decode_frame_into(frames.bytes().subspan(starts[i]), headers[i], at);
      at += headers[i].count;
    }
    benchmark::DoNotOptimize(out.data());
  }
  set_counters(state, *d, frames.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string dump;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dump") == 0) {
      if (i + 1 == argc) {
        std::fprintf(stderr, "zbfs_codec_bench: --dump needs a directory\n");
        return 2;
      }
      dump = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  static std::vector<Dataset> sets = synthetic_sets();
  if (!dump.empty()) {
    try {
      for (Dataset& d : recorded_sets(dump)) sets.push_back(std::move(d));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "zbfs_codec_bench: %s\n", e.what());
      return 2;
    }
  }
  for (const Dataset& d : sets) {
    for (const CodecId codec : kAllCodecs) {
      const std::string name = d.name + "/" + std::string(to_string(codec));
      benchmark::RegisterBenchmark((name + "/encode").c_str(), encode, &d, codec)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark((name + "/decode").c_str(), decode, &d, codec)->Unit(benchmark::kMicrosecond);
    }
  }
  int count = static_cast<int>(rest.size());
  benchmark::Initialize(&count, rest.data());
  if (benchmark::ReportUnrecognizedArguments(count, rest.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
