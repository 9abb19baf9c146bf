// bf16 helpers, with the bf16 header of each GPU stack.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
// ok: ROCM220
#include <hip/hip_bf16.h>
#else
#include <cuda_bf16.h>
#endif

__device__ __forceinline__ float bf16_to_float(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}
