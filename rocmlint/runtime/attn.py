"""Attention with three tiers: aiter -> PyTorch SDPA -> bounded eager.

``attention`` is what the fix-its for ``flash_attn`` imports and for expanded
K/V heads (``repeat_kv``) point to.  It takes the argument names of both APIs
it replaces, ``torch.nn.functional.scaled_dot_product_attention`` and
``flash_attn_func``, with their meanings.  This module imports torch; the
package ``rocmlint.runtime`` loads it only when one of its names is first used.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
import threading
from typing import Any

import torch
import torch.nn.functional as F

from . import device as _device
from .warn_once import OnceWarnings

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
_SHAPES = {"bshd": "[B, S, H, D]", "bhsd": "[B, H, S, D]"}


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

_warnings = OnceWarnings(stacklevel=3)


# The switches are read at every call.  ``os.environ.get`` costs about 0.5 us;
# reading the mapping behind ``os.environ`` directly (the dict CPython's
# ``os._Environ`` keeps in step with every ``os.environ`` write) costs ~30 ns.
_ENV_DATA = getattr(os.environ, "_data", None)
_encodekey = getattr(os.environ, "encodekey", None)
_decodevalue = getattr(os.environ, "decodevalue", None)
if not (isinstance(_ENV_DATA, dict) and callable(_encodekey) and callable(_decodevalue)):
    _ENV_DATA = None


def _getenv(name: str) -> str | None:
    if _ENV_DATA is None:
        return os.environ.get(name)
    raw = _ENV_DATA.get(_encodekey(name))
    return None if raw is None else _decodevalue(raw)


_KEY_FORCE_EAGER = _encodekey("FORCE_EAGER_ATTENTION") if _ENV_DATA is not None else None
# The fast path in ``attention`` runs while FORCE_EAGER_ATTENTION is absent
# from this mapping.  Without the direct environment read (or without
# ``enable_gqa``) a stand-in that always holds the key turns it off.
_FAST_ENV: Any = (_ENV_DATA if (_ENV_DATA is not None and _SDPA_HAS_GQA)
                  else {_KEY_FORCE_EAGER: None})
_INF = float("inf")


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
# Argument checking
# --------------------------------------------------------------------------
#
# Caller mistakes are errors that name the argument, raised before any tier
# runs.  SDPA alone accepts several of them silently (measured on torch 2.13:
# 3-D and 5-D inputs, batch sizes that broadcast, v longer than k, v with one
# head), and the eager tier would reinterpret others; the fallback to the
# eager tier exists for kernel failures only.


class _Problem:
    """Checked arguments of one call."""

    __slots__ = ("b", "sq", "sk", "hq", "hk", "d", "dv", "layout", "causal",
                 "causal_offset", "window", "softcap", "dropout_p", "scale",
                 "generator", "mask")

    def __init__(self) -> None:
        self.causal = False
        self.causal_offset = 0
        self.window: tuple[int, int] | None = None
        self.softcap = 0.0
        self.dropout_p = 0.0
        self.scale: float | None = None
        self.generator: torch.Generator | None = None
        self.mask: torch.Tensor | None = None

    def dead_rows(self) -> int:
        """How many leading query rows the causal mask and the window leave
        without any key (rows can only lose every key at the start, when
        there are more queries than keys)."""
        bound = None  # the last key row 0 may see, relative to key 0
        if self.causal:
            bound = self.causal_offset
        if self.window is not None and self.window[1] >= 0:
            right = self.sk - self.sq + self.window[1]
            bound = right if bound is None else min(bound, right)
        if self.sk == 0:
            return self.sq
        return 0 if bound is None or bound >= 0 else min(self.sq, -bound)

    def masks_rows(self) -> bool:
        """True when some query row may see no key at all."""
        return (self.mask is not None or self.window is not None or self.sk == 0
                or (self.causal and self.causal_offset < 0))


def _shape_text(t: torch.Tensor) -> str:
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _check_tensors(q, k, v, layout: str, p: _Problem) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"attention: {name} must be a torch.Tensor, got {type(t).__name__}")
    if layout not in _SHAPES:
        raise ValueError(f"attention: layout must be 'bshd' or 'bhsd', not {layout!r}")
    expected = _SHAPES[layout]
    kv_expected = expected.replace("H,", "H_kv,").replace("S,", "S_k,")
    for name, t, shape in (("q", q, expected), ("k", k, kv_expected), ("v", v, kv_expected)):
        if t.dim() != 4:
            hint = ""
            if t.dim() == 3:
                hint = f"; add the batch dimension with {name}.unsqueeze(0)"
            raise ValueError(
                f"attention: {name} must be a 4-D tensor {shape} (layout={layout!r}), got a "
                f"{t.dim()}-D tensor of shape {_shape_text(t)}{hint}"
            )
    if not q.is_floating_point():
        raise TypeError(f"attention: q must be a floating-point tensor, got {q.dtype}")
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            raise TypeError(
                f"attention: {name} has dtype {t.dtype} but q has {q.dtype}; q, k and v "
                "must have the same dtype"
            )
        if t.device != q.device:
            raise ValueError(
                f"attention: {name} is on {t.device} but q is on {q.device}; q, k and v "
                "must be on the same device"
            )
    if layout == "bshd":
        b, sq, hq, d = q.shape
        _, sk, hk, _ = k.shape
        vb, vs, vh, dv = v.shape
    else:
        b, hq, sq, d = q.shape
        _, hk, sk, _ = k.shape
        vb, vh, vs, dv = v.shape
    for name, t in (("k", k), ("v", v)):
        if t.shape[0] != b:
            raise ValueError(
                f"attention: {name} has batch size {t.shape[0]} but q has {b}; the batch "
                "sizes must be equal (no broadcasting)"
            )
    if k.shape[-1] != d:
        raise ValueError(
            f"attention: k has head dim {k.shape[-1]} but q has {d}; expected k of shape "
            f"{kv_expected} with D={d}"
        )
    if vh != hk:
        raise ValueError(f"attention: v has {vh} heads but k has {hk}; k and v must have "
                         "the same number of heads")
    if vs != sk:
        raise ValueError(f"attention: v has {vs} positions but k has {sk}; k and v must have "
                         "the same sequence length")
    if hk == 0 or hq % hk:
        raise ValueError(
            f"attention: q has {hq} heads, which is not a multiple of the {hk} heads of k "
            "and v (GQA/MQA need H = H_kv * groups)"
        )
    p.b, p.sq, p.sk, p.hq, p.hk, p.d, p.dv = b, sq, sk, hq, hk, d, dv
    p.layout = layout


def _check_mask(attn_mask, q: torch.Tensor, p: _Problem) -> None:
    if attn_mask is None:
        return
    if not isinstance(attn_mask, torch.Tensor):
        raise TypeError(f"attention: attn_mask must be a torch.Tensor or None, got "
                        f"{type(attn_mask).__name__}")
    dtype = attn_mask.dtype
    if dtype != torch.bool and not attn_mask.is_floating_point():
        raise TypeError(
            f"attention: attn_mask has dtype {dtype}; an integer mask would be added to the "
            "scores instead of masking them. Pass a boolean mask (True = attend), e.g. "
            "attn_mask.bool(), or an additive floating-point mask (0 or -inf)"
        )
    if dtype != torch.bool and dtype not in (q.dtype, torch.float32):
        # The dtypes SDPA accepts: bool, float32 or the query's dtype.
        raise TypeError(f"attention: a floating-point attn_mask must be float32 or q's dtype "
                        f"{q.dtype}, got {dtype}")
    if attn_mask.device != q.device:
        raise ValueError(f"attention: attn_mask is on {attn_mask.device} but q is on "
                         f"{q.device}")
    full = (p.b, p.hq, p.sq, p.sk)
    shape = tuple(attn_mask.shape)
    ok = len(shape) <= 4 and all(s in (1, f) for s, f in zip(shape[::-1], full[::-1]))
    if not ok:
        raise ValueError(
            f"attention: attn_mask of shape {tuple(shape)} does not broadcast to "
            f"[B, H, S_q, S_k] = [{p.b}, {p.hq}, {p.sq}, {p.sk}] (the mask uses this order "
            "for both layouts)"
        )
    p.mask = attn_mask


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"attention: {name} must be a real number, got {type(value).__name__}")
    value = float(value)
    # Comparisons rather than math.isfinite: under torch.compile with dynamic
    # shapes a float argument can be symbolic, and isfinite on it breaks the
    # graph (NaN fails both comparisons).
    if not -_INF < value < _INF:
        raise ValueError(f"attention: {name} must be finite, got {value}")
    return value


def _check_options(p: _Problem, dropout_p, is_causal, scale, causal, softmax_scale,
                   window_size, softcap, generator, q: torch.Tensor) -> None:
    # Causal: SDPA's is_causal aligns the mask to the top-left corner (query i
    # sees keys j <= i); flash_attn_func's causal to the bottom-right corner
    # (j <= i + S_k - S_q).  They differ only when S_q != S_k.
    if is_causal is not None and causal is not None:
        raise TypeError("attention: pass causal (flash-attention, bottom-right) or is_causal "
                        "(SDPA, top-left), not both")
    # ``True if x else False`` rather than bool(x): under torch.compile a flag
    # computed from sizes (``is_causal=q.shape[2] > 1``) is a SymBool, which
    # bool() leaves symbolic and a branch decides.
    if is_causal is not None:
        p.causal, p.causal_offset = (True if is_causal else False), 0
    elif causal is not None:
        p.causal, p.causal_offset = (True if causal else False), p.sk - p.sq
    if scale is not None and softmax_scale is not None:
        raise TypeError("attention: pass scale (SDPA) or softmax_scale (flash-attention), "
                        "not both")
    chosen = scale if scale is not None else softmax_scale
    if chosen is not None:
        p.scale = _real("scale" if scale is not None else "softmax_scale", chosen)
    p.dropout_p = _real("dropout_p", dropout_p)
    if not 0.0 <= p.dropout_p <= 1.0:
        raise ValueError(f"attention: dropout_p must be in [0, 1], got {p.dropout_p}")
    if window_size is not None:
        if (not isinstance(window_size, (tuple, list)) or len(window_size) != 2
                or not all(isinstance(w, int) and not isinstance(w, bool)
                           for w in window_size)):
            raise TypeError(f"attention: window_size must be a pair of ints (left, right), "
                            f"got {window_size!r}")
        left, right = int(window_size[0]), int(window_size[1])
        if left < -1 or right < -1:
            raise ValueError(f"attention: window_size values must be >= 0, or -1 for no "
                             f"limit, got {tuple(window_size)}")
        if (left, right) != (-1, -1):
            p.window = (left, right)
    if softcap is not None:
        p.softcap = _real("softcap", softcap)
        if p.softcap < 0:
            raise ValueError(f"attention: softcap must be >= 0 (0 = off), got {p.softcap}")
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"attention: generator must be a torch.Generator, got "
                            f"{type(generator).__name__}")
        if generator.device.type != q.device.type:
            raise ValueError(f"attention: generator is on {generator.device} but the "
                             f"tensors are on {q.device}")
        p.generator = generator


def _check(q, k, v, attn_mask, dropout_p, is_causal, scale, causal, softmax_scale,
           window_size, softcap, layout, generator) -> _Problem:
    p = _Problem()
    _check_tensors(q, k, v, layout, p)
    _check_mask(attn_mask, q, p)
    _check_options(p, dropout_p, is_causal, scale, causal, softmax_scale, window_size,
                   softcap, generator, q)
    return p


# --------------------------------------------------------------------------
# Tier 1: aiter
# --------------------------------------------------------------------------
#
# aiter's Python API, preferred where present (ROCm/aiter ``aiter/ops/mha.py``):
#   flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
#                   window_size=(-1, -1), ...)             older releases
#   flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
#                   window_size=(-1, -1, 0), bias=None, ...)   newer: (l, r, sink)
# Called by keyword, with a window tuple as long as the installed default.
#
# Otherwise the operator, called by its schema (``csrc/include/torch/mha_fwd.h``):
#   mha_fwd(q [b, sq, hq, d], k [b, sk, hk, d], v [b, sk, hk, dv],
#           dropout_p: float, softmax_scale: float, is_causal: bool,
#           window_size_left: int, window_size_right: int,
#           [sink_size: int,]            # inserted positionally in aiter 0.1.8
#           return_softmax_lse: bool, return_dropout_randval: bool,
#           ... optional tensors (out, bias, alibi_slopes, descales, ...) = None)
#       -> (out [b, sq, hq, dv], softmax_lse, dropout_randval, rng_state)
#
# q/k/v are fp16/bf16 with a contiguous last dimension; hk must divide hq
# (GQA/MQA: K/V are passed with their own head count).  Causal masks and
# windows are aligned to the bottom-right corner, as in flash-attention.  The
# operator wants head dims that are multiples of 8 (aiter's own wrapper pads
# them); tier 1 takes head dims that are multiples of 8 up to 256 and leaves
# the rest to tier 2.

# Values for every required operator argument this module knows how to fill.
# Anything else required by a future schema disables the operator path.
_KNOWN_ARGS = (
    "q", "k", "v", "dropout_p", "p_dropout", "softmax_scale", "is_causal",
    "window_size_left", "window_size_right", "sink_size", "return_softmax_lse",
    "return_dropout_randval",
)
_PUBLIC_ARGS = ("q", "k", "v", "dropout_p", "softmax_scale", "causal", "window_size")


class _OpCaller:
    """Calls one resolved ``mha_fwd`` operator with positional arguments in
    the order its schema declares."""

    kind = "mha_fwd"

    def __init__(self, op: Any, names: tuple[str, ...]) -> None:
        self.op = op
        self.names = names

    def __call__(self, q, k, v, scale: float, causal: bool, left: int, right: int):
        values = {
            "q": q, "k": k, "v": v, "dropout_p": 0.0, "p_dropout": 0.0,
            "softmax_scale": float(scale), "is_causal": bool(causal),
            "window_size_left": int(left), "window_size_right": int(right),
            "sink_size": 0, "return_softmax_lse": False, "return_dropout_randval": False,
        }
        return self.op(*[values[name] for name in self.names])[0]


class _PublicCaller:
    """Calls aiter's ``flash_attn_func`` by keyword."""

    kind = "flash_attn_func"

    def __init__(self, fn: Any, window_len: int) -> None:
        self.fn = fn
        self.window_len = window_len

    def __call__(self, q, k, v, scale: float, causal: bool, left: int, right: int):
        window = (int(left), int(right), 0)[: self.window_len]
        out = self.fn(q, k, v, dropout_p=0.0, softmax_scale=float(scale), causal=bool(causal),
                      window_size=window)
        # Older releases return a tuple even when only the output is asked for.
        return out[0] if isinstance(out, (tuple, list)) else out


