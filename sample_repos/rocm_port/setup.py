import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# On ROCm, torch.utils.cpp_extension hipifies the sources and builds for PYTORCH_ROCM_ARCH
# (or the GPUs it finds); on NVIDIA, TORCH_CUDA_ARCH_LIST picks the targets.
sources = ["csrc/bindings.cpp", "csrc/rmsnorm_kernel.cu", "csrc/gemm_cutlass.cu"]
include_dirs = [] if torch.version.hip else ["third_party/cutlass/include"]
nvcc_flags = ["-O3"]
if not torch.version.hip:
    # ok: ROCM301
    nvcc_flags += ["--use_fast_math", "-gencode=arch=compute_90,code=sm_90"]

with open("requirements.txt") as handle:
    requirements = [line for line in handle.read().splitlines() if line and not line.startswith(("#", "-"))]

setup(
    name="fastllm",
    version="0.1.0",
    packages=["fastllm"],
    install_requires=requirements,
    ext_modules=[
        CUDAExtension(
            "fastllm._C",
            sources,
            include_dirs=include_dirs,
            extra_compile_args={"nvcc": nvcc_flags},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
