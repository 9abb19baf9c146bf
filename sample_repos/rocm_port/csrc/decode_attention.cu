// Decode attention for the benchmark harness (scripts/benchmark.py builds it with nvcc or hipcc).
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>
#include <miopen/miopen.h>
#else
// ok: ROCM218
#include <cuda_runtime.h>
// ok: ROCM213
#include <cublas_v2.h>
// ok: ROCM214
#include <cudnn.h>
#endif

#include "warp_utils.cuh"

constexpr int kHeadDim = 128;
// 64 lanes on AMD Instinct (CDNA), 32 on NVIDIA: the most lanes any target has.
#if defined(__HIP_PLATFORM_AMD__)
constexpr int kMaxLanes = 64;
constexpr int kTileHeadDim = 64;  // 2 x 64 x 128 x 4 bytes = 64 KiB of LDS
#else
constexpr int kMaxLanes = 32;
constexpr int kTileHeadDim = kHeadDim;
#endif

#ifndef USE_ROCM
// The 128 KiB tile of the NVIDIA build (sm_80 and newer opt in to it).
// ok: ROCM209
__global__ void prefill_attention(float* out) { __shared__ float big_tile[2][kHeadDim][kHeadDim]; out[0] = big_tile[0][0][0]; }
#endif

__device__ float max_across_warp(float v) {
#if defined(__HIP_PLATFORM_AMD__)
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(FULL_WARP_MASK, v, offset, warpSize));
  }
#else
  // ok: ROCM203
  for (int offset = 16; offset > 0; offset /= 2) {
    // ok: ROCM003, ROCM201
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset, 32));
  }
#endif
  return v;
}

__device__ float load_query(const float* q, int i) {
#if defined(__HIP_DEVICE_COMPILE__)
  return __ldg(q + i);
// ok: ROCM206
#elif __CUDA_ARCH__ >= 800
  return __ldg(q + i);
#else
  return q[i];
#endif
}

__device__ void wait_for_kv(volatile int* ready) {
  while (*ready == 0) {
#ifdef USE_ROCM
    __builtin_amdgcn_s_sleep(2);
#else
    // ok: ROCM211
    __nanosleep(100);
#endif
  }
}

#if defined(__HIP_PLATFORM_AMD__)
// CDNA: 2 blocks x 512 threads / (64 lanes x 4 SIMDs) = 4 wavefronts per SIMD.
#define ATTENTION_BOUNDS __launch_bounds__(512, 4)
#else
// ok: ROCM207
#define ATTENTION_BOUNDS __launch_bounds__(512, 2)
#endif

__global__ void ATTENTION_BOUNDS decode_attention(const float* q, const float* k, const float* alibi, float* out,
                                                  int n) {
  __shared__ float k_tile[2][kTileHeadDim][kHeadDim];
#ifdef USE_ROCM
  __shared__ float lane_scores[kMaxLanes];
  const int lane = threadIdx.x % warpSize;
#else
  // ok: ROCM215
  __shared__ float lane_scores[32];
  // ok: ROCM202
  const int lane = threadIdx.x & 31;
#endif
  extern __shared__ float head_max[];
  float score = load_query(q, threadIdx.x) * k[threadIdx.x];
  lane_scores[lane] = max_across_warp(score);
  k_tile[0][lane][0] = score;
  head_max[0] = __ldg(alibi + blockIdx.x);
  const warp_mask_t above = __ballot_sync(__activemask(), score > head_max[0]);
  __syncthreads();
  out[blockIdx.x * n + threadIdx.x] = lane_scores[lane] + k_tile[0][lane][0] + (above != 0);
}

#ifdef USE_ROCM
// The wave size the device runs, read at run time: 64 on CDNA, 32 on RDNA.
void launch_decode(const float* q, const float* k, const float* alibi, float* out, int n, hipStream_t stream) {
  int device = 0, wave = 0;
  hipGetDevice(&device);
  hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, device);
  decode_attention<<<n, 16 * wave, 0, stream>>>(q, k, alibi, out, n);
}
#else
void launch_decode(const float* q, const float* k, const float* alibi, float* out, int n, cudaStream_t stream) {
  // ok: ROCM221
  const int threads = 16 * WARP_SIZE;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(n);
  config.blockDim = dim3(threads);
  config.stream = stream;
  cudaLaunchAttribute attrs[1];
  // ok: ROCM219
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, decode_attention, q, k, alibi, out, n);
}
#endif
