"""attention() with the argument names of SDPA and flash_attn_func, sliding
windows, soft-capping, dropout (with a generator) and eager-tier backward with
masks."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from rocmlint.runtime import attention, attn, device

from .helpers import reference_attention


def _inputs(b=2, sq=6, sk=6, h=4, hk=2, d=8, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, sq, h, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype))


def _bhsd(*tensors):
    return tuple(t.transpose(1, 2).contiguous() for t in tensors)


@pytest.fixture(params=["fast path", "general path"])
def path(request, monkeypatch):
    """Run a test with the platform decided (fast path on) and undecided
    (every call through the general path)."""
    monkeypatch.setattr(device, "_IS_ROCM", False if request.param == "fast path" else None)
    if request.param == "general path":
        monkeypatch.setattr(device, "is_rocm", lambda: False)
    return request.param


# --- SDPA's names and order --------------------------------------------------

@pytest.mark.parametrize("sq,sk", [(6, 6), (3, 7), (1, 5)])
def test_sdpa_positional_order_is_bit_identical(path, sq, sk):
    qb, kb, vb = _bhsd(*_inputs(sq=sq, sk=sk))
    got = attention(qb, kb, vb, None, 0.0, True, 0.3, True, layout="bhsd")
    expected = F.scaled_dot_product_attention(qb, kb, vb, None, 0.0, True, scale=0.3,
                                              enable_gqa=True)
    assert torch.equal(got, expected)


@pytest.mark.parametrize("sq,sk", [(3, 7), (1, 5)])
def test_is_causal_is_top_left_and_causal_bottom_right(path, sq, sk):
    q, k, v = _inputs(sq=sq, sk=sk)
    top_left = attention(q, k, v, is_causal=True)
    bottom_right = attention(q, k, v, causal=True)
    torch.testing.assert_close(top_left.double(), reference_attention(q, k, v, is_causal=True),
                               rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(bottom_right.double(), reference_attention(q, k, v, causal=True),
                               rtol=1e-5, atol=1e-5)
    assert not torch.allclose(top_left, bottom_right)
    for backend in ("sdpa", "eager"):
        torch.testing.assert_close(attention(q, k, v, is_causal=True, backend=backend),
                                   top_left, rtol=1e-5, atol=1e-5)


def test_square_causal_names_agree(path):
    q, k, v = _inputs()
    assert torch.equal(attention(q, k, v, is_causal=True), attention(q, k, v, causal=True))


def test_mask_keyword_and_enable_gqa(path):
    qb, kb, vb = _bhsd(*_inputs(sq=4, sk=6))
    mask = torch.rand(4, 6, generator=torch.Generator().manual_seed(2)) > 0.3
    mask[:, 0] = True
    got = attention(qb, kb, vb, attn_mask=mask, enable_gqa=True, layout="bhsd")
    expected = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, enable_gqa=True)
    assert torch.equal(got, expected)


def test_softmax_scale_is_scale(path):
    q, k, v = _inputs()
    assert torch.equal(attention(q, k, v, softmax_scale=0.2, causal=True),
                       attention(q, k, v, scale=0.2, causal=True))


# --- dropout -------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_dropout_is_sdpa_dropout(layout):
    q, k, v = _inputs()
    if layout == "bhsd":
        q, k, v = _bhsd(q, k, v)
    torch.manual_seed(123)
    got = attention(q, k, v, dropout_p=0.4, is_causal=True, layout=layout)
    torch.manual_seed(123)
    if layout == "bhsd":
        expected = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True,
                                                  enable_gqa=True)
    else:
        expected = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), dropout_p=0.4,
            is_causal=True, enable_gqa=True).transpose(1, 2)
    assert torch.equal(got, expected)
    assert not torch.equal(got, attention(q, k, v, is_causal=True, layout=layout))


def test_dropout_with_generator_draws_only_from_it():
    b, s, d = 2, 64, 64
    q = torch.zeros(b, 1, 1, d)                 # uniform probabilities 1/s
    k = torch.randn(b, s, 1, d)
    v = torch.eye(s).expand(b, s, s).reshape(b, s, 1, s)  # output row = probabilities
    state = torch.get_rng_state()
    gen = torch.Generator().manual_seed(7)
    out = attention(q, k, v, dropout_p=0.25, generator=gen)
    assert torch.equal(torch.get_rng_state(), state)          # global RNG untouched
    again = attention(q, k, v, dropout_p=0.25, generator=torch.Generator().manual_seed(7))
    assert torch.equal(out, again)                             # reproducible from the seed
    values = out.flatten()
    kept = values[values != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, (1 / s) / 0.75))
    dropped = (values == 0).float().mean().item()
    assert 0.18 < dropped < 0.32                               # 128 draws around p = 0.25
    assert torch.count_nonzero(attention(q, k, v, dropout_p=1.0, generator=gen)) == 0


def test_dropout_with_generator_forced_on_sdpa_is_an_error():
    q, k, v = _inputs()
    with pytest.raises(ValueError, match="generator"):
        attention(q, k, v, dropout_p=0.1, generator=torch.Generator(), backend="sdpa")


# --- sliding windows -------------------------------------------------------------

WINDOW_CASES = [
    ((2, 0), True, 8, 8), ((2, 1), False, 8, 8), ((0, 0), False, 5, 5),
    ((3, -1), True, 4, 9), ((-1, 2), False, 6, 6), ((1, 1), True, 9, 4),
]


@pytest.mark.parametrize("window,causal,sq,sk", WINDOW_CASES)
@pytest.mark.parametrize("backend", ["sdpa", "eager", None])
def test_window_matches_reference(path, window, causal, sq, sk, backend):
    q, k, v = _inputs(sq=sq, sk=sk)
    got = attention(q, k, v, causal=causal, window_size=window, backend=backend)
    ref = reference_attention(q, k, v, causal=causal, window=window)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)
    qb, kb, vb = _bhsd(q, k, v)
    got_b = attention(qb, kb, vb, causal=causal, window_size=window, backend=backend,
                      layout="bhsd")
    torch.testing.assert_close(got_b.transpose(1, 2), got, rtol=1e-6, atol=1e-6)


def test_no_window_spelled_as_minus_ones(path):
    q, k, v = _inputs()
    assert torch.equal(attention(q, k, v, causal=True, window_size=(-1, -1)),
                       attention(q, k, v, causal=True))


def test_window_sdpa_tier_is_sdpa_with_the_window_mask():
    qb, kb, vb = _bhsd(*_inputs(sq=5, sk=7))
    i = torch.arange(5).unsqueeze(1)
    j = torch.arange(7).unsqueeze(0)
    mask = (j <= i + 2) & (j >= i + 2 - 3)      # causal, left window 3, offset S_k - S_q
    expected = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, enable_gqa=True)
    assert torch.equal(attention(qb, kb, vb, causal=True, window_size=(3, 0), layout="bhsd"),
                       expected)


# --- softcap ---------------------------------------------------------------------

@pytest.mark.parametrize("causal", [False, True])
def test_softcap_runs_in_the_eager_tier(monkeypatch, causal):
    q, k, v = _inputs(d=16)
    q = q * 6  # large logits, so that capping changes them
    calls = []
    real = attn._run_eager
    monkeypatch.setattr(attn, "_run_eager", lambda *a: calls.append(1) or real(*a))
    got = attention(q, k, v, causal=causal, softcap=2.0)
    assert calls == [1]
    torch.testing.assert_close(got.double(),
                               reference_attention(q, k, v, causal=causal, softcap=2.0),
                               rtol=1e-5, atol=1e-5)
    assert not torch.allclose(got, attention(q, k, v, causal=causal), atol=1e-3)
    assert torch.equal(attention(q, k, v, causal=causal, softcap=0.0),
                       attention(q, k, v, causal=causal))
    with pytest.raises(ValueError, match="softcap"):
        attention(q, k, v, softcap=2.0, backend="sdpa")


# --- eager tier backward ---------------------------------------------------------

def _grads(fn, q, k, v):
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = fn(q, k, v)
    weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)
    (out * weights).sum().backward()
    return out.detach(), q.grad, k.grad, v.grad


BACKWARD_CASES = {
    "bool mask": dict(mask="bool"),
    "float mask": dict(mask="float"),
    "bool mask + causal": dict(mask="bool", causal=True),
    "window": dict(window=(2, 1)),
    "softcap + causal": dict(softcap=3.0, causal=True),
    "fully masked rows": dict(mask="dead"),
}


@pytest.mark.parametrize("case", list(BACKWARD_CASES))
def test_eager_backward_matches_float64_reference(case):
    spec = BACKWARD_CASES[case]
    q, k, v = _inputs(sq=5, sk=7, dtype=torch.float64)
    g = torch.Generator().manual_seed(5)
    keep = torch.rand(2, 1, 5, 7, generator=g) > 0.4
    keep[..., 0] = True
    if spec.get("mask") == "dead":
        keep[:, :, 2] = False                       # row 2 sees no key
    mask = None
    if spec.get("mask") in ("bool", "dead"):
        mask = keep
    elif spec.get("mask") == "float":
        mask = torch.zeros(keep.shape, dtype=torch.float64).masked_fill(~keep, float("-inf"))
    kwargs = dict(attn_mask=mask, causal=spec.get("causal"), window_size=spec.get("window"),
                  softcap=spec.get("softcap"))
    eager = _grads(lambda a, b, c: attention(a, b, c, backend="eager", **kwargs), q, k, v)
    ref = _grads(lambda a, b, c: reference_attention(
        a, b, c, mask=mask, causal=bool(spec.get("causal")), window=spec.get("window"),
        softcap=spec.get("softcap")), q, k, v)
    for got, want in zip(eager, ref):
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9)
    if spec.get("mask") == "dead":
        assert torch.equal(eager[0][:, 2], torch.zeros_like(eager[0][:, 2]))
        assert torch.equal(eager[1][:, 2], torch.zeros_like(eager[1][:, 2]))
    if "softcap" not in spec:
        sdpa = _grads(lambda a, b, c: attention(a, b, c, backend="sdpa", **kwargs), q, k, v)
        for got, want in zip(eager, sdpa):
            torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9)


def test_eager_backward_bf16_with_mask_and_dropout():
    q, k, v = _inputs(sq=5, sk=7, dtype=torch.bfloat16)
    mask = torch.ones(5, 7, dtype=torch.bool).tril(2)
    out, dq, dk, dv = _grads(lambda a, b, c: attention(
        a, b, c, attn_mask=mask, dropout_p=0.2, generator=torch.Generator().manual_seed(1)),
        q, k, v)
    assert all(torch.isfinite(t.float()).all() for t in (out, dq, dk, dv))


@pytest.mark.parametrize("kwargs,dead", [
    (dict(causal=True), 5),                          # 9 queries, 4 keys
    (dict(causal=True, window_size=(1, 1)), 5),
    (dict(window_size=(2, 1)), 4),                   # right limit 1: rows 0-3 see nothing
    (dict(is_causal=True, window_size=(3, 2)), 3),   # top-left causal, window from the right
])
def test_rows_without_keys_are_zero_without_asking_sdpa(monkeypatch, kwargs, dead):
    """SDPA on CUDA does not return zeros for rows that see no key (measured
    on an H100): such rows never reach a kernel."""
    q, k, v = _inputs(sq=9, sk=4)
    rows_seen = []
    real = attn._sdpa

    def spy(query, *args, **kw):
        rows_seen.append(query.shape[2])
        return real(query, *args, **kw)

    monkeypatch.setattr(attn, "_sdpa", spy)
    out = attention(q, k, v, **kwargs)
    assert rows_seen == [9 - dead]
    assert torch.equal(out[:, :dead], torch.zeros_like(out[:, :dead]))
    ref = reference_attention(q, k, v, causal=bool(kwargs.get("causal")),
                              is_causal=bool(kwargs.get("is_causal")),
                              window=kwargs.get("window_size"))
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    eager = attention(q, k, v, backend="eager", **kwargs)
    torch.testing.assert_close(eager.double(), ref, rtol=1e-5, atol=1e-5)


# --- GQA with a mask on CUDA ----------------------------------------------------

@pytest.fixture
def regroup_on_cpu(monkeypatch):
    """Run the CUDA-only regrouping of masked GQA on CPU tensors."""
    monkeypatch.setattr(attn, "GQA_MASK_REGROUP_DEVICES", frozenset({"cpu"}))
    calls = []
    real = attn._sdpa

    def spy(query, key, value, **kwargs):
        calls.append((tuple(query.shape), tuple(key.shape), kwargs.get("enable_gqa")))
        return real(query, key, value, **kwargs)

    monkeypatch.setattr(attn, "_sdpa", spy)
    return calls


def test_masked_gqa_decode_packs_query_heads(regroup_on_cpu):
    qb, kb, vb = _bhsd(*_inputs(b=2, sq=1, sk=9, h=8, hk=2))
    mask = torch.rand(2, 1, 1, 9, generator=torch.Generator().manual_seed(3)) > 0.3
    mask[..., 0] = True
    got = attention(qb, kb, vb, attn_mask=mask, layout="bhsd")
    # transformers' pack_gqa: [B, H, 1, D] -> [B, H_kv, groups, D], K/V as they are
    assert regroup_on_cpu == [((2, 2, 4, 8), (2, 2, 9, 8), None)]
    expected = F.scaled_dot_product_attention(qb.reshape(2, 2, 4, 8), kb, vb,
                                              attn_mask=mask).reshape(2, 8, 1, 8)
    assert torch.equal(got, expected)
    torch.testing.assert_close(got.transpose(1, 2).double(), reference_attention(
        qb.transpose(1, 2), kb.transpose(1, 2), vb.transpose(1, 2), mask=mask),
        rtol=1e-5, atol=1e-5)


def test_masked_gqa_prefill_repeats_kv_for_the_call(regroup_on_cpu):
    qb, kb, vb = _bhsd(*_inputs(b=2, sq=5, sk=7, h=8, hk=2))
    got = attention(qb, kb, vb, causal=True, window_size=(3, 0), layout="bhsd")
    assert regroup_on_cpu == [((2, 8, 5, 8), (2, 8, 7, 8), None)]
    torch.testing.assert_close(got.transpose(1, 2).double(), reference_attention(
        qb.transpose(1, 2), kb.transpose(1, 2), vb.transpose(1, 2), causal=True,
        window=(3, 0)), rtol=1e-5, atol=1e-5)


def test_unmasked_gqa_keeps_enable_gqa(regroup_on_cpu):
    qb, kb, vb = _bhsd(*_inputs(b=2, sq=5, sk=5, h=8, hk=2))
    attention(qb, kb, vb, is_causal=True, layout="bhsd", backend="sdpa")
    assert regroup_on_cpu == [((2, 8, 5, 8), (2, 2, 5, 8), True)]
