#include "zbfs/wire/routed/hop_message.hpp"

#include <utility>

#include "zbfs/core/error.hpp"

namespace zbfs {

void append_hop_message(std::span<const HopItem> items, std::vector<std::uint64_t>& words) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> groups;
  for (const HopItem& h : items) {
    if (groups.empty() || groups.back().first != h.destination) groups.emplace_back(h.destination, 0);
    ++groups.back().second;
  }
  words.reserve(words.size() + 1 + 2 * groups.size() + 2 * items.size());
  words.push_back(groups.size());
  for (const auto& [destination, count] : groups) {
    words.push_back(destination);
    words.push_back(count);
  }
  for (const HopItem& h : items) {
    words.push_back(h.key);
    words.push_back(h.value);
  }
}

void parse_hop_message(std::span<const std::uint64_t> words, int ranks, std::vector<HopItem>& items) {
  const auto malformed = [] { return Error(ExitCode::kFailure, "routed exchange: malformed hop message"); };
  if (words.empty()) throw malformed();
  const std::uint64_t groups = words[0];
  if (groups > (words.size() - 1) / 2) throw malformed();
  std::size_t at = 1 + 2 * groups;
  for (std::uint64_t g = 0; g < groups; ++g) {
    const std::uint64_t destination = words[1 + 2 * g];
    const std::uint64_t count = words[2 + 2 * g];
    if (destination >= static_cast<std::uint64_t>(ranks) || count > (words.size() - at) / 2) throw malformed();
    for (std::uint64_t i = 0; i < count; ++i, at += 2) items.push_back({destination, words[at], words[at + 1]});
  }
  if (at != words.size()) throw malformed();
}

}  // namespace zbfs
