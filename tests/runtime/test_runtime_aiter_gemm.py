"""aiter GEMM extras against fakes that follow aiter's published interfaces:
tuned-config CSVs added to aiter's search path without dropping its defaults,
and preshuffled weights above an M threshold.  Off ROCm both do nothing."""

from __future__ import annotations

import importlib
import os
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rocmlint.runtime import aiter_gemm, device, ops
from rocmlint.runtime.aiter_gemm import (PreshuffledLinear, add_tuned_gemm_configs,
                                         preshuffle_linears)

from .helpers import shuffle_weight, unshuffle_weight

HEADER = "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us\n"


def _csv(tmp_path, name, header=HEADER):
    path = tmp_path / name
    path.write_text(header + "gfx942,304,32,4096,4096,False,torch.bfloat16,torch.bfloat16,"
                    "False,False,hipblaslt,7,0,9.5\n", encoding="utf-8")
    return path


@pytest.fixture
def aiter_package(tmp_path, monkeypatch):
    """An importable 'aiter' package directory with a default bf16 table."""
    pkg = tmp_path / "site" / "rocmlint_test_aiter_pkg"
    (pkg / "configs").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    default = _csv(pkg / "configs", "bf16_tuned_gemm.csv")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_aiter_pkg")
    for var, _ in aiter_gemm.GEMM_CONFIG_VARS.values():
        monkeypatch.delenv(var, raising=False)
    return default


# --- tuned config CSVs ------------------------------------------------------------

def test_configs_off_rocm_change_nothing(tmp_path, aiter_package):
    env: dict[str, str] = {}
    assert add_tuned_gemm_configs(_csv(tmp_path, "mine.csv"), environ=env) is None
    assert env == {}


def test_configs_keep_aiter_defaults(tmp_path, aiter_package, fake_rocm):
    mine = _csv(tmp_path, "mine.csv")
    env: dict[str, str] = {}
    value = add_tuned_gemm_configs(mine, environ=env)
    assert value == f"{mine}:{aiter_package}" and env == {"AITER_CONFIG_GEMM_BF16": value}
    # Idempotent, and later files go in front of earlier ones.
    assert add_tuned_gemm_configs(mine, environ=env) == value
    other = _csv(tmp_path, "other.csv")
    assert add_tuned_gemm_configs(other, environ=env) == f"{other}:{mine}:{aiter_package}"


def test_configs_extend_a_value_already_set(tmp_path, aiter_package, fake_rocm):
    theirs = _csv(tmp_path, "theirs.csv")
    mine = _csv(tmp_path, "mine.csv")
    env = {"AITER_CONFIG_GEMM_A8W8": str(theirs)}
    assert add_tuned_gemm_configs(mine, kind="a8w8", environ=env) == f"{mine}:{theirs}"
    assert "AITER_CONFIG_GEMM_BF16" not in env


def test_configs_write_the_process_environment(tmp_path, aiter_package, fake_rocm, monkeypatch):
    mine = _csv(tmp_path, "mine.csv")
    add_tuned_gemm_configs(mine)
    assert os.environ["AITER_CONFIG_GEMM_BF16"] == f"{mine}:{aiter_package}"
    monkeypatch.setitem(sys.modules, "rocmlint_test_aiter_pkg",
                        importlib.import_module("rocmlint_test_aiter_pkg"))
    with pytest.warns(RuntimeWarning, match="already imported"):
        add_tuned_gemm_configs(_csv(tmp_path, "late.csv"))


def test_configs_without_aiter(tmp_path, fake_rocm, monkeypatch):
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_missing_module")
    env: dict[str, str] = {}
    with pytest.warns(RuntimeWarning, match="not installed"):
        assert add_tuned_gemm_configs(_csv(tmp_path, "mine.csv"), environ=env) is None
    assert env == {}


