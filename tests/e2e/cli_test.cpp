// End-to-end tests of the zbfs program: every CLI error path gives one line on stderr
// and exit status 2; a small run prints exactly the result block on stdout and writes
// a JSON record.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "command.hpp"

namespace {

using zbfs_test::count_lines;
using zbfs_test::Outcome;
using zbfs_test::run_command;
using zbfs_test::slurp;

Outcome run_zbfs(const std::string& args) { return run_command(ZBFS_BINARY, args); }

// The binary under mpirun; `timeout` guarantees the test ends even if the job would hang.
Outcome run_mpi(int ranks, const std::string& args) {
  return run_command(std::string("timeout 120 ") + ZBFS_MPIEXEC + " -np " + std::to_string(ranks) + " " + ZBFS_BINARY,
                     args);
}

void expect_usage_error(const std::string& args, const std::string& mention) {
  const Outcome o = run_zbfs(args);
  EXPECT_EQ(o.status, 2) << args << "\nstderr: " << o.err;
  EXPECT_EQ(count_lines(o.err), 1) << args << "\nstderr: " << o.err;
  EXPECT_NE(o.err.find("zbfs: error:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(mention), std::string::npos) << args << "\nstderr: " << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(CliErrors, UnknownFlag) { expect_usage_error("run --frobnicate", "--frobnicate"); }

// An empty value is no value: `--input ''` once ran the default graph and `--json ''` wrote
// nothing, exit 0. Every option and argument refuses one, naming it, before any work (so no
// "partial file removed" for a file never begun), on one rank and on four.
TEST(CliErrors, EmptyValuesAreUsageErrors) {
  for (const char* option : {"--input", "--json", "--write-levels", "--write-parents", "--write-distances",
                             "--dump-frontiers", "--delta", "--grid", "--rmat", "--route-dims", "--format",
                             "--powercap", "--network-latency", "--network-bandwidth", "--scale", "--root"}) {
    expect_usage_error(std::string("run ") + option + " ''", std::string(option) + ": an empty value was given");
  }
  for (const char* args : {"generate -s 8 ''", "convert in.txt ''", "convert '' out.bin", "model ''  -P 4"}) {
    expect_usage_error(args, "an empty value was given");
    EXPECT_EQ(run_zbfs(args).err.find("partial"), std::string::npos) << args;
  }
  const Outcome mpi = run_mpi(4, "run --scale 8 --input ''");
  EXPECT_EQ(mpi.status, 2) << mpi.err;
  EXPECT_EQ(mpi.err.find("zbfs: error:"), mpi.err.rfind("zbfs: error:")) << "printed once\n" << mpi.err;
  EXPECT_NE(mpi.err.find("zbfs: error: --input: an empty value was given"), std::string::npos) << mpi.err;
}
TEST(CliErrors, NonNumericScale) { expect_usage_error("run --scale abc", "abc"); }
TEST(CliErrors, ScaleZero) { expect_usage_error("run --scale 0", "--scale"); }
TEST(CliErrors, ScaleAbove42) { expect_usage_error("run --scale 43", "--scale"); }
TEST(CliErrors, NegativeScale) { expect_usage_error("run --scale -3", "--scale"); }
TEST(CliErrors, EdgefactorZero) { expect_usage_error("run --edgefactor 0", "--edgefactor"); }
TEST(CliErrors, RootsZero) { expect_usage_error("run --roots 0", "--roots"); }
TEST(CliErrors, RootsMoreThanVertices) { expect_usage_error("run --scale 3 --roots 9", "--roots"); }
// Without --roots, a graph too small for 64 keys searches from all its vertices with
// edges and says so ("zbfs run --scale 5" must just work); an explicit --roots is kept.
TEST(CliRun, SmallGraphsSearchFromEveryVertexWithEdges) {
  const Outcome o = run_zbfs("run --scale 6 --no-validate");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("NBFS:                           61\n"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("zbfs: 61 search keys, not 64: the graph has only 61 vertices with edges\n"), std::string::npos)
      << o.err;
  const Outcome mpi = run_mpi(3, "run --scale 3 -q --partition 2d");
  ASSERT_EQ(mpi.status, 0) << mpi.err;
  EXPECT_NE(mpi.out.find("NBFS:                           8\n"), std::string::npos) << mpi.out;
  const Outcome shared = run_zbfs("run --scale 6 -q --partition shared");
  ASSERT_EQ(shared.status, 0) << shared.err;
  EXPECT_NE(shared.out.find("NBFS:                           61\n"), std::string::npos) << shared.out;
}

TEST(CliErrors, RootsMoreThanConnectedVertices) {
  expect_usage_error("run --scale 5 --edgefactor 1 --roots 32 -q", "vertices with edges");
}
TEST(CliErrors, UnknownDirection) { expect_usage_error("run --direction sideways", "sideways"); }
TEST(CliErrors, TooManyOpenMpThreads) {
  // libgomp crashed (SIGSEGV) failing to start them; zbfs refuses above --threads' limit.
  const Outcome o = run_command("env", "OMP_NUM_THREADS=100000 " + std::string(ZBFS_BINARY) + " run --scale 6 -q");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_EQ(o.err,
            "zbfs: error: OpenMP would start 100000 threads per rank (OMP_NUM_THREADS); zbfs allows at most "
            "4096 (set --threads)\n");
  const std::string out = (std::filesystem::temp_directory_path() / "zbfs_too_many_threads.zel").string();
  const Outcome generate = run_command("env", "OMP_NUM_THREADS=5000 " + std::string(ZBFS_BINARY) + " generate " + out);
  EXPECT_EQ(generate.status, 2) << generate.err;
  EXPECT_NE(generate.err.find("OpenMP would start 5000 threads"), std::string::npos) << generate.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Only one rank's environment asks for too many: every rank refuses alike (the others
  // once went on into the next collective); `timeout` ends the test if that comes back.
  const std::string binary = ZBFS_BINARY;
  const Outcome mixed = run_command(std::string("timeout 120 ") + ZBFS_MPIEXEC + " -np 1 " + binary +
                                        " run --scale 6 -q : -np 1 env OMP_NUM_THREADS=5000 " + binary,
                                    "run --scale 6 -q");
  EXPECT_EQ(mixed.status, 2) << mixed.err;
  EXPECT_NE(mixed.err.find("zbfs: error: OpenMP would start 5000 threads"), std::string::npos) << mixed.err;
  // --threads overrides the environment.
  const Outcome overridden =
      run_command("env", "OMP_NUM_THREADS=100000 " + std::string(ZBFS_BINARY) + " run --scale 6 -q --threads 1");
  EXPECT_EQ(overridden.status, 0) << overridden.err;
}
TEST(CliErrors, NegativeAlpha) { expect_usage_error("run --alpha -1", "--alpha"); }
TEST(CliErrors, MissingCommand) { expect_usage_error("", "subcommand"); }
TEST(CliErrors, UnknownCommand) { expect_usage_error("fly", "fly"); }
TEST(CliErrors, UnwritableJson) {
  expect_usage_error("run --scale 6 --roots 4 --json /nonexistent-dir/x.json", "/nonexistent-dir/x.json");
}

// A generated graph that has no scale is named by what was asked for: once "scale 16
// needs about 68.63 TiB" (the default scale) for --graph gnm --vertices 2^40.
TEST(CliErrors, ImpossibleSizesNameTheGraphAskedFor) {
  for (const char* layout : {"", " -p 1d"}) {
    const Outcome vertices = run_zbfs(std::string("run --graph gnm --vertices 1099511627776") + layout);
    EXPECT_EQ(vertices.status, 2) << vertices.err;
    EXPECT_NE(vertices.err.find("a graph of 1099511627776 vertices and 17592186044416 edges needs"), std::string::npos)
        << vertices.err;
    EXPECT_EQ(vertices.err.find("scale 16"), std::string::npos) << vertices.err;
    const Outcome edges = run_zbfs(std::string("run --graph gnm --vertices 1000 --edges 1125899906842624") + layout);
    EXPECT_EQ(edges.status, 2) << edges.err;
    EXPECT_NE(edges.err.find("a graph of 1000 vertices and 1125899906842624 edges needs"), std::string::npos)
        << edges.err;
  }
  const Outcome ranks = run_mpi(4, "run --graph gnm --vertices 1099511627776");
  EXPECT_EQ(ranks.status, 2) << ranks.err;
  EXPECT_NE(ranks.err.find("zbfs: error: a graph of 1099511627776 vertices and 17592186044416 edges needs"),
            std::string::npos)
      << ranks.err;
}

TEST(CliErrors, ImpossibleSizeIsRefusedWithBothNumbers) {
  // One rank's default, the one-process kernel: its smallest plan (compressed lists, the
  // edge list produced again) does not fit either.
  const Outcome shared = run_zbfs("run --scale 42");
  EXPECT_EQ(shared.status, 2);
  EXPECT_EQ(count_lines(shared.err), 1) << shared.err;
  EXPECT_NE(shared.err.find("scale 42 needs about"), std::string::npos) << shared.err;
  EXPECT_NE(shared.err.find("TiB"), std::string::npos) << shared.err;  // 562.50 TiB
  EXPECT_NE(shared.err.find("available"), std::string::npos) << shared.err;
  EXPECT_NE(shared.err.find("--force"), std::string::npos) << shared.err;
  const Outcome o = run_zbfs("run --scale 42 -p 1d");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("needs about"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("PiB"), std::string::npos) << o.err;  // 4.63 PiB
  EXPECT_NE(o.err.find("available"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--force"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("per rank on 1 rank,"), std::string::npos) << o.err;  // not "1 ranks"
}

// One rank searches with the one-process kernel unless it is asked for the MPI kernels
// (--partition, or an option of their exchanges); the record says which ran.
TEST(Cli, OneRankDefaultsToTheOneProcessKernel) {
  const auto json = std::filesystem::temp_directory_path() / "zbfs_default_partition.json";
  const auto partition_of = [&](const std::string& args) {
    const Outcome o = run_zbfs("run --scale 10 --roots 4 -q --json " + json.string() + " " + args);
    EXPECT_EQ(o.status, 0) << args << "\n" << o.err;
    return nlohmann::json::parse(slurp(json))["config"]["partition"].get<std::string>();
  };
  EXPECT_EQ(partition_of(""), "shared");
  EXPECT_EQ(partition_of("--adjacency compressed"), "shared");
  EXPECT_EQ(partition_of("-p 1d"), "1d");
  EXPECT_EQ(partition_of("--codec auto"), "1d");
  EXPECT_EQ(partition_of("--route direct"), "1d");
  EXPECT_EQ(partition_of("--transport rma"), "1d");
  std::filesystem::remove(json);
}

// --hypersparse: on a tall 2D grid every rank's forward rows span every vertex and most
// are empty, so auto keeps them by position; the trees are the same, validated, and the
// record's lists are smaller (off keeps every row).
TEST(Cli, HypersparseRowsKeepTheTreesAndShrinkTheLists) {
  const auto dir = std::filesystem::temp_directory_path();
  struct Kept {
    std::string parents;
    std::uint64_t adjacency_bytes = 0;
    std::uint64_t hypersparse_ranks = 0;
  };
  const auto run = [&](const std::string& choice) {
    const auto json = dir / ("zbfs_hs_" + choice + ".json");
    const auto parents = dir / ("zbfs_hs_" + choice + ".parents");
    const Outcome o = run_mpi(4, "run --scale 12 --edgefactor 1 --roots 3 -q -p 2d --grid 4x1 --hypersparse " + choice +
                                     " --write-parents " + parents.string() + " --json " + json.string());
    EXPECT_EQ(o.status, 0) << choice << "\n" << o.err;
    const nlohmann::json j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["config"]["hypersparse"], choice);
    Kept kept{slurp(parents), j["memory"]["adjacency_bytes"].get<std::uint64_t>(),
              j["memory"]["hypersparse_ranks"].get<std::uint64_t>()};
    std::filesystem::remove(json);
    std::filesystem::remove(parents);
    return kept;
  };
  const Kept off = run("off");
  const Kept automatic = run("auto");
  const Kept on = run("on");
  EXPECT_EQ(off.hypersparse_ranks, 0U);
  EXPECT_EQ(automatic.hypersparse_ranks, 4U);
  EXPECT_EQ(on.hypersparse_ranks, 4U);
  EXPECT_FALSE(off.parents.empty());
  EXPECT_EQ(automatic.parents, off.parents);
  EXPECT_EQ(on.parents, off.parents);
  // 4,096 rows a rank's forward lists would hold offsets for, 8 bytes each, for at most
  // 2,048 list entries a rank: at least a third of the offsets go.
  EXPECT_LT(automatic.adjacency_bytes + 4 * 4096 * 8 / 3, off.adjacency_bytes);
}

TEST(Cli, HelpAndVersionSucceed) {
  const Outcome help = run_zbfs("run --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--scale"), std::string::npos);
  const Outcome version = run_zbfs("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.rfind("zbfs ", 0), 0U) << version.out;
}

TEST(Cli, SmallRunPrintsOnlyTheResultBlockAndWritesJson) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_run.json";
  std::filesystem::remove(json_path);
  const Outcome o = run_zbfs("run --scale 10 --roots 8 --threads 2 --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(count_lines(o.out), 36) << o.out;
  EXPECT_EQ(o.out.rfind("SCALE:                          10\n", 0), 0U) << o.out;
  EXPECT_NE(o.out.find("NBFS:                           8\n"), std::string::npos);
  EXPECT_NE(o.out.find("bfs  harmonic_mean_TEPS:     !  "), std::string::npos);
  EXPECT_EQ(o.out.find("bfs  min_validate:              -1"), std::string::npos) << "validation should have run";
  EXPECT_NE(o.err.find("BFS 8/8"), std::string::npos) << "progress goes to stderr: " << o.err;
  EXPECT_NE(o.err.find("zbfs: 8 search keys, "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("; TEPS median "), std::string::npos) << o.err;

  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["schema"], "zbfs.run");
  EXPECT_EQ(j["schema_version"], 11);
  EXPECT_TRUE(j["simulated"].is_null());
  EXPECT_EQ(j["config"]["scale"], 10);
  EXPECT_EQ(j["threads"], 2);
  ASSERT_EQ(j["searches"].size(), 8U);
  for (const auto& s : j["searches"]) {
    EXPECT_GT(s["time_s"].get<double>(), 0.0);
    EXPECT_GT(s["teps"].get<double>(), 0.0);
    EXPECT_GE(s["levels"].get<int>(), 2);
    EXPECT_FALSE(s["steps"].empty());
    EXPECT_TRUE(s.contains("validate_time_s"));
  }
  EXPECT_GT(j["memory"]["peak_rss_bytes"].get<double>(), 0.0);
  EXPECT_GT(j["memory"]["peak_share_bytes"].get<double>(), 0.0);
  EXPECT_LE(j["memory"]["peak_share_bytes"].get<double>(), j["memory"]["peak_rss_bytes"].get<double>());
  EXPECT_GT(j["summary"]["teps"]["harmonic_mean"].get<double>(), 0.0);
  EXPECT_GE(j["summary"]["small_component_keys"].get<int>(), 0);
  EXPECT_LE(j["summary"]["small_component_keys"].get<int>(), 8);
  std::filesystem::remove(json_path);
}

// A powercap tree (a fixture: a package and its DRAM, counts that stand still) is read on
// one process and by one rank of a job on one node: the record names its counters and
// books joules per phase, and the block says "not measured" where the counters did not
// move. Without a tree the record says why nothing was measured.
std::filesystem::path powercap_fixture() {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "zbfs_cli_powercap";
  fs::remove_all(root);
  const auto zone = [](const fs::path& dir, const char* name, const char* count) {
    fs::create_directories(dir);
    std::ofstream(dir / "name") << name << "\n";
    std::ofstream(dir / "energy_uj") << count << "\n";
    std::ofstream(dir / "max_energy_range_uj") << "262143328850\n";
  };
  zone(root / "intel-rapl:0", "package-0", "123456789");
  zone(root / "intel-rapl:0" / "intel-rapl:0:0", "dram", "4567");
  return root;
}

TEST(CliEnergy, ReadFromAPowercapTreeOrSaidNotMeasured) {
  const auto root = powercap_fixture();
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_energy.json";
  for (const int ranks : {1, 2}) {
    std::filesystem::remove(json_path);
    const std::string args = "run --scale 8 --roots 4 -q --powercap " + root.string() + " --json " + json_path.string();
    const Outcome o = ranks == 1 ? run_zbfs(args) : run_mpi(ranks, args);
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(count_lines(o.out), 36) << o.out;
    EXPECT_NE(o.out.find("bfs  mean_power_W:              not measured\n"), std::string::npos) << o.out;
    const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
    const nlohmann::json& e = j["energy"];
    EXPECT_TRUE(e["measured"].get<bool>()) << e.dump();
    EXPECT_TRUE(e["device_measured"].is_null()) << e.dump();
    EXPECT_EQ(e["counters"], nlohmann::json({"package-0", "package-0/dram"})) << e.dump();
    EXPECT_EQ(e["joules"]["bfs"]["total"].get<double>(), 0.0) << e.dump();
    EXPECT_TRUE(e["joules"].contains("construction")) << e.dump();
    EXPECT_TRUE(e["bfs"].is_null()) << e.dump();
    EXPECT_EQ(j["config"]["powercap"], root.string());
  }
  std::filesystem::remove(json_path);
  const Outcome none =
      run_zbfs("run --scale 8 --roots 4 -q --powercap /nonexistent/powercap --json " + json_path.string());
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("bfs  TEPS_per_W:                not measured\n"), std::string::npos) << none.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_FALSE(j["energy"]["measured"].get<bool>());
  EXPECT_NE(j["energy"]["why_not"].get<std::string>().find("no powercap tree at /nonexistent/powercap"),
            std::string::npos)
      << j["energy"].dump();
  EXPECT_TRUE(j["energy"]["joules"].is_null());
  std::filesystem::remove(json_path);
  std::filesystem::remove_all(root);
}

TEST(Cli, SameSeedGivesTheSameTraversedEdgesAtAnyThreadCount) {
  const auto nedge_line = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 60); };
  const Outcome one = run_zbfs("run --scale 11 --roots 4 --threads 1 -q --seed 5");
  const Outcome two = run_zbfs("run --scale 11 --roots 4 --threads 2 -q --seed 5");
  const Outcome other = run_zbfs("run --scale 11 --roots 4 --threads 2 -q --seed 6");
  ASSERT_EQ(one.status, 0);
  ASSERT_EQ(two.status, 0);
  EXPECT_EQ(nedge_line(one.out), nedge_line(two.out));
  EXPECT_NE(nedge_line(one.out), nedge_line(other.out));
  EXPECT_TRUE(one.err.empty()) << "--quiet must silence progress: " << one.err;
}

TEST(Cli, NoValidatePrintsMinusOneAndEveryDirectionRuns) {
  for (const char* direction : {"auto", "top-down", "bottom-up"}) {
    const Outcome o = run_zbfs(std::string("run --scale 9 --roots 4 -q --no-validate --direction ") + direction);
    ASSERT_EQ(o.status, 0) << direction << ": " << o.err;
    EXPECT_NE(o.out.find("bfs  min_validate:              -1"), std::string::npos) << o.out;
  }
}

TEST(CliErrors, PartitionOptions) {
  expect_usage_error("run --partition 3d", "3d");
  expect_usage_error("run --partition 2d --grid 2x", "--grid");
  expect_usage_error("run --partition 2d --grid 2x2", "job has 1");
  expect_usage_error("run --grid 1x1", "--partition 2d");
  expect_usage_error("run --column-gather tree", "tree");
  expect_usage_error("run --fail-on-rank 3", "--fail-on-rank must name a rank of the job: 0, got 3");
  expect_usage_error("run --fail-on-rank -1", "--fail-on-rank must name a rank of the job: 0, got -1");
  expect_usage_error("run --write-format binary",
                     "--write-format needs --write-levels, --write-parents or --write-distances");
  // A BFS's levels and parents under --kernels sssp alone were never written (exit 0).
  expect_usage_error("run --scale 6 --kernels sssp --write-levels l.txt --write-parents p.txt",
                     "--write-levels writes a BFS tree's levels: --kernels sssp runs no BFS");
  expect_usage_error("run --scale 6 --kernels sssp --write-parents p.txt",
                     "--write-parents writes a BFS tree's parents");
  const Outcome ranks = run_mpi(4, "run --scale 6 --kernels sssp --write-levels l.txt");
  EXPECT_EQ(ranks.status, 2) << ranks.err;
  EXPECT_NE(ranks.err.find("zbfs: error: --write-levels writes a BFS tree's levels"), std::string::npos) << ranks.err;
  EXPECT_FALSE(std::filesystem::exists("l.txt"));
}

// --kernels bfs,sssp: both result groups in graph500_reference_bfs_sssp's order, the same
// keys and traversed edges for both kernels, every SSSP tree validated, and a JSON record
// of each SSSP search.
TEST(CliSssp, BothKernelsSearchTheSameKeysAndCountTheSameEdges) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_sssp.json";
  std::filesystem::remove(json_path);
  const Outcome o = run_zbfs("run --scale 10 --roots 8 --threads 2 --kernels bfs,sssp --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(count_lines(o.out), 59) << o.out;
  EXPECT_NE(o.out.find("sssp harmonic_mean_TEPS:     !  "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("sssp min_validate:              -1"), std::string::npos) << "SSSP validation should have run";
  EXPECT_NE(o.err.find("SSSP 8/8"), std::string::npos) << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["config"]["kernels"], "bfs,sssp");
  ASSERT_EQ(j["searches"].size(), 8U);
  ASSERT_EQ(j["sssp_searches"].size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& bfs = j["searches"][i];
    const auto& sssp = j["sssp_searches"][i];
    EXPECT_EQ(sssp["root"], bfs["root"]);
    EXPECT_EQ(sssp["traversed_edges"], bfs["traversed_edges"]);
    EXPECT_EQ(sssp["reached_vertices"], bfs["reached_vertices"]);
    EXPECT_TRUE(sssp.contains("validate_time_s"));
    EXPECT_GT(sssp["delta"].get<double>(), 0.0);
    EXPECT_GE(sssp["buckets"].get<int>(), 1);
  }
  EXPECT_GT(j["summary"]["sssp"]["teps"]["harmonic_mean"].get<double>(), 0.0);
  EXPECT_GT(j["summary"]["teps"]["harmonic_mean"].get<double>(), 0.0);
  std::filesystem::remove(json_path);
}

// The distances of the first key do not depend on the thread count, the bucket width or
// whether the list is kept (delta-stepping meets the one least fixed point, exactly), and
// --write-distances writes them: the root at 0, unreached vertices at -1.
TEST(CliSssp, DistancesAreTheSameForEveryThreadCountDeltaAndEdgeList) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto path = [&](const char* name) { return (dir / name).string(); };
  const std::string base = "run --scale 11 --roots 2 -q --kernels sssp --write-distances ";
  const Outcome one = run_zbfs(base + path("zbfs_d1.txt") + " --threads 1 --edge-list keep");
  const Outcome three = run_zbfs(base + path("zbfs_d3.txt") + " --threads 3 --edge-list regenerate");
  const Outcome wide = run_zbfs(base + path("zbfs_dw.txt") + " --threads 2 --delta 0.5");
  const Outcome binary = run_zbfs(base + path("zbfs_db.bin") + " --threads 2 --write-format binary");
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(three.status, 0) << three.err;
  ASSERT_EQ(wide.status, 0) << wide.err;
  ASSERT_EQ(binary.status, 0) << binary.err;
  const std::string text = slurp(path("zbfs_d1.txt"));
  EXPECT_EQ(text, slurp(path("zbfs_d3.txt")));
  EXPECT_EQ(text, slurp(path("zbfs_dw.txt")));
  EXPECT_EQ(text.rfind("# zbfs distances: search key ", 0), 0U) << text.substr(0, 80);
  EXPECT_EQ(count_lines(text), 2049);
  const std::size_t key_at = std::string_view("# zbfs distances: search key ").size();
  const std::string root = text.substr(key_at, text.find(',') - key_at);
  EXPECT_NE(text.find("\n" + root + " 0\n"), std::string::npos) << "the root is at distance 0";
  EXPECT_NE(text.find(" -1\n"), std::string::npos) << "a scale-11 graph has unreached vertices";
  // Binary: the header, then (u64 vertex, f64 distance) per vertex.
  const std::string bin = slurp(path("zbfs_db.bin"));
  ASSERT_EQ(bin.size(), 32U + 2048U * 16U);
  EXPECT_EQ(bin.substr(0, 8), "ZBFSBFSR");
  EXPECT_EQ(static_cast<unsigned char>(bin[12]), 3);
  for (const char* name : {"zbfs_d1.txt", "zbfs_d3.txt", "zbfs_dw.txt", "zbfs_db.bin"})
    std::filesystem::remove(path(name));
}

// Every generator's tuples carry weights (rgg's by their pair, the others' by their draw or
// position), kept or produced again, and every SSSP tree validates.
TEST(CliSssp, EveryGeneratorRunsAndValidates) {
  for (const char* graph :
       {"--graph rmat", "--graph gnm --vertices 3000", "--graph rgg --vertices 3000",
        "--graph kronecker --edge-list regenerate", "--graph gnm --vertices 3000 --edge-list regenerate"}) {
    const Outcome o = run_zbfs(std::string("run --scale 10 --roots 4 -q --threads 2 --kernels bfs,sssp ") + graph);
    ASSERT_EQ(o.status, 0) << graph << ": " << o.err;
    EXPECT_NE(o.out.find("sssp harmonic_mean_TEPS:     !  "), std::string::npos) << graph << ": " << o.out;
  }
}

// A file's weights: an edge list's third field or a Matrix Market file's values give the
// distances worked out by hand; files without weights are refused unless --weights
// uniform draws them.
TEST(CliSssp, FilesCarryTheirWeightsOrDrawThem) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  // The drawn graph of the unit tests: from 0, distances 0 .5 .75 1.25 .125 .375.
  const std::string el = write("zbfs_w.el",
                               "0 1 0.5\n1 2 0.25\n2 3 0.5\n0 4 0.125\n1 5 0.5\n4 5 0.25\n6 7 1\n7 8 1\n"
                               "8 6 1\n3 3 0\n2 1 0.75\n");
  const std::string mtx = write("zbfs_w.mtx",
                                "%%MatrixMarket matrix coordinate real general\n9 9 11\n1 2 0.5\n2 3 0.25\n3 4 0.5\n"
                                "1 5 0.125\n2 6 0.5\n5 6 0.25\n7 8 1\n8 9 1\n9 7 1\n4 4 0\n3 2 0.75\n");
  const std::string expected =
      "# zbfs distances: search key 0, 9 vertices; vertex distance (-1: unreached)\n0 0\n1 0.5\n2 0.75\n3 1.25\n"
      "4 0.125\n5 0.375\n6 -1\n7 -1\n8 -1\n";
  const std::string out = (dir / "zbfs_w.d").string();
  const Outcome from_el = run_zbfs("run -q --kernels bfs,sssp --root 0 --input " + el + " --write-distances " + out);
  ASSERT_EQ(from_el.status, 0) << from_el.err;
  EXPECT_EQ(slurp(out), expected);
  const Outcome from_mtx = run_zbfs("run -q --kernels sssp --root 1 --input " + mtx + " --write-distances " + out);
  ASSERT_EQ(from_mtx.status, 0) << from_mtx.err;
  std::string one_based = expected;  // Matrix Market names the same vertices from 1
  one_based =
      "# zbfs distances: search key 1, 9 vertices; vertex distance (-1: unreached)\n1 0\n2 0.5\n3 0.75\n"
      "4 1.25\n5 0.125\n6 0.375\n7 -1\n8 -1\n9 -1\n";
  EXPECT_EQ(slurp(out), one_based);

