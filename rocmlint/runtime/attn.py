"""Attention with three tiers: aiter ``mha_fwd`` -> PyTorch SDPA -> bounded eager.

``attention`` is what the fix-its for ``flash_attn`` imports and for expanded
K/V heads (``repeat_kv``) point to.  This module imports torch; the package
``rocmlint.runtime`` loads it only when one of its names is first used.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from typing import Any

import torch
import torch.nn.functional as F

from . import device as _device

__all__ = ["attention", "EAGER_MEMORY_BUDGET_BYTES"]

_sdpa = F.scaled_dot_product_attention

#: Upper bound for the temporaries one query chunk of the eager tier may hold
#: (scores, float32 probabilities, their cast).  256 MiB keeps the eager tier
#: at S=8192, 64 heads far below the 16 GiB a one-shot eager softmax needs.
EAGER_MEMORY_BUDGET_BYTES = 256 * 2**20

#: Device types whose tensors may go to the aiter kernels.  ROCm tensors report
#: ``"cuda"``.  The contract tests widen this to run a fake operator on CPU.
AITER_DEVICE_TYPES = frozenset({"cuda"})

_AITER_DTYPES = (torch.float16, torch.bfloat16)
_BACKENDS = ("aiter", "sdpa", "eager")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _version_tuple(text: str) -> tuple[int, int]:
    parts = []
    for piece in text.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    while len(parts) < 2:
        parts.append(0)
    return parts[0], parts[1]


# ``enable_gqa`` arrived in PyTorch 2.5.  Older versions get repeated K/V in
# tier 2, which is what a hand-written call had to do there.
_SDPA_HAS_GQA = _version_tuple(torch.__version__) >= (2, 5)

_warned: set[str] = set()
_warn_lock = threading.Lock()


def _warn_once(key: str, message: str) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


# The switches are read at every call.  ``os.environ.get`` costs about 0.5 us;
# reading the mapping behind ``os.environ`` directly (the dict CPython's
# ``os._Environ`` keeps in step with every ``os.environ`` write) costs ~30 ns.
_ENV_DATA = getattr(os.environ, "_data", None)
_encodekey = getattr(os.environ, "encodekey", None)
_decodevalue = getattr(os.environ, "decodevalue", None)
if not (isinstance(_ENV_DATA, dict) and callable(_encodekey) and callable(_decodevalue)):
    _ENV_DATA = None


def _getenv(name: str, key: Any = None) -> str | None:
    if _ENV_DATA is None:
        return os.environ.get(name)
    raw = _ENV_DATA.get(_encodekey(name) if key is None else key)
    return None if raw is None else _decodevalue(raw)


_KEY_FORCE_EAGER = _encodekey("FORCE_EAGER_ATTENTION") if _ENV_DATA is not None else None
_FAST_PATH = _ENV_DATA is not None and _SDPA_HAS_GQA


def _env_flag(name: str) -> bool | None:
    value = _getenv(name)
    if value is None:
        return None
    value = value.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


# --------------------------------------------------------------------------
# Tier 1: aiter mha_fwd
# --------------------------------------------------------------------------
#
# Operator contract, from ROCm/aiter ``aiter/ops/mha.py`` (the Python stub that
# registers ``torch.ops.aiter.mha_fwd``) and ``csrc/include/torch/mha_fwd.h``:
#
#   mha_fwd(q [b, sq, hq, d], k [b, sk, hk, d], v [b, sk, hk, dv],
#           dropout_p: float, softmax_scale: float, is_causal: bool,
#           window_size_left: int, window_size_right: int,
#           [sink_size: int,]            # present in newer releases only
#           return_softmax_lse: bool, return_dropout_randval: bool,
#           ... optional tensors (out, bias, alibi_slopes, descales, ...) = None)
#       -> (out [b, sq, hq, dv], softmax_lse, dropout_randval, rng_state)
#
# q/k/v are fp16/bf16 with a contiguous last dimension; hk must divide hq
# (GQA/MQA: K/V are passed with their own head count).  Causal masks are
# aligned to the bottom-right corner, as in flash-attention.  aiter's own
# ``flash_attn_func`` passes window sizes (-1, -1) and sink_size 0 for plain
# (causal or non-causal) attention, and pads head dims to a multiple of 8
# before calling the operator; tier 1 therefore takes head dims that are
# multiples of 8 (up to 256) and leaves the rest to tier 2.

# Values for every required argument this module knows how to fill, by name.
# Anything else required by a future schema disables tier 1 (with a reason).
_KNOWN_ARGS = (
    "q",
    "k",
    "v",
    "dropout_p",
    "p_dropout",
    "softmax_scale",
    "is_causal",
    "window_size_left",
    "window_size_right",
    "sink_size",
    "return_softmax_lse",
    "return_dropout_randval",
)


class _MhaCaller:
    """Calls one resolved ``mha_fwd`` operator with positional arguments in
    the order its schema declares."""

    def __init__(self, op: Any, names: tuple[str, ...], has_sink: bool) -> None:
        self.op = op
        self.names = names
        self.has_sink = has_sink

    def __call__(self, q, k, v, scale: float, causal: bool):
        values = {
            "q": q,
            "k": k,
            "v": v,
            "dropout_p": 0.0,
            "p_dropout": 0.0,
            "softmax_scale": float(scale),
            "is_causal": bool(causal),
            "window_size_left": -1,
            "window_size_right": -1,
            "sink_size": 0,
            "return_softmax_lse": False,
            "return_dropout_randval": False,
        }
        result = self.op(*[values[name] for name in self.names])
        return result[0]


_caller_lock = threading.Lock()
# namespace -> (_MhaCaller or None, reason)
_callers: dict[str, tuple[_MhaCaller | None, str]] = {}


def _resolve_mha_fwd() -> tuple[_MhaCaller | None, str]:
    namespace = _device.AITER_OPS_NAMESPACE
    cached = _callers.get(namespace)
    if cached is not None:
        return cached
    with _caller_lock:
        if namespace not in _callers:
            _callers[namespace] = _build_caller()
        return _callers[namespace]


def _build_caller() -> tuple[_MhaCaller | None, str]:
    available, reason = _device.aiter_status()
    if not available:
        return None, reason
    op = _device.aiter_op("mha_fwd")
    if op is None:
        return None, "torch.ops.aiter.mha_fwd disappeared"
    try:
        schema = op.default._schema
    except Exception as exc:
        return None, f"cannot read the mha_fwd schema: {exc}"
    names: list[str] = []
    for arg in schema.arguments:
        if arg.kwarg_only:
            if not arg.has_default_value():
                return None, f"mha_fwd needs keyword argument '{arg.name}'"
            continue
        if arg.name in _KNOWN_ARGS:
            names.append(arg.name)
        elif arg.has_default_value():
            break  # leave this and every later optional argument at its default
        else:
            return None, f"mha_fwd schema has unknown required argument '{arg.name}'"
    for needed in ("q", "k", "v", "softmax_scale", "is_causal"):
        if needed not in names:
            return None, f"mha_fwd schema lacks '{needed}'"
    return _MhaCaller(op, tuple(names), "sink_size" in names), "ok"


_aiter_failed: set[tuple] = set()


def _aiter_ineligible(q, k, v, attn_mask) -> str | None:
    """Why these inputs cannot go to tier 1, or None when they can."""
    if attn_mask is not None:
        return "an explicit attn_mask is given"
    if q.device.type not in AITER_DEVICE_TYPES:
        return f"tensors are on {q.device.type}"
    if q.dtype not in _AITER_DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        return f"dtype {q.dtype} (aiter mha_fwd takes float16/bfloat16)"
    d, dv = q.shape[-1], v.shape[-1]
    if d % 8 or dv % 8 or d > 256 or dv > 256:
        return f"head dims ({d}, {dv}) are not multiples of 8 up to 256"
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return "gradients are required (the operator has no backward here)"
    return None


def _run_aiter(q, k, v, scale, causal, layout, q_len, explicit):
    reason = _aiter_ineligible(q, k, v, None)
    if reason is not None:
        if explicit:
            raise ValueError(f"attention(backend='aiter') cannot run these inputs: {reason}")
        return None
    caller, why = _resolve_mha_fwd()
    if caller is None:
        if explicit:
            raise RuntimeError(f"attention(backend='aiter'): aiter is not usable: {why}")
        return None
    if layout == "bhsd":
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    if q.shape[2] % k.shape[2]:
        if explicit:
            raise ValueError("attention: query heads must be a multiple of key/value heads")
        return None
    key = (q.dtype, q.shape[-1], v.shape[-1], bool(causal), q.shape[2] != k.shape[2])
    if not explicit and key in _aiter_failed:
        return None
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    if v.stride(-1) != 1:
        v = v.contiguous()
    if scale is None:
        scale = q.shape[-1] ** -0.5
    try:
        # A single query row sees every key under a bottom-right causal mask.
        out = caller(q, k, v, scale, causal and q_len > 1)
    except Exception as exc:
        if explicit:
            raise
        _aiter_failed.add(key)
        _warn_once(
            "aiter-fail-" + repr(key),
            f"rocmlint.runtime.attention: aiter mha_fwd failed ({type(exc).__name__}: "
            f"{exc}); using PyTorch SDPA for these inputs from now on",
        )
        return None
    return out.transpose(1, 2) if layout == "bhsd" else out


# --------------------------------------------------------------------------
# Tier 2: SDPA
# --------------------------------------------------------------------------


def _bottom_right_mask(q_len: int, k_len: int, device) -> torch.Tensor:
    """Boolean [q_len, k_len] mask, True where a query may attend: query i sees
    keys j <= i + (k_len - q_len) (the KV-cache / flash-attention convention)."""
    return torch.ones(q_len, k_len, dtype=torch.bool, device=device).tril(k_len - q_len)


def _merge_masks(causal_mask: torch.Tensor, attn_mask: torch.Tensor | None):
    if attn_mask is None:
        return causal_mask
    if attn_mask.dtype == torch.bool:
        return attn_mask & causal_mask
    return attn_mask.masked_fill(~causal_mask, float("-inf"))


def _run_sdpa(q, k, v, scale, causal, attn_mask, layout, qs, ks):
    """``qs``/``ks``: the caller's ``q.shape``/``k.shape`` (in ``layout``)."""
    if layout == "bshd":
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q_len, k_len, hq, hk = qs[1], ks[1], qs[2], ks[2]
    else:
        q_len, k_len, hq, hk = qs[2], ks[2], qs[1], ks[1]
    is_causal = False
    if causal:
        if q_len == k_len:
            if attn_mask is None:
                is_causal = True
            else:
                attn_mask = _merge_masks(_bottom_right_mask(q_len, k_len, q.device), attn_mask)
        elif q_len > 1:
            attn_mask = _merge_masks(_bottom_right_mask(q_len, k_len, q.device), attn_mask)
        # q_len == 1: the only query row sees every key; no mask at all.
    if hq != hk:
        if _SDPA_HAS_GQA:
            out = _sdpa(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale,
                        enable_gqa=True)
        else:  # pragma: no cover - PyTorch < 2.5
            rep = hq // hk
            out = _sdpa(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1),
                        attn_mask=attn_mask, is_causal=is_causal, scale=scale)
    else:
        out = _sdpa(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)
    return out.transpose(1, 2) if layout == "bshd" else out


