#include "zbfs/wire/routed/route_choice.hpp"

#include <algorithm>
#include <charconv>
#include <functional>

namespace zbfs {

std::vector<int> balanced_dims(int ranks, int count) {
  std::vector<int> primes;
  for (int n = std::max(ranks, 1), f = 2; n > 1;) {
    if (static_cast<long long>(f) * f > n) {
      primes.push_back(n);
      break;
    }
    if (n % f == 0) {
      primes.push_back(f);
      n /= f;
    } else {
      ++f;
    }
  }
  // Largest primes first, each to the currently smallest dimension.
  std::sort(primes.begin(), primes.end(), std::greater<>());
  std::vector<int> dims(static_cast<std::size_t>(std::max(count, 1)), 1);
  for (const int p : primes) *std::min_element(dims.begin(), dims.end()) *= p;
  std::sort(dims.begin(), dims.end(), std::greater<>());
  return dims;
}

std::optional<std::vector<int>> parse_route_dims(std::string_view text) {
  std::vector<int> dims;
  while (true) {
    const std::size_t x = text.find('x');
    const std::string_view part = text.substr(0, x);
    int value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || value < 1) return std::nullopt;
    dims.push_back(value);
    if (x == std::string_view::npos) return dims;
    text.remove_prefix(x + 1);
  }
}

RoutePlan RouteChoice::plan_for(int ranks) const {
  if (kind != RouteKind::kGridK) return RoutePlan(kind, ranks);
  if (!dims.empty() && RoutePlan::dims_product(dims) == ranks) return RoutePlan(kind, ranks, dims);
  return RoutePlan(kind, ranks, balanced_dims(ranks, dims.empty() ? 3 : static_cast<int>(dims.size())));
}

std::string RouteChoice::describe() const {
  std::string s(to_string(kind));
  if (kind == RouteKind::kGridK && !dims.empty()) {
    s += ' ';
    s += RoutePlan::describe_dims(dims);
  }
  if (!dedup) s += ", no dedup";
  return s;
}

}  // namespace zbfs