  const std::string plain = write("zbfs_nw.el", "0 1\n1 2\n");
  expect_usage_error("run -q --kernels sssp --input " + plain, "zbfs_nw.el:1: expected a weight");
  const Outcome uniform = run_zbfs("run -q --kernels sssp --weights uniform --input " + plain);
  EXPECT_EQ(uniform.status, 0) << uniform.err;
  expect_usage_error("run -q --kernels sssp --input " + write("zbfs_neg.el", "0 1 0.5\n1 2 -1\n"),
                     "zbfs_neg.el:2: weight '-1' is negative");
  expect_usage_error("run -q --kernels sssp --input " + write("zbfs_nan.el", "0 1 nan\n"), "is not a weight");
  expect_usage_error("run -q --kernels sssp --input " +
                         write("zbfs_p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"),
                     "a pattern Matrix Market file has no values");
  expect_usage_error("run --weights uniform", "--weights applies to --input");
  expect_usage_error("run --weights file --input " + el, "--weights gives SSSP its weights");
  for (const char* name :
       {"zbfs_w.el", "zbfs_w.mtx", "zbfs_w.d", "zbfs_nw.el", "zbfs_neg.el", "zbfs_nan.el", "zbfs_p.mtx"})
    std::filesystem::remove(dir / name);
}

