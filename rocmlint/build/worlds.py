"""The two builds of a dual-vendor project, and how a build file's switches read in each.

Every build reader (CMake, setup.py, Makefiles) runs a build file twice: once as the ROCm
build and once as the CUDA build. Conditions that the file itself decides (a variable it
sets, a list it builds) are followed as written; conditions that depend on the machine or
the user (`-D` options, environment variables, `find_package` results) cannot be known from
the source, except through their names, which is how real projects spell the vendor choice:

- In the ROCm build, a switch whose name says ROCm, HIP or AMD (`USE_ROCM`, `HIP_FOUND`,
  `IS_HIP_EXTENSION`, `GGML_HIP`, `BUILD_AMD`) is on. In CMake and Makefiles, where CUDA is
  NVIDIA's language and toolkit, one whose name says CUDA or NVIDIA (`CUDA_FOUND`,
  `GGML_CUDA`, `CMAKE_CUDA_COMPILER_VERSION`) is off; in Python build scripts, where "CUDA"
  often means any GPU (`BUILD_CUDA_EXT`, `CUDAExtension`), only NVIDIA toolkit settings are
  (`CUDA_HOME`, `TORCH_CUDA_ARCH_LIST`: see `python_switch_in_world`).
- In the CUDA build, ROCm-named switches are off and CUDA-named ones are unknown (an NVIDIA
  build may still skip its CUDA part: `SKIP_CUDA_BUILD`).
- A name that also says skip, disable, no, ... (`SKIP_CUDA_BUILD`, `GGML_HIP_NO_VMM`) is
  unknown in both: it is an opt-out, not the vendor choice.
- A variable the file does not set, compared with a vendor name (`COMPUTE_BACKEND STREQUAL
  "hip"`, `BUILD_TARGET == "rocm"`), selects that vendor in its own build.
Everything else is unknown, and a reader then follows both branches, so a source is only
ever kept out of the ROCm build by a condition that really says so.
"""

from __future__ import annotations

from rocmlint.platforms import names_cuda, names_rocm, words_of

ROCM, CUDA = "rocm", "cuda"
WORLDS = (ROCM, CUDA)

# Words that turn a vendor switch into an opt-out whose value the vendor does not decide.
_OPT_OUT_WORDS = {"skip", "disable", "disabled", "no", "not", "without", "exclude", "ignore", "ignored", "off", "nvidia2amd"}


def is_opt_out(name: str) -> bool:
    return bool(words_of(name) & _OPT_OUT_WORDS)


def switch_in_world(name: str, world: str) -> bool | None:
    """How a switch the build file does not set reads in `world`: on, off, or unknown (None)."""
    rocm, cuda = names_rocm(name), names_cuda(name)
    if rocm == cuda or is_opt_out(name):
        return None
    if world == ROCM:
        return rocm
    return False if rocm else None


# In Python build scripts of PyTorch extensions "CUDA" usually means "the GPU", whichever
# vendor's: `BUILD_CUDA_EXT` and `CUDAExtension` also drive the hipified ROCm build
# (auto-gptq), so such names are unknown there. Unset in a ROCm build are only the settings
# of NVIDIA's toolkit (PyTorch's `CUDA_HOME` is the nvcc install it found; TORCH_CUDA_ARCH_LIST
# is ignored by ROCm builds, which read PYTORCH_ROCM_ARCH) and FORCE_CUDA, which forces the
# CUDA build where no GPU is visible (xformers, detectron2): projects that build for ROCm test
# `torch.version.hip` or ROCM_HOME for that.
NVIDIA_TOOLKIT_SETTINGS = frozenset(
    {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDACXX", "TORCH_CUDA_ARCH_LIST", "CUDA_TOOLKIT_ROOT_DIR", "NVCC",
     "FORCE_CUDA"}
)


def python_switch_in_world(name: str, world: str) -> bool | None:
    """How a Python build script's switch reads in `world` (see NVIDIA_TOOLKIT_SETTINGS)."""
    if name in NVIDIA_TOOLKIT_SETTINGS:
        return False if world == ROCM else None
    if names_rocm(name) and not names_cuda(name) and not is_opt_out(name):
        return world == ROCM
    return None


def vendor_literal(text: str) -> str | None:
    """The vendor a literal such as "hip", "ROCm", "cuda" names, or None."""
    word = text.strip().strip("\"'").lower()
    if word in ("rocm", "hip", "amd", "hipcc", "amdgpu"):
        return ROCM
    if word in ("cuda", "nvidia", "nvcc"):
        return CUDA
    return None


def selects(literal: str, world: str) -> bool | None:
    """Is an unset vendor selector equal to `literal` in `world`? None when it names no vendor.

    In the ROCm build a selector holds the ROCm name (`"hip"` / `"rocm"`), never `"cuda"`,
    `"cpu"` or anything else that names a vendor; other literals are unknown.
    """
    vendor = vendor_literal(literal)
    if vendor is None:
        return None
    return vendor == world
