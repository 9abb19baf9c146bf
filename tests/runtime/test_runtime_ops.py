"""linear, gated activations and projection fusion off ROCm: exactly the
PyTorch expressions they replace."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rocmlint.runtime import (
    FusedLinear,
    fuse_gate_up,
    fuse_linears,
    fuse_qkv,
    gelu_tanh_and_mul,
    linear,
    silu_and_mul,
)

DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def _rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("xshape", [(7, 32), (2, 5, 32)])
def test_linear_bit_identical(dtype, bias, xshape):
    x = _rand(*xshape, dtype=dtype)
    w = _rand(24, 32, dtype=dtype, seed=1)
    b = _rand(24, dtype=dtype, seed=2) if bias else None
    assert torch.equal(linear(x, w, b), F.linear(x, w, b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_silu_and_mul_bit_identical(dtype):
    x = _rand(3, 4, 20, dtype=dtype)
    expected = F.silu(x[..., :10]) * x[..., 10:]
    assert torch.equal(silu_and_mul(x), expected)
    assert torch.equal(silu_and_mul(x[..., :10], x[..., 10:]), expected)
    out = torch.empty(3, 4, 10, dtype=dtype)
    assert silu_and_mul(x, out=out) is out and torch.equal(out, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gelu_tanh_and_mul_bit_identical(dtype):
    x = _rand(6, 16, dtype=dtype)
    expected = F.gelu(x[..., :8], approximate="tanh") * x[..., 8:]
    assert torch.equal(gelu_tanh_and_mul(x), expected)
    assert torch.equal(gelu_tanh_and_mul(x[..., :8], x[..., 8:]), expected)
    out = torch.empty(6, 8, dtype=dtype)
    assert gelu_tanh_and_mul(x, out=out) is out and torch.equal(out, expected)


def test_gated_needs_even_width():
    with pytest.raises(ValueError, match="even"):
        silu_and_mul(torch.randn(2, 7))


def test_gated_activations_backward():
    x = _rand(4, 12).requires_grad_()
    (silu_and_mul(x).sum() + gelu_tanh_and_mul(x).sum()).backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


def _layers(dtype=torch.float32, bias=True, sizes=(16, 16), seed=0):
    torch.manual_seed(seed)
    return [nn.Linear(32, n, bias=bias).to(dtype) for n in sizes]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("bias", [False, True])
def test_fuse_gate_up_matches_separate(dtype, bias):
    gate, up = _layers(dtype, bias)
    fused = fuse_gate_up(gate, up)
    x = _rand(3, 5, 32, dtype=dtype, seed=3)
    g, u = fused(x)
    tol = {} if dtype == torch.float32 else {"rtol": 1e-2, "atol": 1e-2}
    with torch.no_grad():
        torch.testing.assert_close(g, gate(x), **tol)
        torch.testing.assert_close(u, up(x), **tol)
        # The activated form is silu_and_mul of the same fused output.
        act = fuse_gate_up(gate, up, activation="silu")
        assert torch.equal(act(x), silu_and_mul(fused.fused(x)))
        act2 = fuse_gate_up(gate, up, activation="gelu_tanh")
        assert torch.equal(act2(x), gelu_tanh_and_mul(fused.fused(x)))


def test_fused_output_is_the_concatenated_projection():
    gate, up = _layers()
    fused = fuse_gate_up(gate, up)
    x = _rand(4, 32)
    with torch.no_grad():
        w = torch.cat([gate.weight, up.weight])
        b = torch.cat([gate.bias, up.bias])
        assert torch.equal(fused.fused(x), F.linear(x, w, b))
        g, u = fused(x)
        assert torch.equal(torch.cat([g, u], -1), F.linear(x, w, b))


def test_fuse_qkv_gqa_sizes():
    q, k, v = _layers(sizes=(64, 16, 16))
    fused = fuse_qkv(q, k, v)
    assert isinstance(fused, FusedLinear) and fused.split_sizes == (64, 16, 16)
    x = _rand(2, 3, 32)
    outs = fused(x)
    with torch.no_grad():
        for got, layer in zip(outs, (q, k, v)):
            torch.testing.assert_close(got, layer(x))
    assert "split_sizes=(64, 16, 16)" in repr(fused)


def test_fusion_validation():
    a, b = _layers()
    nb = nn.Linear(32, 16, bias=False)
    with pytest.raises(ValueError, match="bias"):
        fuse_linears(a, nb)
    with pytest.raises(ValueError, match="widths"):
        fuse_linears(a, nn.Linear(8, 16))
    with pytest.raises(ValueError, match="at least two"):
        fuse_linears(a)
    with pytest.raises(ValueError, match="activation"):
        fuse_linears(a, b, nn.Linear(32, 16), activation="silu")
    with pytest.raises(ValueError, match="activation"):
        fuse_gate_up(a, b, activation="relu")


def test_fused_module_trains():
    gate, up = _layers()
    fused = fuse_gate_up(gate, up, activation="silu")
    assert fused.weight.requires_grad
    fused(_rand(4, 32)).sum().backward()
    assert fused.weight.grad is not None and fused.weight.grad.shape == (32, 32)
    assert fused.bias.grad is not None