TEST(CliErrors, SsspOptions) {
  expect_usage_error("run --kernels dfs", "--kernels must be bfs, sssp or bfs,sssp");
  expect_usage_error("run --kernels bfs,bfs", "--kernels");
  expect_usage_error("run --delta 0.1", "--delta sets SSSP's bucket width");
  expect_usage_error("run --kernels sssp --delta 0", "--delta must be a positive number");
  expect_usage_error("run --kernels sssp --delta -2", "--delta must be a positive number");
  expect_usage_error("run --write-distances d.txt", "--write-distances writes an SSSP tree's distances");
  expect_usage_error("run --kernels sssp --adjacency compressed", "--kernels sssp reads plain lists");
  expect_usage_error("run --kernels sssp --hypersparse on", "--kernels sssp reads its lists by row");
  expect_usage_error("run --backend cuda --hypersparse on", "the device backends read their lists by row");
  expect_usage_error("run --hypersparse sometimes", "--hypersparse");
  expect_usage_error("run --kernels sssp --backend cuda-host", "--kernels sssp runs on the CPU backend");
}

// zbfs trace refuses what its plan does not model, and impossible sizes, in one line.
TEST(CliErrors, TraceOptions) {
  expect_usage_error("trace --scale 6", "--ranks");
  expect_usage_error("trace --scale 6 --ranks 0", "--ranks must be at least 1");
  expect_usage_error("trace --scale 6 --ranks 4", "add it");  // --overlap off
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off --codec auto", "without a codec");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off --transport rma", "two-sided");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off --prune", "--prune");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off --kernels sssp", "BFS searches only");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off -p 1d --route sparse", "grid2, gridk or hypercube");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off -p 1d --route grid2 --no-dedup", "--no-dedup");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off --probe-cost -1", "--probe-cost");
  expect_usage_error("trace --scale 6 --ranks 4 --overlap off --host-speed 0", "--host-speed");
  expect_usage_error("trace --scale 6 --ranks 6 --overlap off --grid 2x2", "grid 2x2");
}

// Kernel 3 over MPI: the same distances as on one process for every partition, codec
// and route; a file's weights (its third field, or drawn by position with --weights
// uniform) reach the distributed kernel as they reach the one-process one.
TEST(CliMpi, SsspDistancesAreTheSameOnEveryPartitionCodecAndRoute) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto path = [&](const std::string& name) { return (dir / name).string(); };
  const std::string base = "run --scale 11 --roots 3 -q --kernels bfs,sssp --write-distances ";
  const Outcome shared = run_zbfs(base + path("zbfs_md0.txt"));
  ASSERT_EQ(shared.status, 0) << shared.err;
  const std::string expected = slurp(path("zbfs_md0.txt"));
  const std::vector<std::pair<int, std::string>> runs = {{3, "-p 1d"},
                                                         {4, "-p 2d --grid 2x2 --codec auto"},
                                                         {4, "-p 1d --route grid2"},
                                                         {6, "-p 2d --grid 2x3 --route hypercube --no-dedup"},
                                                         {4, "-p hybrid --ranks-per-node 2 --codec rice"}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string out = path("zbfs_md" + std::to_string(i + 1) + ".txt");
    const Outcome o = run_mpi(runs[i].first, base + out + " " + runs[i].second);
    ASSERT_EQ(o.status, 0) << runs[i].second << ": " << o.err;
    EXPECT_EQ(count_lines(o.out), 59) << runs[i].second << ": " << o.out;
    EXPECT_EQ(o.out.find("sssp min_validate:              -1"), std::string::npos) << runs[i].second;
    EXPECT_EQ(slurp(out), expected) << runs[i].second;
    std::filesystem::remove(out);
  }
  std::filesystem::remove(path("zbfs_md0.txt"));

  std::ofstream(dir / "zbfs_mw.el") << "0 1 0.5\n1 2 0.25\n2 3 0.5\n0 4 0.125\n1 5 0.5\n4 5 0.25\n6 7 1\n7 8 1\n"
                                       "8 6 1\n3 3 0\n2 1 0.75\n";
  const Outcome weighted = run_mpi(3, "run -q --kernels sssp -p 1d --root 0 --input " + path("zbfs_mw.el") +
                                          " --write-distances " + path("zbfs_mw.d"));
  ASSERT_EQ(weighted.status, 0) << weighted.err;
  EXPECT_EQ(slurp(path("zbfs_mw.d")),
            "# zbfs distances: search key 0, 9 vertices; vertex distance (-1: unreached)\n0 0\n1 0.5\n2 0.75\n"
            "3 1.25\n4 0.125\n5 0.375\n6 -1\n7 -1\n8 -1\n");
  std::ofstream(dir / "zbfs_mp.el") << "0 1\n1 2\n2 3\n3 0\n0 2\n4 5\n5 1\n6 4\n";
  const std::string uniform = "run -q --kernels sssp --weights uniform --root 0 --input " + path("zbfs_mp.el");
  const Outcome one = run_zbfs(uniform + " --write-distances " + path("zbfs_mp1.d"));
  const Outcome many = run_mpi(4, uniform + " -p 2d --grid 2x2 --write-distances " + path("zbfs_mp4.d"));
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(many.status, 0) << many.err;
  EXPECT_EQ(slurp(path("zbfs_mp1.d")), slurp(path("zbfs_mp4.d")));
  for (const char* name : {"zbfs_mw.el", "zbfs_mw.d", "zbfs_mp.el", "zbfs_mp1.d", "zbfs_mp4.d"})
    std::filesystem::remove(dir / name);

  // With no BFS before it, the frontier dump holds SSSP's first search: its requests
  // (sequences, in their columns under a codec) and its settled shares.
  const auto dump = dir / "zbfs_sssp_dump";
  std::filesystem::remove_all(dump);
  const Outcome dumped =
      run_mpi(2, "run --scale 10 --roots 2 -q --kernels sssp -p 1d --codec bitpack --dump-frontiers " + dump.string());
  ASSERT_EQ(dumped.status, 0) << dumped.err;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GT(std::filesystem::file_size(dump / ("rank-" + std::to_string(rank) + ".zbfsdump")), 1000U);
  }
  std::filesystem::remove_all(dump);
}

// --prune: the same trees' edges and depths as the whole-graph search, an attach step last.
TEST(Cli, PrunedSearchesTraverseTheSameEdgesAtTheSameDepths) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto full_json = dir / "zbfs_full.json";
  const auto pruned_json = dir / "zbfs_pruned.json";
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome full = run_zbfs("run --scale 11 --roots 16 -q --partition shared --json " + full_json.string());
  const Outcome pruned =
      run_zbfs("run --scale 11 --roots 16 -q --partition shared --prune --threads 2 --json " + pruned_json.string());
  ASSERT_EQ(full.status, 0) << full.err;
  ASSERT_EQ(pruned.status, 0) << pruned.err;
  EXPECT_EQ(nedge_lines(full.out), nedge_lines(pruned.out));
  const nlohmann::json f = nlohmann::json::parse(slurp(full_json));
  const nlohmann::json p = nlohmann::json::parse(slurp(pruned_json));
  EXPECT_EQ(f["config"]["prune"], false);
  EXPECT_EQ(p["config"]["prune"], true);
  ASSERT_EQ(p["searches"].size(), 16U);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(p["searches"][i]["levels"], f["searches"][i]["levels"]) << "search " << i;
    EXPECT_EQ(p["searches"][i]["reached_vertices"], f["searches"][i]["reached_vertices"]) << "search " << i;
    EXPECT_EQ(p["searches"][i]["steps"].back()["direction"], "attach") << "search " << i;
    EXPECT_GT(p["searches"][i]["steps"].back()["discovered_vertices"].get<int>(), 0) << "search " << i;
  }
  std::filesystem::remove(full_json);
  std::filesystem::remove(pruned_json);
}

