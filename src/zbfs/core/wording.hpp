// Counts in messages: "1 rank", "4 ranks". Users run on one rank as often as on many, and
// "1 ranks" reads as a bug.
#pragma once

#include <string>
#include <string_view>

namespace zbfs {

// n followed by the noun: the singular for 1, else the plural (by default singular + 's').
inline std::string counted(long long n, std::string_view singular, std::string_view plural = {}) {
  std::string text = std::to_string(n) + " ";
  if (n == 1) return text.append(singular);
  if (plural.empty()) return text.append(singular).append("s");
  return text.append(plural);
}

}  // namespace zbfs
