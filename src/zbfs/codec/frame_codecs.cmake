# The frame codecs (no MPI), as absolute paths: listed once for the library
# (codec/CMakeLists.txt) and for the fuzz targets (fuzz/CMakeLists.txt).
set(ZBFS_FRAME_CODEC_SOURCES
  checksum.cpp
  frame.cpp
  none_varint_codec.cpp
  block_codec.cpp
  rice_codec.cpp
  streamvbyte_codec.cpp
  roaring_codec.cpp
  zstd_codec.cpp
  bitmap_codec.cpp
  sorted_set.cpp
)
list(TRANSFORM ZBFS_FRAME_CODEC_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
