"""Platform helpers on this machine and on simulated ROCm / NVIDIA devices."""

from __future__ import annotations

import json
import sys
import types

import pytest
import torch

from rocmlint.runtime import device, device_info, gpu_arch, gpu_available, is_rocm

EXPECTED_KEYS = {
    "torch", "torch_version", "vendor", "stack", "stack_version", "gpu_available",
    "device_count", "device_name", "arch", "arch_full", "total_memory_bytes",
    "total_memory_gib", "aiter_available", "aiter_reason", "python",
}


def test_this_machine():
    assert is_rocm() is bool(torch.version.hip)
    assert gpu_available() is torch.cuda.is_available()
    info = device_info()
    assert EXPECTED_KEYS <= set(info)
    json.dumps(info)
    assert info["torch"] is True and info["torch_version"] == torch.__version__
    if not torch.cuda.is_available():
        assert gpu_arch() is None
        assert info["vendor"] is None and info["device_count"] == 0
        assert info["stack"] in ("cpu", "cuda")


def test_pynvml_is_never_imported():
    sys.modules.pop("pynvml", None)
    gpu_available()
    device_info()
    assert "pynvml" not in sys.modules


def _fake_gpu(monkeypatch, props):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)


def test_rocm_device(monkeypatch):
    props = types.SimpleNamespace(name="AMD Instinct MI300X", gcnArchName="gfx942:sramecc+:xnack-",
                                  total_memory=192 * 2**30, major=9, minor=4)
    _fake_gpu(monkeypatch, props)
    monkeypatch.setattr(torch.version, "hip", "6.4.43482", raising=False)
    monkeypatch.setattr(device, "_IS_ROCM", None)
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_missing_module")
    assert is_rocm() is True
    assert gpu_arch() == "gfx942"
    assert gpu_arch(0) == "gfx942" and gpu_arch("cuda:0") == "gfx942"
    info = device_info()
    assert info["vendor"] == "amd" and info["stack"] == "rocm"
    assert info["stack_version"] == "6.4.43482"
    assert info["arch"] == "gfx942" and info["arch_full"] == "gfx942:sramecc+:xnack-"
    assert info["device_count"] == 8 and info["total_memory_gib"] == 192.0
    assert info["aiter_available"] is False and "import" in info["aiter_reason"]
    json.dumps(info)


def test_nvidia_device(monkeypatch):
    props = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", total_memory=80 * 2**30,
                                  major=9, minor=0, gcnArchName="")
    _fake_gpu(monkeypatch, props)
    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    monkeypatch.setattr(torch.version, "cuda", "13.0", raising=False)
    monkeypatch.setattr(device, "_IS_ROCM", None)
    assert is_rocm() is False
    assert gpu_arch() == "sm_90"
    info = device_info()
    assert (info["vendor"], info["stack"], info["stack_version"]) == ("nvidia", "cuda", "13.0")
    assert info["arch"] == "sm_90" and info["device_name"] == "NVIDIA H100 80GB HBM3"
    assert info["aiter_available"] is False


def test_driver_error_does_not_break_device_info(monkeypatch):
    def broken(index):
        raise RuntimeError("driver gone")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", broken)
    info = device_info()
    assert info["gpu_available"] is True and "driver gone" in info["device_error"]
    assert gpu_arch() is None


@pytest.mark.parametrize("raises", [RuntimeError, OSError])
def test_gpu_available_swallows_errors(monkeypatch, raises):
    def boom():
        raise raises("no driver")

    monkeypatch.setattr(torch.cuda, "is_available", boom)
    assert gpu_available() is False