@pytest.mark.parametrize("rocm", [False, True])
def test_bad_config_files_fail_everywhere(tmp_path, aiter_package, monkeypatch, rocm):
    monkeypatch.setattr(device, "_IS_ROCM", rocm)
    env: dict[str, str] = {}
    with pytest.raises(FileNotFoundError):
        add_tuned_gemm_configs(tmp_path / "missing.csv", environ=env)
    with pytest.raises(ValueError, match="no M, N column"):
        add_tuned_gemm_configs(_csv(tmp_path, "bad.csv", header="K,libtype\n"), environ=env)
    with pytest.raises(ValueError, match="kind must be one of"):
        add_tuned_gemm_configs(_csv(tmp_path, "ok.csv"), kind="fp64", environ=env)
    with pytest.raises(ValueError, match="at least one"):
        add_tuned_gemm_configs(environ=env)
    assert env == {}


# --- preshuffled weights ----------------------------------------------------------

def test_fake_shuffle_is_a_permutation():
    w = torch.arange(64 * 96, dtype=torch.float32).view(64, 96).bfloat16()
    s = shuffle_weight(w)
    assert s.is_shuffled and not torch.equal(s, w)
    assert torch.equal(unshuffle_weight(s), w)


@pytest.fixture
def gemm_aiter(fake_aiter, monkeypatch):
    """The fake aiter plus its ``ops.shuffle`` module, CPU tensors allowed."""
    ops_pkg = types.ModuleType(device.AITER_MODULE + ".ops")
    shuffle_mod = types.ModuleType(device.AITER_MODULE + ".ops.shuffle")
    shuffle_mod.calls = []

    def shuffle(x, layout=(16, 16)):
        shuffle_mod.calls.append((tuple(x.shape), layout))
        return shuffle_weight(x, layout)

    shuffle_mod.shuffle_weight = shuffle
    monkeypatch.setitem(sys.modules, ops_pkg.__name__, ops_pkg)
    monkeypatch.setitem(sys.modules, shuffle_mod.__name__, shuffle_mod)
    monkeypatch.setattr(aiter_gemm, "AITER_DEVICE_TYPES", frozenset({"cpu"}))
    fake_aiter.shuffle = shuffle_mod
    return fake_aiter


def _model(dtype=torch.bfloat16):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 48), nn.Linear(48, 24), nn.Linear(64, 32).float(),
                         nn.Linear(96, 64, bias=False)).to(dtype)


def test_preshuffle_off_rocm_does_nothing():
    model = _model()
    assert preshuffle_linears(model) == 0
    assert all(type(m) is nn.Linear for m in model)


def test_preshuffle_replaces_eligible_layers(gemm_aiter):
    model = _model()
    model[2] = nn.Linear(64, 32)  # float32: not eligible
    keys = set(model.state_dict())
    assert preshuffle_linears(model, min_tokens=8) == 2
    # 64x48: N=48 is a multiple of 16, K=64 of 32; 48x24: N=24 is not.
    assert isinstance(model[0], PreshuffledLinear) and type(model[1]) is nn.Linear
    assert type(model[2]) is nn.Linear and isinstance(model[3], PreshuffledLinear)
    assert set(model.state_dict()) == keys           # the shuffled copy is not saved
    assert gemm_aiter.shuffle.calls == [((48, 64), (16, 16)), ((64, 96), (16, 16))]


def test_m_threshold(gemm_aiter):
    layer = nn.Linear(64, 48).bfloat16()
    holder = nn.Sequential(layer)
    preshuffle_linears(holder, min_tokens=8)
    fused = holder[0]
    calls = gemm_aiter.calls["gemm_a16w16"]
    with torch.no_grad():
        big = torch.randn(2, 8, 64).bfloat16()        # 16 rows: preshuffled weight
        out = fused(big)
        assert calls[-1]["b_shuffled"] is True and calls[-1]["a_shape"] == (2, 8, 64)
        torch.testing.assert_close(out.float(), F.linear(big.float(), layer.weight.float(),
                                                         layer.bias.float()),
                                   rtol=2e-2, atol=2e-2)
        small = torch.randn(1, 4, 64).bfloat16()      # 4 rows: plain weight
        n = len(calls)
        fused(small)
        assert all(not c["b_shuffled"] for c in calls[n:])
    assert gemm_aiter.violations == []


