"""attention(): tier 2 is bit-identical to the direct SDPA call, tier 3 agrees
with it and with a float64 reference, and every tier uses the same
bottom-right causal convention."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

from rocmlint.runtime import attention, attn

from .helpers import reference_attention

# (batch, q_len, k_len, heads, kv_heads, head_dim)
SHAPES = [
    (2, 6, 6, 4, 4, 16),    # MHA, square
    (2, 6, 6, 8, 2, 16),    # GQA, square
    (1, 5, 5, 4, 1, 8),     # MQA
    (2, 1, 9, 8, 2, 16),    # KV-cache decode
    (1, 4, 11, 4, 2, 16),   # chunked prefill (1 < q_len < k_len)
    (1, 7, 3, 4, 2, 8),     # more queries than keys
]


def _inputs(b, sq, sk, h, hk, d, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, sq, h, d, generator=g).to(dtype)
    k = torch.randn(b, sk, hk, d, generator=g).to(dtype)
    v = torch.randn(b, sk, hk, d, generator=g).to(dtype)
    return q, k, v


def direct_sdpa(q, k, v, *, causal, scale=None):
    """What a hand-written port calls: SDPA on transposed [B, S, H, D] inputs,
    K/V heads as they are, the bottom-right causal mask where q_len != k_len."""
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    sq, sk = qt.shape[2], kt.shape[2]
    gqa = qt.shape[1] != kt.shape[1]
    if causal and sq == sk:
        out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True, scale=scale,
                                             enable_gqa=gqa)
    elif causal and sq > 1:
        mask = torch.ones(sq, sk, dtype=torch.bool).tril(sk - sq)
        out = F.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask, scale=scale,
                                             enable_gqa=gqa)
    else:
        out = F.scaled_dot_product_attention(qt, kt, vt, scale=scale, enable_gqa=gqa)
    return out.transpose(1, 2)


@pytest.mark.parametrize("shape", SHAPES[:5], ids=str)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_tier2_bit_identical_to_direct_sdpa(shape, causal, dtype):
    q, k, v = _inputs(*shape, dtype=dtype)
    expected = direct_sdpa(q, k, v, causal=causal)
    got = attention(q, k, v, causal=causal)
    assert got.shape == q.shape[:3] + (v.shape[-1],)
    assert torch.equal(got, expected)


@pytest.mark.parametrize("shape", SHAPES[:5], ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_bhsd_layout_bit_identical(shape, causal):
    q, k, v = _inputs(*shape)
    qb, kb, vb = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    got = attention(qb, kb, vb, causal=causal, layout="bhsd")
    expected = direct_sdpa(q, k, v, causal=causal).transpose(1, 2)
    assert got.shape == qb.shape
    assert torch.equal(got, expected)
    # Same numbers whichever layout the caller uses.
    assert torch.equal(got.transpose(1, 2), attention(q, k, v, causal=causal))


def test_scale_is_passed_through():
    q, k, v = _inputs(1, 4, 4, 2, 2, 8)
    assert torch.equal(attention(q, k, v, scale=0.3), direct_sdpa(q, k, v, causal=False, scale=0.3))
    ref = reference_attention(q, k, v, scale=0.3)
    torch.testing.assert_close(attention(q, k, v, scale=0.3, backend="eager").double(), ref,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backend", ["sdpa", "eager"])
def test_tiers_match_float64_reference(shape, causal, backend):
    q, k, v = _inputs(*shape)
    got = attention(q, k, v, causal=causal, backend=backend)
    ref = reference_attention(q, k, v, causal=causal)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_eager_agrees_with_sdpa_bf16(shape, causal):
    q, k, v = _inputs(*shape, dtype=torch.bfloat16)
    a = attention(q, k, v, causal=causal, backend="sdpa")
    b = attention(q, k, v, causal=causal, backend="eager")
    torch.testing.assert_close(a.float(), b.float(), rtol=5e-2, atol=5e-2)


def test_causal_more_queries_than_keys_gives_zero_rows():
    q, k, v = _inputs(1, 7, 3, 4, 2, 8)
    for backend in ("sdpa", "eager", None):
        out = attention(q, k, v, causal=True, backend=backend)
        assert torch.equal(out[:, :4], torch.zeros_like(out[:, :4]))
        tail = attention(q[:, 4:], k, v, causal=True, backend=backend)
        assert torch.equal(out[:, 4:], tail)


def test_decode_sees_every_cached_key():
    """q_len == 1 with causal=True must not be SDPA's top-left mask (which
    would let the new token see only the first cached key)."""
    q, k, v = _inputs(1, 1, 6, 4, 2, 8)
    out = attention(q, k, v, causal=True)
    assert torch.equal(out, attention(q, k, v, causal=False))
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    top_left = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True,
                                              enable_gqa=True).transpose(1, 2)
    assert not torch.allclose(out, top_left)


@pytest.mark.parametrize("budget", [1, 3000, 10**9])
def test_eager_chunking_gives_same_result(monkeypatch, budget):
    q, k, v = _inputs(2, 9, 9, 4, 2, 8)
    monkeypatch.setattr(attn, "EAGER_MEMORY_BUDGET_BYTES", budget)
    for causal in (False, True):
        got = attention(q, k, v, causal=causal, backend="eager")
        torch.testing.assert_close(got.double(), reference_attention(q, k, v, causal=causal),
                                   rtol=1e-5, atol=1e-5)


def test_eager_never_repeats_kv(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("K/V heads were materialised")

    monkeypatch.setattr(torch, "repeat_interleave", forbidden)
    monkeypatch.setattr(torch.Tensor, "repeat_interleave", forbidden)
    monkeypatch.setattr(torch.Tensor, "expand", forbidden, raising=False)
    q, k, v = _inputs(1, 5, 5, 8, 2, 8)
    attention(q, k, v, causal=True, backend="eager")
    attention(q, k, v, causal=True, backend="sdpa")


@pytest.mark.parametrize("backend", ["sdpa", "eager"])
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("causal", [False, True])
def test_attn_mask(backend, kind, causal):
    q, k, v = _inputs(2, 4, 6, 4, 2, 8)
    g = torch.Generator().manual_seed(1)
    keep = torch.rand(2, 1, 4, 6, generator=g) > 0.3
    keep[..., -1] = True  # every row keeps its last key
    mask = keep if kind == "bool" else torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
    got = attention(q, k, v, causal=causal, attn_mask=mask, backend=backend)
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    kd, vd = kd.repeat_interleave(2, 1), vd.repeat_interleave(2, 1)
    scores = qd @ kd.transpose(-1, -2) * 8 ** -0.5
    allowed = keep.expand(2, 4, 4, 6)
    if causal:
        allowed = allowed & torch.ones(4, 6, dtype=torch.bool).tril(2)
    scores = scores.masked_fill(~allowed, float("-inf"))
    ref = (torch.softmax(scores, -1).nan_to_num(0.0) @ vd).transpose(1, 2)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


def test_fully_masked_row_is_zero_in_both_tiers():
    q, k, v = _inputs(1, 3, 4, 2, 2, 8)
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False
    for backend in ("sdpa", "eager"):
        out = attention(q, k, v, attn_mask=mask, backend=backend)
        assert torch.equal(out[:, 1], torch.zeros_like(out[:, 1]))
        assert torch.isfinite(out).all()


def test_force_eager_switch(monkeypatch):
    calls = []
    real = attn._run_eager
    monkeypatch.setattr(attn, "_run_eager", lambda *a: calls.append(1) or real(*a))
    q, k, v = _inputs(1, 4, 4, 2, 2, 8)
    attention(q, k, v)
    assert calls == []
    for value in ("1", "true", "ON"):
        monkeypatch.setenv("FORCE_EAGER_ATTENTION", value)
        attention(q, k, v)
    assert calls == [1, 1, 1]
    monkeypatch.setenv("FORCE_EAGER_ATTENTION", "0")
    attention(q, k, v)
    assert len(calls) == 3
    # The keyword wins over the switch.
    monkeypatch.setenv("FORCE_EAGER_ATTENTION", "1")
    assert torch.equal(attention(q, k, v, backend="sdpa"), direct_sdpa(q, k, v, causal=False))
    assert len(calls) == 3


def test_sdpa_failure_falls_back_to_eager(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("No available kernel")

    monkeypatch.setattr(attn, "_sdpa", broken)
    q, k, v = _inputs(1, 4, 4, 4, 2, 8)
    with pytest.warns(RuntimeWarning, match="eager"):
        out = attention(q, k, v, causal=True)
    torch.testing.assert_close(out.double(), reference_attention(q, k, v, causal=True),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError):
        attention(q, k, v, backend="sdpa")


def test_bad_arguments():
    q, k, v = _inputs(1, 4, 4, 4, 2, 8)
    with pytest.raises(ValueError, match="layout"):
        attention(q, k, v, layout="sbhd")
    with pytest.raises(ValueError, match="backend"):
        attention(q, k, v, backend="flash")
    with pytest.raises(ValueError, match="multiple"):
        attention(q, k[:, :, :1].expand(1, 4, 3, 8).contiguous(), v[:, :, :1].expand(1, 4, 3, 8)
                  .contiguous(), backend="eager")


def test_aiter_backend_unavailable_raises():
    q, k, v = _inputs(1, 4, 4, 4, 2, 8, dtype=torch.bfloat16)
    with pytest.raises((RuntimeError, ValueError)):
        attention(q, k, v, backend="aiter")


@pytest.mark.parametrize("backend", ["sdpa", "eager"])
def test_gradients_flow(backend):
    q, k, v = (t.requires_grad_() for t in _inputs(1, 4, 4, 4, 2, 8))
    attention(q, k, v, causal=True, backend=backend).sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in (q, k, v))


def test_no_warning_on_plain_cpu_call():
    q, k, v = _inputs(1, 4, 4, 4, 2, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        attention(q, k, v, causal=True)
