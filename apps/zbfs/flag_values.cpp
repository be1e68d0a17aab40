#include "flag_values.hpp"

#include <charconv>
#include <cstdint>
#include <system_error>

namespace zbfs::cli {
namespace {

// Integer flags take plain decimal numbers. CLI11 reads them with strtoll/strtoull in
// base 0, where "010" is octal 8 (--root 010 would search from vertex 8), "0x10" is hex,
// "-1" wraps to 2^64 - 1 for an unsigned flag and a number past 2^64 saturates; each
// value is checked here and handed on without leading zeros.
std::string decimal_integer(std::string& value, bool is_signed) {
  const std::string given = value;
  const bool negative = is_signed && !value.empty() && value.front() == '-';
  const std::size_t first = value.find_first_not_of('0', negative ? 1 : 0);
  const std::string digits = value.substr(negative ? 1 : 0);
  const bool plain = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  if (!plain) return "'" + given + "' is not a" + (is_signed ? "n integer" : " non-negative integer");
  value = first == std::string::npos ? "0" : (negative ? "-" : "") + value.substr(first);
  std::int64_t as_signed = 0;
  std::uint64_t as_unsigned = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, error] =
      is_signed ? std::from_chars(value.data(), end, as_signed) : std::from_chars(value.data(), end, as_unsigned);
  if (error != std::errc() || ptr != end) return "'" + given + "' is out of range";
  return {};
}

}  // namespace

void require_decimal_integers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type != "INT" && type != "UINT") continue;
    const bool is_signed = type == "INT";
    option->transform(CLI::Validator([is_signed](std::string& v) { return decimal_integer(v, is_signed); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) require_decimal_integers(*sub);
}

void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size_max() == 0) continue;  // a flag takes no value
    // Ahead of the option's other checks (integers, choices), so that the message says
    // what was wrong with it: nothing was given.
    const std::string why = option->get_positional() ? "an empty value was given"
                                                     : "an empty value was given (give one, or leave the option out)";
    option->transform(CLI::Validator([why](std::string& v) { return v.empty() ? why : std::string(); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

}  // namespace zbfs::cli
