// Decode attention for the benchmark harness (scripts/benchmark.py builds it with nvcc).
// ruleid: ROCM218
#include <cuda_runtime.h>
// ruleid: ROCM213
#include <cublas_v2.h>
// ruleid: ROCM214
#include <cudnn.h>

#include "warp_utils.cuh"

constexpr int kHeadDim = 128;
#if defined(__HIP_PLATFORM_AMD__)
// An early HIP port: ROCm before 7.0 let warpSize be a constant.
// ruleid: ROCM205
constexpr int kWaveSize = warpSize;
// ruleid: ROCM217
constexpr int kWaveLanes = __AMDGCN_WAVEFRONT_SIZE;
#endif

// ruleid: ROCM210
texture<float, 1, cudaReadModeElementType> alibi_slopes;

__device__ float max_across_warp(float v) {
  // ruleid: ROCM203
  for (int offset = 16; offset > 0; offset /= 2) {
    // ruleid: ROCM003, ROCM201
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset, 32));
  }
  return v;
}

__device__ float load_query(const float* q, int i) {
// ruleid: ROCM206
#if __CUDA_ARCH__ >= 800
  return __ldg(q + i);
#else
  return q[i];
#endif
}

__device__ void wait_for_kv(volatile int* ready) {
  while (*ready == 0) {
    // ruleid: ROCM211
    __nanosleep(100);
  }
}

// ruleid: ROCM207
__global__ void __launch_bounds__(512, 2) decode_attention(const float* q, const float* k, float* out, int n) {
  // ruleid: ROCM209
  __shared__ float k_tile[2][kHeadDim][kHeadDim];
  // ruleid: ROCM215
  __shared__ float lane_scores[32];
  __shared__ float head_max[1];
  // ruleid: ROCM202
  const int group = threadIdx.x >> 5;
  const int lane = threadIdx.x % warpSize;
  float score = load_query(q, threadIdx.x) * k[threadIdx.x];
  lane_scores[lane] = max_across_warp(score);
  k_tile[0][lane][0] = score;
  head_max[0] = tex1Dfetch(alibi_slopes, blockIdx.x);
  // ruleid: ROCM216
  unsigned above = __ballot_sync(__activemask(), score > head_max[0]);
  __syncthreads();
  out[blockIdx.x * n + group] = lane_scores[lane] + k_tile[0][lane][0] + above;
}

void launch_decode(const float* q, const float* k, float* out, int n, cudaStream_t stream) {
  // ruleid: ROCM221
  const int threads = 16 * WARP_SIZE;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(n);
  config.blockDim = dim3(threads);
  config.stream = stream;
  cudaLaunchAttribute attrs[1];
  // ruleid: ROCM219
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, decode_attention, q, k, out, n);
}