// --backend cuda-host: the device backend's code on the CPU, the same trees as the CPU
// kernel's, step for step; the device it ran on and the bytes it copied in the record.
TEST(Cli, CudaHostBackendSearchesAsTheCpuKernelDoes) {
  if (!ZBFS_CUDA_BUILT) {
    expect_usage_error("run --scale 8 --backend cuda-host", "without CUDA");
    expect_usage_error("run --scale 8 --backend cuda", "without CUDA");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path();
  const auto cpu_json = dir / "zbfs_backend_cpu.json";
  const auto host_json = dir / "zbfs_backend_cuda_host.json";
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome cpu = run_zbfs("run --scale 11 --roots 8 -q --partition shared --json " + cpu_json.string());
  // No --partition: the device backends default to the one-process search.
  const Outcome host =
      run_zbfs("run --scale 11 --roots 8 -q --backend cuda-host --threads 2 --json " + host_json.string());
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  ASSERT_EQ(host.status, 0) << host.err;
  EXPECT_EQ(nedge_lines(cpu.out), nedge_lines(host.out));
  const nlohmann::json c = nlohmann::json::parse(slurp(cpu_json));
  const nlohmann::json h = nlohmann::json::parse(slurp(host_json));
  EXPECT_EQ(c["config"]["backend"], "cpu");
  EXPECT_TRUE(c["device"].is_null());
  EXPECT_EQ(h["config"]["backend"], "cuda-host");
  EXPECT_EQ(h["config"]["partition"], "shared");
  EXPECT_EQ(h["device"]["name"], "host");
  EXPECT_GT(h["device"]["host_to_device_bytes"].get<double>(), 0);
  EXPECT_GT(h["device"]["device_to_host_bytes"].get<double>(), 0);
  // The graph goes over once, in kernel 1; each search's parents come back (8 bytes a vertex).
  EXPECT_GT(h["device"]["construction"]["host_to_device_bytes"].get<double>(), 32.0 * 2048);
  EXPECT_GE(h["device"]["searches"]["device_to_host_bytes"].get<double>(), 8.0 * 8 * 2048);
  EXPECT_LT(h["device"]["searches"]["host_to_device_bytes"].get<double>(),
            h["device"]["construction"]["host_to_device_bytes"].get<double>());
  // Per phase: the upload in construction, the trees' way back in "other"; none on the CPU.
  EXPECT_EQ(h["phases"]["construction"]["host_to_device_bytes"]["sum"].get<double>(),
            h["device"]["construction"]["host_to_device_bytes"].get<double>());
  EXPECT_GE(h["phases"]["other"]["device_to_host_bytes"]["sum"].get<double>(), 8.0 * 8 * 2048);
  EXPECT_EQ(c["phases"]["construction"]["host_to_device_bytes"]["sum"].get<double>(), 0);
  // Kernel 1 ran on the target: its stages within kernel 1's time.
  double stages = 0;
  for (const char* stage : {"send_s", "order_s", "lists_s", "fetch_s"}) {
    EXPECT_GE(h["device"]["kernel1"][stage].get<double>(), 0) << stage;
    stages += h["device"]["kernel1"][stage].get<double>();
  }
  EXPECT_GT(stages, 0);
  EXPECT_LE(stages, h["construction_time_s"].get<double>());
  // Opening the device is its own figure, outside kernel 1 (the host launcher opens none).
  EXPECT_EQ(h["device"]["open_s"].get<double>(), 0);
  ASSERT_EQ(h["searches"].size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) {
    const nlohmann::json& want = c["searches"][i]["steps"];
    const nlohmann::json& got = h["searches"][i]["steps"];
    ASSERT_EQ(got.size(), want.size()) << "search " << i;
    for (std::size_t s = 0; s < want.size(); ++s) {
      EXPECT_EQ(got[s]["direction"], want[s]["direction"]) << "search " << i << " step " << s;
      EXPECT_EQ(got[s]["discovered_vertices"], want[s]["discovered_vertices"]) << "search " << i << " step " << s;
    }
  }
  std::filesystem::remove(cpu_json);
  std::filesystem::remove(host_json);
  expect_usage_error("run --scale 8 --backend cuda-host --gpus-per-node 2", "--gpus-per-node");
}

// --prune on the device backend's one-process search: the CPU kernel's pruned steps
// (the attach step's vertices included) and depths, every tree validated.
TEST(Cli, CudaHostBackendPrunesAsTheCpuKernelDoes) {
  if (!ZBFS_CUDA_BUILT) GTEST_SKIP() << "built without CUDA";
  const auto dir = std::filesystem::temp_directory_path();
  const auto cpu_json = dir / "zbfs_prune_cpu.json";
  const auto host_json = dir / "zbfs_prune_cuda_host.json";
  const Outcome cpu = run_zbfs("run --scale 11 --roots 8 -q --partition shared --prune --json " + cpu_json.string());
  const Outcome host =
      run_zbfs("run --scale 11 --roots 8 -q --backend cuda-host --prune --threads 2 --json " + host_json.string());
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  ASSERT_EQ(host.status, 0) << host.err;
  const nlohmann::json c = nlohmann::json::parse(slurp(cpu_json));
  const nlohmann::json h = nlohmann::json::parse(slurp(host_json));
  EXPECT_TRUE(h["config"]["prune"].get<bool>());
  ASSERT_EQ(h["searches"].size(), 8U);
  bool attached = false;
  for (std::size_t i = 0; i < 8; ++i) {
    const nlohmann::json& want = c["searches"][i];
    const nlohmann::json& got = h["searches"][i];
    EXPECT_EQ(got["levels"], want["levels"]) << "search " << i;
    EXPECT_EQ(got["traversed_edges"], want["traversed_edges"]) << "search " << i;
    EXPECT_TRUE(got.contains("validate_time_s")) << "search " << i;
    ASSERT_EQ(got["steps"].size(), want["steps"].size()) << "search " << i;
    for (std::size_t s = 0; s < want["steps"].size(); ++s) {
      EXPECT_EQ(got["steps"][s]["direction"], want["steps"][s]["direction"]) << "search " << i << " step " << s;
      EXPECT_EQ(got["steps"][s]["discovered_vertices"], want["steps"][s]["discovered_vertices"])
          << "search " << i << " step " << s;
      attached = attached || (got["steps"][s]["direction"] == "attach" && got["steps"][s]["discovered_vertices"] > 0);
    }
  }
  EXPECT_TRUE(attached) << "no search attached a tree";
  std::filesystem::remove(cpu_json);
  std::filesystem::remove(host_json);
}

// --level-loop device / graph: the device decides each level's direction and the host
// never waits for a level; the same steps, levels and traversed edges as the host-driven
// loop, pruned or not, every tree validated. Only a one-process device search has it.
TEST(Cli, CudaHostLevelsDrivenByTheDeviceTakeTheHostLoopsSteps) {
  if (!ZBFS_CUDA_BUILT) GTEST_SKIP() << "built without CUDA";
  const auto dir = std::filesystem::temp_directory_path();
  for (const std::string prune : {"", " --prune"}) {
    const auto run = [&](const std::string& loop) {
      const auto json = dir / ("zbfs_level_loop_" + loop + ".json");
      const Outcome o = run_zbfs("run --scale 11 --roots 6 -q --backend cuda-host --threads 2 --level-loop " + loop +
                                 prune + " --json " + json.string());
      EXPECT_EQ(o.status, 0) << o.err;
      const nlohmann::json record = nlohmann::json::parse(slurp(json));
      std::filesystem::remove(json);
      EXPECT_EQ(record["config"]["level_loop"], loop);
      return record;
    };
    const nlohmann::json want = run("host");
    for (const std::string loop : {"device", "graph"}) {
      SCOPED_TRACE(loop + prune);
      const nlohmann::json got = run(loop);
      ASSERT_EQ(got["searches"].size(), 6U);
      for (std::size_t i = 0; i < 6; ++i) {
        const nlohmann::json& w = want["searches"][i];
        const nlohmann::json& g = got["searches"][i];
        EXPECT_EQ(g["levels"], w["levels"]) << "search " << i;
        EXPECT_EQ(g["traversed_edges"], w["traversed_edges"]) << "search " << i;
        EXPECT_TRUE(g.contains("validate_time_s")) << "search " << i;
        ASSERT_EQ(g["steps"].size(), w["steps"].size()) << "search " << i;
        for (std::size_t k = 0; k < w["steps"].size(); ++k) {
          EXPECT_EQ(g["steps"][k]["direction"], w["steps"][k]["direction"]) << "search " << i << " step " << k;
          EXPECT_EQ(g["steps"][k]["frontier_vertices"], w["steps"][k]["frontier_vertices"])
              << "search " << i << " step " << k;
          EXPECT_EQ(g["steps"][k]["discovered_vertices"], w["steps"][k]["discovered_vertices"])
              << "search " << i << " step " << k;
        }
      }
    }
  }
  expect_usage_error("run --scale 8 --level-loop device", "--level-loop device needs --backend cuda or cuda-host");
  expect_usage_error("run --scale 8 --backend cuda-host --partition 1d --level-loop graph", "--partition shared");
  expect_usage_error("run --scale 8 --backend cuda-host --level-loop gpu", "gpu");
}

// --backend cuda runs where a GPU is visible and otherwise ends with one line and exit 2.
TEST(Cli, CudaBackendRunsOrSaysWhyNot) {
  const Outcome o = run_zbfs("run --scale 8 --roots 4 -q --backend cuda");
  if (o.status == 0) {
    EXPECT_NE(o.out.find("harmonic_mean_TEPS"), std::string::npos) << o.out;
    return;
  }
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("--backend cuda"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
}

// The distributed device search through the host launcher: the same trees' edges as the
// CPU backend on 1D, 2D and hybrid layouts, and the device's copies in the record.
TEST(CliMpi, CudaHostBackendRunsOnEveryPartition) {
  if (!ZBFS_CUDA_BUILT) GTEST_SKIP() << "built without CUDA";
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 10 --roots 6 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  const auto json = std::filesystem::temp_directory_path() / "zbfs_cuda_host_mpi.json";
  for (const char* partition : {"1d", "2d", "hybrid --ranks-per-node 2"}) {
    const Outcome o = run_mpi(4, std::string("run --scale 10 --roots 6 -q --backend cuda-host --partition ") +
                                     partition + " --json " + json.string());
    ASSERT_EQ(o.status, 0) << partition << "\n" << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << partition;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["backend"], "cuda-host");
    EXPECT_GT(record["device"]["construction"]["host_to_device_bytes"].get<double>(), 0) << partition;
    EXPECT_GT(record["device"]["searches"]["device_to_host_bytes"].get<double>(), 0) << partition;
    // The steps' copies are booked in the phases that made them.
    EXPECT_GT(record["phases"]["local_expansion"]["host_to_device_bytes"]["sum"].get<double>(), 0) << partition;
    EXPECT_GT(record["phases"]["construction"]["host_to_device_bytes"]["sum"].get<double>(), 0) << partition;
    EXPECT_GT(record["device"]["kernel1"]["lists_s"].get<double>(), 0) << partition;
  }
  // Routes carry the device search's predecessor reduction as they carry the CPU's.
  for (const char* route : {"--route grid2 -p 2d --grid 2x2", "--route hypercube --no-dedup -p 1d"}) {
    const Outcome o = run_mpi(4, std::string("run --scale 10 --roots 6 -q --backend cuda-host ") + route);
    ASSERT_EQ(o.status, 0) << route << "\n" << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << route;
  }
  std::filesystem::remove(json);
}

// With a codec on the wire the device's id lists cross PCIe as bitpack frames: the same
// trees, and fewer bytes copied by the local steps.
TEST(CliMpi, CudaHostBackendCompressesWhatCrossesPcie) {
  if (!ZBFS_CUDA_BUILT) GTEST_SKIP() << "built without CUDA";
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const auto json = std::filesystem::temp_directory_path() / "zbfs_cuda_host_codec.json";
  std::vector<double> copied;
  std::string first_out;
  for (const char* codec : {"none", "bitpack"}) {
    const Outcome o =
        run_mpi(4, std::string("run --scale 12 --roots 6 -q --backend cuda-host -p 2d --grid 2x2 --codec ") + codec +
                       " --json " + json.string());
    ASSERT_EQ(o.status, 0) << codec << "\n" << o.err;
    if (first_out.empty()) first_out = o.out;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(first_out)) << codec;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    const nlohmann::json& local = record["phases"]["local_expansion"];
    copied.push_back(local["host_to_device_bytes"]["sum"].get<double>() +
                     local["device_to_host_bytes"]["sum"].get<double>());
  }
  EXPECT_LT(copied[1], copied[0] / 2) << "bitpack " << copied[1] << " bytes, none " << copied[0];
  // auto: each list priced on this machine's own calibration, which the record gives.
  const Outcome priced = run_mpi(
      4, "run --scale 12 --roots 6 -q --backend cuda-host -p 2d --grid 2x2 --codec auto --json " + json.string());
  ASSERT_EQ(priced.status, 0) << priced.err;
  EXPECT_EQ(nedge_lines(priced.out), nedge_lines(first_out));
  const nlohmann::json device = nlohmann::json::parse(slurp(json))["device"];
  EXPECT_EQ(device["id_transfer"], "priced");
  EXPECT_GT(device["pcie_calibration"]["copy_bytes_per_s"].get<double>(), 0);
  EXPECT_GT(device["id_lists"]["framed"].get<double>() + device["id_lists"]["raw"].get<double>(), 0);
  std::filesystem::remove(json);
}

// What the network carries: the device search sends exactly the CPU backend's bytes (the
// same frontiers and reports, the same masked gathers and ring), in 1D and in 2D, well
// under 5% of the ids as 64-bit words with bitpack.
TEST(CliMpi, CudaHostBackendSendsWhatTheCpuBackendSends) {
  if (!ZBFS_CUDA_BUILT) GTEST_SKIP() << "built without CUDA";
  const auto json = std::filesystem::temp_directory_path() / "zbfs_cuda_host_wire.json";
  const auto wire = [&](const std::string& backend, const std::string& partition) {
    const Outcome o = run_mpi(4, "run --scale 13 --roots 8 -q --no-validate --codec bitpack --backend " + backend +
                                     " -p " + partition + " --json " + json.string());
    EXPECT_EQ(o.status, 0) << backend << " " << partition << "\n" << o.err;
    const nlohmann::json phases = nlohmann::json::parse(slurp(json))["phases"];
    double bytes = 0;
    double ids = 0;
    for (const char* phase : {"row_exchange", "column_exchange"}) {
      if (!phases.contains(phase)) continue;
      bytes += phases[phase]["wire_bytes"]["sum"].get<double>();
      ids += phases[phase]["id_bytes"]["sum"].get<double>();
    }
    EXPECT_LT(bytes, 0.05 * ids) << backend << " " << partition;
    return bytes;
  };
  // The device search's top-down folds are not pipelined: against the CPU backend's bulk folds.
  EXPECT_EQ(wire("cuda-host", "1d"), wire("cpu --overlap off", "1d"));
  EXPECT_EQ(wire("cuda-host", "2d --grid 2x2"), wire("cpu --overlap off", "2d --grid 2x2"));
  std::filesystem::remove(json);
}

// --device-exchange cuda-aware through the host launcher (target memory is host memory,
// which any MPI library carries): the same trees as the staged exchange on every
// partition, as ids or as bitpack frames; the network carries the staged exchange's
// bytes give or take the sizes it sends first, and the local steps copy next to nothing
// between host and target. The wires that cannot run are refused with one line.
TEST(CliMpi, CudaAwareDeviceExchangeCarriesTheSameSearches) {
  if (!ZBFS_CUDA_BUILT) GTEST_SKIP() << "built without CUDA";
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 11 --roots 6 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  const auto json = std::filesystem::temp_directory_path() / "zbfs_device_exchange.json";
  struct Traffic {
    double wire = 0;
    double copied = 0;
  };
  const auto run = [&](const std::string& exchange, const std::string& rest) {
    const Outcome o = run_mpi(4, "run --scale 11 --roots 6 -q --backend cuda-host --device-exchange " + exchange + " " +
                                     rest + " --json " + json.string());
    EXPECT_EQ(o.status, 0) << exchange << " " << rest << "\n" << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << exchange << " " << rest;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["device_exchange"], exchange);
    EXPECT_EQ(record["device"]["exchange"], exchange);
    Traffic t;
    for (const char* phase : {"row_exchange", "column_exchange"}) {
      if (record["phases"].contains(phase)) t.wire += record["phases"][phase]["wire_bytes"]["sum"].get<double>();
    }
    const nlohmann::json& local = record["phases"]["local_expansion"];
    t.copied = local["host_to_device_bytes"]["sum"].get<double>() + local["device_to_host_bytes"]["sum"].get<double>();
    return t;
  };
  // Hybrid on four nodes of one: a 2 x 2 grid with row folds (on two nodes of two it is
  // 4 x 1, whose few small column gathers the sizes sent first outweigh).
  for (const char* partition : {"-p 1d", "-p 2d --grid 2x2", "-p hybrid --ranks-per-node 1"}) {
    const Traffic staged = run("staged", partition);
    const Traffic direct = run("cuda-aware", partition);
    EXPECT_GE(direct.wire, staged.wire) << partition;
    EXPECT_LE(direct.wire, 1.05 * staged.wire) << partition;
    EXPECT_LT(direct.copied, staged.copied / 10) << partition;
    run("cuda-aware", std::string(partition) + " --codec bitpack");
  }
  std::filesystem::remove(json);
  const Outcome cpu = run_mpi(2, "run --scale 8 -q --device-exchange cuda-aware");
  EXPECT_EQ(cpu.status, 2);
  EXPECT_NE(cpu.err.find("needs --backend cuda"), std::string::npos) << cpu.err;
  const Outcome zstd = run_mpi(2, "run --scale 8 -q --backend cuda-host --device-exchange cuda-aware --codec zstd");
  EXPECT_EQ(zstd.status, 2);
  EXPECT_NE(zstd.err.find("--codec bitpack"), std::string::npos) << zstd.err;
  const Outcome nccl = run_mpi(2, "run --scale 8 -q --backend cuda-host --device-exchange nccl");
  EXPECT_EQ(nccl.status, 2);
  EXPECT_EQ(nccl.err.find("zbfs: error:"), nccl.err.rfind("zbfs: error:")) << "printed once\n" << nccl.err;
  EXPECT_NE(nccl.err.find("--device-exchange nccl"), std::string::npos) << nccl.err;
  expect_usage_error("run --scale 8 --backend cuda-host --device-exchange cuda-aware", "--partition");
  expect_usage_error("run --scale 8 --device-exchange ring", "ring");
}

TEST(CliMpi, HybridRunsTraverseTheSameEdgesAsOneProcess) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 10 --roots 6 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  // Two nodes of two: the nodes stacked in one column, 4 x 1. Four nodes of two: the
  // nodes on a 2 x 2 grid, each node's ranks in one column, 4 x 2.
  const auto json = std::filesystem::temp_directory_path() / "zbfs_hybrid_grid.json";
  // The record says how the grid's ranks were stacked: a node's 2 ranks in one column.
  for (const auto& [ranks, grid] : {std::pair<int, const char*>{4, "4x1"}, {8, "4x2"}}) {
    const Outcome hybrid =
        run_mpi(ranks, "run --scale 10 --roots 6 -q --partition hybrid --ranks-per-node 2 --json " + json.string());
    ASSERT_EQ(hybrid.status, 0) << hybrid.err;
    EXPECT_EQ(nedge_lines(hybrid.out), nedge_lines(single.out)) << ranks;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["grid"], grid) << ranks;
    EXPECT_EQ(record["config"]["grid_stack"], 2) << ranks;
  }
  std::filesystem::remove(json);
  const Outcome uneven = run_mpi(4, "run --scale 10 -q --partition hybrid --ranks-per-node 3");
  EXPECT_EQ(uneven.status, 2) << uneven.err;
  EXPECT_NE(uneven.err.find("--ranks-per-node 3 does not divide"), std::string::npos) << uneven.err;
}

