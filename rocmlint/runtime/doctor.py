"""``python -m rocmlint.runtime`` / ``rocmlint doctor``: what this machine runs on,
and the ROCm hazards visible at run time.

Works with no GPU and without PyTorch.  Nothing here imports pynvml or, outside
ROCm, aiter (AMD's package spends seconds failing to import there).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import sys
from typing import Any

from . import device as _device
from . import toolchain as _toolchain

__all__ = ["collect", "main", "schema", "SCHEMA_FILE"]

#: Root of the file system the AMD GPU probe reads (tests point it elsewhere).
SYS_ROOT = "/"

#: The JSON Schema of ``rocmlint doctor --json`` (shipped beside this module).
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doctor.schema.json")

_ALLOC_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")


def amd_gpus(root: str | None = None) -> list[str]:
    """gfx names of the AMD GPUs the kernel driver exposes, without ROCm or torch.

    Reads ``/sys/class/kfd/kfd/topology/nodes/*/properties``: GPU nodes have a
    non-zero ``gfx_target_version`` (e.g. 90402 for gfx942, 90010 for gfx90a).
    """
    root = SYS_ROOT if root is None else root
    pattern = os.path.join(root, "sys/class/kfd/kfd/topology/nodes/*/properties")
    names = []
    for path in sorted(glob.glob(pattern)):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "gfx_target_version":
                try:
                    version = int(parts[1])
                except ValueError:
                    break
                if version:
                    major, minor, step = version // 10000, (version // 100) % 100, version % 100
                    names.append(f"gfx{major}{minor:x}{step:x}")
                break
    return names


def _distributions_of(module: str) -> list[str]:
    try:
        from importlib.metadata import packages_distributions

        return sorted(set(packages_distributions().get(module, [])))
    except Exception:
        return []


def _spec_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _hazard(hid: str, severity: str, message: str, fix: str, see: str) -> dict[str, str]:
    return {"id": hid, "severity": severity, "message": message, "fix": fix, "see": see}


