// Loads the prebuilt attention kernels and stages the weights they read.
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#include <string>

hipModule_t load_attention_kernels(int device) {
  hipDeviceProp_t prop;
  hipGetDeviceProperties(&prop, device);
  std::string arch(prop.gcnArchName);
  hipModule_t module;
  // One code object per target: hipcc --genco --offload-arch=gfx942 -o kernels/decode_attention-gfx942.hsaco
  hipModuleLoad(&module, ("kernels/decode_attention-" + arch.substr(0, arch.find(':')) + ".hsaco").c_str());
  return module;
}
#else
#include <cuda.h>
#include <cuda_runtime.h>

CUmodule load_attention_kernels(int device) {
  CUmodule module;
  // ok: ROCM208
  cuModuleLoad(&module, "kernels/decode_attention_sm90.cubin");
  return module;
}
#endif

float* stage_weights(size_t count) {
  float* weights = nullptr;
#ifdef USE_ROCM
  hipMalloc(&weights, count * sizeof(float));
#else
  cudaMalloc(&weights, count * sizeof(float));
#endif
  return weights;
}