def test_moved_module_is_tagged_again(gemm_aiter):
    holder = nn.Sequential(nn.Linear(64, 48).bfloat16())
    preshuffle_linears(holder, min_tokens=1)
    holder[0].weight_shuffled = holder[0].weight_shuffled.clone()   # as .to() would
    assert not getattr(holder[0].weight_shuffled, "is_shuffled", False)
    with torch.no_grad():
        holder[0](torch.randn(4, 64).bfloat16())
    assert gemm_aiter.calls["gemm_a16w16"][-1]["b_shuffled"] is True


# The plain path goes through linear(), which tries the same failing fake
# GEMM once more and warns for itself.
@pytest.mark.filterwarnings("ignore:rocmlint.runtime.linear")
def test_failure_falls_back_to_the_plain_weight(gemm_aiter):
    holder = nn.Sequential(nn.Linear(64, 48).bfloat16())
    preshuffle_linears(holder, min_tokens=1)
    gemm_aiter.fail.add("gemm_a16w16")
    x = torch.randn(4, 64).bfloat16()
    with torch.no_grad(), pytest.warns(RuntimeWarning, match="preshuffled weight failed"):
        out = holder[0](x)
    assert holder[0].failed
    assert torch.equal(out, F.linear(x, holder[0].weight, holder[0].bias))


def test_gradients_use_the_plain_weight(gemm_aiter):
    holder = nn.Sequential(nn.Linear(64, 48).bfloat16())
    preshuffle_linears(holder, min_tokens=1)
    x = torch.randn(4, 64).bfloat16().requires_grad_()
    holder[0](x).float().sum().backward()
    assert not any(c["b_shuffled"] for c in gemm_aiter.calls["gemm_a16w16"])
    assert x.grad is not None and holder[0].weight.grad is not None


@pytest.mark.parametrize("value", [-2, 1.5, True, "8"])
def test_bad_threshold(value):
    with pytest.raises(ValueError, match="min_tokens"):
        preshuffle_linears(nn.Linear(4, 4), min_tokens=value)


@pytest.mark.parametrize("text", ["x", "1e3", "-5"])
def test_bad_threshold_variable(monkeypatch, text):
    monkeypatch.setenv("PRESHUFFLE_M_THRESH", text)
    with pytest.raises(ValueError, match="PRESHUFFLE_M_THRESH"):
        preshuffle_linears(nn.Linear(4, 4))


def _threshold_of(monkeypatch, text, **kwargs):
    if text is not None:
        monkeypatch.setenv("PRESHUFFLE_M_THRESH", text)
    holder = nn.Sequential(nn.Linear(64, 48).bfloat16())
    count = preshuffle_linears(holder, **kwargs)
    return count, holder[0]


def test_threshold_default_is_128(gemm_aiter, monkeypatch):
    assert aiter_gemm.DEFAULT_MIN_TOKENS == 128
    count, layer = _threshold_of(monkeypatch, None)
    assert count == 1 and layer.min_tokens == 128
    with torch.no_grad():
        layer(torch.randn(127, 64).bfloat16())
        assert gemm_aiter.calls["gemm_a16w16"] == []       # plain weight, F.linear
        layer(torch.randn(128, 64).bfloat16())
    assert [c["b_shuffled"] for c in gemm_aiter.calls["gemm_a16w16"]] == [True]


def test_threshold_variable_and_its_meanings(gemm_aiter, monkeypatch):
    count, layer = _threshold_of(monkeypatch, "16")
    assert count == 1 and layer.min_tokens == 16
    # 0: every GEMM, even one row, uses the preshuffled weight.
    count, layer = _threshold_of(monkeypatch, "0")
    with torch.no_grad():
        layer(torch.randn(1, 64).bfloat16())
    assert gemm_aiter.calls["gemm_a16w16"][-1]["b_shuffled"] is True
    # -1: no preshuffling, the model is not touched.
    count, layer = _threshold_of(monkeypatch, "-1")
    assert count == 0 and type(layer) is nn.Linear
    # An explicit argument wins over the environment.
    count, layer = _threshold_of(monkeypatch, "-1", min_tokens=64)
    assert count == 1 and layer.min_tokens == 64


def test_ops_device_types_are_separate():
    # preshuffling is gated by its own device list, linear by ops'.
    assert aiter_gemm.AITER_DEVICE_TYPES == ops.AITER_DEVICE_TYPES == frozenset({"cuda"})
