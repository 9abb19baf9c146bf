"""Attention and fp8 weights, using the fastest kernels available on each GPU stack."""

import torch
import torch.nn.functional as F

try:
    # ok: ROCM011
    from flash_attn import flash_attn_func
except ImportError:
    flash_attn_func = None

try:
    # ok: ROCM012
    import aiter
except Exception:  # AMD's aiter raises RuntimeError without ROCm
    aiter = None

if torch.version.hip:
    # MI300 (gfx94x) computes fp8 only in the FNUZ encoding; gfx950 and RDNA4 use OCP.
    arch = torch.cuda.get_device_properties(0).gcnArchName if torch.cuda.is_available() else ""
    FP8_DTYPE = torch.float8_e4m3fnuz if arch.startswith("gfx94") else torch.float8_e4m3fn
else:
    # ok: ROCM104
    FP8_DTYPE = torch.float8_e4m3fn


def use_fp8() -> bool:
    if torch.version.hip:
        arch = torch.cuda.get_device_properties(0).gcnArchName
        return arch.startswith(("gfx94", "gfx95", "gfx12"))
    # Hopper and newer have fp8 tensor cores.
    # ok: ROCM103
    return torch.cuda.get_device_capability() >= (9, 0)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    if flash_attn_func is not None:
        return flash_attn_func(q, k, v, causal=True)
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True)
    return out.transpose(1, 2)


def quantize(weight: torch.Tensor) -> torch.Tensor:
    return weight.to(FP8_DTYPE) if use_fp8() else weight
