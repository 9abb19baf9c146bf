"""GEMM and gated activations: aiter kernels on ROCm, plain PyTorch elsewhere.

On a machine that is not ROCm each function is exactly the PyTorch expression
named in its docstring, so swapping it in changes no bit of the output there.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.nn.functional as F

from . import device as _device
from .warn_once import OnceWarnings

__all__ = ["linear", "silu_and_mul", "gelu_tanh_and_mul", "AITER_DEVICE_TYPES"]

#: Device types whose tensors may go to aiter kernels (ROCm tensors report
#: ``"cuda"``).  The contract tests widen it to run fake operators on CPU.
AITER_DEVICE_TYPES = frozenset({"cuda"})

_HALF = (torch.float16, torch.bfloat16)
_warnings = OnceWarnings(stacklevel=2)
_failed: set[tuple] = set()


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")

#: The switches of the porting guide, each with the name this module used
#: before as an alias (read when the guide's name is not set).  Both kinds of
#: kernel are opt-in: the defaults keep PyTorch's path, so that a user turns
#: the AMD kernels on to compare them with it.
GEMM_SWITCH = ("USE_AITER_GEMM", "USE_AITER_OPS")          # linear: aiter tuned GEMM
ACTIVATION_SWITCH = ("USE_OPTIMIZED_OPS", "USE_AITER_OPS")  # silu/gelu_tanh_and_mul


def switch_on(names: tuple[str, ...], default: bool = False) -> bool:
    """The first of ``names`` set in the environment decides: ``1``/``true``/
    ``yes``/``on`` is on, ``0``/``false``/``no``/``off`` is off; anything else
    (or none set) is ``default``."""
    for name in names:
        value = os.environ.get(name)
        if value is None:
            continue
        value = value.strip().lower()
        if value in _ON:
            return True
        if value in _OFF:
            return False
        return default
    return default


def _aiter_enabled(switch: tuple[str, ...]) -> bool:
    """ROCm, the switch on, and aiter available."""
    if not (_device._IS_ROCM or (_device._IS_ROCM is None and _device.is_rocm())):
        return False
    if not switch_on(switch):
        return False
    return _device.aiter_available()


def _needs_grad(*tensors: Any) -> bool:
    return torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in tensors
    )


def linear(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """``y = input @ weight.T + bias``: ``torch.nn.functional.linear`` with the
    same argument names, positions and meaning.

    On ROCm with aiter and ``USE_AITER_GEMM=1`` (default off; ``USE_AITER_OPS``
    is an alias), bf16/fp16 inputs on the GPU (and no gradient needed) go
    to aiter's shape-tuned ``gemm_a16w16`` (``aiter.tuned_gemm``, registered as
    ``torch.ops.aiter.gemm_a16w16(A, B, bias=None, otype=None, ...)`` with
    ``B`` in ``[N, K]`` like ``F.linear``'s weight).  Everywhere else, and when
    the aiter call raises (one warning), this is ``F.linear(input, weight,
    bias)``.
    """
    if (
        _device._IS_ROCM is not False
        and input.dtype in _HALF
        and input.device.type in AITER_DEVICE_TYPES
        and _aiter_enabled(GEMM_SWITCH)
    ):
        out = _aiter_linear(input, weight, bias)
        if out is not None:
            return out
    return F.linear(input, weight, bias)


def _aiter_linear(x, w, b):
    if w.dtype != x.dtype or (b is not None and b.dtype != x.dtype) or _needs_grad(x, w, b):
        return None
    key = ("gemm", x.dtype, b is not None)
    if key in _failed:
        return None
    op = _device.aiter_op("gemm_a16w16")
    if op is None:
        return None
    try:
        return op(x, w, b)
    except Exception as exc:
        _failed.add(key)
        _warnings.warn(
            "gemm",
            f"rocmlint.runtime.linear: aiter gemm_a16w16 failed ({type(exc).__name__}: "
            f"{exc}); using F.linear",
        )
        return None


def _split_gated(x: torch.Tensor, up: torch.Tensor | None):
    if up is not None:
        return x, up
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"gated activation: last dimension {d} is not even")
    half = d // 2
    return x[..., :half], x[..., half:]


def _aiter_gated(name: str, x: torch.Tensor, out: torch.Tensor | None):
    """Run aiter's ``<name>(out, input)`` on a fused ``[..., 2*d]`` tensor."""
    if (
        x.dtype not in _HALF
        or x.device.type not in AITER_DEVICE_TYPES
        or _needs_grad(x)
        or not _aiter_enabled(ACTIVATION_SWITCH)
    ):
        return None
    key = (name, x.dtype)
    if key in _failed:
        return None
    op = _device.aiter_op(name)
    if op is None:
        return None
    d = x.shape[-1] // 2
    if out is None:
        result = x.new_empty((*x.shape[:-1], d))
    elif out.is_contiguous() and out.dtype == x.dtype:
        result = out
    else:
        return None
    try:
        op(result, x if x.is_contiguous() else x.contiguous())
    except Exception as exc:
        _failed.add(key)
        _warnings.warn(
            name,
            f"rocmlint.runtime.{name}: aiter kernel failed ({type(exc).__name__}: "
            f"{exc}); using PyTorch",
        )
        return None
    return result


def silu_and_mul(
    x: torch.Tensor, up: torch.Tensor | None = None, *, out: torch.Tensor | None = None
) -> torch.Tensor:
    """SwiGLU gate: ``F.silu(gate) * up``.

    ``silu_and_mul(x)`` takes the fused ``[..., 2*d]`` output of a gate+up
    projection (gate first, as ``fuse_gate_up`` produces) and returns
    ``F.silu(x[..., :d]) * x[..., d:]``; ``silu_and_mul(gate, up)`` takes the
    two halves.  On ROCm with aiter and ``USE_OPTIMIZED_OPS=1`` (default off;
    ``USE_AITER_OPS`` is an alias) the fused form runs aiter's
    ``silu_and_mul(out, input)`` kernel (one pass); elsewhere it is exactly the
    PyTorch expression above.
    """
    if up is None:
        result = _aiter_gated("silu_and_mul", x, out)
        if result is not None:
            return result
    gate, up = _split_gated(x, up)
    if out is None:
        return F.silu(gate) * up
    return torch.mul(F.silu(gate), up, out=out)


def gelu_tanh_and_mul(
    x: torch.Tensor, up: torch.Tensor | None = None, *, out: torch.Tensor | None = None
) -> torch.Tensor:
    """GeGLU gate with the tanh GELU: ``F.gelu(gate, approximate="tanh") * up``.

    Same forms as ``silu_and_mul``; aiter's ``gelu_tanh_and_mul(out, input)``
    kernel on ROCm with ``USE_OPTIMIZED_OPS=1`` for the fused form, the
    PyTorch expression elsewhere.
    """
    if up is None:
        result = _aiter_gated("gelu_tanh_and_mul", x, out)
        if result is not None:
            return result
    gate, up = _split_gated(x, up)
    if out is None:
        return F.gelu(gate, approximate="tanh") * up
    return torch.mul(F.gelu(gate, approximate="tanh"), up, out=out)


def _reset_for_tests() -> None:
    _warnings.clear()
    _failed.clear()
