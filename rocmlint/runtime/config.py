"""Configuration guards: settings that help on NVIDIA and hurt or fail on ROCm.

Each helper leaves NVIDIA (and CPU) behaviour exactly as the original line of
code had it and applies the ROCm-safe choice on ROCm.  Torch is imported inside
the functions (``configure_allocator`` reads only the environment and the
installed torch version, so it can run before ``import torch``).
"""

from __future__ import annotations

import numbers
import os
import warnings
from typing import Any, Callable

from . import device as _device

__all__ = [
    "configure_allocator",
    "set_tf32",
    "set_cudnn_benchmark",
    "compile_mode",
    "compile",
    "apply_inductor_rocm_defaults",
]

# Allocator settings are read once, at the first GPU allocation.  PyTorch reads
# one variable, the first that is set, and ignores the others:
#   torch 2.13: PYTORCH_CUDA_ALLOC_CONF, else PYTORCH_HIP_ALLOC_CONF (ROCm
#       builds), else PYTORCH_ALLOC_CONF, for the CUDA/HIP-only keys
#       (c10/cuda/CUDAAllocatorConfig.h) and the device-generic ones alike
#       (measured on the installed 2.13.0 with
#       torch._C._accelerator_getAllocatorSettings(): with both set, the CUDA
#       variable's garbage_collection_threshold won).  2.10-2.12 are taken to
#       read in the same order (the header asks to keep it stable).
#   torch 2.9: PYTORCH_ALLOC_CONF first, then the other two with a deprecation
#       warning; 2.9.1 ignored PYTORCH_ALLOC_CONF for expandable_segments
#       (pytorch/pytorch#183387).
#   torch < 2.9: PYTORCH_CUDA_ALLOC_CONF, else PYTORCH_HIP_ALLOC_CONF on ROCm;
#       PYTORCH_ALLOC_CONF is not read.
# So PYTORCH_CUDA_ALLOC_CONF is read on every version, first or right after
# PYTORCH_ALLOC_CONF.  configure_allocator starts from the settings the
# installed version reads now (so that on NVIDIA the value in force stays the
# one in force), writes them with the new ones to PYTORCH_CUDA_ALLOC_CONF and
# to every other variable that version reads and that is already set (so that
# whichever one a reader takes, it says the same).
_ALLOC_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
_ALWAYS_WRITTEN = "PYTORCH_CUDA_ALLOC_CONF"


