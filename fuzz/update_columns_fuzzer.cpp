// libFuzzer target for keyed updates in columns (wire/direct/update_columns.hpp). Each input
// is used twice: as a hostile message (it must read as items with rising keys or throw
// DecodeError, never crash), and as (key, value) pairs that, merged, must read back as
// written.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "zbfs/core/byte_buffer.hpp"
#include "zbfs/wire/direct/update_columns.hpp"

namespace {

std::vector<std::uint64_t> words_of(const std::uint8_t* data, std::size_t size) {
  // Small values are what a message mostly holds: a byte each widens into a word, with
  // the first byte choosing between that and whole 8-byte words.
  std::vector<std::uint64_t> words;
  if (size == 0) return words;
  if ((data[0] & 1U) != 0) {
    for (std::size_t i = 1; i < size; ++i) words.push_back(data[i]);
  } else {
    words.resize((size - 1) / 8);
    if (!words.empty()) std::memcpy(words.data(), data + 1, words.size() * 8);
  }
  return words;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint64_t> words = words_of(data, size);
  std::vector<zbfs::KeyedItem> items;
  try {
    zbfs::read_update_columns(words, items);
    for (std::size_t i = 1; i < items.size(); ++i) {
      if (items[i - 1].key >= items[i].key) std::abort();  // read keys must rise
    }
  } catch (const zbfs::DecodeError&) {
  }
  std::vector<zbfs::KeyedItem> merged;
  for (std::size_t i = 0; i + 1 < words.size(); i += 2) merged.push_back({words[i], words[i + 1]});
  std::vector<zbfs::KeyedItem> scratch;
  zbfs::merge_by_key(merged, scratch);
  std::vector<std::uint64_t> message;
  zbfs::UpdateColumnsScratch columns;
  zbfs::append_update_columns(merged, message, columns);
  std::vector<zbfs::KeyedItem> back;
  zbfs::read_update_columns(message, back);
  if (back != merged) std::abort();
  return 0;
}
