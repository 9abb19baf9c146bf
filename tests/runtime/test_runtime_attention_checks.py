"""attention() rejects caller mistakes with a TypeError or ValueError that names
the argument, before any tier runs, in both layouts and with every backend.
Each case here was a silent wrong answer or a raw error from inside a tier."""

from __future__ import annotations

import warnings

import pytest
import torch

from rocmlint.runtime import attention, attn


def _inputs(b=2, sq=5, sk=5, h=4, hk=2, d=8, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(b, sq, h, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype))


# Mistakes SDPA does not reject itself (it broadcasts or reads past them):
# these must never reach the SDPA call, not even on the fast path.
SILENT_IN_SDPA = ("rank", "batch", "heads", "v_length")


@pytest.fixture(params=["platform decided", "platform undecided"])
def no_tier(request, monkeypatch):
    """Fail the test if the eager or aiter tier runs.  SDPA stands in as a
    function that rejects every call, as SDPA itself rejects mismatched dtypes,
    devices and head dims; the calls that reach it are recorded.  With the
    platform decided (not ROCm) the fast path of ``attention`` is active."""
    def forbidden(*args, **kwargs):
        raise AssertionError("a tier ran on invalid arguments")

    calls = []

    def rejecting_sdpa(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("rejected by SDPA's own argument checks")

    monkeypatch.setattr(attn, "_sdpa", rejecting_sdpa)
    monkeypatch.setattr(attn, "_run_eager", forbidden)
    monkeypatch.setattr(attn, "_run_aiter", forbidden)
    if request.param == "platform decided":
        monkeypatch.setattr(attn._device, "_IS_ROCM", False)
    return calls


def _bhsd(*tensors):
    return tuple(t.transpose(1, 2) if isinstance(t, torch.Tensor) and t.dim() == 4 else t
                 for t in tensors)


def _raises(exc, match, q, k, v, **kwargs):
    """Check the error in both layouts, automatic and forced tiers, with no
    warning (no 'falling back' message) on the way."""
    for layout in ("bshd", "bhsd"):
        args = (q, k, v) if layout == "bshd" else _bhsd(q, k, v)
        for backend in (None, "sdpa", "eager"):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with pytest.raises(exc, match=match):
                    attention(*args, layout=layout, backend=backend, **kwargs)


def test_3d_inputs_are_rejected(no_tier):
    q, k, v = _inputs()
    # [S, H, D] without the batch dimension: the silent wrong answer.
    with pytest.raises(ValueError, match=r"q must be a 4-D tensor \[B, S, H, D\].*3-D.*"
                                         r"unsqueeze\(0\)"):
        attention(q[0], k[0], v[0])
    with pytest.raises(ValueError, match=r"q must be a 4-D tensor \[B, H, S, D\]"):
        attention(q[0], k[0], v[0], layout="bhsd")
    assert no_tier == []


def test_5d_and_mixed_ranks_are_rejected(no_tier):
    q, k, v = _inputs()
    _raises(ValueError, r"q must be a 4-D tensor.*5-D", q[None], k[None], v[None])
    _raises(ValueError, r"k must be a 4-D tensor.*3-D", q, k[0], v)
    _raises(ValueError, r"v must be a 4-D tensor.*5-D", q, k, v[None])
    assert no_tier == []


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.int32])
def test_integer_mask_is_rejected(no_tier, dtype):
    q, k, v = _inputs()
    mask = torch.ones(5, 5, dtype=dtype).tril()
    _raises(TypeError, r"attn_mask has dtype .*integer.*bool\(\)", q, k, v, attn_mask=mask)
    assert no_tier == []


def test_float_mask_of_another_dtype_is_rejected(no_tier):
    q, k, v = _inputs()
    _raises(TypeError, r"attn_mask must be float32 or q's dtype", q, k, v,
            attn_mask=torch.zeros(5, 5, dtype=torch.float64))


def test_mask_that_does_not_broadcast(no_tier):
    q, k, v = _inputs()
    _raises(ValueError, r"attn_mask of shape \(5, 4\).*\[B, H, S_q, S_k\] = \[2, 4, 5, 5\]",
            q, k, v, attn_mask=torch.ones(5, 4, dtype=torch.bool))
    _raises(ValueError, r"attn_mask of shape", q, k, v,
            attn_mask=torch.ones(3, 4, 5, 5, dtype=torch.bool))
    _raises(TypeError, r"attn_mask must be a torch.Tensor", q, k, v, attn_mask=[[True]])


