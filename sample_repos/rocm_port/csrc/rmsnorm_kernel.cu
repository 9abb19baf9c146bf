// RMSNorm forward: one block per row, warp reductions in shared memory.
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif
#include <torch/extension.h>

#include "warp_utils.cuh"

template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                                        T* __restrict__ out, int dim, float eps) {
  __shared__ float partial[BLOCK / WARP_SIZE];
  const T* row = x + blockIdx.x * dim;
  float sum = 0.f;
  for (int i = threadIdx.x; i < dim; i += BLOCK) {
    float v = static_cast<float>(row[i]);
    sum += v * v;
  }
  sum = warp_reduce_sum(sum);
  if (lane_id() == 0) partial[threadIdx.x / WARP_SIZE] = sum;
  __syncthreads();
  if (threadIdx.x < WARP_SIZE) {
    sum = threadIdx.x < BLOCK / WARP_SIZE ? partial[threadIdx.x] : 0.f;
    sum = warp_reduce_sum(sum);
  }
  float total = __shfl_sync(FULL_WARP_MASK, sum, 0);
  float scale = rsqrtf(total / dim + eps);
  for (int i = threadIdx.x; i < dim; i += BLOCK) {
    out[blockIdx.x * dim + i] = static_cast<T>(static_cast<float>(row[i]) * scale * static_cast<float>(w[i]));
  }
}

__device__ float fast_exp2(float x) {
#ifndef USE_ROCM
  float y;
  // ok: ROCM004
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor w, double eps) {
  auto out = torch::empty_like(x);
  const int rows = x.size(0), dim = x.size(1);
  // The launch below reads as an ordinary call once CUDA syntax is blanked.
  rmsnorm_kernel<float, 256><<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), w.data_ptr<float>(), out.data_ptr<float>(), dim, static_cast<float>(eps));
  return out;
}
