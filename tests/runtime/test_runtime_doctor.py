"""The runtime doctor: report and hazards, on this machine and simulated ones."""

from __future__ import annotations

import json

import pytest

from rocmlint.runtime import doctor


def _info(**over):
    info = {
        "torch": True, "torch_version": "2.9.0", "vendor": None, "stack": "cpu",
        "stack_version": None, "gpu_available": False, "device_count": 0,
        "device_name": None, "arch": None, "arch_full": None, "total_memory_bytes": None,
        "total_memory_gib": None, "aiter_available": False,
        "aiter_reason": "not a ROCm build of PyTorch (aiter needs ROCm)", "python": "3.11.0",
    }
    info.update(over)
    return info


ROCM = dict(vendor="amd", stack="rocm", stack_version="6.4.0", gpu_available=True,
            device_count=1, device_name="AMD Instinct MI300X", arch="gfx942",
            arch_full="gfx942:sramecc+:xnack-", total_memory_gib=192.0)


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """A controllable machine: device_info, AMD GPUs under a fake /sys, and
    which modules are installed."""
    state = {"info": _info(), "specs": set(), "dists": {}}
    monkeypatch.setattr(doctor, "SYS_ROOT", str(tmp_path))
    monkeypatch.setattr(doctor._device, "device_info", lambda: state["info"])
    monkeypatch.setattr(doctor, "_spec_exists", lambda name: name in state["specs"])
    monkeypatch.setattr(doctor, "_distributions_of", lambda name: state["dists"].get(name, []))
    for name in doctor._ALLOC_VARS + ("HSA_XNACK",):
        monkeypatch.delenv(name, raising=False)

    def add_amd_gpu(version=90402):
        nodes = tmp_path / "sys/class/kfd/kfd/topology/nodes"
        node = nodes / str(len(list(nodes.glob("*"))) if nodes.exists() else 0)
        node.mkdir(parents=True)
        (node / "properties").write_text(
            f"cpu_cores_count 0\nsimd_count 1216\ngfx_target_version {version}\n")

    state["add_amd_gpu"] = add_amd_gpu
    return state


def ids(report):
    return [h["id"] for h in report["hazards"]]


