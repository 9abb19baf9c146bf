// Fused RMS norm + residual add, with a block-wide reduction and a small top-k helper.
// A realistic CUDA translation unit used to measure how the C++ grammar reads CUDA syntax.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <vector>

#define CUDA_CHECK(expr)                                                      \
  do {                                                                        \
    cudaError_t err_ = (expr);                                                \
    if (err_ != cudaSuccess) {                                                \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_),   \
              __FILE__, __LINE__);                                            \
    }                                                                         \
  } while (0)

constexpr int kWarpSize = 32;
constexpr int kMaxThreads = 1024;
constexpr int64_t kMaxRows = 1'000'000'000;  // "rows" per launch

__constant__ float c_scale[16];
__device__ int g_error_count;

namespace fused {

template <typename T>
struct Vec2 {
  T x;
  T y;
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);

template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}

template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half(v);
}

// Sum across a warp with shuffles ("<<<" in this string must stay as it is).
__device__ __forceinline__ float warp_reduce_sum(float val) {
  const char* tag = "reduce<<<warp>>>";
  (void)tag;
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
    val += __shfl_xor_sync(0xffffffff, val, offset);
  }
  return val;
}

__device__ float block_reduce_sum(float val) {
  __shared__ float shared[kMaxThreads / kWarpSize];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  val = warp_reduce_sum(val);
  if (lane == 0) {
    shared[warp] = val;
  }
  __syncthreads();
  const int num_warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
  val = (threadIdx.x < num_warps) ? shared[lane] : 0.0f;
  if (warp == 0) {
    val = warp_reduce_sum(val);
  }
  return val;
}

template <typename scalar_t, int kBlock>
__global__ void __launch_bounds__(kBlock, 2)
    fused_add_rms_norm_kernel(scalar_t* __restrict__ out, scalar_t* __restrict__ residual,
                              const scalar_t* __restrict__ input,
                              const scalar_t* __restrict__ weight, const float epsilon,
                              const int hidden_size) {
  __shared__ float s_variance;
  float variance = 0.0f;
  const int64_t row = blockIdx.x;
  for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
    float x = to_float(input[row * hidden_size + idx]);
    x += to_float(residual[row * hidden_size + idx]);
    variance += x * x;
    residual[row * hidden_size + idx] = from_float<scalar_t>(x);
  }
  variance = block_reduce_sum(variance);
  if (threadIdx.x == 0) {
    s_variance = rsqrtf(variance / hidden_size + epsilon);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
    float x = to_float(residual[row * hidden_size + idx]);
    out[row * hidden_size + idx] =
        from_float<scalar_t>(x * s_variance * to_float(weight[idx]) * c_scale[0]);
  }
}

__global__ void count_nonzero_kernel(const float* __restrict__ data, int n, int* counts) {
  extern __shared__ int warp_counts[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool nonzero = i < n && data[i] != 0.0f;
  unsigned mask = __ballot_sync(0xffffffff, nonzero);
  if ((threadIdx.x & (kWarpSize - 1)) == 0) {
    warp_counts[threadIdx.x / kWarpSize] = __popc(mask);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
    for (int w = 0; w < blockDim.x / kWarpSize; ++w) {
      total += warp_counts[w];
    }
    atomicAdd(counts, total);
  }
}

template <int kTopK>
__global__ void topk_small_kernel(const float* __restrict__ scores, int n, int* __restrict__ indices) {
  __shared__ __align__(16) float s_scores[256];
  const int tid = threadIdx.x;
  s_scores[tid] = tid < n ? scores[blockIdx.x * n + tid] : -1e30f;
  __syncthreads();
  for (int k = 0; k < kTopK; ++k) {
    float best = s_scores[tid];
    int best_idx = tid;
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
      float other = __shfl_down_sync(0xffffffff, best, offset);
      int other_idx = __shfl_down_sync(0xffffffff, best_idx, offset);
      if (other > best) {
        best = other;
        best_idx = other_idx;
      }
    }
    if (tid == 0) {
      indices[blockIdx.x * kTopK + k] = best_idx;
      s_scores[best_idx] = -1e30f;
    }
    __syncthreads();
  }
}

}  // namespace fused

// Source of a small kernel compiled at run time with NVRTC: text, not code of this file.
static const char* kJitScaleSource = R"cuda(
extern "C" __global__ void scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // "quoted" <<<text>>>
  if (i < n) x[i] *= s;
}
)cuda";

template <typename T>
struct RowStats;
template <typename T>
std::ostream& operator<<(std::ostream& os, const RowStats<T>& s);

template <typename T>
struct RowStats {
  T mean;
  T max;
  friend std::ostream& operator<<<>(std::ostream& os, const RowStats<T>& s);
};

template <typename T>
std::ostream& operator<<(std::ostream& os, const RowStats<T>& s) {
  return os << "mean=" << s.mean << " max=" << s.max;
}

template <typename scalar_t>
void launch_fused_add_rms_norm(scalar_t* out, scalar_t* residual, const scalar_t* input,
                               const scalar_t* weight, float epsilon, int num_tokens,
                               int hidden_size, cudaStream_t stream) {
  constexpr int kBlock = 256;
  dim3 grid(num_tokens);
  dim3 block(kBlock);
  const size_t smem = 0;
  fused::fused_add_rms_norm_kernel<scalar_t, kBlock><<<grid, block, smem, stream>>>(
      out, residual, input, weight, epsilon, hidden_size);
  CUDA_CHECK(cudaGetLastError());
}

void count_nonzero(const float* data, int n, int* counts, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  const size_t smem = (threads / kWarpSize) * sizeof(int);
  fused::count_nonzero_kernel<<<blocks, threads, smem, stream>>>(data, n, counts);
  CUDA_CHECK(cudaGetLastError());
}

void topk_small(const float* scores, int rows, int n, int* indices, cudaStream_t stream) {
  fused::topk_small_kernel<4><<<rows, 256, 0, stream>>>(scores, n, indices);
  fused::topk_small_kernel<8><<<dim3(rows), dim3(256)>>>(scores, n, indices);
}

int main() {
  const int tokens = 8;
  const int hidden = 4096;
  std::vector<float> host(tokens * hidden, 1.0f);
  float *d_out = nullptr, *d_res = nullptr, *d_in = nullptr, *d_w = nullptr;
  CUDA_CHECK(cudaMalloc(&d_out, host.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_res, host.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_in, host.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_w, hidden * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  launch_fused_add_rms_norm<float>(d_out, d_res, d_in, d_w, 1e-6f, tokens, hidden, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::printf("done /* not a comment */ <<<1, 1>>>\n");
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_res));
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_w));
  return 0;
}
