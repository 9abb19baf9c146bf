import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# On ROCm, torch.utils.cpp_extension hipifies the sources and builds for PYTORCH_ROCM_ARCH
# (or the GPUs it finds); on NVIDIA, TORCH_CUDA_ARCH_LIST picks the targets.
sources = ["csrc/bindings.cpp", "csrc/rmsnorm_kernel.cu", "csrc/gemm_cutlass.cu"]
include_dirs = [] if torch.version.hip else ["third_party/cutlass/include"]

setup(
    name="fastllm",
    version="0.1.0",
    packages=["fastllm"],
    ext_modules=[
        CUDAExtension(
            "fastllm._C",
            sources,
            include_dirs=include_dirs,
            extra_compile_args={"nvcc": ["-O3"] + ([] if torch.version.hip else ["--use_fast_math"])},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
