"""Platform detection for the runtime helpers.

Everything here works on machines without a GPU and without PyTorch: torch is
imported inside the functions, never at module import, and pynvml is never
imported at all (check ROCM001 points here: on ROCm builds a top-level
``import pynvml`` fails or silently sends tests to the CPU).
"""

from __future__ import annotations

import platform as _stdlib_platform
import threading
from typing import Any

# Cached answer of ``is_rocm()``; ``None`` until first asked.  Tests may set it
# to simulate a ROCm build on a CPU-only machine.
_IS_ROCM: bool | None = None

_AITER_LOCK = threading.Lock()
# (available, reason) once computed; tests reset it to ``None``.
_AITER_STATUS: tuple[bool, str] | None = None

# Namespace under ``torch.ops`` where AMD's aiter registers its operators
# (``torch.ops.aiter.mha_fwd``).  Tests point this at a namespace of their own.
AITER_OPS_NAMESPACE = "aiter"
# Module imported to load the aiter operator library.
AITER_MODULE = "aiter"


def _torch():
    """Return the torch module, or ``None`` when PyTorch is not installed."""
    try:
        import torch
    except Exception:  # ImportError, or a broken install raising anything else
        return None
    return torch


def torch_available() -> bool:
    """True when PyTorch can be imported."""
    return _torch() is not None


def is_rocm() -> bool:
    """True when the installed PyTorch is a ROCm (HIP) build.

    Decided by ``torch.version.hip`` (a version string on ROCm builds, ``None``
    on CUDA and CPU builds) and computed once.  False when torch is missing.
    """
    global _IS_ROCM
    if _IS_ROCM is None:
        torch = _torch()
        _IS_ROCM = bool(torch is not None and getattr(torch.version, "hip", None))
    return _IS_ROCM


def gpu_available() -> bool:
    """True when PyTorch can use a GPU, NVIDIA (CUDA) or AMD (ROCm).

    The replacement for pynvml-based detection (check ROCM001):
    ``torch.cuda.is_available()`` is true on ROCm builds too, because PyTorch
    for HIP reuses the ``torch.cuda`` interfaces.  Never imports pynvml; returns
    False on CPU-only machines and when PyTorch is not installed.
    """
    torch = _torch()
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def _device_index(device: Any) -> int:
    torch = _torch()
    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int):
        return device
    dev = torch.device(device)
    return dev.index if dev.index is not None else torch.cuda.current_device()


def _arch_strings(props: Any) -> tuple[str | None, str | None]:
    """Return (short arch, full arch string) from device properties."""
    if is_rocm():
        full = getattr(props, "gcnArchName", None) or None
        if not full:
            return None, None
        # gcnArchName carries target features after the gfx name, e.g.
        # "gfx942:sramecc+:xnack-"; the gfx name alone is what build systems use.
        return full.split(":", 1)[0], full
    major = getattr(props, "major", None)
    minor = getattr(props, "minor", None)
    if major is None or minor is None:
        return None, None
    arch = f"sm_{major}{minor}"
    return arch, arch


def gpu_arch(device: Any = None) -> str | None:
    """The GPU architecture name, read from the device (never hard-coded).

    ``gfx942``-style names on ROCm (from
    ``torch.cuda.get_device_properties(...).gcnArchName``, target features
    such as ``:xnack-`` dropped), ``sm_90``-style names on NVIDIA, ``None`` on
    machines without a usable GPU or without PyTorch.
    """
    if not gpu_available():
        return None
    torch = _torch()
    try:
        props = torch.cuda.get_device_properties(_device_index(device))
    except Exception:
        return None
    return _arch_strings(props)[0]


def aiter_status() -> tuple[bool, str]:
    """``(available, reason)`` for AMD's aiter operator library.

    Available means all of: a ROCm build of PyTorch; ``import aiter``
    finished within ``aiter_import_timeout()`` seconds without raising
    (anything it raises is caught, ``SystemExit`` and ``KeyboardInterrupt``
    included: AMD's ``amd-aiter`` raises RuntimeError, not ImportError, on a
    machine without ROCm); and aiter's attention is there, as the operator
    ``torch.ops.aiter.mha_fwd`` or the public ``aiter.flash_attn_func`` (an
    unrelated PyPI package is also named ``aiter`` and imports fine).
    Computed lazily once; importing ``rocmlint.runtime`` never imports aiter.
    """
    global _AITER_STATUS
    status = _AITER_STATUS
    if status is not None:
        return status
    with _AITER_LOCK:
        if _AITER_STATUS is None:
            _AITER_STATUS = _probe_aiter()
        return _AITER_STATUS


