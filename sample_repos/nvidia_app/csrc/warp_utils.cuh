// Warp-level helpers shared by the kernels.
#pragma once

#include <cstdint>

// ruleid: ROCM204
#define WARP_SIZE 32

template <typename T>
__device__ __forceinline__ T warp_reduce_sum(T value) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
    // ruleid: ROCM003
    value += __shfl_down_sync(0xffffffff, value, offset);
  }
  return value;
}

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  // ruleid: ROCM004
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ int count_positive(float x) {
  // ruleid: ROCM003, ROCM216
  unsigned mask = __ballot_sync(0xffffffff, x > 0.0f);
  return __popc(mask) * 100 / WARP_SIZE;  // percent of the warp
}
