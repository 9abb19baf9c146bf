"""Helpers for the runtime tests, including a fake aiter operator library.

No AMD GPU is available to these tests.  ``FakeAiter`` registers, with
``torch.library``, operators with the schemas AMD's aiter registers under
``torch.ops.aiter`` (taken from ROCm/aiter ``aiter/ops/mha.py``,
``aiter/tuned_gemm.py`` and ``aiter/ops/activation.py``), in namespaces of the
tests' own.  The fakes check the argument order, layout and dtypes of every
call, record what they received and compute the result with plain PyTorch.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from rocmlint.runtime import aiter_gemm, attn, device, ops  # noqa: E402

SWITCHES = ("FORCE_EAGER_ATTENTION", "USE_AITER_ATTENTION", "USE_AITER_OPS",
            "USE_AITER_GEMM", "USE_OPTIMIZED_OPS", "PRESHUFFLE_M_THRESH",
            "ROCMLINT_AITER_IMPORT_TIMEOUT")

# mha_fwd schemas of the two aiter generations: the newer one has sink_size
# (and more optional tensors), the older one does not.
MHA_FWD_SINK = (
    "mha_fwd(Tensor q, Tensor k, Tensor v, float dropout_p, float softmax_scale, "
    "bool is_causal, int window_size_left, int window_size_right, int sink_size, "
    "bool return_softmax_lse, bool return_dropout_randval, Tensor? cu_seqlens_q=None, "
    "Tensor? cu_seqlens_kv=None, Tensor? out=None, Tensor? bias=None, "
    "Tensor? alibi_slopes=None, Tensor? q_descale=None, Tensor? k_descale=None, "
    "Tensor? v_descale=None, Tensor? sink_ptr=None, Generator? gen=None) -> Tensor[]"
)
MHA_FWD_NOSINK = (
    "mha_fwd(Tensor q, Tensor k, Tensor v, float dropout_p, float softmax_scale, "
    "bool is_causal, int window_size_left, int window_size_right, "
    "bool return_softmax_lse, bool return_dropout_randval, Tensor? out=None, "
    "Tensor? bias=None, Tensor? alibi_slopes=None, Generator? gen=None) -> Tensor[]"
)
GEMM_A16W16 = (
    "gemm_a16w16(Tensor A, Tensor B, Tensor? bias=None, ScalarType? otype=None, "
    "Tensor? scale_a=None, Tensor? scale_b=None, Tensor? scale_c=None) -> Tensor"
)


def reference_attention(q, k, v, *, causal=False, is_causal=False, scale=None, window=None,
                        softcap=None, mask=None):
    """Float64 attention in [B, S, H, D] with K/V heads repeated; ``causal``
    is the bottom-right mask, ``is_causal`` the top-left one, ``window`` a
    flash-attention (left, right) window, ``mask`` a boolean [.., S_q, S_k]
    mask (True = attend) or an additive one; rows that see no key are zero."""
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    rep = qd.shape[1] // kd.shape[1]
    kd = kd.repeat_interleave(rep, 1)
    vd = vd.repeat_interleave(rep, 1)
    scale = scale if scale is not None else qd.shape[-1] ** -0.5
    scores = qd @ kd.transpose(-1, -2) * scale
    if softcap:
        scores = torch.tanh(scores / softcap) * softcap
    sq, sk = qd.shape[2], kd.shape[2]
    i = torch.arange(sq).unsqueeze(1)
    j = torch.arange(sk).unsqueeze(0)
    allowed = torch.ones(sq, sk, dtype=torch.bool)
    if causal:
        allowed &= j <= i + sk - sq
    if is_causal:
        allowed &= j <= i
    if window is not None:
        left, right = window
        if left >= 0:
            allowed &= j >= i + sk - sq - left
        if right >= 0:
            allowed &= j <= i + sk - sq + right
    if mask is not None and mask.dtype == torch.bool:
        allowed = allowed & mask
    elif mask is not None:
        scores = scores + mask.double()
    scores = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return (probs @ vd).transpose(1, 2)


class FakeAiter:
    """One fake aiter operator library in its own ``torch.ops`` namespace."""

    def __init__(self, namespace: str, mha_schema: str) -> None:
        self.namespace = namespace
        self.has_sink = "sink_size" in mha_schema
        self.calls: dict[str, list[dict]] = {"mha_fwd": [], "gemm_a16w16": [],
                                             "silu_and_mul": [], "gelu_tanh_and_mul": []}
        self.violations: list[str] = []
        self.fail: set[str] = set()
        self.lib = torch.library.Library(namespace, "DEF")
        self.lib.define(mha_schema)
        self.lib.define(GEMM_A16W16)
        self.lib.define("silu_and_mul(Tensor(a!) out, Tensor input) -> ()")
        self.lib.define("gelu_tanh_and_mul(Tensor(a!) out, Tensor input) -> ()")
        for key in ("CPU",):
            self.lib.impl("mha_fwd", self._mha_fwd, key)
            self.lib.impl("gemm_a16w16", self._gemm, key)
            self.lib.impl("silu_and_mul", self._silu, key)
            self.lib.impl("gelu_tanh_and_mul", self._gelu, key)

    def reset(self) -> None:
        for calls in self.calls.values():
            calls.clear()
        self.violations.clear()
        self.fail.clear()

    def _check(self, cond: bool, message: str) -> None:
        if not cond:
            self.violations.append(message)

    # mha_fwd -------------------------------------------------------------
    def _mha_fwd(self, q, k, v, dropout_p, softmax_scale, is_causal, wl, wr, *rest):
        if self.has_sink:
            sink_size, ret_lse, ret_rand, *optional = rest
        else:
            sink_size = None
            ret_lse, ret_rand, *optional = rest
        self.calls["mha_fwd"].append({
            "q_shape": tuple(q.shape), "k_shape": tuple(k.shape), "v_shape": tuple(v.shape),
            "k_ptr": k.data_ptr(), "v_ptr": v.data_ptr(), "dtype": q.dtype,
            "dropout_p": dropout_p, "softmax_scale": softmax_scale, "is_causal": is_causal,
            "window": (wl, wr), "sink_size": sink_size, "return_lse": ret_lse,
            "return_randval": ret_rand, "optional": optional,
        })
        if "mha_fwd" in self.fail:
            raise RuntimeError("fake aiter: no kernel for this problem")
        c = self._check
        c(q.dim() == 4 and k.dim() == 4 and v.dim() == 4, "q/k/v must be 4-D [b, s, h, d]")
        b, sq, hq, d = q.shape
        c(k.shape[0] == b and v.shape[0] == b, "batch mismatch")
        c(k.shape[1] == v.shape[1], "k/v sequence mismatch")
        c(k.shape[2] == v.shape[2] and hq % k.shape[2] == 0, "hq must be a multiple of hk")
        c(k.shape[3] == d, "q/k head dim mismatch")
        c(all(t.stride(-1) == 1 for t in (q, k, v)), "last dim must be contiguous")
        c(q.dtype in (torch.float16, torch.bfloat16), "dtype must be fp16/bf16")
        c(k.dtype == q.dtype and v.dtype == q.dtype, "q/k/v dtypes differ")
        c(isinstance(dropout_p, float) and dropout_p == 0.0, "dropout_p must be 0.0")
        c(isinstance(softmax_scale, float) and softmax_scale > 0, "softmax_scale must be > 0")
        c(isinstance(is_causal, bool), "is_causal must be bool")
        c(isinstance(wl, int) and isinstance(wr, int) and wl >= -1 and wr >= -1,
          "window sizes must be ints >= -1")
        if self.has_sink:
            c(sink_size == 0, "sink_size must be 0")
        c(ret_lse is False and ret_rand is False, "no lse / randval requested")
        c(all(o is None for o in optional), "optional tensors must stay None")
        window = None if (wl, wr) == (-1, -1) else (wl, wr)
        out = reference_attention(q, k, v, causal=is_causal, scale=softmax_scale,
                                  window=window).to(q.dtype)
        empty = q.new_empty((0,), dtype=torch.float32)
        return [out.contiguous(), empty, empty, torch.zeros(2, dtype=torch.int64)]

    # gemm ------------------------------------------------------------------
    def _gemm(self, a, b, bias=None, otype=None, scale_a=None, scale_b=None, scale_c=None):
        # aiter's tuned GEMM reads ``B.is_shuffled`` to pick its preshuffled
        # kernels (aiter/tuned_gemm.py: bpreshuffle = B.is_shuffled).
        shuffled = bool(getattr(b, "is_shuffled", False))
        self.calls["gemm_a16w16"].append({"a_shape": tuple(a.shape), "b_shape": tuple(b.shape),
                                          "bias": bias is not None, "dtype": a.dtype,
                                          "b_shuffled": shuffled})
        if "gemm_a16w16" in self.fail:
            raise RuntimeError("fake aiter: gemm failed")
        self._check(b.dim() == 2 and a.shape[-1] == b.shape[1], "B must be [N, K]")
        self._check(a.dtype in (torch.float16, torch.bfloat16), "gemm dtype must be 16-bit")
        if shuffled:
            b = unshuffle_weight(b)
        out = F.linear(a.float(), b.float(), None if bias is None else bias.float())
        return out.to(a.dtype)

    # activations -----------------------------------------------------------
    def _gated(self, name, act, out, x):
        self.calls[name].append({"x_shape": tuple(x.shape), "out_shape": tuple(out.shape)})
        if name in self.fail:
            raise RuntimeError(f"fake aiter: {name} failed")
        d = x.shape[-1] // 2
        self._check(tuple(out.shape) == tuple(x.shape[:-1]) + (d,), "out must be [..., d]")
        self._check(x.is_contiguous() and out.is_contiguous(), "tensors must be contiguous")
        xf = x.float()
        out.copy_((act(xf[..., :d]) * xf[..., d:]).to(out.dtype))

    def _silu(self, out, x):
        self._gated("silu_and_mul", F.silu, out, x)

    def _gelu(self, out, x):
        self._gated("gelu_tanh_and_mul", lambda t: F.gelu(t, approximate="tanh"), out, x)


def shuffle_weight(x, layout=(16, 16)):
    """aiter's published preshuffle (aiter/ops/shuffle.py, ``layout=(16, 16)``):
    ``[.., N, K]`` viewed as ``[.., N/16, 16, K/32, 32/e, e]`` with ``e = 16 /
    element size`` and permuted to ``[.., N/16, K/32, 32/e, 16, e]``; the result
    is tagged ``is_shuffled``."""
    rows, cols = layout
    block_k = cols * 2
    elems = 16 // x.element_size()
    if x.shape[-2] % rows or x.shape[-1] % block_k:
        raise ValueError("fake shuffle_weight: N must divide by 16 and K by 32")
    view = x.view(-1, x.shape[-2] // rows, rows, x.shape[-1] // block_k, block_k // elems, elems)
    out = view.permute(0, 1, 3, 4, 2, 5).contiguous().view(*x.shape)
    out.is_shuffled = True
    return out


def unshuffle_weight(x, layout=(16, 16)):
    """The inverse of ``shuffle_weight``."""
    rows, cols = layout
    block_k = cols * 2
    elems = 16 // x.element_size()
    view = x.view(-1, x.shape[-2] // rows, x.shape[-1] // block_k, block_k // elems, rows, elems)
    return view.permute(0, 1, 4, 2, 3, 5).contiguous().view(*x.shape)


def make_public_aiter(generation: str) -> types.ModuleType:
    """A fake ``aiter`` module exposing ``flash_attn_func`` with the signature
    of one published generation:

    - ``"window2"``: older releases, ``window_size=(-1, -1)``, ``alibi_slopes``,
      ``deterministic``, ``return_lse``, ``return_attn_probs``; returns a tuple
      even for the output alone (``FlashAttnFunc`` returns ``tuple(result)``);
    - ``"window3"``: newer releases, ``window_size=(-1, -1, 0)`` (left, right,
      sink), ``bias``, ``how_v3_bf16_cvt``, ``cu_seqlens_q``, ``sink_ptr``,
      ``num_splits``; returns the tensor.

    Each records its calls in ``module.CALLS`` and computes in float64.
    """
    module = types.ModuleType(f"rocmlint_test_public_{generation}")
    module.CALLS = []

    def run(q, k, v, dropout_p, softmax_scale, causal, window_size):
        module.CALLS.append({"q_shape": tuple(q.shape), "k_shape": tuple(k.shape),
                             "k_ptr": k.data_ptr(), "dropout_p": dropout_p,
                             "softmax_scale": softmax_scale, "causal": causal,
                             "window_size": tuple(window_size)})
        left, right = window_size[0], window_size[1]
        window = None if (left, right) == (-1, -1) else (left, right)
        return reference_attention(q, k, v, causal=causal, scale=softmax_scale,
                                   window=window).to(q.dtype)

    if generation == "window2":
        def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                            window_size=(-1, -1), alibi_slopes=None, deterministic=True,
                            return_lse=False, return_attn_probs=False):
            assert len(window_size) == 2, "this generation takes (left, right)"
            return (run(q, k, v, dropout_p, softmax_scale, causal, window_size),)
    else:
        def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                            window_size=(-1, -1, 0), bias=None, alibi_slopes=None,
                            deterministic=True, return_lse=False, return_attn_probs=False,
                            how_v3_bf16_cvt=1, cu_seqlens_q=None, cu_seqlens_kv=None,
                            sink_ptr=None, num_splits=0):
            assert len(window_size) == 3, "this generation takes (left, right, sink)"
            assert window_size[2] == 0, "no sink tokens requested"
            return run(q, k, v, dropout_p, softmax_scale, causal, window_size)
    module.flash_attn_func = flash_attn_func
    return module


_FAKES: dict[str, FakeAiter] = {}


def get_fake(variant: str) -> FakeAiter:
    """The fake library for ``variant`` ("sink" or "nosink"), created once per
    process (an operator name can be defined only once)."""
    namespace = f"rocmlint_test_aiter_{variant}"
    if namespace not in _FAKES:
        schema = MHA_FWD_SINK if variant == "sink" else MHA_FWD_NOSINK
        _FAKES[namespace] = FakeAiter(namespace, schema)
    fake = _FAKES[namespace]
    fake.reset()
    return fake


def reset_runtime() -> None:
    device._IS_ROCM = None
    device._AITER_STATUS = None
    device._IMPORTS.clear()
    attn._reset_for_tests()
    ops._reset_for_tests()
    aiter_gemm._reset_for_tests()


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    for name in SWITCHES:
        env.pop(name, None)
    return env
