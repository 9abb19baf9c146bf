from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fastllm",
    version="0.1.0",
    packages=["fastllm"],
    ext_modules=[
        CUDAExtension(
            "fastllm._C",
            ["csrc/bindings.cpp", "csrc/rmsnorm_kernel.cu", "csrc/gemm_cutlass.cu"],
            include_dirs=["third_party/cutlass/include"],
            extra_compile_args={"nvcc": ["-O3", "-gencode=arch=compute_90,code=sm_90", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
