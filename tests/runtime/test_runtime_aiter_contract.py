"""Tier 1 against the aiter operator contract, with fake operators.

There is no AMD GPU here: these tests check what rocmlint.runtime sends to
``torch.ops.aiter.*`` (argument order, layout, dtypes, GQA pass-through) for
both generations of the ``mha_fwd`` schema (with and without ``sink_size``),
how it detects aiter, and that it falls back when the operator raises.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
import types

import pytest
import torch
import torch.nn.functional as F

from rocmlint.runtime import aiter_available, attention, attn, device, gelu_tanh_and_mul, linear
from rocmlint.runtime import silu_and_mul

from .helpers import (REPO_ROOT, get_fake, make_public_aiter, reference_attention,
                      reset_runtime, subprocess_env)


def _qkv(b=2, sq=6, sk=6, h=8, hk=2, d=16, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, sq, h, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype),
            torch.randn(b, sk, hk, d, generator=g).to(dtype))


# --- detection ---------------------------------------------------------------

def test_not_rocm_means_no_import(monkeypatch):
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_module_that_does_not_exist")
    available, reason = device.aiter_status()
    assert available is False
    assert "not a ROCm build" in reason  # the import was never attempted


def test_runtime_error_at_import_is_caught(monkeypatch, tmp_path, fake_rocm):
    pkg = tmp_path / "rocmlint_test_amd_aiter"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        'raise RuntimeError("ROCm version file not found")\n', encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_amd_aiter")
    assert aiter_available() is False
    reason = device.aiter_status()[1]
    assert "RuntimeError" in reason and "ROCm version file not found" in reason


def test_imposter_module_is_not_aiter(monkeypatch, fake_rocm):
    """The unrelated PyPI package 'aiter' imports fine but registers no ops."""
    monkeypatch.setitem(sys.modules, "rocmlint_test_imposter", types.ModuleType("x"))
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_imposter")
    monkeypatch.setattr(device, "AITER_OPS_NAMESPACE", "rocmlint_test_no_such_namespace")
    assert aiter_available() is False
    assert "neither" in device.aiter_status()[1]


def test_status_is_computed_once(monkeypatch, fake_rocm):
    imports = []
    real = __import__("importlib").import_module

    def counting(name, *args):
        imports.append(name)
        return real(name, *args)

    monkeypatch.setattr("importlib.import_module", counting)
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_missing_module")
    for _ in range(3):
        assert aiter_available() is False
    assert imports.count("rocmlint_test_missing_module") == 1


# --- attention routing -------------------------------------------------------

def test_routes_to_mha_fwd_with_contract_arguments(fake_aiter):
    q, k, v = _qkv()
    out = attention(q, k, v, causal=True)
    assert fake_aiter.violations == []
    (call,) = fake_aiter.calls["mha_fwd"]
    assert call["q_shape"] == (2, 6, 8, 16)          # [b, sq, hq, d]
    assert call["k_shape"] == (2, 6, 2, 16)          # K heads as they are
    assert call["is_causal"] is True
    assert call["softmax_scale"] == pytest.approx(16 ** -0.5)
    assert call["window"] == (-1, -1)
    assert call["sink_size"] == (0 if fake_aiter.has_sink else None)
    assert call["dtype"] == torch.bfloat16
    torch.testing.assert_close(out.float(), reference_attention(q, k, v, causal=True).float(),
                               rtol=2e-2, atol=2e-2)


def test_gqa_kv_passed_without_copy(fake_aiter):
    q, k, v = _qkv(h=8, hk=1)
    attention(q, k, v)
    (call,) = fake_aiter.calls["mha_fwd"]
    assert call["k_ptr"] == k.data_ptr() and call["v_ptr"] == v.data_ptr()
    assert call["k_shape"][2] == 1


def test_bhsd_layout_goes_as_bshd_views(fake_aiter):
    q, k, v = _qkv()
    qb, kb, vb = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    out = attention(qb, kb, vb, layout="bhsd", scale=0.25)
    assert fake_aiter.violations == []
    (call,) = fake_aiter.calls["mha_fwd"]
    assert call["q_shape"] == (2, 6, 8, 16)
    assert call["k_ptr"] == kb.data_ptr()            # a view, not a copy
    assert call["softmax_scale"] == 0.25
    assert out.shape == qb.shape
    torch.testing.assert_close(out.transpose(1, 2).float(),
                               reference_attention(q, k, v, scale=0.25).float(),
                               rtol=2e-2, atol=2e-2)


def test_decode_and_chunked_prefill_causal_flags(fake_aiter):
    q, k, v = _qkv(sq=1, sk=9)
    attention(q, k, v, causal=True)
    q2, k2, v2 = _qkv(sq=4, sk=9)
    out = attention(q2, k2, v2, causal=True)
    flags = [c["is_causal"] for c in fake_aiter.calls["mha_fwd"]]
    assert flags == [False, True]  # one query row sees every key; aiter aligns bottom-right
    torch.testing.assert_close(out.float(), attention(q2, k2, v2, causal=True, backend="sdpa")
                               .float(), rtol=2e-2, atol=2e-2)


def test_overhang_rows_are_zero_with_tier1(fake_aiter):
    q, k, v = _qkv(sq=7, sk=3)
    out = attention(q, k, v, causal=True)
    assert torch.equal(out[:, :4], torch.zeros_like(out[:, :4]))
    assert fake_aiter.calls["mha_fwd"][0]["q_shape"][1] == 3


@pytest.mark.parametrize("case", ["float32", "mask", "grad", "head_dim", "switch_off",
                                  "force_eager"])
def test_inputs_tier1_does_not_take(fake_aiter, monkeypatch, case):
    q, k, v = _qkv(dtype=torch.float32 if case == "float32" else torch.bfloat16,
                   d=12 if case == "head_dim" else 16)
    kwargs = {}
    if case == "mask":
        kwargs["attn_mask"] = torch.ones(6, 6, dtype=torch.bool)
    if case == "grad":
        q.requires_grad_()
    if case == "switch_off":
        monkeypatch.setenv("USE_AITER_ATTENTION", "0")
    if case == "force_eager":
        monkeypatch.setenv("FORCE_EAGER_ATTENTION", "1")
    out = attention(q, k, v, **kwargs)
    assert fake_aiter.calls["mha_fwd"] == []
    assert out.shape == q.shape


def test_operator_error_falls_back_once(fake_aiter):
    fake_aiter.fail.add("mha_fwd")
    q, k, v = _qkv()
    with pytest.warns(RuntimeWarning, match="aiter mha_fwd failed"):
        out = attention(q, k, v, causal=True)
    assert torch.equal(out, attention(q, k, v, causal=True, backend="sdpa"))
    attention(q, k, v, causal=True)  # remembered: no second try, no second warning
    assert len(fake_aiter.calls["mha_fwd"]) == 1
    with pytest.raises(RuntimeError, match="no kernel"):
        attention(q, k, v, causal=True, backend="aiter")


def test_forced_aiter_rejects_what_it_cannot_run(fake_aiter):
    q, k, v = _qkv(dtype=torch.float32)
    with pytest.raises(ValueError, match="dtype"):
        attention(q, k, v, backend="aiter")
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="attn_mask"):
        attention(q, k, v, backend="aiter", attn_mask=torch.ones(6, 6, dtype=torch.bool))
    attention(q, k, v, backend="aiter")
    assert len(fake_aiter.calls["mha_fwd"]) == 1


def test_use_aiter_switch_warns_when_unavailable(monkeypatch, fake_rocm):
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_missing_module")
    monkeypatch.setenv("USE_AITER_ATTENTION", "1")
    q, k, v = _qkv()
    with pytest.warns(RuntimeWarning, match="USE_AITER_ATTENTION=1"):
        out = attention(q, k, v)
    assert torch.equal(out, attention(q, k, v, backend="sdpa"))


def test_unknown_required_argument_disables_tier1(monkeypatch, fake_rocm):
    namespace = "rocmlint_test_aiter_future"
    lib = torch.library.Library(namespace, "DEF")
    lib.define("mha_fwd(Tensor q, Tensor k, Tensor v, float softmax_scale, bool is_causal, "
               "int page_size) -> Tensor[]")
    lib.impl("mha_fwd", lambda *a: [a[0]], "CPU")
    monkeypatch.setitem(sys.modules, namespace, types.ModuleType(namespace))
    monkeypatch.setattr(device, "AITER_MODULE", namespace)
    monkeypatch.setattr(device, "AITER_OPS_NAMESPACE", namespace)
    monkeypatch.setattr(attn, "AITER_DEVICE_TYPES", frozenset({"cpu"}))
    reset_runtime()
    device._IS_ROCM = True
    q, k, v = _qkv()
    assert torch.equal(attention(q, k, v), attention(q, k, v, backend="sdpa"))
    with pytest.raises(RuntimeError, match="page_size"):
        attention(q, k, v, backend="aiter")
    del lib


# --- GEMM and activations ----------------------------------------------------

@pytest.fixture
def kernels_on(monkeypatch):
    """The aiter GEMM and activation kernels asked for (both are opt-in)."""
    monkeypatch.setenv("USE_AITER_GEMM", "1")
    monkeypatch.setenv("USE_OPTIMIZED_OPS", "1")


def test_linear_routes_to_tuned_gemm(fake_aiter, kernels_on):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 32, generator=g).bfloat16()
    w = torch.randn(48, 32, generator=g).bfloat16()
    b = torch.randn(48, generator=g).bfloat16()
    y = linear(x, w, b)
    (call,) = fake_aiter.calls["gemm_a16w16"]
    assert call == {"a_shape": (3, 5, 32), "b_shape": (48, 32), "bias": True,
                    "dtype": torch.bfloat16, "b_shuffled": False}
    assert fake_aiter.violations == []
    torch.testing.assert_close(y.float(), F.linear(x.float(), w.float(), b.float()),
                               rtol=2e-2, atol=2e-2)
    linear(x.float(), w.float())                      # fp32: PyTorch
    with pytest.raises(RuntimeError):                 # mixed dtypes: PyTorch's error
        linear(x, w.float())
    assert len(fake_aiter.calls["gemm_a16w16"]) == 1


def test_linear_falls_back_when_gemm_raises(fake_aiter, kernels_on):
    fake_aiter.fail.add("gemm_a16w16")
    x = torch.randn(4, 32).bfloat16()
    w = torch.randn(16, 32).bfloat16()
    with pytest.warns(RuntimeWarning, match="gemm_a16w16 failed"):
        y = linear(x, w)
    assert torch.equal(y, F.linear(x, w))


def _gemm_and_activation_calls(fake_aiter):
    fake_aiter.reset()
    linear(torch.randn(4, 32).bfloat16(), torch.randn(16, 32).bfloat16())
    silu_and_mul(torch.randn(4, 32).bfloat16())
    return len(fake_aiter.calls["gemm_a16w16"]), len(fake_aiter.calls["silu_and_mul"])


def test_aiter_gemm_and_activations_are_opt_in(fake_aiter, monkeypatch):
    # The porting guide's switches: USE_AITER_GEMM (default off) and
    # USE_OPTIMIZED_OPS (opt-in), so that the AMD kernels can be compared with
    # the PyTorch path.
    assert _gemm_and_activation_calls(fake_aiter) == (0, 0)
    monkeypatch.setenv("USE_AITER_GEMM", "1")
    assert _gemm_and_activation_calls(fake_aiter) == (1, 0)
    monkeypatch.setenv("USE_OPTIMIZED_OPS", "true")
    assert _gemm_and_activation_calls(fake_aiter) == (1, 1)
    monkeypatch.setenv("USE_AITER_GEMM", "0")
    monkeypatch.setenv("USE_OPTIMIZED_OPS", "off")
    assert _gemm_and_activation_calls(fake_aiter) == (0, 0)


def test_use_aiter_ops_is_an_alias_for_both(fake_aiter, monkeypatch):
    monkeypatch.setenv("USE_AITER_OPS", "1")
    assert _gemm_and_activation_calls(fake_aiter) == (1, 1)
    # The documented name wins where both are set.
    monkeypatch.setenv("USE_AITER_GEMM", "0")
    assert _gemm_and_activation_calls(fake_aiter) == (0, 1)
    monkeypatch.setenv("USE_AITER_OPS", "0")
    monkeypatch.setenv("USE_OPTIMIZED_OPS", "1")
    assert _gemm_and_activation_calls(fake_aiter) == (0, 1)


@pytest.mark.parametrize("name,fn,act", [
    ("silu_and_mul", silu_and_mul, F.silu),
    ("gelu_tanh_and_mul", gelu_tanh_and_mul, lambda t: F.gelu(t, approximate="tanh")),
])
def test_gated_activations_route_and_fall_back(fake_aiter, kernels_on, name, fn, act):
    x = torch.randn(3, 4, 16).bfloat16()
    y = fn(x)
    (call,) = fake_aiter.calls[name]
    assert call == {"x_shape": (3, 4, 16), "out_shape": (3, 4, 8)}
    assert fake_aiter.violations == []
    xf = x.float()
    torch.testing.assert_close(y.float(), act(xf[..., :8]) * xf[..., 8:], rtol=2e-2, atol=2e-2)
    fn(x[..., :8], x[..., 8:])                        # two-tensor form: PyTorch
    assert len(fake_aiter.calls[name]) == 1
    fake_aiter.fail.add(name)
    with pytest.warns(RuntimeWarning, match="failed"):
        y2 = fn(x)
    assert torch.equal(y2, act(x[..., :8]) * x[..., 8:])


# --- the real names, end to end ---------------------------------------------

def test_real_aiter_namespace_end_to_end(tmp_path):
    """A fake 'aiter' package that registers torch.ops.aiter.mha_fwd the way
    AMD's does, in a fresh interpreter pretending to be ROCm."""
    pkg = tmp_path / "aiter"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        import torch, torch.nn.functional as F
        CALLS = []
        _lib = torch.library.Library("aiter", "DEF")
        _lib.define(
            "mha_fwd(Tensor q, Tensor k, Tensor v, float dropout_p, float softmax_scale, "
            "bool is_causal, int window_size_left, int window_size_right, int sink_size, "
            "bool return_softmax_lse, bool return_dropout_randval, Tensor? cu_seqlens_q=None, "
            "Tensor? cu_seqlens_kv=None, Tensor? out=None, Tensor? bias=None, "
            "Tensor? alibi_slopes=None, Tensor? q_descale=None, Tensor? k_descale=None, "
            "Tensor? v_descale=None, Tensor? sink_ptr=None, Generator? gen=None) -> Tensor[]")
        def _mha(q, k, v, p, scale, causal, wl, wr, sink, lse, rnd, *opt):
            CALLS.append((tuple(q.shape), tuple(k.shape), causal, sink))
            o = F.scaled_dot_product_attention(q.transpose(1, 2).float(), k.transpose(1, 2).float(),
                v.transpose(1, 2).float(), is_causal=causal, scale=scale, enable_gqa=True)
            e = q.new_empty((0,))
            return [o.transpose(1, 2).to(q.dtype).contiguous(), e, e, e]
        _lib.impl("mha_fwd", _mha, "CPU")
    '''), encoding="utf-8")
    script = textwrap.dedent('''
        import sys, torch
        torch.version.hip = "6.4.0-fake"
        from rocmlint.runtime import attention, aiter_available, attn
        attn.AITER_DEVICE_TYPES = frozenset({"cpu"})
        assert aiter_available()
        import aiter
        q = torch.randn(1, 5, 8, 16).bfloat16(); k = torch.randn(1, 5, 2, 16).bfloat16()
        out = attention(q, k, k.clone(), causal=True)
        assert aiter.CALLS == [((1, 5, 8, 16), (1, 5, 2, 16), True, 0)], aiter.CALLS
        assert out.shape == (1, 5, 8, 16)
        print("ok")
    ''')
    env = subprocess_env()
    env["PYTHONPATH"] = str(tmp_path) + ":" + env["PYTHONPATH"]
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_fake_library_is_reusable():
    """Guard for the fixtures: each schema generation registers once per process."""
    assert get_fake("sink") is get_fake("sink")
    assert get_fake("sink").has_sink and not get_fake("nosink").has_sink


# --- windows through the operator -----------------------------------------------

@pytest.mark.parametrize("window,causal", [((3, 0), True), ((2, 1), False), ((4, -1), True)])
def test_window_goes_to_mha_fwd(fake_aiter, window, causal):
    q, k, v = _qkv(sq=7, sk=7)
    out = attention(q, k, v, causal=causal, window_size=window)
    assert fake_aiter.violations == []
    (call,) = fake_aiter.calls["mha_fwd"]
    assert call["window"] == window and call["is_causal"] is causal
    assert call["sink_size"] == (0 if fake_aiter.has_sink else None)
    ref = reference_attention(q, k, v, causal=causal, window=window)
    torch.testing.assert_close(out.float(), ref.float(), rtol=2e-2, atol=2e-2)


def test_what_tier1_leaves_to_sdpa(fake_aiter):
    q, k, v = _qkv(sq=3, sk=7)
    attention(q, k, v, is_causal=True)              # top-left: aiter aligns bottom-right
    attention(q, k, v, dropout_p=0.1)               # inference only
    attention(q * 5, k, v, softcap=2.0)             # no soft-capping in these kernels
    assert fake_aiter.calls["mha_fwd"] == []
    q2, k2, v2 = _qkv(sq=6, sk=6)
    attention(q2, k2, v2, is_causal=True)           # square: the same mask
    assert len(fake_aiter.calls["mha_fwd"]) == 1


# --- aiter's public flash_attn_func, both generations ------------------------------

@pytest.fixture(params=["window2", "window3"])
def public_aiter(request, monkeypatch, fake_rocm):
    """ROCm plus a fake aiter whose only attention entry point is the public
    ``flash_attn_func`` of one generation (no ``torch.ops`` operator)."""
    module = make_public_aiter(request.param)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(device, "AITER_MODULE", module.__name__)
    monkeypatch.setattr(device, "AITER_OPS_NAMESPACE", "rocmlint_test_no_such_namespace")
    monkeypatch.setattr(attn, "AITER_DEVICE_TYPES", frozenset({"cpu"}))
    reset_runtime()
    device._IS_ROCM = True
    return module


@pytest.mark.parametrize("window,causal", [(None, True), ((3, 0), True), (None, False)])
def test_public_flash_attn_func_by_keyword(public_aiter, window, causal):
    q, k, v = _qkv(h=8, hk=2)
    assert aiter_available()
    out = attention(q, k, v, causal=causal, window_size=window, softmax_scale=0.2)
    (call,) = public_aiter.CALLS
    width = 2 if public_aiter.__name__.endswith("window2") else 3
    expected_window = (window or (-1, -1)) + ((0,) if width == 3 else ())
    assert call["window_size"] == expected_window
    assert call["causal"] is causal and call["softmax_scale"] == 0.2
    assert call["dropout_p"] == 0.0
    assert call["k_shape"] == (2, 6, 2, 16) and call["k_ptr"] == k.data_ptr()  # GQA as is
    ref = reference_attention(q, k, v, causal=causal, window=window, scale=0.2)
    torch.testing.assert_close(out.float(), ref.float(), rtol=2e-2, atol=2e-2)


def test_public_api_preferred_over_the_operator(monkeypatch, fake_aiter):
    module = make_public_aiter("window3")
    monkeypatch.setitem(sys.modules, device.AITER_MODULE, module)
    reset_runtime()
    device._IS_ROCM = True
    q, k, v = _qkv()
    attention(q, k, v, causal=True)
    assert len(module.CALLS) == 1 and fake_aiter.calls["mha_fwd"] == []


def test_public_api_with_an_unknown_required_argument_is_not_used(monkeypatch, fake_aiter):
    module = types.ModuleType("rocmlint_test_public_future")

    def flash_attn_func(q, k, v, page_table, dropout_p=0.0, softmax_scale=None, causal=False,
                        window_size=(-1, -1, 0)):
        raise AssertionError("must not be called")

    module.flash_attn_func = flash_attn_func
    monkeypatch.setitem(sys.modules, device.AITER_MODULE, module)
    reset_runtime()
    device._IS_ROCM = True
    q, k, v = _qkv()
    attention(q, k, v, causal=True)
    assert len(fake_aiter.calls["mha_fwd"]) == 1    # the operator, by its schema


# --- imports that must not take the caller down -------------------------------------

def _fake_package(tmp_path, name, body):
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return name


@pytest.mark.parametrize("statement,kind", [
    ("raise SystemExit(3)", "SystemExit"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("import sys; sys.exit('aiter: no GPU found')", "SystemExit"),
])
def test_import_raising_base_exceptions_is_contained(monkeypatch, tmp_path, fake_rocm,
                                                     statement, kind):
    name = _fake_package(tmp_path, f"rocmlint_test_aiter_{kind.lower()}_{abs(hash(statement))}",
                         statement + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(device, "AITER_MODULE", name)
    q, k, v = _qkv()
    out = attention(q, k, v, causal=True)           # must return, not exit
    assert torch.equal(out, attention(q, k, v, causal=True, backend="sdpa"))
    available, reason = device.aiter_status()
    assert available is False and kind in reason


def test_import_that_hangs_is_given_up(monkeypatch, tmp_path, fake_rocm):
    gate = types.ModuleType("rocmlint_test_hang_gate")
    gate.release = threading.Event()
    monkeypatch.setitem(sys.modules, gate.__name__, gate)
    name = _fake_package(tmp_path, "rocmlint_test_aiter_hangs", """
        import rocmlint_test_hang_gate
        rocmlint_test_hang_gate.release.wait(60)
        raise RuntimeError("released")
    """)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(device, "AITER_MODULE", name)
    monkeypatch.setenv("ROCMLINT_AITER_IMPORT_TIMEOUT", "0.5")
    q, k, v = _qkv()
    start = time.monotonic()
    try:
        out = attention(q, k, v, causal=True)
        elapsed = time.monotonic() - start
        available, reason = device.aiter_status()
    finally:
        gate.release.set()
    assert 0.4 < elapsed < 10
    assert available is False and "did not finish within 0.5 s" in reason
    assert torch.equal(out, attention(q, k, v, causal=True, backend="sdpa"))


def test_import_timeout_setting(monkeypatch):
    monkeypatch.setenv("ROCMLINT_AITER_IMPORT_TIMEOUT", "2.5")
    assert device.aiter_import_timeout() == 2.5
    for bad in ("0", "-1", "nan", "soon"):
        monkeypatch.setenv("ROCMLINT_AITER_IMPORT_TIMEOUT", bad)
        assert device.aiter_import_timeout() == device.AITER_IMPORT_TIMEOUT_S