// The one-process kernel searches every generator's graph and given keys: the same
// traversed edges as the MPI path, with the list kept or produced again; a key that is
// not a vertex is refused.
TEST(CliMpi, SharedKernelSearchesEveryGeneratorAndGivenKeys) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  // Keys with edges, as a sampled run drew them, given back with --root (one twice).
  const auto json = std::filesystem::temp_directory_path() / "zbfs_shared_roots.json";
  const Outcome sampled = run_zbfs("run --scale 10 --roots 2 -q -p shared --json " + json.string());
  ASSERT_EQ(sampled.status, 0) << sampled.err;
  const nlohmann::json record = nlohmann::json::parse(slurp(json));
  std::filesystem::remove(json);
  const std::string first = std::to_string(record["searches"][0]["root"].get<std::uint64_t>());
  const std::string second = std::to_string(record["searches"][1]["root"].get<std::uint64_t>());
  const std::string given = "--root " + first + " --root " + second + " --root " + first;
  for (const std::string& graph : {std::string("--graph rmat"), std::string("--graph gnm --vertices 3000"),
                                   std::string("--graph rgg --vertices 2000"), given}) {
    const std::string args = "run --scale 10 -q " + graph;
    const Outcome mpi = run_mpi(2, args + " -p 1d");
    ASSERT_EQ(mpi.status, 0) << graph << "\n" << mpi.err;
    const Outcome shared = run_zbfs(args + " -p shared");
    ASSERT_EQ(shared.status, 0) << graph << "\n" << shared.err;
    EXPECT_EQ(nedge_lines(shared.out), nedge_lines(mpi.out)) << graph;
    if (graph.find("rgg") == std::string::npos) {
      const Outcome regenerated = run_zbfs(args + " -p shared --edge-list regenerate");
      ASSERT_EQ(regenerated.status, 0) << graph << "\n" << regenerated.err;
      EXPECT_EQ(nedge_lines(regenerated.out), nedge_lines(mpi.out)) << graph;
    }
  }
  expect_usage_error("run --scale 10 -q -p shared --root 1024", "--root 1024 is not a vertex");
}

TEST(CliMpi, PrunedRunsTraverseTheSameEdgesOnEveryPartition) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 10 --roots 6 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  std::vector<std::string> layouts{"--partition 1d", "--partition 2d --grid 2x2", "--partition 2d --grid 4x1"};
  // The device's distributed search prunes too (through its host launcher), over the
  // staged exchange and over a device wire.
  if (ZBFS_CUDA_BUILT) {
    for (const char* layout : {"--partition 1d", "--partition 2d --grid 2x2", "--partition hybrid"}) {
      layouts.push_back(std::string("--backend cuda-host ") + layout);
    }
    layouts.emplace_back("--backend cuda-host --partition 2d --grid 2x2 --device-exchange cuda-aware");
  }
  for (const std::string& layout : layouts) {
    const Outcome o = run_mpi(4, "run --scale 10 --roots 6 -q --prune " + layout);
    ASSERT_EQ(o.status, 0) << layout << ": " << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << layout;
  }
}

// --fail-on-rank works with the single-process kernel too, and names only real ranks.
TEST(CliErrors, InjectedFailuresOnEveryPartition) {
  const Outcome shared = run_zbfs("run -q --scale 8 --partition shared --fail-on-rank 0");
  EXPECT_EQ(shared.status, 1) << shared.err;
  EXPECT_EQ(shared.err, "zbfs: error: injected failure on rank 0 (--fail-on-rank)\n");
  EXPECT_TRUE(shared.out.empty()) << shared.out;
  const Outcome negative = run_mpi(3, "run -q --scale 8 --fail-on-rank -2");
  EXPECT_EQ(negative.status, 2) << negative.err;
  EXPECT_NE(negative.err.find("zbfs: error: --fail-on-rank must name a rank of the job: 0 to 2, got -2\n"),
            std::string::npos)
      << negative.err;
}

// The help texts say what the README says.
TEST(Cli, HelpTextsMatchTheReadme) {
  const Outcome help = run_zbfs("run --help");
  ASSERT_EQ(help.status, 0);
  std::string flat;  // CLI11 wraps long descriptions
  for (const char c : help.out) {
    if (c == '\n' || c == ' ') {
      if (flat.empty() || flat.back() != ' ') flat += ' ';
    } else {
      flat += c;
    }
  }
  EXPECT_NE(flat.find("OpenMP threads per rank, at most 4096 (0: OMP_NUM_THREADS if set, else the node's cores "
                      "split among its ranks)"),
            std::string::npos)
      << help.out;
  EXPECT_NE(flat.find("number of BFS search keys (NBFS); without it 64, or every vertex with edges when the graph "
                      "has fewer"),
            std::string::npos)
      << help.out;
}

TEST(CliErrors, RouteOptions) {
  expect_usage_error("run --route ring", "ring");
  expect_usage_error("run --route gridk --route-dims 2x", "--route-dims");
  expect_usage_error("run --route gridk --route-dims 2x2", "multiply to 4, not to the job's 1 rank\n");
  expect_usage_error("run --route grid2 --route-dims 1", "--route gridk");
  expect_usage_error("run --no-dedup", "needs --route");
  expect_usage_error("run --route-dims 1", "needs --route");
  expect_usage_error("run --partition shared --route grid2", "--route");
}

// Routed runs validate on both partitionings, count the same traversed edges as plain
// ones, and report their routed traffic (merged items, bytes per hop) in the JSON and
// the routed-phase table. In 2D the bulk folds' parents come from a routed read (the
// pipelined folds carry them: see OverlappedFoldsTraverseTheSameEdges).
TEST(CliMpi, RoutedRunsValidateAndReportTheirHops) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome plain = run_mpi(4, "run --scale 10 --roots 4 -q --partition 1d");
  ASSERT_EQ(plain.status, 0) << plain.err;
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_route.json";
  for (const char* route :
       {"--route grid2", "--route hypercube --codec bitpack", "--route gridk --route-dims 2x2 --no-dedup",
        "--partition 2d --grid 2x2 --route sparse --overlap off"}) {
    std::filesystem::remove(json_path);
    const Outcome o = run_mpi(
        4, std::string("run --scale 10 --roots 4 --direction top-down --json ") + json_path.string() + " " + route);
    ASSERT_EQ(o.status, 0) << route << ": " << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(plain.out)) << route;
    EXPECT_NE(o.err.find("routed phase"), std::string::npos) << o.err;
    const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
    EXPECT_FALSE(j["config"]["route"].is_null()) << route;
    EXPECT_FALSE(j["phases"]["validation"]["route"]["hop_bytes"].empty()) << route;
    if (std::string(route).find("2d") == std::string::npos) {
      EXPECT_FALSE(j["phases"]["row_exchange"]["route"]["hop_bytes"].empty()) << route;
    } else {
      EXPECT_FALSE(j["phases"]["predecessor_reduction"]["route"]["hop_bytes"].empty()) << route;
    }
  }
  std::filesystem::remove(json_path);
}

TEST(CliMpi, EveryRankCountPrintsOneResultBlock) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_mpi.json";
  std::filesystem::remove(json_path);
  // A row of three ranks, so that the folds travel (alone on one node, the default grid
  // would be 3x1; the next test checks that).
  const Outcome o = run_mpi(3, "run --scale 9 --roots 4 --partition 2d --grid 1x3 --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(count_lines(o.out), 36) << o.out;
  EXPECT_NE(o.out.find("NBFS:                           4\n"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("phase breakdown over 3 ranks"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("row_exchange"), std::string::npos) << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["num_mpi_processes"], 3);
  EXPECT_EQ(j["config"]["partition"], "2d");
  EXPECT_EQ(j["config"]["grid"], "1x3");
  EXPECT_GT(j["phases"]["row_exchange"]["raw_bytes"]["sum"].get<double>(), 0.0);
  EXPECT_GE(j["phases"]["local_expansion"]["time_s"]["max"].get<double>(),
            j["phases"]["local_expansion"]["time_s"]["min"].get<double>());
  for (const auto& s : j["searches"]) EXPECT_TRUE(s["phases"].contains("termination_check"));
  std::filesystem::remove(json_path);
}

TEST(CliMpi, TraversedEdgesAreTheSameForEveryLayout) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 10 --roots 6 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  for (const char* layout : {"--partition 1d", "--partition 2d", "--partition 2d --grid 2x2",
                             "--partition 2d --grid 1x4 --column-gather union"}) {
    const Outcome o = run_mpi(4, std::string("run --scale 10 --roots 6 -q ") + layout);
    ASSERT_EQ(o.status, 0) << layout << ": " << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << layout;
  }
}

// Without --grid, a 2D job whose ranks share one node runs on a ranks x 1 grid.
TEST(CliMpi, TwoDimensionalGridDefaultsToOneColumnOnOneNode) {
  const std::filesystem::path json_path = std::filesystem::temp_directory_path() / "zbfs_default_grid.json";
  const Outcome o = run_mpi(2, "run --scale 8 --roots 2 -q --partition 2d --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(json_path))["config"]["grid"], "2x1");
  std::filesystem::remove(json_path);
}

int count_occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// mpirun adds its own banner about the exit status; zbfs's line appears once.
TEST(CliMpi, ConfigurationErrorsArePrintedOnce) {
  const Outcome o = run_mpi(2, "run --partition 2d --grid 3x3");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_EQ(count_occurrences(o.err, "zbfs: error:"), 1) << o.err;
  EXPECT_NE(o.err.find("job has 2"), std::string::npos) << o.err;
  const Outcome shared = run_mpi(2, "run --partition shared");
  EXPECT_EQ(shared.status, 2) << shared.err;
  EXPECT_NE(shared.err.find("one process"), std::string::npos) << shared.err;
}

// The ways exchanges travel that a failure must not hang: matched messages, one-sided
// epochs, pipelined folds with batches in flight, directly or relayed along a route.
const char* const kTransportFlags[] = {"--transport two-sided", "--transport rma", "--overlap on --batch-bytes 64",
                                       "--overlap on --batch-bytes 64 --route grid2"};

TEST(CliMpi, AFailingRankEndsTheWholeJob) {
  for (const char* transport : kTransportFlags) {
    const auto start = std::chrono::steady_clock::now();
    const Outcome o = run_mpi(3, std::string("run --scale 12 --roots 64 -q --fail-on-rank 1 ") + transport);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(o.status, 0) << transport;
    EXPECT_NE(o.status, 124) << transport << ": the job hung until timeout killed it";
    EXPECT_NE(o.err.find("zbfs: error: rank 1: injected failure"), std::string::npos) << o.err;
    EXPECT_LT(seconds, 60.0) << transport;
  }
}

// --transport rma: the exchanges' rounds as one-sided puts give the same trees on every
// partition, with and without a codec and a route; the record names the transport.
TEST(CliMpi, OneSidedTransportTraversesTheSameEdges) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 11 --roots 8 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  const auto json = std::filesystem::temp_directory_path() / "zbfs_rma.json";
  for (const char* rest : {"-p 1d", "-p 2d --grid 2x2 --codec bitpack", "-p hybrid --ranks-per-node 2",
                           "-p 1d --route grid2", "-p 2d --grid 2x2 --column-gather union"}) {
    const Outcome o =
        run_mpi(4, std::string("run --scale 11 --roots 8 -q --transport rma ") + rest + " --json " + json.string());
    ASSERT_EQ(o.status, 0) << rest << "\n" << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << rest;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["transport"], "rma") << rest;
    // The windows a rank held (at least one, of two 64 KiB halves).
    EXPECT_GE(record["rma_windows"]["bytes_max"].get<double>(), 2.0 * 65536) << rest;
  }
  std::filesystem::remove(json);
  expect_usage_error("run --scale 8 --partition shared --transport rma", "--transport");
  expect_usage_error("run --scale 8 --transport shmem", "shmem");
}

// --edge-list regenerate: one process builds kernel 1 from tuples the generator produces
// as it goes and validates against them produced again; ranks drop their slices after
// kernel 1. The searches traverse what they traverse with the list kept, the record says
// which way the run went, and a list that cannot be produced again is refused.
TEST(CliMpi, RegeneratedEdgeListsGiveTheSameSearches) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const auto json = std::filesystem::temp_directory_path() / "zbfs_edge_list.json";
  const Outcome kept =
      run_zbfs("run --scale 12 --roots 8 -q --partition shared --edge-list keep --json " + json.string());
  ASSERT_EQ(kept.status, 0) << kept.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["memory"]["edge_list_kept"], true);
  const Outcome regenerated =
      run_zbfs("run --scale 12 --roots 8 -q --partition shared --edge-list regenerate --json " + json.string());
  ASSERT_EQ(regenerated.status, 0) << regenerated.err;
  EXPECT_EQ(nedge_lines(regenerated.out), nedge_lines(kept.out));
  const nlohmann::json record = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(record["config"]["edge_list"], "regenerate");
  EXPECT_EQ(record["memory"]["edge_list_kept"], false);
  EXPECT_GT(record["generation_time_s"].get<double>(), 0.0);
  EXPECT_EQ(record["config"]["validate"], true);
  for (const char* rest : {"-p 1d", "-p 2d --grid 2x2 --route grid2", "--graph gnm --vertices 3000"}) {
    const std::string args = std::string("run --scale 12 --roots 8 -q ") + rest;
    const Outcome a = run_mpi(4, args + " --edge-list keep");
    const Outcome b = run_mpi(4, args + " --edge-list regenerate --json " + json.string());
    ASSERT_EQ(a.status, 0) << rest << "\n" << a.err;
    ASSERT_EQ(b.status, 0) << rest << "\n" << b.err;
    EXPECT_EQ(nedge_lines(b.out), nedge_lines(a.out)) << rest;
    EXPECT_EQ(nlohmann::json::parse(slurp(json))["memory"]["edge_list_kept"], false) << rest;
  }
  std::filesystem::remove(json);
  expect_usage_error("run --scale 8 --graph rgg --edge-list regenerate", "rgg");
  expect_usage_error("run --scale 8 --edge-list sometimes", "--edge-list");
}

// --adjacency compressed: the one-process kernel on byte-coded lists traverses what it
// traverses on plain lists, with the list kept and produced again, validated, and so do
// the distributed kernels; the record says which lists the run held and their size; what
// reads plain lists refuses it.
TEST(CliMpi, CompressedListsGiveTheSameSearches) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const auto json = std::filesystem::temp_directory_path() / "zbfs_adjacency.json";
  const std::string args = "run --scale 12 --roots 8 -q -p shared --json " + json.string();
  const Outcome plain = run_zbfs(args + " --adjacency plain");
  ASSERT_EQ(plain.status, 0) << plain.err;
  const nlohmann::json plain_record = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(plain_record["memory"]["adjacency"], "plain");
  for (const char* rest : {"", " --edge-list regenerate", " --graph gnm --vertices 3000", " --graph rgg"}) {
    const Outcome compressed = run_zbfs(args + " --adjacency compressed" + rest);
    ASSERT_EQ(compressed.status, 0) << rest << "\n" << compressed.err;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["adjacency"], "compressed") << rest;
    EXPECT_EQ(record["memory"]["adjacency"], "compressed") << rest;
    if (std::string(rest).find("--graph") != std::string::npos) continue;
    EXPECT_EQ(nedge_lines(compressed.out), nedge_lines(plain.out)) << rest;
    EXPECT_LT(record["memory"]["adjacency_bytes"].get<double>(),
              0.6 * plain_record["memory"]["adjacency_bytes"].get<double>());
  }
  // Distributed: every rank's lists compressed once built; the same searches.
  for (const char* rest : {"-p 1d", "-p 2d --grid 2x2", "-p 2d --grid 2x2 --route grid2 --codec auto"}) {
    const std::string mpi_args = std::string("run --scale 12 --roots 8 -q --json ") + json.string() + " " + rest;
    const Outcome a = run_mpi(4, mpi_args + " --adjacency plain");
    ASSERT_EQ(a.status, 0) << rest << "\n" << a.err;
    const double plain_bytes = nlohmann::json::parse(slurp(json))["memory"]["adjacency_bytes"].get<double>();
    const Outcome b = run_mpi(4, mpi_args + " --adjacency compressed");
    ASSERT_EQ(b.status, 0) << rest << "\n" << b.err;
    EXPECT_EQ(nedge_lines(b.out), nedge_lines(a.out)) << rest;
    EXPECT_EQ(nedge_lines(b.out), nedge_lines(plain.out)) << rest;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["memory"]["adjacency"], "compressed") << rest;
    EXPECT_LT(record["memory"]["adjacency_bytes"].get<double>(), 0.75 * plain_bytes) << rest;
  }
  std::filesystem::remove(json);
  expect_usage_error("run --scale 8 -p shared --prune --adjacency compressed", "--prune");
  expect_usage_error("run --scale 8 -p shared --adjacency zipped", "--adjacency");
}

