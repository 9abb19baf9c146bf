#include <torch/extension.h>

torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor w, double eps);
torch::Tensor gemm_fp16(torch::Tensor a, torch::Tensor b);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rmsnorm", &rmsnorm, "RMSNorm forward (CUDA)");
  m.def("gemm_fp16", &gemm_fp16, "FP16 GEMM (CUTLASS)");
}
