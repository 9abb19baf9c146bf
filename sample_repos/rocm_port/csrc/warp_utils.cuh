// Warp-level helpers shared by the kernels, for 32-wide NVIDIA warps and 64-wide AMD wavefronts.
#pragma once

#include <cstdint>

#if defined(__HIP_PLATFORM_AMD__)
#define WARP_SIZE 64
#define FULL_WARP_MASK 0xffffffffffffffffull
typedef uint64_t warp_mask_t;
#else
// ok: ROCM204
#define WARP_SIZE 32
// ok: ROCM003
#define FULL_WARP_MASK 0xffffffffu
typedef uint32_t warp_mask_t;
#endif

template <typename T>
__device__ __forceinline__ T warp_reduce_sum(T value) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
    value += __shfl_down_sync(FULL_WARP_MASK, value, offset);
  }
  return value;
}

__device__ __forceinline__ unsigned lane_id() {
#ifdef USE_ROCM
  return __lane_id();
#else
  unsigned lane;
  // ok: ROCM004
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
#endif
}

__device__ __forceinline__ int count_positive(float x) {
#if defined(__HIP_PLATFORM_AMD__)
  uint64_t mask = __ballot(x > 0.0f);
  return __popcll(mask) * 100 / WARP_SIZE;  // percent of the wavefront
#else
  // ok: ROCM003, ROCM216
  unsigned mask = __ballot_sync(0xffffffff, x > 0.0f);
  return __popc(mask) * 100 / WARP_SIZE;
#endif
}
