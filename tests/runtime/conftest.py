"""Fixtures for the runtime tests (helpers and the fake aiter live in helpers.py)."""

from __future__ import annotations

import sys
import types

import pytest

from .helpers import SWITCHES, get_fake, reset_runtime
from rocmlint.runtime import attn, device, ops


@pytest.fixture(autouse=True)
def clean_runtime(monkeypatch):
    """Each test starts from an undecided platform, no cached aiter state and
    no runtime switches in the environment."""
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(device, "AITER_OPS_NAMESPACE", "aiter")
    monkeypatch.setattr(device, "AITER_MODULE", "aiter")
    reset_runtime()
    yield
    reset_runtime()


@pytest.fixture
def fake_rocm(monkeypatch):
    """Pretend the installed PyTorch is a ROCm build."""
    monkeypatch.setattr(device, "_IS_ROCM", True)


@pytest.fixture(params=["sink", "nosink"])
def fake_aiter(request, monkeypatch, fake_rocm):
    """ROCm plus a working fake aiter (both schema generations), accepting CPU
    tensors."""
    fake = get_fake(request.param)
    module_name = f"{fake.namespace}_module"
    monkeypatch.setitem(sys.modules, module_name, types.ModuleType(module_name))
    monkeypatch.setattr(device, "AITER_MODULE", module_name)
    monkeypatch.setattr(device, "AITER_OPS_NAMESPACE", fake.namespace)
    monkeypatch.setattr(attn, "AITER_DEVICE_TYPES", frozenset({"cuda", "cpu"}))
    monkeypatch.setattr(ops, "AITER_DEVICE_TYPES", frozenset({"cuda", "cpu"}))
    reset_runtime()
    device._IS_ROCM = True
    yield fake
    fake.reset()
