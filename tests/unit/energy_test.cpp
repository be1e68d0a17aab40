// Energy counters and their booking (metrics/energy_counter.hpp, energy_meter.hpp): RAPL
// domains found in a powercap tree built here as a fixture, counters that wrap, each
// reading booked to the phase then current, the search loop's phases, and the result
// block's Green Graph500 lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/run_energy.hpp"
#include "zbfs/driver/search_harness.hpp"
#include "zbfs/metrics/energy_counter.hpp"
#include "zbfs/metrics/energy_meter.hpp"

namespace zbfs {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file);
  out << text << '\n';
}

// A zone directory with its name, count and range.
void write_zone(const fs::path& zone, const std::string& name, std::uint64_t microjoules, std::uint64_t range) {
  write_file(zone / "name", name);
  write_file(zone / "energy_uj", std::to_string(microjoules));
  write_file(zone / "max_energy_range_uj", std::to_string(range));
}

// A powercap tree as Linux lays one out for two packages: the control type's own folder,
// packages with core and DRAM subzones, and an MMIO copy of package 0 that counts the
// same energy again.
fs::path powercap_fixture(const std::string& tag) {
  const fs::path root = fs::temp_directory_path() / ("zbfs_powercap_" + tag);
  fs::remove_all(root);
  write_file(root / "intel-rapl" / "enabled", "1");
  write_zone(root / "intel-rapl:0", "package-0", 1000000, 262143328850);
  write_zone(root / "intel-rapl:0" / "intel-rapl:0:0", "core", 400000, 262143328850);
  write_zone(root / "intel-rapl:0" / "intel-rapl:0:1", "dram", 200000, 65712999613);
  write_zone(root / "intel-rapl:1", "package-1", 3000000, 262143328850);
  write_zone(root / "intel-rapl-mmio:0", "package-0", 1000000, 262143328850);
  return root;
}

TEST(EnergyCounter, AdvancesAcrossOneWrap) {
  EXPECT_EQ(counter_advance(10, 30, 0), 20u);
  EXPECT_EQ(counter_advance(10, 30, 100), 20u);
  EXPECT_EQ(counter_advance(90, 10, 100), 20u);  // 90 -> 100 -> 0 -> 10
  EXPECT_EQ(counter_advance(90, 10, 0), 10u);    // reset without a range: what it counted since
  EXPECT_EQ(counter_advance(7, 7, 100), 0u);
}

TEST(EnergyCounter, FindsPackagesAndTheirDramInAPowercapTree) {
  const fs::path root = powercap_fixture("find");
  std::string why;
  const auto counters = find_rapl_counters(root.string(), why);
  ASSERT_EQ(counters.size(), 3u) << why;
  EXPECT_EQ(counters[0]->name(), "package-0");
  EXPECT_EQ(counters[1]->name(), "package-0/dram");
  EXPECT_EQ(counters[2]->name(), "package-1");
  EXPECT_EQ(counters[0]->range_microjoules(), 262143328850u);
  EXPECT_EQ(counters[1]->range_microjoules(), 65712999613u);
  for (const auto& counter : counters) EXPECT_EQ(counter->scope(), EnergyScope::kHost);
  std::string read_why;
  EXPECT_EQ(counters[2]->read_microjoules(read_why), 3000000u);
  write_file(root / "intel-rapl:1" / "energy_uj", "3500000");
  EXPECT_EQ(counters[2]->read_microjoules(read_why), 3500000u);
  fs::remove_all(root);
}

TEST(EnergyCounter, SaysWhyItReadsNothing) {
  std::string why;
  EXPECT_TRUE(find_rapl_counters("/nonexistent/powercap", why).empty());
  EXPECT_NE(why.find("no powercap tree at /nonexistent/powercap"), std::string::npos) << why;

  const fs::path root = powercap_fixture("broken");
  write_file(root / "intel-rapl:1" / "energy_uj", "not a number");
  why.clear();
  EXPECT_TRUE(find_rapl_counters(root.string(), why).empty());
  EXPECT_NE(why.find("intel-rapl:1/energy_uj holds no count"), std::string::npos) << why;

  fs::remove_all(root / "intel-rapl:0");
  fs::remove_all(root / "intel-rapl:1");
  why.clear();
  EXPECT_TRUE(find_rapl_counters(root.string(), why).empty());
  EXPECT_NE(why.find("no RAPL package domain"), std::string::npos) << why;
  fs::remove_all(root);

  // No GPU driver here (and none on CI): NVML cannot be opened, and says so.
  why.clear();
  if (!open_nvml_counter("0000:00:00.0", why)) {
    EXPECT_FALSE(why.empty());
  }
}

// A counter the test moves by hand.
class ScriptedCounter final : public EnergyCounter {
 public:
  ScriptedCounter(EnergyScope scope, std::uint64_t range, const std::uint64_t* value, const bool* fails)
      : scope_(scope), range_(range), value_(value), fails_(fails) {}
  [[nodiscard]] std::string name() const override { return scope_ == EnergyScope::kHost ? "host" : "device"; }
  [[nodiscard]] EnergyScope scope() const override { return scope_; }
  std::optional<std::uint64_t> read_microjoules(std::string& why) override {
    if (*fails_) {
      why = "scripted failure";
      return std::nullopt;
    }
    return *value_;
  }
  [[nodiscard]] std::uint64_t range_microjoules() const override { return range_; }

 private:
  EnergyScope scope_;
  std::uint64_t range_;
  const std::uint64_t* value_;
  const bool* fails_;
};