def aiter_available() -> bool:
    """True when AMD's aiter kernels can be used (see ``aiter_status``).

    The runtime answer to the ``except ImportError``-only aiter guard: it never
    tries ``import aiter`` outside ROCm, so it costs nothing on NVIDIA and CPU
    machines.
    """
    return aiter_status()[0]


#: Seconds to wait for ``import aiter`` (and its submodules) before treating
#: aiter as unusable; ``ROCMLINT_AITER_IMPORT_TIMEOUT`` overrides it.
AITER_IMPORT_TIMEOUT_S = 60.0


def aiter_import_timeout() -> float:
    """The import time limit in seconds (``ROCMLINT_AITER_IMPORT_TIMEOUT`` or
    ``AITER_IMPORT_TIMEOUT_S``); invalid values fall back to the default."""
    import os

    text = os.environ.get("ROCMLINT_AITER_IMPORT_TIMEOUT")
    if text:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if value > 0 and value == value:  # NaN is not a time limit
            return value
    return AITER_IMPORT_TIMEOUT_S


class _ImportAttempt:
    """One ``import <name>`` run on a daemon thread.

    The import runs off the caller's thread so that a module which raises
    ``SystemExit`` or ``KeyboardInterrupt`` at import cannot end the caller's
    process, and one that hangs cannot block it for longer than the time limit
    (the thread is left behind; Python does not wait for daemon threads at
    exit).  A module that kills the process outright (``os._exit``, a crash
    in native code) cannot be contained in-process.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.module: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"rocmlint-import-{name}", daemon=True
        )
        self.thread.start()

    def _run(self) -> None:
        import importlib

        try:
            self.module = importlib.import_module(self.name)
        except BaseException as exc:  # noqa: B036 - SystemExit/KeyboardInterrupt must not escape
            self.error = exc
        finally:
            self.done.set()


_IMPORTS: dict[str, _ImportAttempt] = {}
_IMPORTS_LOCK = threading.Lock()


def import_guarded(name: str) -> tuple[Any, str | None]:
    """Import module ``name`` the way the aiter probe does: ``(module, None)``
    on success, ``(None, reason)`` when it raised anything or did not finish
    within ``aiter_import_timeout()`` seconds.  An import that is still
    running is waited on, never started twice."""
    import sys

    module = sys.modules.get(name)
    if module is not None and name not in _IMPORTS:
        spec = getattr(module, "__spec__", None)
        # A module that another thread is still importing is in sys.modules
        # half initialised; wait for that import like for our own.
        if not getattr(spec, "_initializing", False):
            return module, None
    with _IMPORTS_LOCK:
        attempt = _IMPORTS.get(name)
        if attempt is None or (attempt.done.is_set() and attempt.module is None):
            attempt = _IMPORTS[name] = _ImportAttempt(name)
    limit = aiter_import_timeout()
    if not attempt.done.wait(limit):
        return None, f"import {name} did not finish within {limit:g} s"
    if attempt.error is not None:
        exc = attempt.error
        return None, f"import {name} failed: {type(exc).__name__}: {exc}"
    return attempt.module, None


def _probe_aiter() -> tuple[bool, str]:
    torch = _torch()
    if torch is None:
        return False, "PyTorch is not installed"
    if not is_rocm():
        return False, "not a ROCm build of PyTorch (aiter needs ROCm)"
    module, problem = import_guarded(AITER_MODULE)
    if module is None:
        return False, problem or f"import {AITER_MODULE} failed"
    if _ops_attr(torch, "mha_fwd") is not None:
        return True, f"torch.ops.{AITER_OPS_NAMESPACE}.mha_fwd found"
    if callable(getattr(module, "flash_attn_func", None)):
        return True, f"{AITER_MODULE}.flash_attn_func found"
    return False, (
        f"'{AITER_MODULE}' imports but neither torch.ops.{AITER_OPS_NAMESPACE}.mha_fwd "
        f"nor {AITER_MODULE}.flash_attn_func exists (not AMD's aiter, or an "
        "incomplete build)"
    )


def aiter_module() -> Any:
    """The imported aiter module when aiter is available, else ``None``."""
    if not aiter_available():
        return None
    import sys

    return sys.modules.get(AITER_MODULE)


def _ops_attr(torch: Any, name: str) -> Any:
    """``torch.ops.<AITER_OPS_NAMESPACE>.<name>`` or ``None``."""
    try:
        namespace = getattr(torch.ops, AITER_OPS_NAMESPACE)
        return getattr(namespace, name)
    except (AttributeError, RuntimeError):
        return None


def aiter_op(name: str) -> Any:
    """The aiter operator ``name`` when aiter is available, else ``None``."""
    if not aiter_available():
        return None
    torch = _torch()
    op = _ops_attr(torch, name)
    if op is None:
        # Some aiter operators are registered only when their Python module is
        # imported (the tuned GEMM lives in aiter.tuned_gemm).
        if name == "gemm_a16w16":
            module, _ = import_guarded(AITER_MODULE + ".tuned_gemm")
            if module is None:
                return None
            op = _ops_attr(torch, name)
    return op


def target_info(arch: str) -> dict[str, Any] | None:
    """``rocmlint.targets`` entry for a gfx name as a dict, or None."""
    from .. import targets

    entry = targets.target(arch)
    return None if entry is None else entry.as_dict()


def _product(arch: str, device_name: str) -> tuple[str | None, int | None]:
    from .. import targets

    entry = targets.target(arch)
    if entry is None:
        return None, None
    return entry.product_for(device_name), entry.compute_units_of(device_name)


def device_info() -> dict[str, Any]:
    """A JSON-serialisable description of the accelerator stack.

    Keys: ``torch`` (installed?), ``torch_version``, ``vendor`` (``"amd"``,
    ``"nvidia"`` or ``None`` without a usable GPU), ``stack`` (``"rocm"``,
    ``"cuda"``, ``"cpu"``; ``None`` without torch), ``stack_version`` (HIP or
    CUDA version of the torch build), ``gpu_available``, ``device_count``,
    ``device_name``, ``arch``, ``arch_full`` (with ROCm target features),
    ``target`` (on AMD GPUs, what ``rocmlint.targets`` knows about ``arch``:
    family, wave size, fp8 flavour, LDS, matrix cores, first ROCm release;
    ``None`` elsewhere or for an unknown target), ``compute_units`` (what
    the device reports: CUs on AMD, SMs on NVIDIA), ``product`` and
    ``product_compute_units`` (on AMD GPUs, the table's product the device
    name names and its CU count, for the whole product: a multi-die MI250X is
    two devices of half the count), ``total_memory_bytes``,
    ``total_memory_gib``, ``aiter_available``, ``aiter_reason``, ``python``.
    """
    info: dict[str, Any] = {
        "torch": False,
        "torch_version": None,
        "vendor": None,
        "stack": None,
        "stack_version": None,
        "gpu_available": False,
        "device_count": 0,
        "device_name": None,
        "arch": None,
        "arch_full": None,
        "target": None,
        "compute_units": None,
        "product": None,
        "product_compute_units": None,
        "total_memory_bytes": None,
        "total_memory_gib": None,
        "aiter_available": False,
        "aiter_reason": None,
        "python": _stdlib_platform.python_version(),
    }
    torch = _torch()
    if torch is None:
        info["aiter_reason"] = "PyTorch is not installed"
        return info
    info["torch"] = True
    info["torch_version"] = str(torch.__version__)
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    if is_rocm():
        info["stack"], info["stack_version"] = "rocm", str(hip) if hip else None
    elif cuda:
        info["stack"], info["stack_version"] = "cuda", str(cuda)
    else:
        info["stack"] = "cpu"
    if gpu_available():
        info["gpu_available"] = True
        info["vendor"] = "amd" if is_rocm() else "nvidia"
        try:
            info["device_count"] = int(torch.cuda.device_count())
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            info["device_name"] = str(props.name)
            info["arch"], info["arch_full"] = _arch_strings(props)
            units = getattr(props, "multi_processor_count", None)
            info["compute_units"] = int(units) if units else None
            if info["vendor"] == "amd" and info["arch"]:
                info["target"] = target_info(info["arch"])
                info["product"], info["product_compute_units"] = _product(
                    info["arch"], info["device_name"])
            total = int(props.total_memory)
            info["total_memory_bytes"] = total
            info["total_memory_gib"] = round(total / 2**30, 2)
        except Exception as exc:  # a driver problem must not break the report
            info["device_error"] = f"{type(exc).__name__}: {exc}"
    available, reason = aiter_status()
    info["aiter_available"] = available
    info["aiter_reason"] = reason
    return info
