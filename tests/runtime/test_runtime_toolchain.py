"""The doctor's toolchain checks, against fake ROCm installations: a folder with
`.info/version` and shell scripts named hipcc, rocminfo, amd-smi and rocm-smi that print what
the real tools print (formats from ROCm's issue trackers and documentation), on a PATH of
their own. Every report is validated against the shipped JSON Schema."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path

import jsonschema
import pytest

from rocmlint.runtime import doctor, toolchain

HIPCC_62 = """\
HIP version: 6.2.41133-dd7f95766
AMD clang version 18.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.2.0 24292 26466ce804ac523b398608f17388eb6d605a3f09)
Target: x86_64-unknown-linux-gnu
Thread model: posix
InstalledDir: /opt/rocm-6.2.0/lib/llvm/bin
Configuration file: /opt/rocm-6.2.0/lib/llvm/bin/clang++.cfg
"""


def rocminfo_text(gpus=(("gfx942", "AMD Instinct MI300X", 304),)) -> str:
    """rocminfo's layout: a runtime header, then one block per agent (CPU first), each
    with a nested ISA block whose Name must not be taken for the agent's."""
    blocks = ["""\
ROCk module version 6.8.5 is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.14
Runtime Ext Version:     1.6
System Timestamp Freq.:  1000.000000MHz
Machine Model:           LARGE
System Endianness:       LITTLE

==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD EPYC 9654 96-Core Processor
  Uuid:                    CPU-XX
  Marketing Name:          AMD EPYC 9654 96-Core Processor
  Vendor Name:             CPU
  Feature:                 None specified
  Profile:                 FULL_PROFILE
  Device Type:             CPU
  Compute Unit:            192
  ISA Info:
"""]
    for number, (gfx, marketing, units) in enumerate(gpus, start=2):
        blocks.append(f"""\
*******
Agent {number}
*******
  Name:                    {gfx}
  Uuid:                    GPU-5e4a7c1b6d3f2a10
  Marketing Name:          {marketing}
  Vendor Name:             AMD
  Feature:                 KERNEL_DISPATCH
  Profile:                 BASE_PROFILE
  Node:                    {number - 1}
  Device Type:             GPU
  Cache Info:
    L1:                      32(0x20) KB
    L2:                      4096(0x1000) KB
  Chip ID:                 29857(0x74a1)
  Compute Unit:            {units}
  SIMDs per CU:            4
  Wavefront Size:          64(0x40)
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    201310208(0xbffc000) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--{gfx}:sramecc+:xnack-
      Machine Models:          HSA_MACHINE_MODEL_LARGE
""")
    blocks.append("*** Done ***\n")
    return "".join(blocks)


def amd_smi_text(total_mb=196592, used_mb=283, wrapped=False) -> str:
    rows = [{"gpu": 0, "mem_usage": {
        "total_vram": {"value": total_mb, "unit": "MB"},
        "used_vram": {"value": used_mb, "unit": "MB"},
        "free_vram": {"value": total_mb - used_mb, "unit": "MB"},
        "total_visible_vram": {"value": total_mb, "unit": "MB"},
    }}]
    return json.dumps({"gpu_data": rows} if wrapped else rows, indent=4) + "\n"


def rocm_smi_text(total=206141652992, used=297304064) -> str:
    return json.dumps({"card0": {"VRAM Total Memory (B)": str(total), "VRAM Total Used Memory (B)": str(used)}}) + "\n"


ROCM_INFO = dict(torch=True, torch_version="2.5.1+rocm6.2", vendor="amd", stack="rocm",
                 stack_version="6.2.41133-dd7f95766", gpu_available=True, device_count=1,
                 device_name="AMD Instinct MI300X", arch="gfx942", arch_full="gfx942:sramecc+:xnack-",
                 target=None, total_memory_bytes=206141652992, total_memory_gib=191.98,
                 aiter_available=False, aiter_reason="import aiter failed", python="3.11.0")


