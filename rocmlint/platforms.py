"""Which names say a GPU software stack: the vocabulary every gate and build reader shares.

Python gates (`is_rocm`, `IS_HIP`), the C preprocessor's platform macros (`USE_ROCM`,
`__HIPCC__`) and build switches (`HIP_FOUND`, `GGML_CUDA`) are all recognised by the words
their names are made of, split at underscores, punctuation and camel-case humps.
"""

from __future__ import annotations

import re

_CAMEL_HUMPS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def words_of(name: str) -> set[str]:
    """The lower-case words of an identifier: `isHipBuild` -> {"is", "hip", "build"},
    `USE_ROCM` -> {"use", "rocm"}."""
    lower = name.lower()
    words = {w for w in re.split(r"[^a-z0-9]+", lower) if w}
    words.update(w.lower() for w in _CAMEL_HUMPS.findall(name))
    return words


def _names_gfx_target(words: set[str]) -> bool:
    return any(w.startswith("gfx") and w[3:4].isdigit() for w in words)


# --- any GPU stack (gates: both sides of a test on it are platform-specific) -----------------

# Identifier parts that name a GPU software stack. "cuda" alone is not one of them:
# `torch.cuda` and `.is_cuda` are true on ROCm builds of PyTorch as well.
_PLATFORM_PARTS = {"rocm", "hip", "hipcc", "amd", "amdgpu", "amdgcn", "hcc", "nvidia", "nvcc",
                   # AMD's GPU families: `_on_rdna4()`, `IS_CDNA3` test for AMD GPUs
                   "rdna", "cdna"}


def names_platform(identifier: str) -> bool:
    """True when an identifier names a GPU stack: is_rocm, IS_HIP, use_rocm, __HIPCC__, isHip."""
    if "rocm" in identifier.lower():
        return True
    words = words_of(identifier)
    return bool(words & _PLATFORM_PARTS) or _names_gfx_target(words)


# --- one vendor or the other (build switches) ------------------------------------------------

_ROCM_WORDS = {"rocm", "hip", "hipcc", "amd", "amdgpu", "amdgcn", "hcc", "rccl", "rocwmma", "ck"}
_CUDA_WORDS = {"cuda", "cudatoolkit", "cudart", "nvcc", "nvidia", "nvptx", "cudnn", "cublas", "cublaslt", "nvrtc", "cupti"}
# "amd64" / "x86_64|amd64" name a CPU architecture, not AMD GPUs.
_CPU_ARCH = re.compile(r"amd64|x86[-_]?64", re.IGNORECASE)


def names_rocm(name: str) -> bool:
    """Does a build switch or identifier name the AMD stack? `USE_ROCM`, `HIP_FOUND`, `isHip`."""
    if _CPU_ARCH.search(name):
        return False
    words = words_of(name)
    if "rocm" in name.lower() or words & _ROCM_WORDS:
        return True
    return any(w.startswith("hip") and w not in ("hips", "hipster") for w in words) or _names_gfx_target(words)


def names_cuda(name: str) -> bool:
    """Does it name the NVIDIA stack? `CUDA_FOUND`, `FORCE_CUDA`, `CMAKE_CUDA_COMPILER`."""
    words = words_of(name)
    return bool(words & _CUDA_WORDS) or any(w.startswith("cuda") for w in words)
