"""Attention and fp8 weights, using the fastest kernels available."""

import torch

# ruleid: ROCM011
from flash_attn import flash_attn_func

try:
    # ruleid: ROCM012
    import aiter
except ImportError:
    aiter = None

# ruleid: ROCM104
FP8_DTYPE = torch.float8_e4m3fn


def use_fp8() -> bool:
    # Hopper and newer have fp8 tensor cores.
    # ruleid: ROCM103
    return torch.cuda.get_device_capability() >= (9, 0)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return flash_attn_func(q, k, v, causal=True)


def quantize(weight: torch.Tensor) -> torch.Tensor:
    return weight.to(FP8_DTYPE) if use_fp8() else weight
