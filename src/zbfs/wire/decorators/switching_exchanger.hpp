// SwitchingExchanger: two complete exchangers for the same run, the coded one (--codec
// auto: frames, probed gathers, bulk folds) and the plain one (no codec: MPI_Allgather(v)
// gathers, pipelined folds where they apply), and every operation goes to the one in
// use. The run's codec trial (driver/codec_trial.hpp) times the first searches both ways
// and then settles on one; per-message choices cannot make that choice, because what a
// codec costs when ranks share cores is mostly in the paths it takes, not in the frames
// (docs/performance.md, issue 38). Switch only between searches, on every rank alike: a
// kernel reads traits() when a search starts. Once the trial is over, settle() keeps one.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "zbfs/wire/decorators/forwarding_exchanger.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

enum class ExchangePath { kCoded, kPlain };

std::string_view to_string(ExchangePath path);

class SwitchingExchanger final : public ForwardingExchanger {
 public:
  // Starts on the coded path.
  SwitchingExchanger(std::unique_ptr<Exchanger> coded, std::unique_ptr<Exchanger> plain);

  // Every rank alike, between searches. Throws once the other path was let go.
  void use(ExchangePath path);
  // Uses `path` for the rest of the run and lets the other go (its buffers, windows and
  // stream communicators). Collective: every rank settles at the same point.
  void settle(ExchangePath path);
  [[nodiscard]] ExchangePath path() const {
    return current_ == coded_.get() ? ExchangePath::kCoded : ExchangePath::kPlain;
  }

  [[nodiscard]] TransportStats transport_stats() const override;

 protected:
  [[nodiscard]] Exchanger& target() const override { return *current_; }

 private:
  std::unique_ptr<Exchanger> coded_;
  std::unique_ptr<Exchanger> plain_;
  Exchanger* current_;
};

}  // namespace zbfs
