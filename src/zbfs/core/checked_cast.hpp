// Narrowing conversions that throw instead of silently truncating. Every narrowing of a
// vertex id or count in zbfs goes through checked_cast (style rule 9).
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "zbfs/core/error.hpp"

namespace zbfs {

template <class To, class From>
constexpr To checked_cast(From value) {
  static_assert(std::is_integral_v<To> && std::is_integral_v<From>);
  if (!std::in_range<To>(value)) {
    throw Error(ExitCode::kFailure, "value " + std::to_string(value) + " does not fit the target type");
  }
  return static_cast<To>(value);
}

}  // namespace zbfs
