#include "zbfs/transport/switching_exchanger.hpp"

#include <utility>

namespace zbfs {

std::string_view to_string(ExchangePath path) { return path == ExchangePath::kCoded ? "coded" : "plain"; }

SwitchingExchanger::SwitchingExchanger(std::unique_ptr<Exchanger> coded, std::unique_ptr<Exchanger> plain)
    : coded_(std::move(coded)), plain_(std::move(plain)), current_(coded_.get()) {}

TransportStats SwitchingExchanger::transport_stats() const {
  // Both paths' windows stay allocated once used.
  const TransportStats a = coded_->transport_stats();
  const TransportStats b = plain_->transport_stats();
  return {a.window_bytes + b.window_bytes, a.window_growths + b.window_growths};
}

}  // namespace zbfs