// --overlap on: pipelined top-down folds give the same trees on every partition, with
// and without a codec, in batches of one word and of the default size; the record names
// the setting and books the overlapped traffic; what it cannot pipeline is refused.
TEST(CliMpi, OverlappedFoldsTraverseTheSameEdges) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const Outcome single = run_zbfs("run --scale 11 --roots 8 -q --partition shared");
  ASSERT_EQ(single.status, 0) << single.err;
  const auto json = std::filesystem::temp_directory_path() / "zbfs_overlap.json";
  for (const char* rest : {"-p 1d", "-p 1d --batch-bytes 8 --codec auto", "-p 2d --grid 2x2 --codec bitpack",
                           "-p hybrid --ranks-per-node 1", "-p 2d --grid 1x4 --column-gather union --transport rma",
                           "-p 1d --route grid2 --codec auto --batch-bytes 64",
                           "-p 2d --grid 1x4 --route gridk --route-dims 2x2 --no-dedup"}) {
    const Outcome o =
        run_mpi(4, std::string("run --scale 11 --roots 8 -q --overlap on ") + rest + " --json " + json.string());
    ASSERT_EQ(o.status, 0) << rest << "\n" << o.err;
    EXPECT_EQ(nedge_lines(o.out), nedge_lines(single.out)) << rest;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["overlap"], true) << rest;
    EXPECT_GT(record["phases"]["row_exchange"]["stream_modelled_time_s"]["sum"].get<double>(), 0.0) << rest;
    EXPECT_GT(record["phases"]["row_exchange"]["stream_held_time_s"]["sum"].get<double>(), 0.0) << rest;
    EXPECT_LE(record["phases"]["row_exchange"]["stream_wait_time_s"]["sum"].get<double>(),
              record["phases"]["row_exchange"]["stream_held_time_s"]["sum"].get<double>())
        << rest;
    EXPECT_GE(record["phases"]["row_exchange"]["overlap_time_s"]["min"].get<double>(), 0.0) << rest;
    if (std::string_view(rest).find("--route") != std::string_view::npos) {
      // Every hop of the route carried batches.
      const nlohmann::json& hops = record["phases"]["row_exchange"]["route"]["hop_bytes"];
      ASSERT_GE(hops.size(), 2u) << rest;
      for (const auto& bytes : hops) EXPECT_GT(bytes.get<double>(), 0.0) << rest;
    }
  }
  // The phase table's overlap section: the pipelined phase, its modelled and held time.
  const Outcome table = run_mpi(2, "run --scale 9 --roots 2 --overlap on");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.err.find("overlapped phase         model_s    held_s    wait_s overlap_s   hidden%\nrow_exchange"),
            std::string::npos)
      << table.err;
  // Off, nothing is pipelined; unset, it is on where it applies (with a route too, not
  // with a codec or one-sided rounds).
  for (const auto& [flags, pipelined] :
       {std::pair{"--overlap off", false}, std::pair{"", true}, std::pair{"--route sparse", true},
        std::pair{"--codec auto --codec-trial off", false}, std::pair{"--codec bitpack --overlap on", true},
        std::pair{"--transport rma", false}, std::pair{"--transport rma --overlap on", true}}) {
    ASSERT_EQ(run_mpi(2, std::string("run --scale 9 --roots 2 -q ") + flags + " --json " + json.string()).status, 0);
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(record["config"]["overlap"], pipelined) << flags;
    EXPECT_EQ(record["phases"]["row_exchange"]["stream_held_time_s"]["sum"].get<double>() > 0, pipelined) << flags;
  }
  std::filesystem::remove(json);
  expect_usage_error("run --scale 8 --partition shared --overlap on", "--overlap on applies to MPI exchanges");
  expect_usage_error("run --scale 8 --overlap on --backend cuda-host --partition 1d", "--backend cpu");
  expect_usage_error("run --scale 8 --overlap on --dump-frontiers /tmp/x", "--overlap off");
  expect_usage_error("run --scale 8 --batch-bytes 4", "--batch-bytes must be between 8 and");
  expect_usage_error("run --scale 8 --overlap maybe", "maybe");
}

void expect_killed_rank_ends_the_job(const std::string& transport) {
  // Start a run long enough to be mid-flight, wait until mpirun (the child of `timeout`)
  // has started its ranks (polled, not a fixed sleep that a fast machine outruns or a slow
  // one undershoots), then kill the newest rank. `killed` is 1 when a rank was killed.
  const std::string script = std::string("timeout 120 ") + ZBFS_MPIEXEC + " -np 3 " + ZBFS_BINARY +
                             " run --scale 18 --roots 64 -q " + transport +
                             " >/dev/null 2>&1 & job=$!; killed=0; "
                             "for i in $(seq 300); do mp=$(pgrep -P $job); "
                             "if [ -n \"$mp\" ] && [ $(pgrep -c -P $mp) -ge 3 ]; then "
                             "pkill -9 -n -P $mp && killed=1; break; fi; sleep 0.1; done; "
                             "wait $job; echo $? $killed";
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = run_command("bash -c", "'" + script + "'");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int job_status = 0;
  int killed = 0;
  std::istringstream(o.out) >> job_status >> killed;
  ASSERT_EQ(killed, 1) << "no rank of the job was found to kill: " << o.out;
  EXPECT_NE(job_status, 0);
  EXPECT_NE(job_status, 124) << "the job hung until timeout killed it";
  EXPECT_LT(seconds, 60.0);
}

TEST(CliMpi, AKilledRankEndsTheWholeJob) {
  for (const char* transport : kTransportFlags) {
    SCOPED_TRACE(transport);
    expect_killed_rank_ends_the_job(transport);
  }
}

// ---- Graph files (--input, generate, convert, --write-levels/--write-parents) ----

// A fresh directory per test, removed at the end.
class GraphFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zbfs_cli_files_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& content) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(GraphFileTest, MalformedFilesGiveTheFileLineAndExitStatus2) {
  const std::string text = file("bad.txt", "# header\n0 1\n1 2\n\n2 x7 1.0\n");
  expect_usage_error("run -q --input " + text, text + ":5: 'x7' is not a vertex id");
  const std::string one_id = file("one.txt", "0 1\r\n1\r\n");
  expect_usage_error("run -q --input " + one_id, one_id + ":2: expected two vertex ids");
  const std::string range =
      file("range.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n5 5 3\n1 2\n6 1\n2 3\n");
  expect_usage_error("run -q --input " + range, range + ":5: id 6 is out of range for the declared size (1..5)");
  const std::string count = file("count.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 4\n1 2\n2 3\n");
  expect_usage_error("run -q --input " + count, count + ": the size line declares 4 entries, the file has 2");
  const std::string square = file("square.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 2 1\n");
  expect_usage_error("run -q --input " + square, square + ":2: the matrix is 3 x 4");
  const std::string value = file("value.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n");
  expect_usage_error("run -q --input " + value, value + ":3: expected 3 fields (row, column, value), found 2");
  expect_usage_error("run -q --input " + text + " --format binary", text + ": wrong magic");
  expect_usage_error("run -q --input " + path("missing.txt"), "cannot open '" + path("missing.txt") + "'");
  expect_usage_error("run -q --input " + file("empty.txt", "# nothing\n"), "holds no edges");
  // An id past 2^64 used to wrap while read (this one to 0, a self-loop).
  const std::string wrapped = file("wrapped.txt", "1 2\n0 18446744073709551616\n");
  expect_usage_error("run -q --input " + wrapped, wrapped + ":2: vertex id '18446744073709551616' is too large");
  // Self-loops only: no search key; this printed a result block of 0 searches.
  expect_usage_error("run -q --input " + file("loops.txt", "0 0\n1 1\n"), "nothing to search");
}

// A file whose lines end in CR alone read as one line, its later edges dropped as extra
// fields (2 vertices, exit 0): refused, naming the line, on one rank and on four, by run
// and convert; CRLF files read as before.
TEST_F(GraphFileTest, BareCarriageReturnsAreRefusedNotDropped) {
  const std::string cr = file("cr.txt", "0 1\r1 2\r2 3\r");
  const std::string mention = ":1: a carriage return inside the line";
  expect_usage_error("run -q --roots 1 --input " + cr, cr + mention);
  const std::string commented = file("cr-comment.txt", "# from an old Mac\r0 1\r1 2\r");
  expect_usage_error("run -q --roots 1 --input " + commented, commented + mention);
  const std::string mtx = file("cr.mtx", "%%MatrixMarket matrix coordinate pattern general\r3 3 2\r1 2\r2 3\r");
  expect_usage_error("run -q --roots 1 --input " + mtx, mtx + mention);
  expect_usage_error("convert " + cr + " " + path("cr.bin"), cr + mention);
  EXPECT_FALSE(std::filesystem::exists(path("cr.bin")));
  const Outcome ranks = run_mpi(4, "run -q --roots 1 --input " + cr);
  EXPECT_EQ(ranks.status, 2) << ranks.err;
  EXPECT_EQ(ranks.err.find("zbfs: error:"), ranks.err.rfind("zbfs: error:")) << "printed once\n" << ranks.err;
  EXPECT_NE(ranks.err.find(cr + mention), std::string::npos) << ranks.err;
  const Outcome crlf = run_zbfs("run -q --roots 1 --json " + path("crlf.json") + " --input " +
                                file("crlf.txt", "0 1\r\n1 2\r\n2 3\r\n"));
  ASSERT_EQ(crlf.status, 0) << crlf.err;
  EXPECT_NE(slurp(path("crlf.json")).find("\"num_input_edges\": 3"), std::string::npos);
}

// A root without edges is named by the file's own id, as the user wrote it (Matrix
// Market ids are 1-based; --relabel maps sparse ids), on one rank as on several.
TEST_F(GraphFileTest, RootsWithoutEdgesAreNamedByTheFilesIds) {
  const std::string mtx = file("isolated.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 2\n1 2\n2 3\n");
  const std::string sparse = file("sparse.txt", "10 20\n20 30\n40 40\n");
  for (const std::string& layout : {std::string(), std::string(" -p 1d")}) {
    expect_usage_error("run -q --input " + mtx + " --root 5" + layout, "--root 5 has no edges");
    expect_usage_error("run -q --input " + sparse + " --relabel --root 40" + layout, "--root 40 has no edges");
  }
  const Outcome ranks = run_mpi(4, "run -q --input " + mtx + " --root 5");
  EXPECT_EQ(ranks.status, 2) << ranks.err;
  EXPECT_NE(ranks.err.find("zbfs: error: --root 5 has no edges"), std::string::npos) << ranks.err;
}

TEST_F(GraphFileTest, TruncatedOrCorruptBinaryFilesAreRefused) {
  const std::string good = path("g.zel");
  ASSERT_EQ(run_zbfs("generate " + good + " --scale 6 --edgefactor 4").status, 0);
  std::string bytes = slurp(good);
  ASSERT_EQ(bytes.size(), 48U + 256U * 8U);  // header + 256 edges of two 4-byte ids
  expect_usage_error("run -q --input " + file("cut.zel", bytes.substr(0, bytes.size() - 3)),
                     "truncated: the header declares 256 edges (2096 bytes), the file has 2093 bytes");
  expect_usage_error("run -q --input " + file("short.zel", bytes.substr(0, 30)), "truncated: 30 bytes");
  std::string corrupt = bytes;
  corrupt[20] = '\x7f';
  expect_usage_error("run -q --input " + file("corrupt.zel", corrupt), "corrupted header");
  std::string out_of_range = bytes;
  out_of_range.replace(48 + 8 * 9, 4, std::string("\xff\xff\x00\x00", 4));  // edge 9's first id: 65535 >= 64
  expect_usage_error("run -q --input " + file("range.zel", out_of_range) + " --format binary", "edge 9 (65535, ");
}