def _torch_release() -> tuple[int, int] | None:
    """(major, minor) of the installed torch distribution, read from its metadata
    (torch is not imported: this runs before it), or None."""
    from importlib import metadata

    try:
        version = metadata.version("torch")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    parts = version.split("+", 1)[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def _allocator_read_order(rocm: bool, release: tuple[int, int] | None) -> tuple[str, ...]:
    """The allocator variables the installed torch reads, first one first (see above)."""
    cuda_side = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF") if rocm else ("PYTORCH_CUDA_ALLOC_CONF",)
    if release is not None and release < (2, 9):
        return cuda_side
    if release is not None and release == (2, 9):
        return ("PYTORCH_ALLOC_CONF", *cuda_side)
    return (*cuda_side, "PYTORCH_ALLOC_CONF")


def _parse_alloc_conf(text: str | None) -> dict[str, str]:
    """``"a:1,b:2"`` -> ``{"a": "1", "b": "2"}``, keeping order."""
    result: dict[str, str] = {}
    if not text:
        return result
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition(":")
        result[key.strip()] = value.strip() if sep else ""
    return result


def _format_alloc_conf(settings: dict[str, str]) -> str:
    return ",".join(f"{k}:{v}" if v != "" else k for k, v in settings.items())


def configure_allocator(
    *,
    expandable_segments: bool | None = None,
    max_split_size_mb: int | None = None,
    environ: dict[str, str] | None = None,
    torch_release: tuple[int, int] | None = None,
) -> str:
    """Set the caching-allocator configuration so that every PyTorch version
    reads it.

    The replacement for ``os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "..."`` lines
    (the allocator checks point here).  Must run before the first GPU
    allocation; returns the resulting configuration string.

    What it writes, on every platform: the settings in force now (those of
    the first variable set among ``PYTORCH_CUDA_ALLOC_CONF``,
    ``PYTORCH_HIP_ALLOC_CONF`` on ROCm, and ``PYTORCH_ALLOC_CONF``, in the
    order the installed torch reads them: ``PYTORCH_ALLOC_CONF`` first on
    2.9, not at all before 2.9) plus the ones passed, into
    ``PYTORCH_CUDA_ALLOC_CONF`` (read by every version, on 2.9.1 the only one
    read for ``expandable_segments``) and into each of the others that this
    torch reads and that is already set.  A value in a variable torch ignores
    (a second one set) does not come back into force.  ``max_split_size_mb`` is written as given on
    ROCm too: PyTorch's allocator reads it there.

    On NVIDIA and CPU nothing else changes, and with no arguments nothing is
    written.  On ROCm ``expandable_segments:True`` is added unless
    ``expandable_segments=False`` (or the user's settings say otherwise), with
    a warning that says what was written and why to verify it: some ROCm
    builds were reported to return zeroed data with it (legacy-rocm-build
    #6603), and torch 2.13 ignores it, with its own warning, on ROCm builds
    older than ROCm 7.0 (``CUDAAllocatorConfig::expandable_segments``).

    ``environ`` (default ``os.environ``) lets callers compute without touching
    the process environment; ``torch_release`` ((major, minor), default: the
    installed torch's) the order in which the variables are read.
    """
    _check_allocator_args(expandable_segments, max_split_size_mb)
    env = os.environ if environ is None else environ
    rocm = _device.is_rocm()
    names = _allocator_read_order(rocm, torch_release if torch_release is not None else _torch_release())
    present = [name for name in names if env.get(name)]
    # What this torch reads now: the first variable set, the others ignored.
    merged = _parse_alloc_conf(env.get(present[0])) if present else {}
    turn_on = False
    if rocm and expandable_segments is None and "expandable_segments" not in merged:
        expandable_segments = turn_on = True
    if max_split_size_mb is None and expandable_segments is None:
        # Nothing asked for: every variable stays as it is.
        return _format_alloc_conf(merged)
    if max_split_size_mb is not None:
        merged["max_split_size_mb"] = str(int(max_split_size_mb))
    if expandable_segments is not None:
        merged["expandable_segments"] = "True" if expandable_segments else "False"
    text = _format_alloc_conf(merged)
    written = list(dict.fromkeys([*present, _ALWAYS_WRITTEN]))
    for name in written:
        env[name] = text
    if rocm and merged.get("expandable_segments", "").lower() == "true" and (
            turn_on or expandable_segments):
        warnings.warn(
            f"configure_allocator: wrote {text!r} to {', '.join(written)} "
            "(expandable_segments on). Verify it on this stack: some ROCm builds were "
            "reported to return zeroed data with expandable segments "
            "(legacy-rocm-build#6603), and PyTorch built against ROCm older than 7.0 "
            "leaves them off with the warning 'expandable_segments not supported on this "
            "platform'. Pass expandable_segments=False to leave them off.",
            RuntimeWarning,
            stacklevel=2,
        )
    if environ is None:
        _warn_if_allocator_started()
    return text


# PyTorch refuses small max_split_size_mb values at the first GPU allocation
# ("CachingAllocator option max_split_size_mb too small"; kLargeBuffer is
# 20 MiB): c10/cuda/CUDAAllocatorConfig.cpp requires > 20, the newer
# c10/core/AllocatorConfig.cpp >= 20.  Values above 20 work on every version.
_MIN_SPLIT_MB = 20


def _check_allocator_args(expandable_segments: Any, max_split_size_mb: Any) -> None:
    """Reject bad values before anything is written to the environment."""
    if expandable_segments is not None and not isinstance(expandable_segments, bool):
        raise TypeError(
            "configure_allocator: expandable_segments must be True, False or None, got "
            f"{expandable_segments!r}"
        )
    if max_split_size_mb is None:
        return
    if isinstance(max_split_size_mb, bool) or not isinstance(max_split_size_mb, numbers.Integral):
        raise TypeError(
            "configure_allocator: max_split_size_mb must be an int (MiB), got "
            f"{max_split_size_mb!r}"
        )
    if max_split_size_mb <= _MIN_SPLIT_MB:
        raise ValueError(
            f"configure_allocator: max_split_size_mb must be greater than {_MIN_SPLIT_MB} "
            f"(MiB; PyTorch rejects smaller values at start-up), got {max_split_size_mb}"
        )


def _warn_if_allocator_started() -> None:
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        started = torch.cuda.is_initialized()
    except Exception:
        return
    if started:
        warnings.warn(
            "configure_allocator: the GPU is already initialised; the new allocator "
            "settings apply only to a new process",
            RuntimeWarning,
            stacklevel=3,
        )


def set_tf32(enabled: bool) -> bool:
    """``torch.backends.cuda.matmul.allow_tf32 = enabled`` and
    ``torch.backends.cudnn.allow_tf32 = enabled``, skipped on ROCm.

    They exist on every build (no AttributeError), but on ROCm TF32 depends on
    the PyTorch release and the GPU (MI300 only, first behind
    ``HIPBLASLT_ALLOW_TF32=1``; RDNA warns), so they are left alone there.
    Returns True when the flags were set, False when skipped.
    """
    if _device.is_rocm():
        return False
    import torch

    torch.backends.cuda.matmul.allow_tf32 = bool(enabled)
    torch.backends.cudnn.allow_tf32 = bool(enabled)
    return True


def set_cudnn_benchmark(enabled: bool) -> bool:
    """``torch.backends.cudnn.benchmark = enabled``, skipped on ROCm.
    Returns True when set, False when skipped."""
    if _device.is_rocm():
        return False
    import torch

    torch.backends.cudnn.benchmark = bool(enabled)
    return True


# torch.compile modes that capture CUDA graphs, and the mode that keeps the
# rest of each without graphs (torch._inductor.list_mode_options():
# "reduce-overhead" is {"triton.cudagraphs": True}; "max-autotune" adds
# max_autotune and coordinate_descent_tuning to it; "max-autotune-no-cudagraphs"
# is the same tuning without graphs).  The same answers as the fix-its of
# ROCM002 and ROCM101 (a test compares them).
_ROCM_MODES = {
    "reduce-overhead": "default",
    "max-autotune": "max-autotune-no-cudagraphs",
}
_CUDAGRAPH_OPTIONS = ("triton.cudagraphs", "triton.cudagraph_trees")


def compile_mode(mode: str | None = None) -> str | None:
    """The ``torch.compile`` mode to use on this machine (checks ROCM002 and
    ROCM101).

    On ROCm, the modes that capture CUDA graphs lose only the graphs:
    ``"reduce-overhead"`` becomes ``"default"`` and ``"max-autotune"`` becomes
    ``"max-autotune-no-cudagraphs"`` (HIP graph capture under torch.compile
    has had release-bound failures there).  On NVIDIA and CPU the mode is
    returned unchanged.
    """
    if mode in _ROCM_MODES and _device.is_rocm():
        return _ROCM_MODES[mode]
    return mode


def compile(model: Any = None, *, mode: str | None = None, **kwargs: Any) -> Any:
    """``torch.compile(model, mode=compile_mode(mode), **kwargs)`` (check ROCM002).

    On ROCm, CUDA-graph options (``triton.cudagraphs``,
    ``triton.cudagraph_trees``) in ``options`` are also turned off.  Usable as
    a decorator: ``@compile(mode="reduce-overhead")``.  NVIDIA unchanged.
    """
    if model is None:
        def decorator(fn: Callable[..., Any]) -> Any:
            return compile(fn, mode=mode, **kwargs)

        return decorator
    import torch

    mode = compile_mode(mode)
    options = kwargs.get("options")
    if options and _device.is_rocm():
        options = dict(options)
        for key in _CUDAGRAPH_OPTIONS:
            if options.get(key):
                options[key] = False
        kwargs["options"] = options
    if mode is not None:
        kwargs["mode"] = mode
    return torch.compile(model, **kwargs)


def apply_inductor_rocm_defaults(*, aten_gemm: bool = True) -> dict[str, Any]:
    """On ROCm, switch off inductor CUDA graphs, CUDA-graph trees and memory
    planning, and (``aten_gemm=True``) keep GEMMs on the ATen backend
    (rocBLAS/hipBLASLt) when max-autotune is on.  (Both are off by default in
    recent PyTorch; this undoes explicit opt-ins.)

    Returns ``{setting: new value}`` for what changed; ``{}`` on NVIDIA and
    CPU, where nothing is touched.  The inductor settings check points here:
    CUDA-graph capture has had release-bound failures on ROCm.
    """
    if not _device.is_rocm():
        return {}
    import torch._inductor.config as inductor_config

    wanted: dict[str, Any] = {
        "triton.cudagraphs": False,
        "triton.cudagraph_trees": False,
        "memory_planning": False,
    }
    if aten_gemm:
        wanted["max_autotune_gemm_backends"] = "ATEN"
    changed: dict[str, Any] = {}
    for dotted, value in wanted.items():
        target = inductor_config
        *parents, leaf = dotted.split(".")
        for parent in parents:
            target = getattr(target, parent)
        if not hasattr(target, leaf):
            continue
        if getattr(target, leaf) != value:
            setattr(target, leaf, value)
            changed[dotted] = value
    return changed