class FakeMachine:
    """A machine with an AMD GPU under a fake /sys, a ROCm folder and a PATH of fake tools;
    every tool run is written to a log."""

    def __init__(self, root: Path, monkeypatch):
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "runs.log"
        self.rocm = root / "opt" / "rocm"
        self.info = dict(ROCM_INFO)
        self.env = {"PATH": str(self.bin), "HOME": str(root)}
        monkeypatch.setattr(doctor, "SYS_ROOT", str(root))
        monkeypatch.setattr(doctor._device, "device_info", lambda: self.info)
        monkeypatch.setattr(doctor, "_spec_exists", lambda name: False)
        # The PyTorch running these tests may see a GPU of its own machine (an NVIDIA one on
        # the GPU host): the fake machine's PyTorch answers nothing about memory or units.
        monkeypatch.setattr(toolchain, "torch_memory", lambda: [])
        monkeypatch.setattr(toolchain, "torch_compute_units", lambda: [])
        node = root / "sys/class/kfd/kfd/topology/nodes/1"
        node.mkdir(parents=True)
        (node / "properties").write_text("simd_count 1216\ngfx_target_version 90402\n")

    def release(self, text: str | None, where: Path | None = None) -> Path:
        folder = where or self.rocm
        (folder / ".info").mkdir(parents=True, exist_ok=True)
        if text is not None:
            (folder / ".info" / "version").write_text(text)
        return folder

    def tool(self, name: str, stdout: str = "", status: int = 0, stderr: str = "", script: str | None = None,
             folder: Path | None = None) -> None:
        folder = folder or self.bin
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.out").write_text(stdout)
        (folder / f"{name}.err").write_text(stderr)
        # PATH holds only the fake tools: the scripts name the programs they use in full.
        cat = shutil.which("cat")
        body = script or f'{cat} "{folder}/{name}.out"; {cat} "{folder}/{name}.err" >&2; exit {status}'
        path = folder / name
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.log}"\n{body}\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def full_toolchain(self) -> None:
        self.release("6.2.0-66\n")
        self.tool("hipcc", HIPCC_62)
        self.tool("rocminfo", rocminfo_text())
        self.tool("amd-smi", amd_smi_text())
        self.tool("rocm-smi", rocm_smi_text())

    def runs(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def collect(self, **kwargs):
        report = doctor.collect(environ=self.env, **kwargs)
        jsonschema.validate(json.loads(json.dumps(report)), doctor.schema())
        return report


@pytest.fixture
def fake(tmp_path, monkeypatch):
    return FakeMachine(tmp_path, monkeypatch)


def ids(report):
    return [h["id"] for h in report["hazards"]]


def test_a_sound_rocm_machine(fake, capsys, monkeypatch):
    fake.full_toolchain()
    report = fake.collect()
    assert ids(report) == []
    chain = report["toolchain"]
    assert chain["rocm"]["path"] == str(fake.rocm) and chain["rocm"]["from"] == "default"
    assert chain["rocm"]["version"] == "6.2.0"
    assert chain["hipcc_hip_version"] == "6.2.41133-dd7f95766"
    assert chain["tools"]["hipcc"] == {"path": str(fake.bin / "hipcc"), "status": "ok", "returncode": 0, "detail": None}
    # The agent's name, not the ISA's; the CPU agent is not a GPU.
    assert chain["gpus"] == [{"index": 0, "name": "gfx942", "marketing_name": "AMD Instinct MI300X", "compute_units": 304}]
    # PyTorch (CPU here) sees no GPU, so memory comes from amd-smi, MB read as MiB.
    assert chain["memory"] == [{"index": 0, "source": "amd-smi", "total_bytes": 196592 * 2**20,
                                "used_bytes": 283 * 2**20, "free_bytes": (196592 - 283) * 2**20,
                                "allocated_bytes": None, "reserved_bytes": None}]
    monkeypatch.setattr(os, "environ", dict(fake.env))
    assert doctor.main([]) == 0
    text = capsys.readouterr().out
    assert f"rocm             {fake.rocm} (from default), release 6.2.0" in text
    assert "(HIP 6.2.41133-dd7f95766)" in text
    assert "gfx942 AMD Instinct MI300X, 304 compute units (rocminfo)" in text
    assert "192.0 GiB total, 0.3 used, 191.7 free (amd-smi)" in text
    assert doctor.main(["--json"]) == 0
    jsonschema.validate(json.loads(capsys.readouterr().out), doctor.schema())


def test_only_the_named_tools_run_with_fixed_arguments(fake):
    fake.full_toolchain()
    # Decoys a careless probe might run: none of them may be started.
    for decoy in ("hipconfig", "clang", "python3", "amdclang", "nvidia-smi", "rocm_agent_enumerator"):
        fake.tool(decoy, "decoy")
    fake.collect()
    assert sorted(fake.runs()) == sorted([
        "hipcc --version",
        "rocminfo ",
        "amd-smi metric --mem-usage --json",
        "rocm-smi --showmeminfo vram --json",
    ])
    with pytest.raises(ValueError, match="runs only"):
        toolchain.find_tool("hipconfig", fake.env, None)


def test_tools_in_the_rocm_folder_when_not_on_path(fake):
    fake.release("6.2.0-66\n")
    fake.tool("hipcc", HIPCC_62, folder=fake.rocm / "bin")
    report = fake.collect()
    assert report["toolchain"]["tools"]["hipcc"]["path"] == str(fake.rocm / "bin" / "hipcc")
    assert report["toolchain"]["tools"]["rocminfo"]["status"] == "missing"
    notes = " ".join(report["notes"])
    assert "rocminfo is not installed" in notes and "neither amd-smi nor rocm-smi" in notes


def test_rocm_path_that_is_not_a_folder(fake):
    fake.full_toolchain()
    fake.env["ROCM_PATH"] = str(fake.root / "opt" / "rocm-6.9.9")
    report = fake.collect()
    assert "rocm-path-missing" in ids(report)
    hazard = report["hazards"][ids(report).index("rocm-path-missing")]
    assert hazard["severity"] == "error" and "rocm-6.9.9" in hazard["message"] and "ROCM_PATH" in hazard["fix"]


def test_rocm_path_and_rocm_home_disagree(fake):
    fake.full_toolchain()
    other = fake.release("6.1.3-122\n", fake.root / "opt" / "rocm-6.1.3")
    fake.env.update(ROCM_PATH=str(fake.rocm), ROCM_HOME=str(other))
    assert ids(fake.collect()) == ["rocm-path-conflict"]
    # The same folder under two spellings is no conflict.
    fake.env["ROCM_HOME"] = str(fake.rocm) + "/"
    assert ids(fake.collect()) == []
    # ROCM_HOME alone is the folder builds use.
    del fake.env["ROCM_PATH"]
    fake.env["ROCM_HOME"] = str(other)
    report = fake.collect()
    assert report["toolchain"]["rocm"]["from"] == "ROCM_HOME" and report["toolchain"]["rocm"]["version"] == "6.1.3"


def test_rocm_release_file_missing(fake):
    fake.full_toolchain()
    (fake.rocm / ".info" / "version").unlink()
    report = fake.collect()
    assert ids(report) == ["rocm-release-unknown"]
    assert report["toolchain"]["rocm"]["version"] is None


def test_hipcc_from_another_release(fake):
    fake.full_toolchain()
    fake.tool("hipcc", HIPCC_62.replace("6.2.41133", "6.1.40093"))
    report = fake.collect()
    assert ids(report) == ["hipcc-other-release"]
    hazard = report["hazards"][0]
    assert "6.1.40093" in hazard["message"] and "6.2.0" in hazard["message"]
    assert str(fake.rocm / "bin") in hazard["fix"]


def test_hipcc_that_fails(fake):
    fake.full_toolchain()
    fake.tool("hipcc", status=127, stderr="/opt/rocm/bin/hipcc: line 1: perl: not found\n")
    report = fake.collect()
    assert ids(report) == ["hipcc-broken"]
    assert "exit status 127: /opt/rocm/bin/hipcc: line 1: perl: not found" in report["hazards"][0]["message"]


@pytest.mark.parametrize("torch_hip, expected", [
    ("6.2.41134-65d174c3e", []),
    ("6.1.40091-a8dbc0c19", [("torch-hip-release", "warning")]),
    ("5.7.31921-d1770ee1b", [("torch-hip-release", "error")]),
])
def test_torch_hip_against_the_rocm_release(fake, torch_hip, expected):
    fake.full_toolchain()
    fake.info["stack_version"] = torch_hip
    report = fake.collect()
    assert [(h["id"], h["severity"]) for h in report["hazards"]] == expected
    assert report["toolchain"]["torch_hip_version"] == torch_hip
    if expected:
        assert "download.pytorch.org/whl/rocm6.2" in report["hazards"][0]["fix"]


def test_torch_hip_is_not_compared_off_rocm(fake):
    fake.full_toolchain()
    fake.info.update(stack="cuda", stack_version="12.4", vendor="nvidia", gpu_available=False)
    report = fake.collect()
    assert report["toolchain"]["torch_hip_version"] is None
    assert "torch-hip-release" not in ids(report)


def test_rocminfo_refused_by_the_driver(fake):
    fake.full_toolchain()
    fake.tool("rocminfo", "ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n", status=1,
              stderr="hsa api call failure at: /rocminfo.cc:1306\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES\n")
    report = fake.collect()
    assert ids(report) == ["rocminfo-failed"]
    hazard = report["hazards"][0]
    assert hazard["severity"] == "error" and "render" in hazard["fix"] and "exit status 1" in hazard["message"]
    assert report["toolchain"]["gpus"] == []


def test_a_hanging_tool_is_stopped(fake, monkeypatch):
    fake.full_toolchain()
    # The tool starts a child that would hold its output open: both must end at the limit.
    sleep = shutil.which("sleep")
    fake.tool("rocminfo", script=f"{sleep} 30 & {sleep} 30")
    monkeypatch.setattr(toolchain, "TOOL_TIMEOUT_S", 0.5)
    started = time.monotonic()
    report = fake.collect()
    assert time.monotonic() - started < 10
    assert report["toolchain"]["tools"]["rocminfo"]["status"] == "timeout"
    assert ids(report) == ["rocminfo-failed"] and "no answer within 0.5 s" in report["hazards"][0]["message"]


def test_rocminfo_without_a_gpu_agent(fake):
    fake.full_toolchain()
    fake.tool("rocminfo", rocminfo_text(gpus=()))
    report = fake.collect()
    assert ids(report) == ["rocminfo-no-gpu"] and "gfx942" in report["hazards"][0]["message"]


def test_several_gpus_and_their_compute_units(fake):
    fake.full_toolchain()
    fake.tool("rocminfo", rocminfo_text(gpus=(("gfx942", "AMD Instinct MI300X", 304), ("gfx942", "AMD Instinct MI300X", 38))))
    gpus = fake.collect()["toolchain"]["gpus"]
    assert [(g["index"], g["compute_units"]) for g in gpus] == [(0, 304), (1, 38)]


def test_cu_mask_is_noted(fake):
    fake.full_toolchain()
    fake.env["HSA_CU_MASK"] = "0:0-15"
    assert any("HSA_CU_MASK='0:0-15'" in note for note in fake.collect()["notes"])


def test_memory_held_by_another_process(fake):
    fake.full_toolchain()
    fake.tool("amd-smi", amd_smi_text(used_mb=190000, wrapped=True))
    report = fake.collect()
    assert ids(report) == ["gpu-memory-taken"]
    assert "6.4 of 192.0 GiB free (amd-smi)" in report["hazards"][0]["message"]


def test_rocm_smi_when_amd_smi_is_missing(fake):
    fake.full_toolchain()
    (fake.bin / "amd-smi").unlink()
    memory = fake.collect()["toolchain"]["memory"]
    assert memory == [{"index": 0, "source": "rocm-smi", "total_bytes": 206141652992, "used_bytes": 297304064,
                       "free_bytes": 206141652992 - 297304064, "allocated_bytes": None, "reserved_bytes": None}]


def test_rocm_release_older_than_the_gpu(fake):
    fake.full_toolchain()
    node = fake.root / "sys/class/kfd/kfd/topology/nodes/1/properties"
    node.write_text("gfx_target_version 90500\n")  # gfx950: ROCm 7.0.0 or later
    fake.release("6.4.1-99\n")
    fake.tool("hipcc", HIPCC_62.replace("6.2.41133", "6.4.43483"))
    fake.info["stack_version"] = "6.4.43483-a187df25c"
    report = fake.collect()
    assert ids(report) == ["rocm-release-too-old"]
    assert "gfx950 needs ROCm 7.0.0" in report["hazards"][0]["message"]


def test_garbage_from_the_tools_is_no_crash(fake):
    fake.full_toolchain()
    fake.tool("hipcc", "\x00\xff nonsense\n")
    fake.tool("rocminfo", "Agent 2\n  Device Type: GPU\n  Compute Unit: many\n")
    fake.tool("amd-smi", "WARNING: [render] group\n{\"gpu_data\": [{\"gpu\": \"0\"}, 7, {\"gpu\": true, \"mem_usage\": {}},"
              " {\"gpu\": -1, \"mem_usage\": {}}, {\"gpu\": 1, \"mem_usage\": 3}, {\"gpu\": 2, \"mem_usage\": {\"total_vram\":"
              " {\"value\": \"N/A\"}, \"used_vram\": {\"value\": 1e999, \"unit\": \"MB\"}, \"free_vram\": {\"value\": 5, \"unit\": \"PB\"}}}]}")
    fake.tool("rocm-smi", "{not json")
    report = fake.collect()
    chain = report["toolchain"]
    assert chain["hipcc_hip_version"] is None
    assert chain["gpus"] == [{"index": 0, "name": None, "marketing_name": None, "compute_units": None}]
    # Only the last entry is a GPU; nothing it says about memory is a number of bytes.
    assert chain["memory"] == [{"index": 2, "source": "amd-smi", "total_bytes": None, "used_bytes": None,
                                "free_bytes": None, "allocated_bytes": None, "reserved_bytes": None}]


def test_no_amd_gpu_and_no_rocm_is_no_hazard(fake):
    for node in (fake.root / "sys").rglob("properties"):
        node.unlink()
    fake.info.update(stack="cpu", stack_version=None, vendor=None, gpu_available=False)
    report = fake.collect()
    assert ids(report) == [] and all(t["status"] == "missing" for t in report["toolchain"]["tools"].values())


def test_the_schema_is_shipped_and_printed(capsys):
    schema = doctor.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert Path(doctor.SCHEMA_FILE).parent == Path(doctor.__file__).parent
    assert doctor.main(["--schema"]) == 0
    assert json.loads(capsys.readouterr().out) == schema


def test_the_schema_rejects_what_it_should(fake):
    fake.full_toolchain()
    report = json.loads(json.dumps(fake.collect()))
    bad = json.loads(json.dumps(report))
    bad["hazards"] = [{"id": "x", "severity": "fatal", "message": "", "fix": "", "see": ""}]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, doctor.schema())
    bad = json.loads(json.dumps(report))
    bad["toolchain"]["tools"]["hipcc"]["status"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, doctor.schema())
    del report["toolchain"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, doctor.schema())


def test_this_machines_report_validates(capsys):
    assert doctor.main(["--json"]) in (0, 1)
    jsonschema.validate(json.loads(capsys.readouterr().out), doctor.schema())


def test_memory_this_process_reserves_is_not_taken():
    """PyTorch's rows (GPU machines only) carry what this process's allocator reserves: memory
    the process itself holds is no reason to warn."""
    def hazard(*fields):
        return dict(zip(("id", "severity", "message", "fix", "see"), fields))

    gib = 2**30
    row = {"index": 0, "source": "torch", "total_bytes": 80 * gib, "used_bytes": 76 * gib, "free_bytes": 4 * gib,
           "allocated_bytes": 60 * gib, "reserved_bytes": 64 * gib}
    found: list = []
    toolchain._memory_hazards([row], hazard, found)
    assert found == []
    row["reserved_bytes"] = 2 * gib
    toolchain._memory_hazards([row], hazard, found)
    assert [h["id"] for h in found] == ["gpu-memory-taken"] and "4.0 of 80.0 GiB free (torch)" in found[0]["message"]
