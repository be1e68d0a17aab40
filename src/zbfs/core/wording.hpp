// Counts in messages: "1 rank", "4 ranks". Users run on one rank as often as on many, and
// "1 ranks" reads as a bug.
#pragma once

#include <string>
#include <string_view>

namespace zbfs {

// n followed by the noun, with an 's' unless n is 1 (regular plurals only).
inline std::string counted(long long n, std::string_view noun) {
  std::string text = std::to_string(n) + " ";
  text += noun;
  if (n != 1) text += 's';
  return text;
}

}  // namespace zbfs
