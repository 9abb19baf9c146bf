// FP16 GEMM: CUTLASS on NVIDIA, hipBLASLt through ATen on ROCm.
#include <torch/extension.h>

#ifndef USE_ROCM
// ok: ROCM005
#include <cutlass/gemm/device/gemm.h>

using Gemm = cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t,
                                         cutlass::layout::ColumnMajor, cutlass::half_t, cutlass::layout::RowMajor>;
#endif

torch::Tensor gemm_fp16(torch::Tensor a, torch::Tensor b) {
#ifdef USE_ROCM
  return torch::matmul(a, b);
#else
  const int m = a.size(0), n = b.size(1), k = a.size(1);
  auto c = torch::empty({m, n}, a.options());
  Gemm gemm;
  Gemm::Arguments args({m, n, k}, {reinterpret_cast<cutlass::half_t*>(a.data_ptr()), k},
                       {reinterpret_cast<cutlass::half_t*>(b.data_ptr()), k},
                       {reinterpret_cast<cutlass::half_t*>(c.data_ptr()), n},
                       {reinterpret_cast<cutlass::half_t*>(c.data_ptr()), n}, {1.0f, 0.0f});
  TORCH_CHECK(gemm(args) == cutlass::Status::kSuccess, "CUTLASS GEMM failed");
  return c;
#endif
}