def collect(*, managed_memory: bool = False, environ: Any = None) -> dict[str, Any]:
    """Gather ``device_info()`` and the hazards; returns a JSON-able dict with
    keys ``device``, ``amd_gpus``, ``hazards`` and ``notes``."""
    env = os.environ if environ is None else environ
    info = _device.device_info()
    gpus = amd_gpus()
    kfd = os.path.exists(os.path.join(SYS_ROOT, "dev/kfd"))
    amd_machine = bool(gpus) or kfd
    rocm = info["stack"] == "rocm"
    hazards: list[dict[str, str]] = []
    notes: list[str] = []

    if not info["torch"]:
        notes.append(
            "PyTorch is not installed: only the linter works here; the runtime ops "
            "need it (pip install rocmlint[runtime])."
        )

    # 1. max_split_size_mb in the allocator configuration on ROCm: a note, not
    # a hazard.  PyTorch's allocator reads the key on ROCm builds too (c10's
    # parser has no ROCm branch for it; PITFALLS section 4): what does not
    # carry over is the split size tuned against CUDA's fragmentation.
    if rocm or (amd_machine and not info["torch"]):
        for name in _ALLOC_VARS:
            value = env.get(name) or ""
            if "max_split_size_mb" in value:
                notes.append(
                    f"{name}={value!r} sets max_split_size_mb: PyTorch's allocator reads it "
                    "on ROCm too (it is not a start-up error), but a split size tuned "
                    "against CUDA's fragmentation does not carry over; measure it on this "
                    "stack (rocmlint.runtime.configure_allocator writes it where every "
                    "PyTorch version reads it)."
                )

    # 2. A PyTorch build that cannot use the AMD GPU of this machine.
    if amd_machine and info["torch"] and not rocm:
        where = ", ".join(gpus) if gpus else "/dev/kfd present"
        if info["stack"] == "cuda":
            hazards.append(_hazard(
                "cuda-torch-on-amd",
                "error",
                f"a CUDA build of PyTorch ({info['torch_version']}, CUDA "
                f"{info['stack_version']}) is installed on a machine with an AMD GPU "
                f"({where}): it cannot use that GPU, and code silently runs on the CPU.",
                "install a ROCm build of PyTorch (ROCm wheel index) and keep "
                "'pip install -e .' from replacing it (--no-deps)",
                "the packaging checks for CUDA-pinned torch",
            ))
        else:
            hazards.append(_hazard(
                "cpu-torch-on-amd",
                "warning",
                f"a CPU-only build of PyTorch ({info['torch_version']}) is installed on a "
                f"machine with an AMD GPU ({where}).",
                "install a ROCm build of PyTorch",
                "the packaging checks for CUDA-pinned torch",
            ))

    # 3. pynvml beside ROCm PyTorch.
    if rocm and _spec_exists("pynvml"):
        hazards.append(_hazard(
            "pynvml-with-rocm",
            "warning",
            "pynvml (nvidia-ml-py) is installed beside ROCm PyTorch: importing it fails "
            "or finds no NVIDIA device, and PyTorch builds without amdsmi can report a "
            "wrong torch.cuda.device_count() with it installed "
            "(pytorch/pytorch#133259).",
            "uninstall pynvml / nvidia-ml-py on ROCm machines; detect GPUs with "
            "rocmlint.runtime.gpu_available()",
            "ROCM001, rocmlint.runtime.gpu_available",
        ))

    # 4. aiter: broken, imposter, or AMD's package where it cannot load.
    if _spec_exists(_device.AITER_MODULE):
        dists = _distributions_of(_device.AITER_MODULE)
        origin = ", ".join(dists) if dists else "unknown distribution"
        if rocm:
            available, reason = _device.aiter_status()
            if not available:
                broken = reason.startswith("import ")
                hazards.append(_hazard(
                    "aiter-broken" if broken else "aiter-imposter",
                    "error" if broken else "warning",
                    (f"aiter ({origin}) is installed but does not import: {reason}"
                     if broken else
                     f"a module named 'aiter' ({origin}) imports, but it provides no "
                     "aiter operators (the unrelated PyPI package 'aiter' has the same "
                     "name): " + reason),
                    "reinstall AMD's aiter (amd-aiter) for this ROCm/PyTorch, or remove "
                    "the package; guard imports with rocmlint.runtime.aiter_available()",
                    "rocmlint.runtime.aiter_available",
                ))
            else:
                notes.append(f"aiter ({origin}): {reason}.")
        elif any(d.lower() == "amd-aiter" for d in dists):
            hazards.append(_hazard(
                "aiter-without-rocm",
                "warning",
                "AMD's aiter (amd-aiter) is installed on a machine without ROCm PyTorch: "
                "'import aiter' raises RuntimeError here (after about 2.4 s), which "
                "'except ImportError' guards do not catch.",
                "guard with rocmlint.runtime.aiter_available() (or 'except Exception')",
                "rocmlint.runtime.aiter_available",
            ))
        else:
            hazards.append(_hazard(
                "aiter-imposter",
                "warning",
                f"a module named 'aiter' is installed from {origin}, not AMD's "
                "amd-aiter: 'import aiter' succeeds but provides no AMD kernels.",
                "remove it, or test availability with rocmlint.runtime.aiter_available()",
                "rocmlint.runtime.aiter_available",
            ))

    # 5. Managed memory without XNACK.
    xnack = (env.get("HSA_XNACK") or "").strip()
    arch_full = info.get("arch_full") or ""
    if managed_memory and (rocm or amd_machine) and xnack != "1":
        extra = " The device reports 'xnack-' (XNACK off)." if "xnack-" in arch_full else ""
        hazards.append(_hazard(
            "managed-memory-no-xnack",
            "warning",
            "managed memory (hipMallocManaged / cudaMallocManaged / __managed__) is "
            f"requested but HSA_XNACK is {xnack or 'unset'}: on AMD GPUs page migration "
            "needs XNACK, without it access faults or silent host-memory fallbacks "
            "follow." + extra,
            "export HSA_XNACK=1 before starting the process (and use a GPU/kernel with "
            "XNACK support)",
            "the managed-memory check",
        ))
    elif rocm and "xnack-" in arch_full:
        notes.append("the device reports 'xnack-': XNACK is off (matters only for "
                     "managed memory; pass --managed-memory to check it).")
    toolchain = _add_toolchain(env, info, gpus, amd_machine, hazards, notes)
    targets = {name: _device.target_info(name) for name in dict.fromkeys(gpus)}
    return {"device": info, "amd_gpus": gpus, "amd_gpu_targets": targets,
            "toolchain": toolchain, "hazards": hazards, "notes": notes}


