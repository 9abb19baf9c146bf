"""Optional accelerators: fused norms, TensorRT export, cuDNN attention, CUDA runtime probes."""

import ctypes
from importlib.metadata import version

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

# ruleid: ROCM113
from flash_attn.ops.rms_norm import RMSNorm

# ruleid: ROCM114
FLASH_ATTN_VERSION = version("flash-attn")

# ruleid: ROCM110
CUDART = ctypes.CDLL("libcudart.so")

# ruleid: ROCM013
from aiter.tuned_gemm import tgemm


def cuda_runtime_version() -> int:
    value = ctypes.c_int()
    CUDART.cudaRuntimeGetVersion(ctypes.byref(value))
    return value.value


def export_model(model, example):
    # ruleid: ROCM111
    import torch_tensorrt

    return torch_tensorrt.compile(model, inputs=[example])


def fused_attention(q, k, v):
    # ruleid: ROCM112
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def norm(x, weight):
    return RMSNorm(x.shape[-1]).to(x)(x) if tgemm is None else x * weight