_caller_lock = threading.Lock()
# (module name, ops namespace) -> (caller or None, reason)
_callers: dict[tuple[str, str], tuple[Any, str]] = {}


def _resolve_aiter() -> tuple[Any, str]:
    key = (_device.AITER_MODULE, _device.AITER_OPS_NAMESPACE)
    cached = _callers.get(key)
    if cached is not None:
        return cached
    with _caller_lock:
        if key not in _callers:
            _callers[key] = _build_caller()
        return _callers[key]


def _public_caller(module: Any) -> tuple[Any, str]:
    fn = getattr(module, "flash_attn_func", None)
    if not callable(fn):
        return None, "no flash_attn_func"
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError) as exc:
        return None, f"cannot read the flash_attn_func signature: {exc}"
    missing = [name for name in _PUBLIC_ARGS if name not in params]
    if missing:
        return None, f"flash_attn_func lacks {', '.join(missing)}"
    extra = [name for name, prm in params.items()
             if name not in _PUBLIC_ARGS and prm.default is inspect.Parameter.empty
             and prm.kind not in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD)]
    if extra:
        return None, f"flash_attn_func needs unknown argument(s) {', '.join(extra)}"
    default = params["window_size"].default
    window_len = len(default) if isinstance(default, (tuple, list)) else 2
    if window_len not in (2, 3):
        return None, f"flash_attn_func window_size default {default!r} is neither (l, r) " \
                     "nor (l, r, sink)"
    return _PublicCaller(fn, window_len), "ok"


