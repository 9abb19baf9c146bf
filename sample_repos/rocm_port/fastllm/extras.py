"""Optional accelerators, each kept for the GPU stack that has it."""

import ctypes
from importlib.metadata import PackageNotFoundError, version

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

try:
    # ok: ROCM113
    from flash_attn.ops.rms_norm import RMSNorm
except ImportError:  # a CUDA-only extension: no ROCm build provides it
    RMSNorm = None

try:
    # ok: ROCM114
    FLASH_ATTN_VERSION = version("flash-attn")
except PackageNotFoundError:
    FLASH_ATTN_VERSION = None

if torch.version.hip:
    CUDART = None
else:
    # ok: ROCM110
    CUDART = ctypes.CDLL("libcudart.so")

if torch.version.hip:
    # ok: ROCM013
    from aiter.tuned_gemm import tgemm
else:
    tgemm = None


def cuda_runtime_version() -> int:
    if CUDART is None:
        return 0
    value = ctypes.c_int()
    CUDART.cudaRuntimeGetVersion(ctypes.byref(value))
    return value.value


def export_model(model, example):
    if torch.version.hip:
        return torch.compile(model)
    # ok: ROCM111
    import torch_tensorrt

    return torch_tensorrt.compile(model, inputs=[example])


def fused_attention(q, k, v):
    backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION] if torch.version.hip else SDPBackend.CUDNN_ATTENTION
    # ok: ROCM112
    with sdpa_kernel(backends):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def norm(x, weight):
    if RMSNorm is not None:
        return RMSNorm(x.shape[-1]).to(x)(x)
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), weight)
