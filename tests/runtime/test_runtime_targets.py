"""rocmlint.targets: the AMD target table shared by the runtime and the linter."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rocmlint import targets
from rocmlint.runtime import device, device_info

from .helpers import REPO_ROOT, subprocess_env


def test_import_is_pure_data():
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys, rocmlint.targets as t; "
         "assert 'torch' not in sys.modules and 'rocmlint.runtime' not in sys.modules; "
         "print(len(t.known_targets()))"],
        env=subprocess_env(), cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) >= 10


@pytest.mark.parametrize("name,family,wave,fp8,lds,matrix", [
    ("gfx950", "CDNA4", 64, targets.FP8_OCP, 160, "MFMA"),
    ("gfx942", "CDNA3", 64, targets.FP8_FNUZ, 64, "MFMA"),
    ("gfx90a", "CDNA2", 64, None, 64, "MFMA"),
    ("gfx908", "CDNA", 64, None, 64, "MFMA"),
    ("gfx906", "GCN5.1", 64, None, 64, None),
    ("gfx1201", "RDNA4", 32, targets.FP8_OCP, 64, "WMMA"),
    ("gfx1200", "RDNA4", 32, targets.FP8_OCP, 64, "WMMA"),
    ("gfx1100", "RDNA3", 32, None, 64, "WMMA"),
    ("gfx1030", "RDNA2", 32, None, 64, None),
])
def test_entries(name, family, wave, fp8, lds, matrix):
    entry = targets.target(name)
    assert (entry.family, entry.wave_size, entry.fp8, entry.lds_kib, entry.matrix_cores) == \
        (family, wave, fp8, lds, matrix)


def test_table_invariants():
    names = targets.known_targets()
    assert list(names) == sorted(names) and len(set(names)) == len(names)
    for name in names:
        entry = targets.target(name)
        assert entry.name == name and entry.products
        # wave64 on GCN/CDNA, wave32 by default on RDNA (LLVM AMDGPUUsage).
        assert entry.wave_size == (32 if entry.family.startswith("RDNA") else 64)
        assert entry.fp8 in (None, targets.FP8_FNUZ, targets.FP8_OCP)
        assert entry.matrix_cores in (None, "MFMA", "WMMA")
        if entry.matrix_cores == "MFMA":
            assert entry.family.startswith("CDNA")
        if entry.first_rocm is not None:
            assert all(part.isdigit() for part in entry.first_rocm.split("."))


def test_lookup_forms():
    assert targets.target("gfx942:sramecc+:xnack-").name == "gfx942"
    assert targets.target(" GFX90A ").name == "gfx90a"
    assert targets.target("gfx1036") is None
    assert targets.target("sm_90") is None
    assert targets.target(None) is None
    assert targets.targets_in_family("cdna3") == ("gfx942",)
    assert set(targets.targets_in_family("RDNA3")) == {"gfx1100", "gfx1101", "gfx1102"}
    data = targets.target("gfx950").as_dict()
    assert data["products"] == ["Instinct MI350X", "Instinct MI355X"] and data["lds_kib"] == 160


def test_supported_in():
    assert targets.supported_in("gfx1201", "6.4.1") is True
    assert targets.supported_in("gfx1201", "6.4") is False
    assert targets.supported_in("gfx1201", "7.0") is True
    assert targets.supported_in("gfx950", "6.4.3") is False
    assert targets.supported_in("gfx950", "7.0.0") is True
    assert targets.supported_in("gfx942", "6.0") is None      # first release not sourced
    assert targets.supported_in("gfx9999", "6.0") is None
    with pytest.raises(ValueError):
        targets.supported_in("gfx950", "latest")


def test_device_info_reports_the_target(monkeypatch):
    import types

    import torch

    props = types.SimpleNamespace(name="AMD Instinct MI300X", gcnArchName="gfx942:sramecc+:xnack-",
                                  total_memory=192 * 2**30, major=9, minor=4,
                                  multi_processor_count=304)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    monkeypatch.setattr(torch.version, "hip", "6.4.0", raising=False)
    monkeypatch.setattr(device, "_IS_ROCM", None)
    monkeypatch.setattr(device, "AITER_MODULE", "rocmlint_test_missing_module")
    info = device_info()
    assert info["target"] == targets.target("gfx942").as_dict()
    assert info["target"]["family"] == "CDNA3" and info["target"]["fp8"] == "fnuz"
    assert info["compute_units"] == 304 and info["product"] == "Instinct MI300X"
    assert info["product_compute_units"] == 304
    assert info["target"]["default_precision"] == "bf16"
    props.gcnArchName = "gfx1036"  # not in the table
    assert device_info()["target"] is None


def test_no_target_off_amd():
    assert device_info()["target"] is None or device_info()["vendor"] == "amd"


@pytest.mark.parametrize("name,precision", [
    ("gfx950", "bf16"), ("gfx942", "bf16"), ("gfx90a", "bf16"), ("gfx908", "fp16"),
    ("gfx906", "fp16"), ("gfx1201", "bf16"), ("gfx1100", "bf16"), ("gfx1030", "fp16"),
])
def test_default_precision_per_family(name, precision):
    assert targets.target(name).default_precision == precision


def test_compute_units_per_product():
    for name in targets.known_targets():
        entry = targets.target(name)
        assert len(entry.compute_units) == len(entry.products)
        assert all(cu is None or 8 <= cu <= 320 for cu in entry.compute_units)
    mi300 = targets.target("gfx942")
    assert mi300.compute_units_of("AMD Instinct MI300X") == 304
    assert mi300.compute_units_of("AMD Instinct MI300A") == 228
    assert mi300.compute_units_of("AMD Instinct MI308X") is None
    rdna3 = targets.target("gfx1100")
    # The longest product name wins: "RX 7900 XT" is part of "RX 7900 XTX".
    assert rdna3.product_for("AMD Radeon RX 7900 XTX") == "Radeon RX 7900 XTX"
    assert rdna3.compute_units_of("AMD Radeon RX 7900 XT") == 84
    assert targets.target("gfx1101").compute_units_of("Radeon RX 7700") is None
    data = targets.target("gfx90a").as_dict()
    assert data["compute_units"] == {"Instinct MI210": 104, "Instinct MI250": 208,
                                     "Instinct MI250X": 220}