def _op_caller() -> tuple[Any, str]:
    op = _device.aiter_op("mha_fwd")
    if op is None:
        return None, f"torch.ops.{_device.AITER_OPS_NAMESPACE}.mha_fwd does not exist"
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
    return _OpCaller(op, tuple(names)), "ok"


def _build_caller() -> tuple[Any, str]:
    available, reason = _device.aiter_status()
    if not available:
        return None, reason
    module = _device.aiter_module()
    public, public_reason = (None, "aiter module missing") if module is None else \
        _public_caller(module)
    if public is not None:
        return public, "ok"
    caller, reason = _op_caller()
    if caller is None:
        return None, f"{reason} (and aiter.flash_attn_func: {public_reason})"
    return caller, "ok"


_aiter_failed: set[tuple] = set()


def _aiter_ineligible(q, k, v, p: _Problem) -> str | None:
    """Why these inputs cannot go to tier 1, or None when they can."""
    if p.mask is not None:
        return "an explicit attn_mask is given"
    if p.dropout_p:
        return "dropout_p > 0 (tier 1 runs inference only)"
    if p.softcap:
        return "softcap is set (the aiter kernels used here have no soft-capping)"
    if p.causal and p.causal_offset != p.sk - p.sq:
        return "is_causal with S_q != S_k (SDPA's top-left mask; aiter aligns bottom-right)"
    if q.device.type not in AITER_DEVICE_TYPES:
        return f"tensors are on {q.device.type}"
    if q.dtype not in _AITER_DTYPES:
        return f"dtype {q.dtype} (aiter attention takes float16/bfloat16)"
    if p.d % 8 or p.dv % 8 or p.d > 256 or p.dv > 256:
        return f"head dims ({p.d}, {p.dv}) are not multiples of 8 up to 256"
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return "gradients are required (tier 1 runs inference only)"
    return None