TEST(EnergyMeter, BooksEachReadingToThePhaseThenCurrent) {
  std::uint64_t host = 5'000'000;
  std::uint64_t device = 0;
  bool fails = false;
  std::vector<std::unique_ptr<EnergyCounter>> counters;
  counters.push_back(std::make_unique<ScriptedCounter>(EnergyScope::kDevice, 0, &device, &fails));
  counters.push_back(std::make_unique<ScriptedCounter>(EnergyScope::kHost, 10'000'000, &host, &fails));
  EnergyMeter meter(std::move(counters));
  EXPECT_TRUE(meter.reads(EnergyScope::kHost));
  EXPECT_TRUE(meter.reads(EnergyScope::kDevice));
  EXPECT_EQ(meter.names(), (std::vector<std::string>{"host", "device"}));

  meter.enter(EnergyPhase::kGeneration);  // starts the count: nothing booked before it
  host += 1'000'000;
  device += 3'000'000;
  meter.enter(EnergyPhase::kBfs);
  host = 500'000;  // wrapped at 10 J: 9.5 J after 6 J, 4.5 J in all
  meter.enter(EnergyPhase::kOther);
  meter.enter(EnergyPhase::kBfs);  // a second search: nothing counted between
  host += 1'500'000;
  meter.enter(EnergyPhase::kOther);
  const auto at = [&](EnergyPhase p) { return meter.joules()[static_cast<std::size_t>(p)]; };
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kGeneration).host, 1.0);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kGeneration).device, 3.0);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kBfs).host, 6.0);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kBfs).device, 0.0);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kOther).total(), 0.0);

  const EnergyRecord record = record_of(meter, true, "");
  EXPECT_TRUE(record.measured());
  EXPECT_TRUE(record.why_not.empty()) << record.why_not;
  EXPECT_DOUBLE_EQ(record.total(EnergyPhase::kGeneration), 4.0);

  // A counter that cannot be read stops the meter; what was booked stays, and the record
  // says why nothing more was.
  fails = true;
  meter.enter(EnergyPhase::kValidation);
  EXPECT_FALSE(meter.reads(EnergyScope::kHost));
  EXPECT_EQ(meter.failure(), "scripted failure");
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kBfs).host, 6.0);
  const EnergyRecord stopped = record_of(meter, true, "");
  EXPECT_FALSE(stopped.measured());
  EXPECT_EQ(stopped.why_not, "scripted failure");
}

TEST(EnergyMeter, AMeterWithoutCountersMeasuresNothing) {
  std::string why;
  EnergyMeter meter = open_energy_meter("/nonexistent/powercap", true, "", why);
  meter.enter(EnergyPhase::kBfs);
  meter.enter(EnergyPhase::kOther);
  const EnergyRecord record = record_of(meter, false, why);
  EXPECT_FALSE(record.measured());
  EXPECT_NE(record.why_not.find("no powercap tree"), std::string::npos) << record.why_not;
  EXPECT_TRUE(record.counters.empty());
}

// The search loop reads the meter after the synchronisation before a timed part and after
// the slowest time: a search's joules go to its kernel, validation's to validation, and
// what lies between (counting the tree) to neither.
TEST(EnergyMeter, TheSearchLoopBooksSearchesAndValidationApart) {
  std::uint64_t host = 0;
  bool fails = false;
  std::vector<std::unique_ptr<EnergyCounter>> counters;
  counters.push_back(std::make_unique<ScriptedCounter>(EnergyScope::kHost, 0, &host, &fails));
  EnergyMeter meter(std::move(counters));
  meter.enter(EnergyPhase::kOther);

  RunConfig config;
  config.quiet = true;
  SearchBackend backend;
  backend.energy = &meter;
  backend.search = [&](std::uint64_t) {
    host += 2'000'000;
    return BfsStats{};
  };
  backend.count = [&] {
    host += 250'000;
    return TreeCounts{10, 5};
  };
  backend.validate = [&](std::uint64_t) {
    host += 1'000'000;
    ValidationReport report;
    report.traversed_edges = 10;
    return report;
  };
  const Progress progress(false);
  std::vector<SearchResult> searches;
  run_search_loop(config, SearchKernel::kBfs, {1, 2, 3}, backend, progress, searches);
  ASSERT_EQ(searches.size(), 3u);
  const auto at = [&](EnergyPhase p) { return meter.joules()[static_cast<std::size_t>(p)].host; };
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kBfs), 6.0);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kValidation), 3.0);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kOther), 0.75);
  EXPECT_DOUBLE_EQ(at(EnergyPhase::kSssp), 0.0);
}

TEST(ResultBlock, GreenGraph500LinesFollowTheReferenceLines) {
  ResultBlock b;
  b.scale = 10;
  b.edgefactor = 16;
  b.num_searches = 2;
  b.bfs.emplace();
  b.bfs->teps.harmonic_mean = 2.0e9;
  b.bfs->mean_power_w = 250.0;
  b.sssp.emplace();  // SSSP's energy not measured
  std::vector<std::string> lines;
  std::istringstream in(format_result_block(b));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 59u);
  EXPECT_EQ(lines[55], "bfs  mean_power_W:              250");
  EXPECT_EQ(lines[56], "bfs  TEPS_per_W:                8e+06");
  EXPECT_EQ(lines[57], "sssp mean_power_W:              not measured");
  EXPECT_EQ(lines[58], "sssp TEPS_per_W:                not measured");
}

}  // namespace
}  // namespace zbfs
