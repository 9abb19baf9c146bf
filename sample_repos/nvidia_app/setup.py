from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

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
            ["csrc/bindings.cpp", "csrc/rmsnorm_kernel.cu", "csrc/gemm_cutlass.cu"],
            include_dirs=["third_party/cutlass/include"],
            # ruleid: ROCM301
            extra_compile_args={"nvcc": ["-O3", "-gencode=arch=compute_90,code=sm_90", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
