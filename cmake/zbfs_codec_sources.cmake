# The frame codecs (src/zbfs/codec, no MPI), relative to the source root: listed once for
# the library and for the fuzz targets (fuzz/CMakeLists.txt).
set(ZBFS_FRAME_CODEC_SOURCES
  src/zbfs/codec/checksum.cpp
  src/zbfs/codec/frame.cpp
  src/zbfs/codec/none_varint_codec.cpp
  src/zbfs/codec/block_codec.cpp
  src/zbfs/codec/rice_codec.cpp
  src/zbfs/codec/streamvbyte_codec.cpp
  src/zbfs/codec/roaring_codec.cpp
  src/zbfs/codec/zstd_codec.cpp
  src/zbfs/codec/bitmap_codec.cpp
  src/zbfs/codec/sorted_set.cpp
)