TEST_F(GraphFileTest, NothingIsHalfWrittenWhenConversionFails) {
  const std::string bad = file("bad.txt", "0 1\n1 2\n2 3\nthree 4\n");
  const std::string out = path("out.zel");
  const Outcome o = run_mpi(3, "convert " + bad + " " + out);
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find(bad + ":4: 'three' is not a vertex id"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
  expect_usage_error("run --scale 6 --roots 1 --write-parents " + path("no/such/dir/p.txt"), "cannot write");
  // Output paths are checked before the work, not when the file is renamed into place.
  expect_usage_error("generate " + dir_.string() + " --scale 6",
                     "cannot write '" + dir_.string() + "': it is a directory");
  expect_usage_error("run -q --scale 6 --write-levels " + dir_.string(), "it is a directory");
  expect_usage_error("convert " + bad + " " + path("no/such/dir/g.zel"),
                     "cannot write '" + path("no/such/dir/g.zel") + "': No such file or directory");
  // --json says why, like the other output flags.
  expect_usage_error("run -q --scale 6 --json " + dir_.string(),
                     "cannot write '" + dir_.string() + "': it is a directory");
  expect_usage_error("run -q --scale 6 --json " + path("no/such/dir/r.json"),
                     "cannot write '" + path("no/such/dir/r.json") + "': No such file or directory");
}

// convert refuses to write over the file it reads, by any name (./, a link, a hard link).
TEST_F(GraphFileTest, ConvertRefusesToOverwriteItsInput) {
  const std::string g = file("g.txt", "0 1\n1 2\n");
  expect_usage_error("convert " + g + " " + g, "the input and the output name the same file '" + g + "'");
  expect_usage_error("convert " + g + " " + dir_.string() + "/./g.txt", "the input and the output name the same file");
  std::filesystem::create_symlink(g, path("link.txt"));
  expect_usage_error("convert " + path("link.txt") + " " + g, "the input and the output name the same file");
  std::filesystem::create_hard_link(g, path("hard.txt"));
  expect_usage_error("convert " + g + " " + path("hard.txt") + " --to edgelist",
                     "the input and the output name the same file");
  EXPECT_EQ(slurp(g), "0 1\n1 2\n");
  const Outcome mpi = run_mpi(2, "convert " + g + " " + g);
  EXPECT_EQ(mpi.status, 2) << mpi.err;
  EXPECT_EQ(slurp(g), "0 1\n1 2\n");
}

// generate and convert print one "wrote" line, and none with -q.
TEST_F(GraphFileTest, QuietGenerateAndConvertPrintNothing) {
  const Outcome loud = run_zbfs("generate " + path("g.txt") + " --scale 6");
  ASSERT_EQ(loud.status, 0) << loud.err;
  EXPECT_EQ(loud.out.rfind("zbfs: wrote " + path("g.txt") + " (edgelist): 64 vertices, 1024 edges", 0), 0U) << loud.out;
  for (const std::string& args :
       {"generate -q " + path("g.zel") + " --scale 6", "convert " + path("g.txt") + " " + path("c.zel") + " --quiet"}) {
    const Outcome quiet = run_zbfs(args);
    ASSERT_EQ(quiet.status, 0) << args << "\n" << quiet.err;
    EXPECT_TRUE(quiet.out.empty()) << args << "\n" << quiet.out;
    EXPECT_TRUE(quiet.err.empty()) << args << "\n" << quiet.err;
  }
}

TEST_F(GraphFileTest, ConflictingFlagsAreRefused) {
  const std::string g = file("g.txt", "0 1\n1 2\n");
  expect_usage_error("run -q --input " + g + " --scale 10", "--scale describes a generated graph");
  expect_usage_error("run -q --input " + g + " --graph gnm", "--graph describes a generated graph");
  expect_usage_error("run --relabel", "--relabel needs --input");
  expect_usage_error("run --format mtx", "--format needs --input");
  expect_usage_error("run -q --input " + g + " --format csv", "--format must be edgelist, mtx or binary");
  expect_usage_error("run -q --input " + g + " --root 7 --json " + path("r.json"),
                     "--root 7 is not a vertex of the graph");
  EXPECT_FALSE(std::filesystem::exists(path("r.json")));  // the writability probe leaves no empty report
  expect_usage_error("run -q --input " + g + " --root 0 --roots 2", "--roots and --root disagree");
  // Two of the run's files on one path would overwrite each other, or the input.
  expect_usage_error("run -q --input " + g + " --write-parents " + g, "--input and --write-parents name the same file");
  EXPECT_EQ(slurp(g), "0 1\n1 2\n");
  expect_usage_error("run -q --scale 6 --write-levels " + path("x.txt") + " --write-parents " + path("./x.txt"),
                     "--write-levels and --write-parents name the same file");
  expect_usage_error("run -q --scale 6 --write-levels " + path("x.txt") + " --json " + path("x.txt"),
                     "--write-levels and --json name the same file");
  EXPECT_FALSE(std::filesystem::exists(path("x.txt")));
  expect_usage_error("run --graph rmat --rmat 0.5,0.4,0.3", "a + b + c < 1");
  expect_usage_error("run --graph rmat --rmat 0.5", "--rmat must look like");
  expect_usage_error("run --graph kronecker --vertices 100", "--vertices applies to --graph gnm and rgg");
  expect_usage_error("run --graph rgg --radius 3", "--radius must be in");
  expect_usage_error("generate " + path("x.zel") + " --scale 43", "--scale must be in [1, 42]");
  expect_usage_error("generate " + path("x.zel") + " --scale 40", "writing this graph needs about");
  EXPECT_FALSE(std::filesystem::exists(path("x.zel")));
  expect_usage_error("run -q --input " + g + " --partition shared --edge-list regenerate", "a file's list");
}

// Written by the MPI kernels and by the one-process kernel alike.
TEST_F(GraphFileTest, HandWrittenFilesGiveTheExpectedLevelsAndParents) {
  // A SNAP-style file: comments, a blank line, CRLF ends, weights, ids starting at 1,
  // vertex 9 isolated from the rest. BFS from 1: 1 -> 2, 3 -> 4 -> 5.
  const std::string snap =
      file("g.txt", "# FromNodeId\tToNodeId\n% also a comment\n\n1\t2\r\n1 3 0.5\r\n3 4\n4 5\n9 8\n");
  const std::string levels = path("levels.txt");
  const std::string parents = path("parents.txt");
  // The MPI kernels and the one-process kernel (on plain and compressed lists) alike.
  for (const std::string& shared :
       {std::string(), std::string(" -p shared"), std::string(" -p shared --adjacency compressed")}) {
    SCOPED_TRACE(shared.empty() ? "mpi" : shared);
    const std::string write = " --root 1 -q --write-levels " + levels + " --write-parents " + parents;
    const Outcome o =
        shared.empty() ? run_mpi(2, "run --input " + snap + write) : run_zbfs("run --input " + snap + write + shared);
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(slurp(levels),
              "# zbfs levels: search key 1, 10 vertices; vertex level (-1: unreached)\n"
              "0 -1\n1 0\n2 1\n3 1\n4 2\n5 3\n6 -1\n7 -1\n8 -1\n9 -1\n");
    EXPECT_EQ(slurp(parents),
              "# zbfs parents: search key 1, 10 vertices; vertex parent (-1: unreached)\n"
              "0 -1\n1 1\n2 1\n3 1\n4 3\n5 4\n6 -1\n7 -1\n8 -1\n9 -1\n");
    // --relabel drops the absent ids and still reports the file's.
    const std::string relabel = "run --input " + snap + " --relabel --root 9 -q --write-parents " + parents;
    const Outcome relabelled = shared.empty() ? run_mpi(3, relabel + " --partition 2d") : run_zbfs(relabel + shared);
    ASSERT_EQ(relabelled.status, 0) << relabelled.err;
    EXPECT_EQ(slurp(parents),
              "# zbfs parents: search key 9, 7 vertices; vertex parent (-1: unreached)\n"
              "1 -1\n2 -1\n3 -1\n4 -1\n5 -1\n8 9\n9 9\n");
    // A symmetric Matrix Market file (one triangle stored) in binary output.
    const std::string mtx =
        file("g.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n% tri\n4 4 3\n2 1 5\n3 2 5\n4 4 1\n");
    const Outcome m =
        run_zbfs("run --input " + mtx + " --root 3 -q --write-levels " + levels + " --write-format binary" + shared);
    ASSERT_EQ(m.status, 0) << m.err;
    const std::string bytes = slurp(levels);
    ASSERT_EQ(bytes.size(), 32U + 4U * 16U);
    EXPECT_EQ(bytes.substr(0, 8), "ZBFSBFSR");
    const auto word = [&](std::size_t at) {
      std::uint64_t w = 0;
      std::memcpy(&w, bytes.data() + at, 8);
      return static_cast<std::int64_t>(w);
    };
    EXPECT_EQ(word(16), 4);  // vertices
    EXPECT_EQ(word(24), 3);  // search key, in the file's 1-based ids
    const std::int64_t expected[4][2] = {{1, 2}, {2, 1}, {3, 0}, {4, -1}};
    for (int v = 0; v < 4; ++v) {
      EXPECT_EQ(word(32 + 16 * static_cast<std::size_t>(v)), expected[v][0]);
      EXPECT_EQ(word(40 + 16 * static_cast<std::size_t>(v)), expected[v][1]);
    }
  }
}

TEST_F(GraphFileTest, GenerateConvertAndReadAgreeAcrossFormatsAndRankCounts) {
  const std::string binary = path("k.zel");
  const std::string text = path("k.txt");
  const std::string mtx = path("k.mtx");
  const std::string converted = path("k2.zel");
  ASSERT_EQ(run_mpi(3, "generate " + binary + " --scale 9").status, 0);
  ASSERT_EQ(run_mpi(2, "generate " + text + " --scale 9").status, 0);
  ASSERT_EQ(run_zbfs("generate " + mtx + " --scale 9").status, 0);
  const Outcome c = run_mpi(4, "convert " + text + " " + converted);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("512 vertices, 8192 edges"), std::string::npos) << c.out;
  EXPECT_EQ(slurp(converted), slurp(binary));  // byte for byte, whoever wrote it
  // The same graph, read from every format on different rank counts, and generated: the
  // same searches and traversed edges.
  const auto nedge = [](const Outcome& o) {
    const auto at = o.out.find("median_nedge:");
    return at == std::string::npos ? std::string("none") : o.out.substr(at, o.out.find('\n', at) - at);
  };
  const Outcome generated = run_zbfs("run --scale 9 --roots 8 -q");
  ASSERT_EQ(generated.status, 0);
  for (const auto& [ranks, input] : {std::pair{1, binary}, {3, text}, {4, mtx}, {2, converted}}) {
    const Outcome o = run_mpi(ranks, "run --input " + input + " --roots 8 -q");
    ASSERT_EQ(o.status, 0) << input << ": " << o.err;
    EXPECT_EQ(nedge(o), nedge(generated)) << input;
  }
}

TEST_F(GraphFileTest, GeneratorFamiliesRunAndValidate) {
  for (const char* graph : {"--graph rmat --rmat 0.5,0.2,0.2", "--graph gnm --vertices 3000 --edges 20000",
                            "--graph rgg --vertices 3000", "--graph rgg --radius 0.05"}) {
    const Outcome o = run_mpi(3, std::string("run --scale 10 --roots 4 -q --partition 2d --grid 1x3 ") + graph);
    EXPECT_EQ(o.status, 0) << graph << ": " << o.err;
    EXPECT_NE(o.out.find("bfs  max_validate"), std::string::npos);
    // Pruned: other families hang other forests (G(n, m) at this density few, a sparse
    // one many small trees), with the same trees' edges.
    const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
    const Outcome pruned = run_mpi(3, std::string("run --scale 10 --roots 4 -q --partition 1d --prune ") + graph);
    ASSERT_EQ(pruned.status, 0) << graph << ": " << pruned.err;
    EXPECT_EQ(nedge_lines(pruned.out), nedge_lines(o.out)) << graph;
  }
  const Outcome sparse = run_mpi(2, "run --roots 8 -q --graph gnm --vertices 5000 --edges 4000 --prune --partition 2d");
  EXPECT_EQ(sparse.status, 0) << sparse.err;
  EXPECT_NE(sparse.out.find("bfs  max_validate"), std::string::npos);
}

}  // namespace

TEST(CliErrors, NetworkOptions) {
  expect_usage_error("run --network token-ring", "token-ring");
  expect_usage_error("run --network 1gbe --network-latency fast", "--network-latency");
  expect_usage_error("run --network 1gbe --network-bandwidth 0gbit", "--network-bandwidth");
  expect_usage_error("run --ranks-per-node -1", "--ranks-per-node");
  expect_usage_error("run --ranks-per-node 0", "--ranks-per-node");  // 0 is not "the default"
  expect_usage_error("model /nonexistent/run.json --ranks 4 --ranks-per-node 0", "--ranks-per-node");
  expect_usage_error("model", "record");
  expect_usage_error("model /nonexistent/run.json --ranks 4", "/nonexistent/run.json");
  expect_usage_error("model " + std::string(ZBFS_BINARY) + " --ranks 4", "not a JSON document");
}