def _run_aiter(q, k, v, p: _Problem, explicit: bool):
    reason = _aiter_ineligible(q, k, v, p)
    if reason is not None:
        if explicit:
            raise ValueError(f"attention(backend='aiter') cannot run these inputs: {reason}")
        return None
    caller, why = _resolve_aiter()
    if caller is None:
        if explicit:
            raise RuntimeError(f"attention(backend='aiter'): aiter is not usable: {why}")
        return None
    key = (q.dtype, p.d, p.dv, p.causal, p.hq != p.hk, p.window is not None)
    if not explicit and key in _aiter_failed:
        return None
    if p.layout == "bhsd":
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    if v.stride(-1) != 1:
        v = v.contiguous()
    scale = p.scale if p.scale is not None else p.d ** -0.5
    left, right = p.window if p.window is not None else (-1, -1)
    # A single query row sees every key under a bottom-right causal mask.  The
    # window goes as given: aiter's own flash_attn_func passes (-1, -1) with
    # causal=True for plain causal attention.
    causal = p.causal and p.sq > 1
    try:
        out = caller(q, k, v, scale, causal, left, right)
    except Exception as exc:
        if explicit:
            raise
        _aiter_failed.add(key)
        _warnings.warn(
            "aiter-fail-" + repr(key),
            f"rocmlint.runtime.attention: aiter {caller.kind} failed ({type(exc).__name__}: "
            f"{exc}); using PyTorch SDPA for these inputs from now on",
        )
        return None
    return out.transpose(1, 2) if p.layout == "bhsd" else out


# --------------------------------------------------------------------------
# Tier 2: SDPA
# --------------------------------------------------------------------------