# --------------------------------------------------------------------------
# Tier 3: eager, in query chunks
# --------------------------------------------------------------------------


def _run_eager(q, k, v, scale, causal, attn_mask, layout):
    if layout == "bshd":
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    b, h, q_len, d = q.shape
    hk, k_len, dv = k.shape[1], k.shape[2], v.shape[-1]
    if h % hk:
        raise ValueError(f"attention: {h} query heads is not a multiple of {hk} key/value heads")
    g = h // hk
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    k = k.contiguous()
    v = v.contiguous()
    out_dtype = q.dtype
    if layout == "bshd":
        out = q.new_empty((b, q_len, h, dv), dtype=out_dtype)
    else:
        out = q.new_empty((b, h, q_len, dv), dtype=out_dtype)
    if attn_mask is not None:
        attn_mask = attn_mask.expand(b, h, q_len, k_len)
    # Bytes per score element: scores (input dtype) + float32 probabilities +
    # their cast back to the value dtype.
    per_elem = q.element_size() + 4 + v.element_size()
    chunk = max(1, EAGER_MEMORY_BUDGET_BYTES // max(1, b * h * k_len * per_elem))
    offset = k_len - q_len
    for s0 in range(0, q_len, chunk):
        s1 = min(q_len, s0 + chunk)
        c = s1 - s0
        # Keys after the last visible one of this chunk are masked for every
        # row: leave them out of the products entirely.
        kv_end = min(k_len, s1 + offset) if causal else k_len
        kc = k[:, :, :kv_end]
        vc = v[:, :, :kv_end]
        # Group query heads by their K/V head: [b, hk, g * c, d].  K and V are
        # never repeated; the grouped rows share one matrix product.
        qc = q[:, :, s0:s1].reshape(b, hk, g * c, d)
        scores = torch.matmul(qc, kc.transpose(-1, -2))
        scores5 = scores.view(b, hk, g, c, kv_end)
        scores5.mul_(scale)
        if causal:
            rows = torch.arange(s0, s1, device=q.device).unsqueeze(1) + offset
            cols = torch.arange(kv_end, device=q.device).unsqueeze(0)
            scores5.masked_fill_(cols > rows, float("-inf"))
        if attn_mask is not None:
            m = attn_mask[:, :, s0:s1, :kv_end].reshape(b, hk, g, c, kv_end)
            if m.dtype == torch.bool:
                scores5.masked_fill_(~m, float("-inf"))
            else:
                scores5.add_(m)
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
        del scores, scores5
        if attn_mask is not None:
            # Rows with every key masked: zeros, as PyTorch SDPA returns.
            probs = probs.nan_to_num_(0.0)
        oc = torch.matmul(probs.to(v.dtype), vc)
        del probs
        oc = oc.view(b, hk, g, c, dv)
        if layout == "bshd":
            out[:, s0:s1].view(b, c, hk, g, dv).copy_(oc.permute(0, 3, 1, 2, 4))
        else:
            out[:, :, s0:s1].view(b, hk, g, c, dv).copy_(oc)
    return out


# --------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    scale: float | None = None,
    causal: bool = False,
    attn_mask: torch.Tensor | None = None,
    layout: str = "bshd",
    backend: str | None = None,
) -> torch.Tensor:
    """Scaled dot-product attention that runs well on NVIDIA, AMD and CPU.

    Args:
        q: queries, ``[B, S_q, H, D]`` (``layout="bshd"``, the flash-attention
            layout) or ``[B, H, S_q, D]`` (``layout="bhsd"``, the SDPA layout).
        k, v: keys and values in the same layout with ``S_k`` positions and
            ``H_kv`` heads; ``H`` must be a multiple of ``H_kv`` (GQA/MQA).
            Never expand K/V heads before calling: every tier handles them.
        scale: softmax scale; ``1/sqrt(D)`` when None.
        causal: causal mask aligned to the bottom-right corner, as in
            flash-attention and KV-cache decoding: query ``i`` sees keys
            ``j <= i + S_k - S_q``.  With ``S_q == S_k`` this is the usual
            causal mask; with ``S_q == 1`` the query sees every cached key;
            query rows that see no key (``S_q > S_k``) return zeros.
        attn_mask: optional boolean (True = attend) or additive mask that
            broadcasts to ``[B, H, S_q, S_k]`` (tiers 2 and 3 only).
        layout: ``"bshd"`` (default) or ``"bhsd"``; the output uses the same.
        backend: force a tier: ``"aiter"``, ``"sdpa"`` or ``"eager"``.  A forced
            tier raises instead of falling back.  None picks automatically.

    Tiers (automatic choice):
        1. ``torch.ops.aiter.mha_fwd`` on ROCm when aiter is available, inputs
           are fp16/bf16 on the GPU, no mask and no gradient are needed, and
           ``USE_AITER_ATTENTION`` is not ``0``.  An operator error falls back
           to tier 2 with a warning (once per input kind).
        2. ``torch.nn.functional.scaled_dot_product_attention`` with
           ``enable_gqa`` for GQA/MQA (no repeated K/V).  On NVIDIA and CPU this
           is exactly the call a hand-written port makes, so outputs are
           bit-identical to it.
        3. Eager attention in query chunks (bounded memory) when
           ``FORCE_EAGER_ATTENTION=1`` or when SDPA raises a RuntimeError.

    Environment switches (read at each call): ``FORCE_EAGER_ATTENTION=1``
    forces tier 3; ``USE_AITER_ATTENTION=0`` disables tier 1,
    ``USE_AITER_ATTENTION=1`` asks for it and warns once when it is not
    available.  The ``backend`` keyword overrides both.
    """
    if (
        backend is None
        and attn_mask is None
        and _device._IS_ROCM is False
        and _FAST_PATH
        and _KEY_FORCE_EAGER not in _ENV_DATA
    ):
        # Fast path for the common case off ROCm (tier 2, no mask, no switch
        # set): the same call as the general path, with less Python around it.
        if layout == "bshd":
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        elif layout == "bhsd":
            qt, kt, vt = q, k, v
        else:
            raise ValueError(f"attention: layout must be 'bshd' or 'bhsd', not {layout!r}")
        qs, ks = qt.shape, kt.shape
        is_causal = False
        if causal:
            q_len, k_len = qs[2], ks[2]
            if q_len == k_len:
                is_causal = True
            elif q_len != 1:
                is_causal = None  # needs a mask or the overhang split
        if is_causal is not None:
            try:
                out = _sdpa(qt, kt, vt, is_causal=is_causal, scale=scale,
                            enable_gqa=qs[1] != ks[1])
            except RuntimeError:
                pass  # the general path below warns and falls back
            else:
                return out.transpose(1, 2) if layout == "bshd" else out
    if backend is None:
        explicit = False
        if _ENV_DATA is not None:
            raw = _ENV_DATA.get(_KEY_FORCE_EAGER)
            force_eager = None if raw is None else _decodevalue(raw)
        else:
            force_eager = os.environ.get("FORCE_EAGER_ATTENTION")
        if force_eager is not None and force_eager.strip().lower() in _TRUE:
            backend = "eager"
        elif _device._IS_ROCM is False or not _device.is_rocm():
            backend = "sdpa"
        else:
            backend = _rocm_auto_backend()
    elif backend in _BACKENDS:
        explicit = True
    else:
        raise ValueError(f"attention: backend must be one of {_BACKENDS}, not {backend!r}")
    if layout != "bshd" and layout != "bhsd":
        raise ValueError(f"attention: layout must be 'bshd' or 'bhsd', not {layout!r}")
    qs, ks = q.shape, k.shape
    q_len = qs[1] if layout == "bshd" else qs[2]
    if causal:
        k_len = ks[1] if layout == "bshd" else ks[2]
        if q_len > k_len:
            return _overhang(q, k, v, scale, attn_mask, layout,
                             backend if explicit else None, q_len, k_len)
    if backend == "sdpa":
        if explicit:
            return _run_sdpa(q, k, v, scale, causal, attn_mask, layout, qs, ks)
    elif backend == "aiter":
        if attn_mask is None:
            out = _run_aiter(q, k, v, scale, causal, layout, q_len, explicit)
            if out is not None:
                return out
        elif explicit:
            raise ValueError("attention(backend='aiter') does not take attn_mask")
    else:
        return _run_eager(q, k, v, scale, causal, attn_mask, layout)
    try:
        return _run_sdpa(q, k, v, scale, causal, attn_mask, layout, qs, ks)
    except RuntimeError as exc:
        _warn_once(
            "sdpa-fail",
            f"rocmlint.runtime.attention: SDPA failed ({exc}); using the eager tier",
        )
        return _run_eager(q, k, v, scale, causal, attn_mask, layout)


