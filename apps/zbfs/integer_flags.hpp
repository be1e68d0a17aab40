// Integer flags as plain decimal numbers: CLI11 alone reads them in base 0 ("010" is octal
// 8, "0x10" hex), wraps "-1" for an unsigned flag and saturates past 2^64.
#pragma once

#include <CLI/CLI.hpp>

namespace zbfs::cli {

// The check on every integer flag of `app` and its subcommands.
void require_decimal_integers(CLI::App& app);

}  // namespace zbfs::cli