def _allowed(p: _Problem, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor | None:
    """Boolean mask, True where query ``rows`` may attend keys ``cols``
    (causal and window), or None when everything is allowed."""
    diag = cols.unsqueeze(0) - rows.unsqueeze(1)  # j - i
    allowed = None
    if p.causal:
        allowed = diag <= p.causal_offset
    if p.window is not None:
        left, right = p.window
        off = p.sk - p.sq
        if left >= 0:
            part = diag >= off - left
            allowed = part if allowed is None else allowed & part
        if right >= 0:
            part = diag <= off + right
            allowed = part if allowed is None else allowed & part
    return allowed


def _merge(allowed: torch.Tensor | None, attn_mask: torch.Tensor | None):
    if allowed is None:
        return attn_mask
    if attn_mask is None:
        return allowed
    if attn_mask.dtype == torch.bool:
        return attn_mask & allowed
    return attn_mask.masked_fill(~allowed, float("-inf"))


#: Devices where GQA with a mask is regrouped as below instead of SDPA's
#: ``enable_gqa``: on CUDA only the cuDNN and math kernels take enable_gqa
#: together with a mask (flash takes no mask, the memory-efficient kernel no
#: enable_gqa; measured on an H100, torch 2.11), and batch-8 decode of a
#: Llama-3.1-8B-shaped model ran 28.7% slower that way than transformers' SDPA
#: path, which regroups for the same reason (use_gqa_in_sdpa).  ROCm tensors
#: report "cuda".  The tests widen it to run the regrouping on CPU.
GQA_MASK_REGROUP_DEVICES = frozenset({"cuda"})


def _sdpa_gqa_masked(q, k, v, attn_mask, p: _Problem):
    """GQA with a mask, [B, H, S, D] in and out, as transformers' SDPA path
    does it: one query row (decode) puts the query heads of each K/V head in
    the row dimension, so that K/V keep their own head count; more rows repeat
    K/V for this call (the memory-efficient kernel then runs, instead of the
    math kernel that would materialise every score)."""
    g = p.hq // p.hk
    if p.sq == 1 and (attn_mask.dim() < 3 or attn_mask.shape[-3] == 1):
        packed = q.reshape(p.b, p.hk, g, p.d)
        out = _sdpa(packed, k, v, attn_mask=attn_mask, dropout_p=p.dropout_p, scale=p.scale)
        return out.reshape(p.b, p.hq, 1, p.dv)
    k = k[:, :, None].expand(p.b, p.hk, g, p.sk, p.d).reshape(p.b, p.hq, p.sk, p.d)
    v = v[:, :, None].expand(p.b, p.hk, g, p.sk, p.dv).reshape(p.b, p.hq, p.sk, p.dv)
    return _sdpa(q, k, v, attn_mask=attn_mask, dropout_p=p.dropout_p, scale=p.scale)


def _run_sdpa(q, k, v, p: _Problem):
    if p.layout == "bshd":
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    is_causal = False
    attn_mask = p.mask
    if attn_mask is not None and attn_mask.dim() < 2:
        # A mask over the keys alone: SDPA with enable_gqa indexes its last
        # two dimensions, so give it the query dimension (same broadcast).
        attn_mask = attn_mask.reshape((1,) * (2 - attn_mask.dim()) + tuple(attn_mask.shape))
    if p.causal and p.window is None and p.causal_offset == 0 and attn_mask is None:
        # SDPA's own is_causal is exactly this (top-left, or square) mask.
        is_causal = True
    elif p.causal and p.window is None and p.sq == 1 and p.causal_offset >= p.sk - 1:
        # One query row that sees every key (flash-attention's bottom-right
        # mask in decoding): no causal mask at all.  SDPA's top-left mask on
        # one row sees only key 0, so it must not take this branch.
        pass
    elif p.causal or p.window is not None:
        device = q.device
        attn_mask = _merge(_allowed(p, torch.arange(p.sq, device=device),
                                    torch.arange(p.sk, device=device)), attn_mask)
    gen = p.hq != p.hk
    if gen and attn_mask is not None and q.device.type in GQA_MASK_REGROUP_DEVICES:
        out = _sdpa_gqa_masked(q, k, v, attn_mask, p)
        return out.transpose(1, 2) if p.layout == "bshd" else out
    if gen and not _SDPA_HAS_GQA:  # pragma: no cover - PyTorch < 2.5
        rep = p.hq // p.hk
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        gen = False
    if gen:
        out = _sdpa(q, k, v, attn_mask=attn_mask, dropout_p=p.dropout_p, is_causal=is_causal,
                    scale=p.scale, enable_gqa=True)
    else:
        out = _sdpa(q, k, v, attn_mask=attn_mask, dropout_p=p.dropout_p, is_causal=is_causal,
                    scale=p.scale)
    return out.transpose(1, 2) if p.layout == "bshd" else out


# --------------------------------------------------------------------------
# Tier 3: eager, in query chunks
# --------------------------------------------------------------------------


def _run_eager(q, k, v, p: _Problem):
    if p.layout == "bshd":
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    b, hq, hk, sq, sk, d, dv = p.b, p.hq, p.hk, p.sq, p.sk, p.d, p.dv
    g = hq // hk
    scale = p.scale if p.scale is not None else 1.0 / math.sqrt(d)
    k = k.contiguous()
    v = v.contiguous()
    if p.layout == "bshd":
        out = q.new_empty((b, sq, hq, dv))
    else:
        out = q.new_empty((b, hq, sq, dv))
    mask = None if p.mask is None else p.mask.expand(b, hq, sq, sk)
    dead_possible = p.masks_rows()
    # Softmax in float32 (float64 for float64 inputs), as SDPA's math path.
    acc_dtype = torch.float64 if q.dtype == torch.float64 else torch.float32
    # Bytes per score element: scores (input dtype) + probabilities + their
    # cast back to the value dtype (+ the dropout draw and its mask).
    acc_size = 8 if acc_dtype == torch.float64 else 4
    per_elem = q.element_size() + acc_size + v.element_size()
    if p.dropout_p:
        per_elem += acc_size + 1
    chunk = max(1, EAGER_MEMORY_BUDGET_BYTES // max(1, b * hq * max(sk, 1) * per_elem))
    window_off = sk - sq
    for s0 in range(0, sq, chunk):
        s1 = min(sq, s0 + chunk)
        c = s1 - s0
        # Keys no row of this chunk can see are left out of the products.
        kv_start, kv_end = 0, sk
        if p.causal:
            kv_end = min(kv_end, s1 + p.causal_offset)
        if p.window is not None:
            left, right = p.window
            if right >= 0:
                kv_end = min(kv_end, s1 + window_off + right)
            if left >= 0:
                kv_start = max(kv_start, s0 + window_off - left)
        kv_end = max(kv_end, kv_start)
        kc = k[:, :, kv_start:kv_end]
        vc = v[:, :, kv_start:kv_end]
        width = kv_end - kv_start
        if width == 0:
            # No key in reach: zeros, as an empty matrix product of q, k and v,
            # so that the result keeps autograd history (SDPA's does: its
            # backward runs with zero keys and gives zero gradients).
            qc = q[:, :, s0:s1].reshape(b, hk, g * c, d)
            oc = torch.matmul(torch.matmul(qc, kc.transpose(-1, -2)), vc).view(b, hk, g, c, dv)
        else:
            # Group query heads by their K/V head: [b, hk, g * c, d].  K and V
            # are never repeated; the grouped rows share one matrix product.
            qc = q[:, :, s0:s1].reshape(b, hk, g * c, d)
            scores = torch.matmul(qc, kc.transpose(-1, -2)).view(b, hk, g, c, width)
            scores.mul_(scale)
            if p.softcap:
                scores = torch.tanh(scores / p.softcap) * p.softcap
            allowed = _allowed(p, torch.arange(s0, s1, device=q.device),
                               torch.arange(kv_start, kv_end, device=q.device))
            if allowed is not None:
                scores.masked_fill_(~allowed, float("-inf"))
            if mask is not None:
                m = mask[:, :, s0:s1, kv_start:kv_end].reshape(b, hk, g, c, width)
                if m.dtype == torch.bool:
                    scores.masked_fill_(~m, float("-inf"))
                else:
                    scores.add_(m)
            dead = None
            if dead_possible:
                # Rows that see no key: zeros, as flash-attention (and SDPA on
                # CPU) returns.  The row is softmaxed over zeros and cleared
                # afterwards, out of place, so that autograd stays valid and
                # NaN-free.
                dead = torch.isneginf(scores.amax(dim=-1, keepdim=True))
                scores = scores.masked_fill(dead, 0.0)
            probs = torch.softmax(scores, dim=-1, dtype=acc_dtype)
            del scores
            if dead is not None:
                probs = probs.masked_fill(dead, 0.0)
            if p.dropout_p:
                draw = torch.rand(probs.shape, generator=p.generator, device=probs.device,
                                  dtype=probs.dtype)
                probs = probs * (draw >= p.dropout_p) * (1.0 / (1.0 - p.dropout_p)) \
                    if p.dropout_p < 1.0 else probs * 0.0
                del draw
            oc = torch.matmul(probs.to(v.dtype).view(b, hk, g * c, width), vc)
            oc = oc.view(b, hk, g, c, dv)
            del probs
        if p.layout == "bshd":
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
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool | None = None,
    scale: float | None = None,
    enable_gqa: bool | None = None,
    causal: bool | None = None,
    softmax_scale: float | None = None,
    window_size: tuple[int, int] | None = None,
    softcap: float | None = None,
    layout: str = "bshd",
    backend: str | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Scaled dot-product attention that runs well on NVIDIA, AMD and CPU.

    The first eight parameters are those of
    ``torch.nn.functional.scaled_dot_product_attention``, in its order; the
    rest are ``flash_attn_func``'s names and this function's own.  Pass them by
    keyword.

    Args:
        q: queries, ``[B, S_q, H, D]`` (``layout="bshd"``, the flash-attention
            layout) or ``[B, H, S_q, D]`` (``layout="bhsd"``, the SDPA layout).
        k, v: keys and values in the same layout with ``S_k`` positions and
            ``H_kv`` heads; ``H`` must be a multiple of ``H_kv`` (GQA/MQA).
            Never expand K/V heads before calling: every tier handles them.
        attn_mask: boolean (True = attend) or additive floating-point mask
            (float32 or q's dtype) that broadcasts to ``[B, H, S_q, S_k]``.
        dropout_p: dropout on the attention probabilities, applied whenever it
            is > 0, as SDPA and ``flash_attn_func`` do: pass 0.0 outside
            training.
        is_causal: SDPA's causal mask, aligned to the top-left corner: query
            ``i`` sees keys ``j <= i``.
        scale: softmax scale; ``1/sqrt(D)`` when None.
        enable_gqa: accepted for SDPA compatibility; K/V with fewer heads are
            always handled.
        causal: flash-attention's causal mask, aligned to the bottom-right
            corner as in KV-cache decoding: query ``i`` sees keys
            ``j <= i + S_k - S_q``.  Same as ``is_causal`` when
            ``S_q == S_k``; with ``S_q == 1`` the query sees every cached key;
            query rows that see no key return zeros.  Pass one of the two.
        softmax_scale: flash-attention's name for ``scale``.
        window_size: ``(left, right)`` sliding window as in flash-attention:
            query ``i`` sees keys from ``i + S_k - S_q - left`` to
            ``i + S_k - S_q + right``; -1 means no limit on that side.
        softcap: logit soft-capping ``softcap * tanh(scores / softcap)``
            (Gemma 2 style); 0 or None is off.  Runs in the eager tier.
        layout: ``"bshd"`` (default) or ``"bhsd"``; the output uses the same.
        backend: force a tier: ``"aiter"``, ``"sdpa"`` or ``"eager"``.  A forced
            tier raises instead of falling back.  None picks automatically.
        generator: a ``torch.Generator`` for dropout.  SDPA cannot take one,
            so dropout with a generator runs in the eager tier, which draws
            every random number from it.

    Raises:
        TypeError, ValueError: for arguments that are wrong (shapes, ranks,
            dtypes, devices, masks, option values), naming the argument,
            before any tier computes a result: never through the eager
            fallback.  (On the fast path, a dtype, device or head-dim mismatch
            is found by SDPA's own argument check, which raises before
            computing; the error is then reported as here.)

    Tiers (automatic choice):
        1. aiter on ROCm when it is available (its ``flash_attn_func`` where
           present, else ``torch.ops.aiter.mha_fwd`` called by its schema),
           for fp16/bf16 GPU inputs without mask, dropout, softcap or
           gradients, and ``USE_AITER_ATTENTION`` is not ``0``.  An error
           falls back to tier 2 with a warning (once per input kind).
        2. ``torch.nn.functional.scaled_dot_product_attention`` with
           ``enable_gqa`` for GQA/MQA (no repeated K/V) and the causal and
           window masks as a boolean mask.  On NVIDIA and CPU this is the
           call a hand-written port makes, so outputs are bit-identical to it.
        3. Eager attention in query chunks (bounded memory) when
           ``FORCE_EAGER_ATTENTION=1``, for softcap and for dropout with a
           generator, or when SDPA raises for arguments that passed the checks
           (a kernel failure: one warning).

    Environment switches (read at each call): ``FORCE_EAGER_ATTENTION=1``
    forces tier 3; ``USE_AITER_ATTENTION=0`` disables tier 1,
    ``USE_AITER_ATTENTION=1`` asks for it and warns once when it is not
    available.  The ``backend`` keyword overrides both.
    """
    if (
        attn_mask is None
        and not dropout_p
        and _device._IS_ROCM is False
        and window_size is softcap is backend is softmax_scale is generator is None
        and _KEY_FORCE_EAGER not in _FAST_ENV
        and (scale is None or (type(scale) is float and -_INF < scale < _INF))
    ):
        # Fast path off ROCm without mask, dropout, window or switch: the same
        # SDPA call as the general path with the fewest Python steps.  It
        # makes every check SDPA itself does not make (rank, batch, head
        # counts, K/V lengths: three shape reads, most of this path's cost);
        # what SDPA rejects (dtypes, devices, head dims) goes on to the
        # general path, which names the argument.
        try:
            kshape = k.shape
            vshape = v.shape
            if layout == "bhsd":
                qb, qh, qs, _ = q.shape
                kb, kh, ks, _ = kshape
            elif layout == "bshd":
                qb, qs, qh, _ = q.shape
                kb, ks, kh, _ = kshape
            else:
                kshape = None
        except (ValueError, AttributeError):
            kshape = None
        # v.shape == k.shape covers v's rank, batch, heads and length at once
        # (value head dims that differ from D take the general path).
        if kshape is not None and qb == kb and kh and not qh % kh and vshape == kshape:
            if causal is None:
                flag = True if is_causal else False
            elif is_causal is None and (not causal or qs == ks or (qs == 1 and ks)):
                # flash-attention's bottom-right causal: square is SDPA's
                # is_causal, a single query row sees every key.
                flag = True if causal and qs == ks else False
            else:
                flag = None
            if flag is not None:
                # Under torch.compile with dynamic shapes, comparisons of sizes
                # are symbolic (SymBool), which SDPA's flags do not take; a
                # branch makes Dynamo decide them (with a guard) instead.
                gqa = True if qh != kh else False
                try:
                    if layout == "bhsd":
                        return _sdpa(q, k, v, is_causal=flag, scale=scale, enable_gqa=gqa)
                    return _sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                 is_causal=flag, scale=scale, enable_gqa=gqa).transpose(1, 2)
                except RuntimeError:
                    pass  # the general path checks the arguments, then falls back
    return _attention(q, k, v, attn_mask, dropout_p, is_causal, scale, causal, softmax_scale,
                      window_size, softcap, layout, backend, generator)


def _attention(q, k, v, attn_mask, dropout_p, is_causal, scale, causal, softmax_scale,
               window_size, softcap, layout, backend, generator):
    if backend is not None and backend not in _BACKENDS:
        raise ValueError(f"attention: backend must be one of {_BACKENDS} or None, not "
                         f"{backend!r}")
    p = _check(q, k, v, attn_mask, dropout_p, is_causal, scale, causal, softmax_scale,
               window_size, softcap, layout, generator)
    explicit = backend is not None
    if not explicit:
        force = _getenv("FORCE_EAGER_ATTENTION")
        if force is not None and force.strip().lower() in _TRUE:
            backend = "eager"
        elif p.softcap or (p.dropout_p and p.generator is not None):
            backend = "eager"
        elif _device._IS_ROCM is False or not _device.is_rocm():
            backend = "sdpa"
        else:
            backend = _rocm_auto_backend()
    elif backend == "sdpa" and p.softcap:
        raise ValueError("attention(backend='sdpa') cannot apply softcap; use the eager "
                         "backend or leave backend unset")
    elif backend == "sdpa" and p.dropout_p and p.generator is not None:
        raise ValueError("attention(backend='sdpa') cannot draw dropout from a generator; "
                         "use the eager backend or leave backend unset")
    return _dispatch(q, k, v, p, backend, explicit)


def _dispatch(q, k, v, p: _Problem, backend: str, explicit: bool):
    dead = p.dead_rows()
    if dead and backend != "eager":
        # The causal mask or window leaves the first rows without any key
        # (more queries than keys).  They are zero, as in flash-attention, and
        # the rest is computed on its own, so that no tier relies on what a
        # kernel returns for empty rows (SDPA on CUDA does not return zeros).
        return _dead_rows_zero(q, k, v, p, dead, backend, explicit)
    if backend == "aiter":
        out = _run_aiter(q, k, v, p, explicit)
        if out is not None:
            return out
    elif backend == "eager":
        return _run_eager(q, k, v, p)
    elif explicit:
        return _run_sdpa(q, k, v, p)
    try:
        return _run_sdpa(q, k, v, p)
    except RuntimeError as exc:
        _warnings.warn(
            "sdpa-fail",
            f"rocmlint.runtime.attention: SDPA failed on arguments that passed the checks "
            f"({exc}); using the eager tier",
        )
        return _run_eager(q, k, v, p)


def _rocm_auto_backend() -> str:
    use = _env_flag("USE_AITER_ATTENTION")
    if use is False:
        return "sdpa"
    if _device.aiter_available():
        return "aiter"
    if use:
        _warnings.warn(
            "aiter-unavailable",
            "USE_AITER_ATTENTION=1 but aiter is not usable: " + _device.aiter_status()[1],
        )
    return "sdpa"


def _dead_rows_zero(q, k, v, p: _Problem, dead: int, backend: str, explicit: bool):
    """Rows ``0 .. dead-1`` see no key: zeros; the remaining rows are the same
    problem with fewer queries (the offsets of the causal mask and the window
    move with them, so each row keeps the keys it sees)."""
    if dead >= p.sq:
        # No row sees a key (no keys at all): the eager tier's empty product
        # gives the zeros with autograd history.
        return _run_eager(q, k, v, p)
    dim = 1 if p.layout == "bshd" else 2
    if p.layout == "bshd":
        out = q.new_zeros((p.b, p.sq, p.hq, p.dv))
    else:
        out = q.new_zeros((p.b, p.hq, p.sq, p.dv))
    tail = _Problem()
    for name in _Problem.__slots__:
        setattr(tail, name, getattr(p, name))
    tail.sq = p.sq - dead
    tail.causal_offset = p.causal_offset + dead
    if p.mask is not None and p.mask.dim() >= 2 and p.mask.shape[-2] == p.sq:
        tail.mask = p.mask[..., dead:, :]
    out.narrow(dim, dead, tail.sq).copy_(
        _dispatch(q.narrow(dim, dead, tail.sq), k, v, tail, backend, explicit))
    return out


def _reset_for_tests() -> None:
    """Forget cached aiter callers, failures and warnings."""
    with _caller_lock:
        _callers.clear()
    _aiter_failed.clear()
    _warnings.clear()
