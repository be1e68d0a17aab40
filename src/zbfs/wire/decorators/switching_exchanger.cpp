#include "zbfs/wire/decorators/switching_exchanger.hpp"

#include <string>
#include <utility>

#include "zbfs/core/error.hpp"

namespace zbfs {

std::string_view to_string(ExchangePath path) { return path == ExchangePath::kCoded ? "coded" : "plain"; }

SwitchingExchanger::SwitchingExchanger(std::unique_ptr<Exchanger> coded, std::unique_ptr<Exchanger> plain)
    : coded_(std::move(coded)), plain_(std::move(plain)), current_(coded_.get()) {}

void SwitchingExchanger::use(ExchangePath path) {
  Exchanger* next = path == ExchangePath::kCoded ? coded_.get() : plain_.get();
  if (next == nullptr) {
    throw Error(ExitCode::kFailure,
                "the exchanges settled on the other path: the " + std::string(to_string(path)) + " one is gone");
  }
  current_ = next;
}

void SwitchingExchanger::settle(ExchangePath path) {
  use(path);
  (path == ExchangePath::kCoded ? plain_ : coded_).reset();
}

TransportStats SwitchingExchanger::transport_stats() const {
  // Both paths' windows, while both are held.
  TransportStats total;
  for (const Exchanger* path : {coded_.get(), plain_.get()}) {
    if (path == nullptr) continue;
    const TransportStats one = path->transport_stats();
    total.window_bytes += one.window_bytes;
    total.window_growths += one.window_growths;
  }
  return total;
}

}  // namespace zbfs
