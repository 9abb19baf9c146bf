"""attention() under torch.compile, SDPA's top-left causal mask on one query
row with a mask, and attention over zero keys with autograd.

torch.compile runs with the ``aot_eager`` backend: Dynamo, fake tensors and
AOT autograd trace the function exactly as with inductor, without compiling
kernels (the GPU script runs inductor)."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo as dynamo
import torch._dynamo.utils as dynamo_utils
import torch.nn.functional as F

from rocmlint.runtime import attention, attn
from rocmlint.runtime.flash_attn import flash_attn_func

from .helpers import reference_attention


def _inputs(b, sq, sk, h, hk, d, seed=0, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, sq, h, d, generator=g)
    k = torch.randn(b, sk, hk, d, generator=g)
    v = torch.randn(b, sk, hk, d, generator=g)
    return tuple(t.requires_grad_(requires_grad) for t in (q, k, v))


# --------------------------------------------------------------------------
# One query row, is_causal (top-left) and a mask
# --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sdpa", "eager", None])
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("heads", [(4, 4), (4, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_is_causal_single_row_with_mask_sees_key_zero_only(monkeypatch, backend, kind, heads,
                                                           layout):
    # SDPA's is_causal on one query row lets it see key 0 only, whatever the
    # number of keys; the mask is applied on top.
    monkeypatch.setattr(attn, "GQA_MASK_REGROUP_DEVICES", frozenset({"cuda", "cpu"}))
    q, k, v = _inputs(2, 1, 6, heads[0], heads[1], 8)
    allowed = torch.tensor([True, False, True, True, False, True])
    mask = allowed if kind == "bool" else torch.zeros(6).masked_fill(~allowed, float("-inf"))
    expected = reference_attention(q, k, v, is_causal=True, mask=mask)
    if layout == "bhsd":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    out = attention(q, k, v, attn_mask=mask, is_causal=True, layout=layout, backend=backend)
    if layout == "bhsd":
        out = out.transpose(1, 2)
    torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-5)
    # Only key 0 is seen: the output is v's first row of each K/V head.
    rep = heads[0] // heads[1]
    v0 = (v if layout == "bshd" else v.transpose(1, 2))[:, 0].repeat_interleave(rep, 1)
    torch.testing.assert_close(out[:, 0], v0, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", ["sdpa", "eager"])
def test_bottom_right_causal_single_row_with_mask_sees_every_key(backend):
    q, k, v = _inputs(1, 1, 5, 4, 2, 8)
    mask = torch.tensor([True, True, False, True, True])
    out = attention(q, k, v, attn_mask=mask, causal=True, backend=backend)
    expected = reference_attention(q, k, v, causal=True, mask=mask)
    torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-5)


def test_is_causal_single_row_matches_sdpa_with_the_same_mask():
    q, k, v = (t.transpose(1, 2) for t in _inputs(1, 1, 7, 2, 2, 8))
    mask = torch.ones(1, 7, dtype=torch.bool)
    direct = F.scaled_dot_product_attention(q, k, v, attn_mask=mask & torch.ones(1, 7).tril()
                                            .bool())
    out = attention(q, k, v, attn_mask=mask, is_causal=True, layout="bhsd")
    assert torch.equal(out, direct)


# --------------------------------------------------------------------------
# Zero keys keep autograd history
# --------------------------------------------------------------------------


ZERO_KEY_CASES = [
    {},
    {"is_causal": True},
    {"causal": True},
    {"window_size": (2, 0)},
    {"attn_mask": "bool"},
    {"attn_mask": "float"},
]


@pytest.mark.parametrize("kwargs", ZERO_KEY_CASES, ids=str)
@pytest.mark.parametrize("backend", [None, "sdpa", "eager"])
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_zero_keys_gives_zeros_with_gradients(kwargs, backend, layout):
    q, k, v = _inputs(2, 3, 0, 4, 2, 8, requires_grad=True)
    kwargs = dict(kwargs)
    if kwargs.get("attn_mask") == "bool":
        kwargs["attn_mask"] = torch.ones(2, 1, 3, 0, dtype=torch.bool)
    elif kwargs.get("attn_mask") == "float":
        kwargs["attn_mask"] = torch.zeros(3, 0)
    args = (q, k, v) if layout == "bshd" else tuple(t.transpose(1, 2) for t in (q, k, v))
    out = attention(*args, layout=layout, backend=backend, **kwargs)
    assert out.shape == args[0].shape
    assert torch.equal(out, torch.zeros_like(out))
    assert out.grad_fn is not None
    (out * 2.0).sum().backward()
    for t in (q, k, v):
        assert t.grad is not None and t.grad.shape == t.shape
        assert torch.equal(t.grad, torch.zeros_like(t))


def test_zero_keys_like_native_sdpa():
    q, k, v = (t.transpose(1, 2) for t in _inputs(1, 4, 0, 2, 2, 8))
    native = F.scaled_dot_product_attention(q, k, v)
    out = attention(q, k, v, layout="bhsd", causal=True)
    assert torch.equal(out, native)


def test_causal_more_queries_than_keys_keeps_gradients():
    # Some rows see no key (zeros, zero gradient), the rest are computed.
    q, k, v = _inputs(1, 5, 3, 2, 2, 8, requires_grad=True)
    out = attention(q, k, v, causal=True)
    out.sum().backward()
    assert torch.equal(q.grad[:, :2], torch.zeros_like(q.grad[:, :2]))
    assert q.grad[:, 2:].abs().sum() > 0


# --------------------------------------------------------------------------
# torch.compile
# --------------------------------------------------------------------------


def _calls():
    q_only = {"causal": lambda q, k, v: attention(q, k, v, causal=True),
              "is_causal": lambda q, k, v: attention(q, k, v, is_causal=True),
              "flash_attn_func": lambda q, k, v: flash_attn_func(q, k, v, causal=True),
              "bhsd": lambda q, k, v: attention(q.transpose(1, 2), k.transpose(1, 2),
                                                v.transpose(1, 2), causal=True,
                                                layout="bhsd").transpose(1, 2),
              "window": lambda q, k, v: attention(q, k, v, causal=True, window_size=(3, 0)),
              "mask": lambda q, k, v: attention(
                  q, k, v, is_causal=True,
                  attn_mask=torch.ones(q.shape[1], k.shape[1], dtype=torch.bool)),
              "symbolic is_causal": lambda q, k, v: attention(q, k, v,
                                                              is_causal=q.shape[1] > 1),
              "symbolic causal": lambda q, k, v: attention(q, k, v, causal=q.shape[1] > 1),
              "eager tier": lambda q, k, v: attention(q, k, v, causal=True, backend="eager")}
    return q_only


# (q_len, k_len) sequences whose lengths vary from call to call: square
# prefill, then decode against a growing cache, then a chunk.
LENGTHS = [(8, 8), (12, 12), (1, 13), (1, 14), (4, 18), (16, 16)]


@pytest.mark.parametrize("name", list(_calls()))
@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_compiles_with_fullgraph_as_lengths_vary(name, dynamic):
    fn = _calls()[name]
    dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend="aot_eager")
    for sq, sk in LENGTHS:
        q, k, v = _inputs(1, sq, sk, 4, 2, 8, seed=sq * 100 + sk)
        torch.testing.assert_close(compiled(q, k, v), fn(q, k, v), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["causal", "flash_attn_func", "mask", "symbolic is_causal"])
def test_no_graph_break_without_fullgraph(name):
    fn = _calls()[name]
    dynamo.reset()
    dynamo_utils.counters.clear()
    compiled = torch.compile(fn, backend="aot_eager")
    for sq, sk in LENGTHS:
        q, k, v = _inputs(1, sq, sk, 4, 2, 8)
        compiled(q, k, v)
    assert sum(dynamo_utils.counters["graph_break"].values()) == 0, \
        dict(dynamo_utils.counters["graph_break"])


def test_compiled_backward_matches_eager_call():
    fn = _calls()["causal"]
    dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, dynamic=True, backend="aot_eager")
    for sq, sk in [(6, 6), (1, 9), (3, 9)]:
        grads = []
        for f in (compiled, fn):
            q, k, v = _inputs(2, sq, sk, 4, 2, 8, seed=sq + sk, requires_grad=True)
            f(q, k, v).pow(2).sum().backward()
            grads.append((q.grad, k.grad, v.grad))
        for got, want in zip(*grads):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
