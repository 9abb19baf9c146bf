"""The ROCm toolchain as the doctor sees it: where ROCm is, which release, and what `hipcc`,
`rocminfo` and `amd-smi` / `rocm-smi` say, each with what to do when it is wrong.

The doctor runs only the four tools named in ``TOOLS``, by the path found on ``PATH`` or in
``$ROCM_PATH/bin``, with fixed arguments, no shell, no standard input and a time limit
(``TOOL_TIMEOUT_S``): a broken driver makes ``rocminfo`` hang, and the doctor is what a user
runs to find that out. It imports nothing: device memory comes from PyTorch only where
PyTorch is already imported (``device_info()`` imports it).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
from typing import Any, Callable

from .. import targets

__all__ = ["TOOLS", "TOOL_TIMEOUT_S", "collect_toolchain", "toolchain_text"]

#: The only programs the doctor runs, with the arguments it passes.
TOOLS: dict[str, tuple[str, ...]] = {
    "hipcc": ("--version",),
    "rocminfo": (),
    "amd-smi": ("metric", "--mem-usage", "--json"),
    "rocm-smi": ("--showmeminfo", "vram", "--json"),
}
#: Seconds each tool may run.
TOOL_TIMEOUT_S = 15.0
#: Output read from a tool, at most (rocminfo on an 8-GPU node prints about 100 KB).
_OUTPUT_LIMIT = 4 * 1024 * 1024
#: Below this share of a device's memory free, another process holds it.
LOW_FREE_FRACTION = 0.10

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
Hazard = Callable[[str, str, str, str, str], dict[str, str]]


def _major_minor(text: str | None) -> tuple[int, int] | None:
    match = _VERSION.search(text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _release(text: str | None) -> str | None:
    """``6.2.0`` from ``6.2.0-66`` (the form of ``.info/version``)."""
    match = _VERSION.search(text or "")
    if not match:
        return None
    return ".".join(part for part in match.groups() if part is not None)


# --- where ROCm is ------------------------------------------------------------------------


def rocm_root(env: Any, sys_root: str) -> dict[str, Any]:
    """The ROCm folder the build tools use: ``ROCM_PATH``, else ``ROCM_HOME`` (PyTorch's
    extension builder reads either), else ``/opt/rocm``; with the release it holds."""
    path_var, home_var = env.get("ROCM_PATH") or None, env.get("ROCM_HOME") or None
    if path_var:
        path, source = path_var, "ROCM_PATH"
    elif home_var:
        path, source = home_var, "ROCM_HOME"
    else:
        path, source = os.path.join(sys_root, "opt", "rocm"), "default"
    version_file = os.path.join(path, ".info", "version")
    version_text = _read_small(version_file)
    return {
        "path": path,
        "from": source,
        "exists": os.path.isdir(path),
        "rocm_path": path_var,
        "rocm_home": home_var,
        "version_file": version_file,
        "version": _release(version_text),
    }


def _read_small(path: str, limit: int = 4096) -> str | None:
    try:
        if not os.path.isfile(path):  # never a FIFO or a device
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return None


# --- running the tools --------------------------------------------------------------------


def find_tool(name: str, env: Any, root: str | None) -> str | None:
    """The tool's path: on ``PATH`` first (what a build runs), else in the ROCm folder."""
    if name not in TOOLS:
        raise ValueError(f"the doctor runs only {', '.join(TOOLS)}, not {name!r}")
    found = shutil.which(name, path=env.get("PATH") or "")
    if found:
        return found
    if root:
        candidate = os.path.join(root, "bin", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_tool(name: str, env: Any, root: str | None) -> dict[str, Any]:
    """Run one of ``TOOLS``: its path, ``status`` (ok, missing, failed, timeout), exit code
    and output (text, cut at ``_OUTPUT_LIMIT``)."""
    path = find_tool(name, env, root)
    result: dict[str, Any] = {"path": path, "status": "missing", "returncode": None, "detail": None}
    if path is None:
        return result
    try:
        # A session of its own, so that a timeout ends whatever the tool started too (amd-smi
        # is a Python program; hipcc was a Perl script that runs clang).
        proc = subprocess.Popen(
            [path, *TOOLS[name]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        result.update(status="failed", detail=f"{type(exc).__name__}: {exc}")
        return result
    try:
        stdout, stderr = proc.communicate(timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _end_session(proc)
        result.update(status="timeout", detail=f"no answer within {TOOL_TIMEOUT_S:g} s")
        return result
    out = stdout[:_OUTPUT_LIMIT].decode("utf-8", "replace")
    err = stderr[:_OUTPUT_LIMIT].decode("utf-8", "replace")
    result["returncode"] = proc.returncode
    result["output"] = out
    if proc.returncode != 0:
        last = [line.strip() for line in (err + "\n" + out).splitlines() if line.strip()]
        result.update(status="failed", detail=f"exit status {proc.returncode}" + (f": {last[-1]}" if last else ""))
    else:
        result["status"] = "ok"
    return result


def _end_session(proc: subprocess.Popen) -> None:
    """Kill a tool that ran out of time and everything it started, and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait()


# --- reading what they print --------------------------------------------------------------


def parse_hipcc_version(text: str) -> str | None:
    """``6.2.41133-dd7f95766`` from hipcc's ``HIP version: 6.2.41133-dd7f95766`` line."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "hip version" and value.strip():
            return value.strip()
    return None


def parse_rocminfo(text: str) -> list[dict[str, Any]]:
    """The GPU agents rocminfo lists, in its order: gfx name, marketing name, compute units.

    rocminfo prints one block per HSA agent (``Agent N`` between rows of stars) with
    ``Key: value`` lines; the first ``Name:`` of a block is the agent's (an ISA's name comes
    later, under ``ISA Info``)."""
    agents: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if re.fullmatch(r"Agent \d+", stripped):
            current = {}
            agents.append(current)
            continue
        if current is None or ":" not in stripped:
            continue
        key, _, value = stripped.partition(":")
        key, value = key.strip(), value.strip()
        if key in ("Name", "Marketing Name", "Device Type", "Compute Unit") and key not in current:
            current[key] = value
    gpus = []
    for agent in agents:
        if agent.get("Device Type", "").upper() != "GPU":
            continue
        units = agent.get("Compute Unit", "")
        gpus.append({
            "index": len(gpus),
            "name": agent.get("Name") or None,
            "marketing_name": agent.get("Marketing Name") or None,
            "compute_units": int(units) if units.isdigit() else None,
        })
    return gpus


def _bytes(value: Any, unit: str | None = "B") -> int | None:
    """A memory amount in bytes from a number and the unit a tool gives it in."""
    scale = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}.get((unit or "B").upper())
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not scale or not math.isfinite(number) or number < 0:
        return None  # "N/A", an unknown unit, nan or inf
    return int(number * scale)


def parse_rocm_smi_memory(text: str) -> list[dict[str, Any]]:
    """VRAM total and used per card from ``rocm-smi --showmeminfo vram --json``:
    ``{"card0": {"VRAM Total Memory (B)": "...", "VRAM Total Used Memory (B)": "..."}}``."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    rows = []
    if not isinstance(data, dict):
        return rows
    for card, fields in data.items():
        match = re.fullmatch(r"card(\d+)", str(card))
        if not match or not isinstance(fields, dict):
            continue
        total = _bytes(fields.get("VRAM Total Memory (B)"))
        used = _bytes(fields.get("VRAM Total Used Memory (B)"))
        rows.append(_memory_row(int(match.group(1)), total, used, None, "rocm-smi"))
    return rows


def parse_amd_smi_memory(text: str) -> list[dict[str, Any]]:
    """VRAM per GPU from ``amd-smi metric --mem-usage --json``: a list (or, in newer releases,
    ``{"gpu_data": [...]}``) of ``{"gpu": N, "mem_usage": {"total_vram": {"value": V,
    "unit": "MB"}, "used_vram": ..., "free_vram": ...}}``."""
    # amd-smi may print warning lines before the JSON document: it starts on the first line
    # that begins with a bracket.
    lines = text.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("[", "{"))), None)
    if first is None:
        return []
    try:
        data = json.loads("".join(lines[first:]))
    except ValueError:
        return []
    if isinstance(data, dict):
        data = data.get("gpu_data")
    rows = []
    for entry in data if isinstance(data, list) else []:
        if not isinstance(entry, dict) or type(entry.get("gpu")) is not int or entry["gpu"] < 0:
            continue
        usage = entry.get("mem_usage")
        if not isinstance(usage, dict):
            continue

        def amount(key: str) -> int | None:
            field = usage.get(key)
            return _bytes(field.get("value"), field.get("unit")) if isinstance(field, dict) else None

        rows.append(_memory_row(entry["gpu"], amount("total_vram"), amount("used_vram"), amount("free_vram"), "amd-smi"))
    return rows


def _memory_row(index: int, total: int | None, used: int | None, free: int | None, source: str) -> dict[str, Any]:
    if free is None and total is not None and used is not None:
        free = max(total - used, 0)
    return {"index": index, "source": source, "total_bytes": total, "used_bytes": used, "free_bytes": free,
            "allocated_bytes": None, "reserved_bytes": None}


def torch_memory() -> list[dict[str, Any]]:
    """Free and total memory per device, and what this process has allocated, from PyTorch
    when it is already imported and sees a GPU (NVIDIA or AMD alike)."""
    torch = sys.modules.get("torch")
    rows: list[dict[str, Any]] = []
    try:
        if torch is None or not torch.cuda.is_available():
            return rows
        for index in range(torch.cuda.device_count()):
            free, total = torch.cuda.mem_get_info(index)
            row = _memory_row(index, int(total), int(total - free), int(free), "torch")
            row["allocated_bytes"] = int(torch.cuda.memory_allocated(index))
            row["reserved_bytes"] = int(torch.cuda.memory_reserved(index))
            rows.append(row)
    except Exception:  # noqa: BLE001 - a device that cannot answer is left out, not a crash
        return rows
    return rows


# --- the section and its hazards ----------------------------------------------------------


def collect_toolchain(env: Any, sys_root: str, device: dict[str, Any], amd_gpus: list[str],
                      amd_machine: bool, hazard: Hazard) -> tuple[dict[str, Any], list[dict[str, str]], list[str]]:
    """The ``toolchain`` section of the doctor's report, its hazards and notes.

    ``device`` is ``device_info()``; ``amd_gpus`` the gfx names the kernel driver lists;
    ``amd_machine`` whether this machine has an AMD GPU; ``hazard`` builds one hazard."""
    rocm = device.get("stack") == "rocm"
    expect_rocm = amd_machine or rocm
    root = rocm_root(env, sys_root)
    tools = {name: run_tool(name, env, root["path"] if root["exists"] else None) for name in TOOLS}
    hipcc_version = parse_hipcc_version(tools["hipcc"].get("output", "")) if tools["hipcc"]["status"] == "ok" else None
    gpus = parse_rocminfo(tools["rocminfo"].get("output", "")) if tools["rocminfo"]["status"] == "ok" else []
    memory = torch_memory() if device.get("gpu_available") else []
    torch_units = torch_compute_units() if device.get("gpu_available") else []
    if not memory:
        for name, parse in (("amd-smi", parse_amd_smi_memory), ("rocm-smi", parse_rocm_smi_memory)):
            if tools[name]["status"] == "ok":
                memory = parse(tools[name].get("output", ""))
                if memory:
                    break
    torch_hip = device.get("stack_version") if rocm else None
    section = {
        "rocm": root,
        "tools": {name: {k: v for k, v in run.items() if k != "output"} for name, run in tools.items()},
        "hipcc_hip_version": hipcc_version,
        "torch_hip_version": torch_hip,
        "gpus": gpus,
        "torch_compute_units": torch_units,
        "memory": memory,
    }
    hazards: list[dict[str, str]] = []
    notes: list[str] = []

    _root_hazards(root, expect_rocm, hazard, hazards, notes)
    if expect_rocm:
        _tool_hazards(tools, root, hipcc_version, gpus, amd_gpus, hazard, hazards, notes)
        _release_hazards(root, torch_hip, amd_gpus or [g["name"] for g in gpus if g["name"]], hazard, hazards)
    _compute_unit_notes(gpus, torch_units if rocm else [], env, notes)
    _memory_hazards(memory, hazard, hazards)
    return section, hazards, notes


def _root_hazards(root: dict[str, Any], expect_rocm: bool, hazard: Hazard, hazards: list, notes: list) -> None:
    if root["from"] != "default" and not root["exists"]:
        hazards.append(hazard(
            "rocm-path-missing", "error",
            f"{root['from']}={root['path']!r} is not a folder: builds that read it (CMake's HIP "
            "language, PyTorch's extension builder, hipcc) find no ROCm there.",
            "point ROCM_PATH (and ROCM_HOME, if set) at the ROCm installation, e.g. /opt/rocm or "
            "/opt/rocm-X.Y.Z, or unset it to use /opt/rocm",
            "ROCM_PATH / ROCM_HOME",
        ))
    both = root["rocm_path"] and root["rocm_home"]
    if both and os.path.realpath(root["rocm_path"]) != os.path.realpath(root["rocm_home"]):
        hazards.append(hazard(
            "rocm-path-conflict", "warning",
            f"ROCM_PATH={root['rocm_path']!r} and ROCM_HOME={root['rocm_home']!r} name different "
            "folders: PyTorch's extension builder reads ROCM_HOME first and CMake reads ROCM_PATH, "
            "so one build can mix two ROCm releases.",
            "set both to the same ROCm folder, or unset ROCM_HOME",
            "ROCM_PATH / ROCM_HOME",
        ))
    if expect_rocm and root["exists"] and root["version"] is None:
        hazards.append(hazard(
            "rocm-release-unknown", "warning",
            f"{root['version_file']} is missing or unreadable: the ROCm release at {root['path']} "
            "is unknown, so nothing can be checked against it.",
            "install ROCm with AMD's packages (they write .info/version), or point ROCM_PATH at a "
            "complete installation",
            "the ROCm installation guide",
        ))
    elif expect_rocm and not root["exists"]:
        notes.append(f"no ROCm installation at {root['path']}: PyTorch's ROCm wheels bring their own "
                     "runtime, but building HIP code (extensions, CMake projects) needs one "
                     "(install ROCm, or set ROCM_PATH to where it is).")


def _tool_hazards(tools: dict, root: dict, hipcc_version: str | None, gpus: list, amd_gpus: list[str],
                  hazard: Hazard, hazards: list, notes: list) -> None:
    hipcc, rocminfo = tools["hipcc"], tools["rocminfo"]
    if hipcc["status"] == "missing":
        # Not a hazard: PyTorch's ROCm wheels run without it; only building HIP code needs it.
        notes.append("hipcc is neither on PATH nor in the ROCm folder's bin: HIP extensions "
                     "(torch.utils.cpp_extension, setup.py builds, CMake's HIP language) cannot be "
                     "compiled here (install ROCm's HIP SDK, the rocm-hip-sdk package, and put "
                     "$ROCM_PATH/bin on PATH).")
    elif hipcc["status"] != "ok":
        hazards.append(hazard(
            "hipcc-broken", "error",
            f"{hipcc['path']} --version did not work ({hipcc['detail']}).",
            "reinstall ROCm's HIP SDK; run 'hipcc --version' to see the error",
            "hipcc",
        ))
    elif root["version"] and _major_minor(hipcc_version) and _major_minor(hipcc_version) != _major_minor(root["version"]):
        hazards.append(hazard(
            "hipcc-other-release", "warning",
            f"{hipcc['path']} is HIP {hipcc_version}, but the ROCm folder {root['path']} is "
            f"release {root['version']}: code compiled with this hipcc does not match the headers "
            "and libraries that builds take from ROCM_PATH.",
            f"put {os.path.join(root['path'], 'bin')} first on PATH, or point ROCM_PATH at the "
            "release hipcc belongs to",
            "hipcc, ROCM_PATH",
        ))
    if rocminfo["status"] == "missing":
        notes.append("rocminfo is not installed: the GPU agents and their compute units cannot be "
                     "listed (install the rocminfo package).")
    elif rocminfo["status"] != "ok":
        hazards.append(hazard(
            "rocminfo-failed", "error",
            f"rocminfo did not list the GPUs ({rocminfo['detail']}): the ROCm runtime cannot open "
            "the GPU, and PyTorch will not see it either.",
            "make sure the amdgpu driver is loaded and /dev/kfd and /dev/dri/renderD* are readable "
            "by you (add the user to the render and video groups: sudo usermod -aG render,video "
            "$USER, then log in again; in a container pass --device=/dev/kfd --device=/dev/dri)",
            "rocminfo",
        ))
    elif not gpus:
        where = f" (the kernel driver lists {', '.join(amd_gpus)})" if amd_gpus else ""
        hazards.append(hazard(
            "rocminfo-no-gpu", "error",
            f"rocminfo runs but lists no GPU agent{where}: the ROCm runtime does not see the GPU.",
            "check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, the render group membership and "
            "that the GPU is supported by this ROCm release",
            "rocminfo",
        ))
    if all(tools[name]["status"] == "missing" for name in ("amd-smi", "rocm-smi")):
        notes.append("neither amd-smi nor rocm-smi is installed: device memory and the processes "
                     "holding it cannot be read outside PyTorch (install amd-smi-lib).")


def _release_hazards(root: dict, torch_hip: str | None, gfx_names: list[str], hazard: Hazard, hazards: list) -> None:
    release = root["version"]
    torch_pair, release_pair = _major_minor(torch_hip), _major_minor(release)
    if torch_pair and release_pair and torch_pair != release_pair:
        major = torch_pair[0] != release_pair[0]
        hazards.append(hazard(
            "torch-hip-release", "error" if major else "warning",
            f"PyTorch is built for HIP {torch_hip} but the ROCm at {root['path']} is release "
            f"{release}: extensions built against this ROCm load a "
            f"{'different major version of the' if major else 'different'} HIP runtime from "
            "the one PyTorch uses.",
            f"install the PyTorch wheel for ROCm {release_pair[0]}.{release_pair[1]} "
            f"(pip install torch --index-url https://download.pytorch.org/whl/rocm{release_pair[0]}."
            f"{release_pair[1]}), or build against ROCm {torch_pair[0]}.{torch_pair[1]}",
            "torch.version.hip, /opt/rocm/.info/version",
        ))
    if release:
        for name in dict.fromkeys(gfx_names):
            if targets.supported_in(name, release) is False:
                entry = targets.target(name)
                hazards.append(hazard(
                    "rocm-release-too-old", "error",
                    f"{name} needs ROCm {entry.first_rocm if entry else 'newer'} or later; the ROCm "
                    f"at {root['path']} is {release}.",
                    f"install ROCm {entry.first_rocm if entry else 'for this GPU'} or later",
                    "rocmlint.targets",
                ))


def torch_compute_units() -> list[int]:
    """Compute units (PyTorch's ``multi_processor_count``) per device, from PyTorch when it is
    already imported and sees a GPU."""
    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_available():
            return []
        return [int(torch.cuda.get_device_properties(i).multi_processor_count) for i in range(torch.cuda.device_count())]
    except Exception:  # noqa: BLE001 - a device that cannot answer is left out, not a crash
        return []


def _compute_unit_notes(gpus: list, torch_units: list[int], env: Any, notes: list) -> None:
    mask = env.get("HSA_CU_MASK")
    if mask:
        notes.append(f"HSA_CU_MASK={mask!r} limits the compute units kernels run on: unset it to "
                     "use the whole GPU.")
    for gpu, units in zip(gpus, torch_units):
        if gpu["compute_units"] is not None and gpu["compute_units"] != units:
            notes.append(f"rocminfo counts {gpu['compute_units']} compute units on GPU {gpu['index']}, "
                         f"PyTorch {units}: HIP_VISIBLE_DEVICES orders them differently, or a CU mask "
                         "is in effect.")


def _memory_hazards(memory: list, hazard: Hazard, hazards: list) -> None:
    for row in memory:
        total, free = row["total_bytes"], row["free_bytes"]
        # What this process's PyTorch holds is not taken from it: count it as free.
        mine = row["reserved_bytes"] or 0
        if total and free is not None and free + mine < LOW_FREE_FRACTION * total:
            hazards.append(hazard(
                "gpu-memory-taken", "warning",
                f"GPU {row['index']} has {free / 2**30:.1f} of {total / 2**30:.1f} GiB free "
                f"({row['source']}): another process holds most of it, and allocations will fail.",
                "find the process with amd-smi process (rocm-smi --showpids; nvidia-smi on NVIDIA) "
                "and stop it, or pick another GPU with HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES",
                "device memory",
            ))


# --- text -----------------------------------------------------------------------------------


def _gib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**30:.1f}"


def toolchain_text(section: dict[str, Any]) -> list[str]:
    """The toolchain lines of the doctor's text report."""
    root = section["rocm"]
    where = f"{root['path']} (from {root['from']})" if root["exists"] else f"{root['path']}: not found"
    lines = [f"  rocm             {where}" + (f", release {root['version']}" if root["version"] else "")]
    for name, run in section["tools"].items():
        state = run["status"] if run["status"] != "ok" else run["path"]
        if name == "hipcc" and section["hipcc_hip_version"]:
            state += f" (HIP {section['hipcc_hip_version']})"
        elif run["status"] in ("failed", "timeout"):
            state += f" ({run['detail']})"
        lines.append(f"  {name:<16} {state}")
    if section["torch_hip_version"]:
        lines.append(f"  torch hip        {section['torch_hip_version']}")
    for gpu in section["gpus"]:
        units = gpu["compute_units"] if gpu["compute_units"] is not None else "?"
        label = gpu["marketing_name"] or gpu["name"] or "?"
        lines.append(f"  gpu {gpu['index']:<12} {gpu['name']} {label}, {units} compute units (rocminfo)")
    for row in section["memory"]:
        allocated = f", {_gib(row['allocated_bytes'])} allocated here" if row["allocated_bytes"] is not None else ""
        lines.append(f"  memory {row['index']:<9} {_gib(row['total_bytes'])} GiB total, {_gib(row['used_bytes'])} "
                     f"used, {_gib(row['free_bytes'])} free{allocated} ({row['source']})")
    return lines
