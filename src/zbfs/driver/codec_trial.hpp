// The codec trial of --codec auto (issue 38). A run with a codec takes other paths than
// one without, whatever each message's frame turns out to be: a bitmap or id gather goes
// as one probed message per member instead of MPI_Allgather(v), and top-down folds go in
// bulk instead of pipelined. Where ranks share cores those paths can cost more than the
// bytes they save (docs/codecs.md), and no per-message choice can see it. So before the
// timed searches, on links the run measured, the distributed runner searches from the
// first keys once on each path (a SwitchingExchanger: the coded exchanger and a plain
// one), the order alternating key by key after one warm-up pair, and keeps the path
// whose searches were faster. Every time is the slowest rank's, so every rank sees the
// same figures; rank 0's choice is still broadcast, so that no rounding can split the
// ranks. The trial's searches are not benchmark searches: their counters are dropped and
// their times are in the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/driver/run_config.hpp"

namespace zbfs {

// Keys the trial times, each once per path (after one untimed search on each path from
// the first key: the first searches of a run pay for page faults and cold caches).
inline constexpr std::size_t kCodecTrialKeys = 4;

struct CodecTrialRecord {
  std::vector<std::uint64_t> roots;  // the keys timed, in order
  std::vector<double> coded_s;       // their searches on the coded path (slowest rank)
  std::vector<double> plain_s;       // and on the plain path
  bool chose_coded = true;
  double time_s = 0;  // the whole trial, warm-up and clearing included
};

// Whether the run settles --codec auto's paths by a trial: auto, --codec-trial on, the
// CPU backend's MPI exchanges at two ranks or more, two-sided rounds (one-sided ones
// would hold a second set of windows), no --dump-frontiers (it records one path's
// messages), and links the run measured: a named --network preset models links this
// machine does not have, and a trial here cannot time them.
bool runs_codec_trial(const RunConfig& config, int ranks);

// The run on the plain path: no codec; --overlap as given, or its default without one.
RunConfig plain_path_config(const RunConfig& config);

// Whether the coded path won: the median over keys of coded / plain time is below 1
// (paired by key, so a slow spell or an expensive key weighs on both paths alike).
// Throws on lists of different or zero length.
bool coded_path_wins(std::span<const double> coded_s, std::span<const double> plain_s);

// Whether the run's top-down folds were pipelined: the config's, or the plain path's
// when a trial chose it.
bool folds_pipelined(const RunConfig& config, const CodecTrialRecord* trial);

}  // namespace zbfs
