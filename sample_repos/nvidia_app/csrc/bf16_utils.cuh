// bf16 helpers. A first try at the AMD build left the HIP header ungated: the NVIDIA build,
// which has no HIP headers, breaks on it.
#pragma once
// ruleid: ROCM220
#include <hip/hip_bf16.h>

__device__ __forceinline__ float bf16_to_float(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}