def _add_toolchain(env: Any, info: dict[str, Any], gpus: list[str], amd_machine: bool,
                   hazards: list[dict[str, str]], notes: list[str]) -> dict[str, Any]:
    """The ROCm toolchain (rocmlint.runtime.toolchain): its report section; its hazards and
    notes are added to the others."""
    section, found, said = _toolchain.collect_toolchain(env, SYS_ROOT, info, gpus, amd_machine, _hazard)
    hazards.extend(found)
    notes.extend(said)
    return section


def schema() -> dict[str, Any]:
    """The JSON Schema that ``rocmlint doctor --json`` output validates against."""
    with open(SCHEMA_FILE, encoding="utf-8") as handle:
        return json.load(handle)


def _target_text(entry: dict[str, Any]) -> str:
    fp8 = {"fnuz": "fp8 FNUZ", "ocp": "fp8 OCP"}.get(entry["fp8"] or "", "no fp8")
    matrix = entry["matrix_cores"] or "no matrix cores"
    first = f", ROCm >= {entry['first_rocm']}" if entry["first_rocm"] else ""
    precision = entry.get("default_precision")
    precision = f", {precision} at full rate" if precision else ""
    return (f"{entry['family']}: wave {entry['wave_size']}, {fp8}, LDS {entry['lds_kib']} KiB, "
            f"{matrix}{precision}{first}")


def _format_text(report: dict[str, Any]) -> str:
    info = report["device"]
    lines = ["rocmlint runtime doctor", ""]
    if not info["torch"]:
        lines.append("  torch            not installed")
    else:
        stack = info["stack"] or "-"
        version = f" {info['stack_version']}" if info["stack_version"] else ""
        lines.append(f"  torch            {info['torch_version']} ({stack}{version} build)")
    if info["gpu_available"]:
        lines.append(f"  gpu              {info['vendor']}: {info['device_name']} "
                     f"x{info['device_count']}")
        lines.append(f"  arch             {info['arch']}"
                     + (f" ({info['arch_full']})" if info["arch_full"] != info["arch"] else ""))
        if info.get("target"):
            lines.append(f"  target           {_target_text(info['target'])}")
        lines.append(f"  memory           {info['total_memory_gib']} GiB")
        if info.get("compute_units"):
            product = (f" ({info['product']}: {info['product_compute_units']} in all)"
                       if info.get("product_compute_units") else "")
            lines.append(f"  compute units    {info['compute_units']}{product}")
    else:
        lines.append("  gpu              none usable by PyTorch")
    if report["amd_gpus"]:
        lines.append(f"  amd gpus (kfd)   {', '.join(report['amd_gpus'])}")
        for name, entry in report.get("amd_gpu_targets", {}).items():
            text = _target_text(entry) if entry else "not in rocmlint's target table"
            lines.append(f"    {name:<14} {text}")
    lines.append(f"  aiter            {'available' if info['aiter_available'] else 'no'}"
                 f" ({info['aiter_reason']})")
    lines.append(f"  python           {info['python']}")
    lines.extend(_toolchain.toolchain_text(report["toolchain"]))
    lines.append("")
    hazards = report["hazards"]
    if not hazards:
        lines.append("hazards: none found")
    else:
        lines.append(f"hazards: {len(hazards)}")
        for h in hazards:
            lines.append(f"  [{h['severity']}] {h['id']}: {h['message']}")
            lines.append(f"      fix: {h['fix']}")
            lines.append(f"      see: {h['see']}")
    for note in report["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the report; exit status 0 when no hazard is found, 1 otherwise
    (2 for a usage error, raised by argparse)."""
    parser = argparse.ArgumentParser(
        prog="rocmlint doctor",
        description="Show the GPU software stack and the ROCm hazards visible at run time.",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--managed-memory",
        action="store_true",
        help="the program uses managed memory (checks HSA_XNACK)",
    )
    parser.add_argument(
        "--schema",
        action="store_true",
        help="print the JSON Schema of the --json output and exit",
    )
    args = parser.parse_args(argv)
    if args.schema:
        sys.stdout.write(json.dumps(schema(), indent=2) + "\n")
        return 0
    report = collect(managed_memory=args.managed_memory)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(_format_text(report) + "\n")
    return 1 if report["hazards"] else 0