@pytest.mark.parametrize("which", ["k", "v"])
def test_dtype_mismatch(no_tier, which):
    q, k, v = _inputs()
    k2 = k.half() if which == "k" else k
    v2 = v.double() if which == "v" else v
    _raises(TypeError, rf"{which} has dtype .* but q has torch.float32", q, k2, v2)


def test_integer_inputs(no_tier):
    q, k, v = _inputs()
    _raises(TypeError, r"q must be a floating-point tensor", q.long(), k.long(), v.long())


def test_v_longer_than_k(no_tier):
    q, k, v = _inputs()
    v_long = torch.cat([v, v[:, :2]], dim=1)  # 7 positions against k's 5
    _raises(ValueError, r"v has 7 positions but k has 5", q, k, v_long)
    assert no_tier == []


@pytest.mark.parametrize("which", ["k", "v", "kv"])
def test_batch_sizes_that_would_broadcast(no_tier, which):
    q, k, v = _inputs()
    k2 = k[:1] if "k" in which else k
    v2 = v[:1] if "v" in which else v
    name = "k" if "k" in which else "v"
    _raises(ValueError, rf"{name} has batch size 1 but q has 2.*no broadcasting", q, k2, v2)
    _raises(ValueError, r"k has batch size 2 but q has 1", q[:1], k, v)
    assert no_tier == []


def test_head_counts(no_tier):
    q, k, v = _inputs(h=4, hk=2)
    _raises(ValueError, r"v has 1 heads but k has 2", q, k, v[:, :, :1])
    q3, k3, v3 = _inputs(h=4, hk=3)
    _raises(ValueError, r"q has 4 heads, which is not a multiple of the 3 heads", q3, k3, v3)
    assert no_tier == []


def test_head_dim_mismatch(no_tier):
    q, k, v = _inputs()
    _raises(ValueError, r"k has head dim 4 but q has 8", q, k[..., :4], v)


def test_device_mismatch(no_tier):
    q, k, v = _inputs()
    _raises(ValueError, r"k is on meta but q is on cpu", q, k.to("meta"), v)


def test_not_a_tensor(no_tier):
    q, k, v = _inputs()
    _raises(TypeError, r"v must be a torch.Tensor, got list", q, k, v.tolist())


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(dropout_p=1.5), ValueError, r"dropout_p must be in \[0, 1\]"),
    (dict(dropout_p=-0.1), ValueError, r"dropout_p must be in \[0, 1\]"),
    (dict(dropout_p="0.1"), TypeError, r"dropout_p must be a real number"),
    (dict(scale=float("nan")), ValueError, r"scale must be finite"),
    (dict(scale="x"), TypeError, r"scale must be a real number"),
    (dict(softmax_scale=float("inf")), ValueError, r"softmax_scale must be finite"),
    (dict(scale=0.5, softmax_scale=0.5), TypeError, r"scale .* or softmax_scale"),
    (dict(causal=True, is_causal=True), TypeError, r"causal .* or is_causal"),
    (dict(window_size=(4,)), TypeError, r"window_size must be a pair of ints"),
    (dict(window_size=(2.5, 0)), TypeError, r"window_size must be a pair of ints"),
    (dict(window_size=(-2, 0)), ValueError, r"window_size values must be >= 0, or -1"),
    (dict(softcap=-1.0), ValueError, r"softcap must be >= 0"),
    (dict(generator=1234), TypeError, r"generator must be a torch.Generator"),
])
def test_bad_options(no_tier, kwargs, exc, match):
    q, k, v = _inputs()
    _raises(exc, match, q, k, v, **kwargs)


def test_bad_layout_and_backend(no_tier):
    q, k, v = _inputs()
    with pytest.raises(ValueError, match="layout must be 'bshd' or 'bhsd'"):
        attention(q, k, v, layout="sbhd")
    with pytest.raises(ValueError, match="backend must be one of"):
        attention(q, k, v, backend="flash")


def test_sdpa_kernel_failure_still_falls_back(monkeypatch):
    """The eager fallback stays for kernel failures on valid arguments."""
    def broken(*args, **kwargs):
        raise RuntimeError("no kernel for this problem")

    monkeypatch.setattr(attn, "_sdpa", broken)
    q, k, v = _inputs()
    with pytest.warns(RuntimeWarning, match="SDPA failed on arguments that passed the checks"):
        out = attention(q, k, v, causal=True)
    assert out.shape == q.shape