def test_clean_machine(machine, capsys):
    assert doctor.main([]) == 0
    out = capsys.readouterr().out
    assert "hazards: none found" in out and "torch" in out
    assert doctor.main(["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hazards"] == [] and data["device"]["stack"] == "cpu"


def test_real_machine_report(capsys):
    code = doctor.main(["--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and "device" in data and "hazards" in data


def test_gfx_names_from_kfd_topology(machine, tmp_path):
    for version in (0, 90402, 90010, 110000, 120001):
        machine["add_amd_gpu"](version)
    assert doctor.amd_gpus() == ["gfx942", "gfx90a", "gfx1100", "gfx1201"]


def test_cuda_torch_on_amd_machine(machine, capsys):
    machine["add_amd_gpu"]()
    machine["info"] = _info(stack="cuda", stack_version="12.8", torch_version="2.9.0+cu128")
    report = doctor.collect()
    assert ids(report) == ["cuda-torch-on-amd"]
    hazard = report["hazards"][0]
    assert hazard["severity"] == "error" and "gfx942" in hazard["message"]
    assert doctor.main([]) == 1
    assert "cuda-torch-on-amd" in capsys.readouterr().out


def test_cpu_torch_on_amd_machine(machine):
    machine["add_amd_gpu"]()
    assert ids(doctor.collect()) == ["cpu-torch-on-amd"]


def test_max_split_on_rocm(machine, monkeypatch):
    machine["info"] = _info(**ROCM)
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "max_split_size_mb:128")
    report = doctor.collect()
    # PyTorch reads the key on ROCm: a note about the tuning, no hazard, and
    # so no exit status 1 from it.
    assert ids(report) == []
    (note,) = [n for n in report["notes"] if "max_split_size_mb" in n]
    assert "PYTORCH_HIP_ALLOC_CONF" in note and "reads it on ROCm too" in note
    assert "RuntimeError" not in note
    assert doctor.main(["--json"]) == 0


def test_max_split_off_rocm_is_fine(machine, monkeypatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")
    assert ids(doctor.collect()) == []


def test_pynvml_beside_rocm_torch(machine):
    machine["info"] = _info(**ROCM)
    machine["specs"].add("pynvml")
    assert ids(doctor.collect()) == ["pynvml-with-rocm"]
    machine["info"] = _info()
    assert ids(doctor.collect()) == []


def test_aiter_broken_and_imposter_on_rocm(machine, monkeypatch):
    machine["info"] = _info(**ROCM)
    machine["specs"].add("aiter")
    monkeypatch.setattr(doctor._device, "aiter_status",
                        lambda: (False, "import aiter failed: RuntimeError: boom"))
    report = doctor.collect()
    assert ids(report) == ["aiter-broken"] and report["hazards"][0]["severity"] == "error"
    reason = "'aiter' imports but torch.ops.aiter.mha_fwd does not exist"
    monkeypatch.setattr(doctor._device, "aiter_status", lambda: (False, reason))
    machine["dists"]["aiter"] = ["aiter"]
    assert ids(doctor.collect()) == ["aiter-imposter"]
    monkeypatch.setattr(doctor._device, "aiter_status", lambda: (True, "found"))
    report = doctor.collect()
    assert ids(report) == [] and any("aiter" in n for n in report["notes"])


def test_aiter_off_rocm(machine):
    machine["specs"].add("aiter")
    machine["dists"]["aiter"] = ["amd-aiter"]
    assert ids(doctor.collect()) == ["aiter-without-rocm"]
    machine["dists"]["aiter"] = ["aiter"]
    assert ids(doctor.collect()) == ["aiter-imposter"]


def test_managed_memory_needs_xnack(machine, monkeypatch, capsys):
    machine["info"] = _info(**ROCM)
    assert ids(doctor.collect()) == []
    assert any("xnack-" in n for n in doctor.collect()["notes"])
    report = doctor.collect(managed_memory=True)
    assert ids(report) == ["managed-memory-no-xnack"]
    assert "xnack-" in report["hazards"][0]["message"]
    assert doctor.main(["--managed-memory", "--json"]) == 1
    capsys.readouterr()
    monkeypatch.setenv("HSA_XNACK", "1")
    assert ids(doctor.collect(managed_memory=True)) == []


def test_no_torch_report(machine, capsys):
    machine["info"] = _info(torch=False, torch_version=None, stack=None,
                            aiter_reason="PyTorch is not installed")
    report = doctor.collect()
    assert report["hazards"] == [] and "not installed" in report["notes"][0]
    assert doctor.main([]) == 0
    assert "not installed" in capsys.readouterr().out


def test_usage_error():
    with pytest.raises(SystemExit) as info:
        doctor.main(["--bogus"])
    assert info.value.code == 2


def test_targets_in_the_report(machine, capsys):
    machine["add_amd_gpu"](90402)
    machine["add_amd_gpu"](120001)
    machine["add_amd_gpu"](90400 + 5)  # gfx945: not in the table
    machine["info"] = _info(**ROCM, target={
        "name": "gfx942", "family": "CDNA3", "products": ["Instinct MI300X"], "wave_size": 64,
        "fp8": "fnuz", "lds_kib": 64, "matrix_cores": "MFMA", "first_rocm": None,
        "default_precision": "bf16", "compute_units": {"Instinct MI300X": 304}},
        compute_units=304, product="Instinct MI300X", product_compute_units=304)
    report = doctor.collect()
    assert report["amd_gpu_targets"]["gfx942"]["family"] == "CDNA3"
    assert report["amd_gpu_targets"]["gfx1201"]["first_rocm"] == "6.4.1"
    assert report["amd_gpu_targets"]["gfx945"] is None
    doctor.main([])
    out = capsys.readouterr().out
    assert "target           CDNA3: wave 64, fp8 FNUZ, LDS 64 KiB, MFMA, bf16 at full rate" in out
    assert "compute units    304 (Instinct MI300X: 304 in all)" in out
    assert ("gfx1201        RDNA4: wave 32, fp8 OCP, LDS 64 KiB, WMMA, bf16 at full rate, "
            "ROCm >= 6.4.1") in out
    assert "gfx945         not in rocmlint's target table" in out
