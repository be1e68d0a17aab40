// Checks on the values given to the command's flags, before any is used: integer flags
// as plain decimal numbers (CLI11 alone reads them in base 0, where "010" is octal 8 and
// "0x10" hex, wraps "-1" for an unsigned flag and saturates past 2^64), and no flag or
// argument given an empty value (CLI11 takes `--input ''` as an empty string, which the
// run would read as "not given").
#pragma once

#include <CLI/CLI.hpp>

namespace zbfs::cli {

// The check on every integer flag of `app` and its subcommands.
void require_decimal_integers(CLI::App& app);

// The check that every option and positional argument of `app` and its subcommands that
// takes a value is given a non-empty one (a usage error naming it otherwise).
void refuse_empty_values(CLI::App& app);

}  // namespace zbfs::cli
