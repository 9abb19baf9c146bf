"""flash_attn_func: flash-attention 2's signature and meaning, on top of
attention(); and linear() with F.linear's argument names."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.functional as F

import rocmlint.runtime as rt
from rocmlint.runtime.flash_attn import flash_attn_func

from .helpers import reference_attention

# flash-attention 2.7's flash_attn_interface.flash_attn_func parameters, in order.
FLASH_ATTN_PARAMS = ["q", "k", "v", "dropout_p", "softmax_scale", "causal", "window_size",
                     "softcap", "alibi_slopes", "deterministic", "return_attn_probs"]


def _inputs(b=2, sq=6, sk=6, h=4, hk=2, d=16, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(b, sq, h, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype))


def test_signature_matches_flash_attention():
    params = inspect.signature(flash_attn_func).parameters
    assert list(params) == FLASH_ATTN_PARAMS
    assert params["window_size"].default == (-1, -1)
    assert rt.flash_attn_func is flash_attn_func


@pytest.mark.parametrize("sq,sk", [(6, 6), (1, 9), (4, 9), (7, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_positional_call_is_attention(sq, sk, causal):
    q, k, v = _inputs(sq=sq, sk=sk)
    got = flash_attn_func(q, k, v, 0.0, 0.25, causal)
    assert torch.equal(got, rt.attention(q, k, v, causal=causal, softmax_scale=0.25))
    torch.testing.assert_close(got.double(),
                               reference_attention(q, k, v, causal=causal, scale=0.25),
                               rtol=1e-5, atol=1e-5)


def test_window_softcap_and_dropout():
    q, k, v = _inputs(sq=8, sk=8)
    got = flash_attn_func(q, k, v, causal=True, window_size=(3, 0))
    torch.testing.assert_close(got.double(),
                               reference_attention(q, k, v, causal=True, window=(3, 0)),
                               rtol=1e-5, atol=1e-5)
    capped = flash_attn_func(q * 4, k, v, softcap=2.0)
    torch.testing.assert_close(capped.double(),
                               reference_attention(q * 4, k, v, softcap=2.0),
                               rtol=1e-5, atol=1e-5)
    torch.manual_seed(3)
    dropped = flash_attn_func(q, k, v, dropout_p=0.5)
    torch.manual_seed(3)
    assert torch.equal(dropped, rt.attention(q, k, v, dropout_p=0.5, causal=False))


@pytest.mark.parametrize("per_batch", [False, True])
def test_alibi_slopes(per_batch):
    q, k, v = _inputs(sq=5, sk=8)
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    if per_batch:
        slopes = torch.stack([slopes, slopes * 2])
    got = flash_attn_func(q, k, v, causal=True, alibi_slopes=slopes)
    i = torch.arange(5).view(5, 1)
    j = torch.arange(8).view(1, 8)
    bias = -slopes.double().reshape(-1, 4, 1, 1) * (i + 3 - j).abs().double()
    ref = reference_attention(q, k, v, causal=True, mask=bias)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"alibi_slopes must have shape \(4,\) or \(2, 4\)"):
        flash_attn_func(q, k, v, alibi_slopes=torch.ones(3))


def test_unsupported_and_ignored_options():
    q, k, v = _inputs()
    with pytest.raises(NotImplementedError, match="return_attn_probs"):
        flash_attn_func(q, k, v, return_attn_probs=True)
    assert torch.equal(flash_attn_func(q, k, v, deterministic=True), flash_attn_func(q, k, v))


def test_bad_inputs_are_reported_by_name():
    q, k, v = _inputs()
    with pytest.raises(ValueError, match="q must be a 4-D tensor"):
        flash_attn_func(q[0], k[0], v[0])
    with pytest.raises(ValueError, match="q must be a 4-D tensor"):
        flash_attn_func(q[0], k[0], v[0], alibi_slopes=torch.ones(4))


# --- linear -------------------------------------------------------------------------

def test_linear_takes_f_linear_names():
    # F.linear is a builtin without an introspectable signature; its documented
    # one is linear(input, weight, bias=None).
    params = inspect.signature(rt.linear).parameters
    assert list(params) == ["input", "weight", "bias"] and params["bias"].default is None
    x = torch.randn(3, 8)
    w = torch.randn(5, 8)
    b = torch.randn(5)
    assert torch.equal(rt.linear(x, w, bias=b), F.linear(x, w, bias=b))
    assert torch.equal(rt.linear(input=x, weight=w, bias=b), F.linear(x, w, b))
    assert torch.equal(rt.linear(x, w), F.linear(x, w))
