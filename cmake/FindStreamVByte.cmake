# Finds Debian's libstreamvbyte (it ships no CMake package) as StreamVByte::StreamVByte.
find_path(StreamVByte_INCLUDE_DIR streamvbyte.h)
find_library(StreamVByte_LIBRARY streamvbyte)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(StreamVByte REQUIRED_VARS StreamVByte_LIBRARY StreamVByte_INCLUDE_DIR)
if(StreamVByte_FOUND AND NOT TARGET StreamVByte::StreamVByte)
  add_library(StreamVByte::StreamVByte UNKNOWN IMPORTED)
  set_target_properties(StreamVByte::StreamVByte PROPERTIES IMPORTED_LOCATION "${StreamVByte_LIBRARY}"
                                                            INTERFACE_INCLUDE_DIRECTORIES "${StreamVByte_INCLUDE_DIR}")
endif()
