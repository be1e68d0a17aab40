// The MPI datatype of a C++ arithmetic type, at compile time.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

namespace zbfs {

template <class T>
MPI_Datatype mpi_datatype() {
  if constexpr (std::is_same_v<T, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return MPI_UINT32_T;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return MPI_UINT8_T;
  else if constexpr (std::is_same_v<T, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else
    static_assert(sizeof(T) == 0, "no MPI datatype for this type");
}

}  // namespace zbfs
