"""rocmlint.runtime: the gated fallback ops that rocmlint's fix-its point to.

One-line swaps for NVIDIA-only code that keep NVIDIA (and CPU) behaviour bit
for bit, use AMD's aiter kernels on ROCm when they are available, and fall back
to PyTorch otherwise::

    from rocmlint.runtime import attention, gpu_available, compile
    out = attention(q, k, v, causal=True)          # [B, S, H, D], GQA as is

Importing this package never imports torch (nor pynvml, nor aiter): the
platform helpers import torch inside their functions and work without it; the
tensor ops (``attention``, ``linear``, ...) load their module, and torch, on
first use.  Install torch with ``pip install rocmlint[runtime]``.

Names and the checks that point to them:

- ``gpu_available`` (ROCM001, top-level ``import pynvml``), ``is_rocm``,
  ``gpu_arch``, ``device_info``, ``aiter_available`` (aiter imports guarded by
  ``except ImportError`` only), ``aiter_status``
- ``attention`` (``flash_attn`` imports, K/V heads expanded before attention),
  ``flash_attn_func`` (a drop-in for flash-attention's)
- ``linear``, ``silu_and_mul``, ``gelu_tanh_and_mul``, ``fuse_gate_up``,
  ``fuse_qkv``, ``fuse_linears``, ``FusedLinear``, ``fuse_model``
- ``add_tuned_gemm_configs``, ``preshuffle_linears`` (aiter GEMM extras, ROCm only)
- ``rocmlint.runtime.transformers.register()``: the attention as a Hugging Face
  ``attn_implementation``
- ``compile_mode``, ``compile`` (ROCM002, ``torch.compile(mode="reduce-overhead")``),
  ``configure_allocator`` (``max_split_size_mb`` in ``PYTORCH_CUDA_ALLOC_CONF``),
  ``set_tf32``, ``set_cudnn_benchmark`` (ungated TF32/cuDNN flags),
  ``apply_inductor_rocm_defaults`` (inductor CUDA graphs / memory planning)
- ``verify`` (the porting guide's phase 8: a port checked numerically against the
  CPU or float64)
- ``python -m rocmlint.runtime`` (``doctor.main``): the run-time report
"""

from __future__ import annotations

import importlib
from typing import Any

from .device import (
    aiter_available,
    aiter_status,
    device_info,
    gpu_arch,
    gpu_available,
    is_rocm,
    torch_available,
)

# name -> submodule that defines it; loaded on first attribute access.
_LAZY = {
    "attention": "attn",
    "flash_attn_func": "flash_attn",
    "linear": "ops",
    "silu_and_mul": "ops",
    "gelu_tanh_and_mul": "ops",
    "FusedLinear": "fusion",
    "fuse_linears": "fusion",
    "fuse_gate_up": "fusion",
    "fuse_qkv": "fusion",
    "fuse_model": "fusion",
    "add_tuned_gemm_configs": "aiter_gemm",
    "preshuffle_linears": "aiter_gemm",
    "PreshuffledLinear": "aiter_gemm",
    "configure_allocator": "config",
    "set_tf32": "config",
    "set_cudnn_benchmark": "config",
    "compile_mode": "config",
    "compile": "config",
    "apply_inductor_rocm_defaults": "config",
    "verify": "verification",
    "VerifyResult": "verification",
}

__all__ = [
    "aiter_available",
    "aiter_status",
    "device_info",
    "gpu_arch",
    "gpu_available",
    "is_rocm",
    "torch_available",
    *_LAZY,
]


# Submodules that need torch (or transformers), loaded when first named.
_SUBMODULES = ("attn", "ops", "fusion", "flash_attn", "aiter_gemm", "transformers",
               "verification")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ImportError as exc:
        if not torch_available():
            raise ImportError(
                f"rocmlint.runtime.{name} needs PyTorch: pip install 'rocmlint[runtime]'"
            ) from exc
        raise
    value = getattr(module, name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
