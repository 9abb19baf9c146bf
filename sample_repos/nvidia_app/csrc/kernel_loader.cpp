// Loads the prebuilt attention kernels and stages the weights they read.
// ruleid: ROCM218
#include <cuda.h>
#include <cuda_runtime.h>

CUmodule load_attention_kernels() {
  CUmodule module;
  // ruleid: ROCM208
  cuModuleLoad(&module, "kernels/decode_attention_sm90.cubin");
  return module;
}

float* stage_weights(size_t count) {
  float* weights = nullptr;
  // ruleid: ROCM212
  cudaMallocManaged(&weights, count * sizeof(float));
  return weights;
}