def _rocm_auto_backend() -> str:
    use = _env_flag("USE_AITER_ATTENTION")
    if use is False:
        return "sdpa"
    if _device.aiter_available():
        return "aiter"
    if use:
        _warn_once(
            "aiter-unavailable",
            "USE_AITER_ATTENTION=1 but aiter is not usable: " + _device.aiter_status()[1],
        )
    return "sdpa"


def _overhang(q, k, v, scale, attn_mask, layout, backend, q_len, k_len):
    """Causal with more queries than keys: the first ``q_len - k_len`` rows see
    no key and are zero; the last ``k_len`` rows form a square causal problem."""
    dim = 1 if layout == "bshd" else 2
    start = q_len - k_len
    if layout == "bshd":
        out = q.new_zeros((q.shape[0], q_len, q.shape[2], v.shape[-1]))
    else:
        out = q.new_zeros((q.shape[0], q.shape[1], q_len, v.shape[-1]))
    if k_len == 0:
        return out
    tail_mask = attn_mask
    if attn_mask is not None and attn_mask.dim() >= 2 and attn_mask.shape[-2] == q_len:
        tail_mask = attn_mask[..., start:, :]
    tail = attention(q.narrow(dim, start, k_len), k, v, scale=scale, causal=True,
                     attn_mask=tail_mask, layout=layout, backend=backend)
    out.narrow(dim, start, k_len).copy_(tail)
    return out


def _reset_for_tests() -> None:
    """Forget cached operator plans, failures and warnings."""
    with _caller_lock:
        _callers.clear()
    _aiter_failed.clear()
    with _warn_lock:
        _warned.clear()