// Integer flags are plain decimal: CLI11 alone reads "010" as octal 8 and "0x9" as hex,
// wraps "-1" for an unsigned flag and saturates a number past 2^64.
TEST(CliErrors, NumberFlagsAreReadAsWritten) {
  expect_usage_error("run --scale 0x9", "--scale: '0x9' is not an integer");
  expect_usage_error("run --scale 1e1", "--scale: '1e1' is not an integer");
  expect_usage_error("run --root -1", "--root: '-1' is not a non-negative integer");
  expect_usage_error("run --seed 18446744073709551616", "--seed: '18446744073709551616' is out of range");
  expect_usage_error("model /nonexistent/run.json -P 0x10", "--ranks: '0x10' is not an integer");
  // 0 is "the default" inside; given explicitly it is refused.
  expect_usage_error("run --graph gnm --vertices 0", "--vertices must be at least 2");
  expect_usage_error("generate /tmp/zbfs_never_written.bin --graph gnm --edges 0", "--edges must be at least 1");
  expect_usage_error("run --graph rgg --radius 0", "--radius must be in (0, 1.414]");
  expect_usage_error("run --graph rgg --degree 0", "--degree must be a positive number");
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_decimal.json";
  const Outcome o = run_zbfs("run -q --scale 010 --roots 1 --root 0012 --no-validate --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["config"]["scale"], 10);
  EXPECT_EQ(j["searches"][0]["root"], 12);
  std::filesystem::remove(json_path);
}

TEST(CliErrors, CodecOptions) {
  expect_usage_error("run --codec lz4", "--codec");
  expect_usage_error("run --dump-frontiers /proc/zbfs-no/such/dir", "/proc/zbfs-no/such/dir");
  expect_usage_error("run --partition shared --codec bitpack", "--codec");
  expect_usage_error("run --partition shared --dump-frontiers /tmp", "--dump-frontiers");
}

// --codec auto on measured links times its coded and plain paths from the first keys
// before the timed searches and keeps the faster (issue 38). The record has each path's
// times and the choice, the searches are those of a run without a codec, and the trial's
// traffic is in no phase. --codec-trial off, a --network preset and a fixed codec run no
// trial; SSSP alone runs its own.
TEST(CliMpi, CodecAutoTimesBothPathsBeforeTheSearchesAndKeepsTheFaster) {
  const auto nedge_lines = [](const std::string& out) { return out.substr(out.find("min_nedge:"), 240); };
  const auto json = std::filesystem::temp_directory_path() / "zbfs_codec_trial.json";
  const std::string base = "run --scale 11 --roots 6 -p 2d --grid 2x2 --json " + json.string() + " ";
  const Outcome plain = run_mpi(4, base + "-q --codec none");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_TRUE(nlohmann::json::parse(slurp(json))["codec_trial"].is_null());
  const Outcome o = run_mpi(4, base + "--codec auto");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("--codec auto takes the "), std::string::npos) << o.err;
  EXPECT_EQ(nedge_lines(o.out), nedge_lines(plain.out));
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  const nlohmann::json& trial = j["codec_trial"];
  ASSERT_FALSE(trial.is_null());
  ASSERT_EQ(trial["roots"].size(), 4u);
  ASSERT_EQ(trial["coded_time_s"].size(), 4u);
  ASSERT_EQ(trial["plain_time_s"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(trial["roots"][i], j["searches"][i]["root"]);  // the first keys
    EXPECT_GT(trial["coded_time_s"][i].get<double>(), 0.0);
    EXPECT_GT(trial["plain_time_s"][i].get<double>(), 0.0);
  }
  const std::string chosen = trial["chosen"];
  EXPECT_TRUE(chosen == "coded" || chosen == "plain") << chosen;
  EXPECT_GT(trial["time_s"].get<double>(), 0.0);
  EXPECT_EQ(j["config"]["codec_trial"], true);
  // The folds are pipelined on the plain path only.
  EXPECT_EQ(j["config"]["overlap"], chosen == "plain");
  // The run's search phases are the searches' own: nothing of the trial's 10 searches.
  for (const char* phase : {"column_exchange", "row_exchange", "predecessor_reduction", "termination_check"}) {
    double messages = 0;
    double ids = 0;
    for (const auto& search : j["searches"]) {
      messages += search["phases"][phase]["messages"]["sum"].get<double>();
      ids += search["phases"][phase]["id_bytes"]["sum"].get<double>();
    }
    EXPECT_EQ(j["phases"][phase]["messages"]["sum"].get<double>(), messages) << phase;
    EXPECT_EQ(j["phases"][phase]["id_bytes"]["sum"].get<double>(), ids) << phase;
  }
  for (const char* rest : {"--codec auto --codec-trial off", "--codec auto --network 1gbe", "--codec bitpack"}) {
    const Outcome none = run_mpi(4, base + "-q " + rest);
    ASSERT_EQ(none.status, 0) << rest << "\n" << none.err;
    EXPECT_EQ(nedge_lines(none.out), nedge_lines(plain.out)) << rest;
    const nlohmann::json record = nlohmann::json::parse(slurp(json));
    EXPECT_TRUE(record["codec_trial"].is_null()) << rest;
    EXPECT_EQ(record["config"]["overlap"], false) << rest;
  }
  // SSSP alone: the trial times SSSP searches.
  const Outcome sssp = run_mpi(4, base + "-q --codec auto --kernels sssp");
  ASSERT_EQ(sssp.status, 0) << sssp.err;
  const nlohmann::json s = nlohmann::json::parse(slurp(json));
  ASSERT_FALSE(s["codec_trial"].is_null());
  EXPECT_EQ(s["codec_trial"]["roots"][0], s["sssp_searches"][0]["root"]);
  std::filesystem::remove(json);
  expect_usage_error("run --scale 8 --codec auto --codec-trial maybe", "maybe");
}

// Compressed exchanges end to end: validated results, raw and wire bytes per phase with
// encode and decode time in the table and the JSON, frames per codec, and a frontier
// dump with a record per message.
TEST(CliMpi, CodecsCompressTheExchangesAndDumpFrontiers) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_codec.json";
  const auto dump_dir = std::filesystem::temp_directory_path() / "zbfs_cli_dump";
  std::filesystem::remove(json_path);
  std::filesystem::remove_all(dump_dir);
  const Outcome o =
      run_mpi(4, "run --scale 12 --roots 4 --partition 2d --grid 2x2 --codec auto --network 1gbe --json " +
                     json_path.string() + " --dump-frontiers " + dump_dir.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("codec auto"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("wire_bytes"), std::string::npos) << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["config"]["codec"], "auto");
  for (const char* phase : {"row_exchange", "column_exchange", "predecessor_reduction", "validation"}) {
    SCOPED_TRACE(phase);
    const auto& p = j["phases"][phase];
    // At 1 Gbit/s auto compresses: wire is a fraction of raw (the column's few small
    // messages at this scale are mostly headers and counts).
    const double fraction = std::string_view(phase) == "column_exchange" ? 1.0 : 0.6;
    EXPECT_LT(p["wire_bytes"]["sum"].get<double>(), fraction * p["raw_bytes"]["sum"].get<double>());
    EXPECT_GT(p["encode_time_s"]["max"].get<double>(), 0.0);
    EXPECT_GT(p["decode_time_s"]["max"].get<double>(), 0.0);
    EXPECT_FALSE(p["frames"].empty());
  }
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_GT(std::filesystem::file_size(dump_dir / ("rank-" + std::to_string(rank) + ".zbfsdump")), 16U);
  }
  const Outcome plain = run_mpi(2, "run --scale 11 --roots 2 --codec none -q --json " + json_path.string());
  ASSERT_EQ(plain.status, 0) << plain.err;
  const nlohmann::json k = nlohmann::json::parse(slurp(json_path));
  const auto& row = k["phases"]["row_exchange"];
  EXPECT_EQ(row["wire_bytes"]["sum"], row["raw_bytes"]["sum"]);
  EXPECT_EQ(row["encode_time_s"]["max"].get<double>(), 0.0);
  std::filesystem::remove(json_path);
  std::filesystem::remove_all(dump_dir);
}

// On one rank every message goes to the rank itself, the largest being validation's
// replies (a level and a parent for both ends of every input tuple): each codec must
// take them, and the run must validate (a too-tight bound on message sizes once refused
// them as malformed).
TEST(CliMpi, EveryCodecValidatesOnOneRank) {
  for (const char* codec : {"varint", "bitpack", "pfor", "streamvbyte", "roaring", "zstd", "bitmap", "rice", "auto"}) {
    const Outcome o = run_mpi(1, std::string("run --scale 10 --roots 2 -q --codec ") + codec);
    EXPECT_EQ(o.status, 0) << codec << ": " << o.err;
  }
}

TEST(CliMpi, RunsReportModelledTimeAndModelProjectsTheRecord) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_model.json";
  std::filesystem::remove(json_path);
  const Outcome o =
      run_mpi(4, "run --scale 12 --roots 4 --partition 2d --grid 2x2 --network 1gbe --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("model_s: network 1gbe, inter-node 50 us"), std::string::npos) << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["network"]["name"], "1gbe");
  EXPECT_EQ(j["network"]["nodes"], 4);  // a preset gives every rank its own node
  EXPECT_DOUBLE_EQ(j["network"]["inter_node"]["bandwidth_bytes_per_s"].get<double>(), 117.5e6);
  // Row traffic at 1 Gbit/s: at least its bytes over the bandwidth, and 50 us per message.
  const auto& row = j["phases"]["row_exchange"];
  EXPECT_GE(row["modelled_time_s"]["max"].get<double>(),
            row["raw_bytes"]["max"].get<double>() / 117.5e6 + row["messages"]["max"].get<double>() * 50e-6 - 1e-9);
  EXPECT_EQ(j["config"]["time_waits"], false);
  EXPECT_EQ(row["wait_time_s"]["sum"].get<double>(), 0.0);  // no barriers unless asked
  bool row_traffic = false;
  for (const auto& t : j["traffic"]) {
    row_traffic = row_traffic || (t["phase"] == "row_exchange" && t["communicator"] == "row");
  }
  EXPECT_TRUE(row_traffic);

  const Outcome same = run_zbfs("model " + json_path.string() + " --ranks 4");
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("projected: 4 ranks, grid 2x2, network 1gbe"), std::string::npos) << same.out;
  const Outcome big = run_zbfs("model " + json_path.string() + " -P 1024 --network ib-hdr --ranks-per-node 32");
  ASSERT_EQ(big.status, 0) << big.err;
  EXPECT_NE(big.out.find("grid 32x32, network ib-hdr"), std::string::npos) << big.out;
  EXPECT_NE(big.out.find("predicted TEPS"), std::string::npos);
  // The recorded run was two-sided; priced one-sided, the same traffic at 1,024 ranks on
  // an RDMA network costs less (no message latency per piece).
  EXPECT_NE(big.out.find("per node, transport two-sided"), std::string::npos) << big.out;
  const Outcome puts =
      run_zbfs("model " + json_path.string() + " -P 1024 --network ib-hdr --ranks-per-node 32 --transport rma");
  ASSERT_EQ(puts.status, 0) << puts.err;
  EXPECT_NE(puts.out.find("per node, transport rma"), std::string::npos) << puts.out;
  const auto bfs_seconds = [](const std::string& out) {
    const std::size_t line = out.find("BFS per search:");
    const std::size_t at = out.rfind(" = ", out.find('\n', line));
    return std::stod(out.substr(at + 3));
  };
  EXPECT_LT(bfs_seconds(puts.out), bfs_seconds(big.out)) << puts.out << big.out;
  expect_usage_error("model " + json_path.string() + " --ranks 4 --transport shmem", "shmem");
  expect_usage_error("model " + json_path.string() + " --ranks 6 --grid 2x2", "--grid");
  expect_usage_error("model " + json_path.string() + " --ranks 4 --network measure", "measure");
  // A damaged record gets one line naming the file and what is wrong with it.
  const auto damaged_path = std::filesystem::temp_directory_path() / "zbfs_cli_model_damaged.json";
  const auto expect_refused = [&](const std::function<void(nlohmann::json&)>& damage, const std::string& mention) {
    nlohmann::json damaged = j;
    damage(damaged);
    std::ofstream(damaged_path) << damaged.dump();
    expect_usage_error("model " + damaged_path.string() + " --ranks 16", damaged_path.string() + "' " + mention);
  };
  expect_refused([](nlohmann::json& d) { d["phases"] = "x"; }, "has a malformed phases field");
  expect_refused([](nlohmann::json& d) { d["traffic"] = 7; }, "has a malformed traffic field");
  expect_refused([](nlohmann::json& d) { d["searches"][0]["time_s"] = -1.0; }, "has a search with impossible figures");
  expect_refused([](nlohmann::json& d) { d["phases"]["row_exchange"]["time_s"]["max"] = -1.0; },
                 "has a negative time in phase row_exchange");
  expect_refused([](nlohmann::json& d) { d["traffic"][0]["phase"] = "warp"; }, "names an unknown phase 'warp'");
  // Never the JSON library's own text: the field is named, and the versions this zbfs reads.
  expect_refused(
      [](nlohmann::json& d) {
        d = nlohmann::json::array({1, 2});
      },
      "is a JSON document but not a zbfs run record (zbfs run --json writes those)");
  expect_refused([](nlohmann::json& d) { d["schema"] = 5; }, "is a JSON document but not a zbfs run record");
  expect_refused([](nlohmann::json& d) { d["schema_version"] = "7"; }, "has a malformed schema_version \"7\"");
  expect_refused([](nlohmann::json& d) { d["schema_version"] = 99; },
                 "has schema version 99, newer than this zbfs knows; this zbfs reads versions 3 to ");
  expect_refused([](nlohmann::json& d) { d["network"]["inter_node"].erase("latency_s"); },
                 "lacks the field 'network.inter_node.latency_s' that a projection needs");
  expect_refused([](nlohmann::json& d) { d["searches"][1]["time_s"] = "fast"; },
                 "has a non-numeric 'searches[1].time_s'");
  expect_refused([](nlohmann::json& d) { d["config"]["grid"] = 4; }, "has a non-text 'config.grid'");
  expect_refused([](nlohmann::json& d) { d["config"]["grid_stack"] = 3; },
                 "has a grid_stack that does not divide its grid's rows");
  for (const char* key : {"schema_version", "num_mpi_processes", "config", "traffic"}) {
    const std::string mention = std::string("lacks the field '") + key + "'";
    expect_refused([key](nlohmann::json& d) { d.erase(key); }, mention);
  }
  std::filesystem::remove(damaged_path);
  // More ranks than the graph has vertices: projected, with a warning.
  const Outcome crowded = run_zbfs("model " + json_path.string() + " -P 8192");
  ASSERT_EQ(crowded.status, 0) << crowded.err;
  EXPECT_NE(crowded.out.find("note: 8192 ranks are more than the graph's 4096 vertices: some ranks would own none"),
            std::string::npos)
      << crowded.out;
  EXPECT_EQ(big.out.find("more than the graph's"), std::string::npos) << big.out;
  std::filesystem::remove(json_path);
}

TEST(CliMpi, TimeWaitsReportsWaitingApartFromTimeInMpi) {
  const auto json_path = std::filesystem::temp_directory_path() / "zbfs_cli_waits.json";
  std::filesystem::remove(json_path);
  const Outcome o = run_mpi(
      4, "run --scale 12 --roots 4 --partition 2d --grid 2x2 --no-validate --time-waits --json " + json_path.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("mpi_s    wait_s   model_s"), std::string::npos) << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j["config"]["time_waits"], true);
  // Every collective of the exchanges began with a timed barrier.
  for (const char* phase : {"row_exchange", "column_exchange", "termination_check"}) {
    EXPECT_GT(j["phases"][phase]["wait_time_s"]["sum"].get<double>(), 0.0) << phase;
  }
  std::filesystem::remove(json_path);
}

// Every failure ends in one "zbfs: error:" line: a folder given as a record, and an
// allocation that fails on every rank of a 4-rank job at once (an address-space limit on
// the ranks, below what --force makes them try), which the first failing rank reports
// alone, however late the others fail. mpirun (Open MPI 4) may add an ORTE_ERROR_LOG line
// of its own about the aborting rank's help message, now and then; mpirun
// adds its own notice of the abort; zbfs's part is the one line.
TEST(CliErrors, FailuresEndInOneLine) {
  const std::string folder = std::filesystem::temp_directory_path().string();
  const Outcome model = run_zbfs("model " + folder + " --ranks 4");
  EXPECT_EQ(model.status, 2) << model.err;
  EXPECT_EQ(model.err, "zbfs: error: cannot read '" + folder + "': it is a folder\n");
  const Outcome short_of_memory =
      run_command("timeout 120 " + std::string(ZBFS_MPIEXEC) +
                      " -np 4 sh -c 'ulimit -v 2000000; exec \"$0\" run -q -s 24 " + "--force --no-validate'",
                  ZBFS_BINARY);
  EXPECT_NE(short_of_memory.status, 0);
  int lines = 0;
  for (std::size_t at = short_of_memory.err.find("zbfs: error:"); at != std::string::npos;
       at = short_of_memory.err.find("zbfs: error:", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1) << short_of_memory.err;
  EXPECT_NE(short_of_memory.err.find("out of memory"), std::string::npos) << short_of_memory.err;
}
