// ZBFS_HOST_DEVICE marks a plain function that device code may call too: __host__
// __device__ where nvcc compiles it, nothing for the host compiler. For the few host
// rules the device must follow exactly (the direction policy), so that they are written
// once.
#pragma once

#if defined(__CUDACC__)
#define ZBFS_HOST_DEVICE __host__ __device__
#else
#define ZBFS_HOST_DEVICE
#endif
