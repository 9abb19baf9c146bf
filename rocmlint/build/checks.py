"""The ROCM3xx checks' matchers: build, packaging and container files.

Each function takes a SourceFile and yields Matches over its build view
(`rocmlint.build.files`), where every token, setting, dependency and image already carries its
position and the reason it is gated. The tables below hold the facts the checks encode, each
with its source.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Iterator

from rocmlint.build.files import join_gates, stack_of_name
from rocmlint.findings import excerpt
from rocmlint.matchers import Capture, Match


def _capture(text: str, start: int, end: int) -> Capture:
    return Capture(text, start, end)


def _match(start: int, end: int, gate: str | None, **captures: str) -> Match:
    return Match(start, end, gate=gate, captures={k: _capture(v, start, end) for k, v in captures.items()})


# --- ROCM301: NVIDIA GPU architectures written into the build -------------------------------

# nvcc's architecture options (nvcc documentation, "Options for Steering GPU Code Generation")
# and clang's CUDA spelling. A value that names an `sm_`/`compute_` number is hard-coded.
_NV_ARCH_FLAG = re.compile(r"^-{1,2}(?:gencode|generate-code|arch|gpu-architecture|gpu-code|code|cuda-gpu-arch)$")
_NV_ARCH_VALUE = re.compile(r"(?:compute|sm)_\d{2,3}[a-z]?\b")
_NV_ARCH_WORD = re.compile(
    r"^-{1,2}(?:gencode|generate-code|arch|gpu-architecture|gpu-code|code|cuda-gpu-arch)=.*(?:compute|sm)_\d{2,3}"
    r"|(?:^|[,\s\"'])(?:arch|code)=\[?(?:compute|sm)_\d{2,3}"
    r"|^-DCMAKE_CUDA_ARCHITECTURES=[\"']?\d"
)
# Settings that pick NVIDIA targets: CMake's (CMAKE_)CUDA_ARCHITECTURES and CUDAARCHS, and
# PyTorch's TORCH_CUDA_ARCH_LIST (torch.utils.cpp_extension; ignored by ROCm builds, which read
# PYTORCH_ROCM_ARCH).
_NV_ARCH_SETTINGS = {"CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES", "CUDAARCHS", "TORCH_CUDA_ARCH_LIST"}
_DETECTED = {"native", "all", "all-major", ""}


def nvidia_arch(source, matcher) -> Iterator[Match]:
    view = source.build_view
    previous = {}
    for token in view.tokens:
        flag_before = previous.get(token.unit)
        previous[token.unit] = token.text
        text = token.text
        if _NV_ARCH_WORD.search(text) or (flag_before and _NV_ARCH_FLAG.match(flag_before) and _NV_ARCH_VALUE.search(text)):
            yield _match(token.start, token.end, token.gate, FOUND=excerpt(text, 60),
                         EFFECT="HIP-Clang does not take nvcc's architecture options, and a ROCm build needs AMD targets")
    for setting in view.settings:
        if setting.name in _NV_ARCH_SETTINGS and setting.kind != "arg" or (setting.kind == "arg" and setting.name == "TORCH_CUDA_ARCH_LIST"):
            value = setting.value.strip().strip("\"'")
            if value.lower() in _DETECTED or "$" in value or not re.search(r"\d", value):
                continue
            yield _match(setting.start, setting.end, setting.gate, FOUND=excerpt(f"{setting.name}={value}", 60),
                         EFFECT="a ROCm build ignores it and gets no AMD target list from it")


# --- ROCM302: AMD target lists that go stale -------------------------------------------------

_GFX = re.compile(r"gfx[0-9a-f]{3,4}(?:-[0-9]-generic)?|gfx\d+-\d*-?generic", re.IGNORECASE)
_OFFLOAD = re.compile(r"^-{1,2}(?:offload-arch|amdgpu-target|cuda-gpu-arch)=(\S+)$")
_AMD_ARCH_SETTING = re.compile(r"ARCH|TARGET", re.IGNORECASE)
# In setup.py a list of gfx names bound to `gpus`/`gfx_list` feeds `--offload-arch=` too; in
# CMake or a script such a name is as often a list of GPUs with a feature (Composable Kernel's
# `gpu_list_tf32`) or the one GPU a test runs on.
_AMD_ARCH_PYTHON_NAME = re.compile(r"ARCH|TARGET|GPU|GFX", re.IGNORECASE)
# Lists of what a project accepts or knows, not what it builds for.
_NOT_A_BUILD_LIST = re.compile(r"SUPPORTED|ALLOWED|VALID|KNOWN|ACCEPTED", re.IGNORECASE)
# CDNA data-center targets older than gfx950 (MI100 gfx908, MI200 gfx90a, MI300 gfx940-942):
# a list that builds for them is meant for Instinct GPUs, and without gfx950 MI350X/MI355X get
# no code object (ROCm 7.0 added gfx950; LLVM AMDGPU usage, processor table).
_OLDER_CDNA = {"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942"}
_MI300 = {"gfx940", "gfx941", "gfx942"}
_COVERS_GFX950 = {"gfx950", "gfx9-4-generic"}
_NEWER_TARGETS = (("gfx942", "gfx942 (MI300)"), ("gfx950", "gfx950 (MI350X/MI355X)"))
# Where a file pins the ROCm release it builds with: a ROCm base image tag (`rocm/pytorch:rocm6.2_...`,
# `rocm/dev-ubuntu-22.04:6.1.2`), a `ROCM_VERSION=6.2` setting, a ROCm wheel index (`/whl/rocm6.2`)
# or a `+rocm6.2` build.
_ROCM_VERSION_SETTING = re.compile(r"^(?:ROCM|HIP)_?(?:VERSION|VER|RELEASE)$", re.IGNORECASE)


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _rocm_pin(source) -> tuple[tuple[int, ...], str] | None:
    """The ROCm release the build is pinned to, and where that is said: the configured
    `rocm-version`, else the newest release the file itself pins (None when it pins none)."""
    if source.target.rocm_version:
        return tuple(source.target.rocm_version), "the configured rocm-version"
    view = source.build_view
    found: list[tuple[tuple[int, ...], int]] = []
    for image in view.images:
        if "rocm" in image.ref.lower():
            tag = image.ref.rsplit(":", 1)[-1] if ":" in image.ref else ""
            hit = re.search(r"(?:^|rocm)(\d+\.\d+(?:\.\d+)?)", tag, re.IGNORECASE)
            if hit:
                found.append((_release(hit.group(1)), image.start))
    for setting in view.settings:
        if _ROCM_VERSION_SETTING.match(setting.name):
            hit = re.match(r"^\s*[\"']?(\d+\.\d+(?:\.\d+)?)", setting.value)
            if hit:
                found.append((_release(hit.group(1)), setting.start))
    for token in view.tokens:
        hit = re.search(r"/whl/(?:nightly/)?rocm(\d+\.\d+(?:\.\d+)?)|\+rocm(\d+\.\d+(?:\.\d+)?)", token.text)
        if hit:
            found.append((_release(hit.group(1) or hit.group(2)), token.start))
    if not found:
        return None
    release, where = max(found)
    line, _ = source.position(where)
    return release, f"line {line}"


def amd_arch_list(source, matcher) -> Iterator[Match]:
    """Both sides of every GPU-stack test are read (target lists live on the ROCm side: the
    check is `gated: false`), so the gates of tokens and settings are not used; the gate of a
    match says only what this check knows: the same variable given gfx950 elsewhere in the
    file, a pinned ROCm release that cannot build the missing targets."""
    view = source.build_view
    pin = lru_cache(maxsize=1)(lambda: _rocm_pin(source))  # read only when a list lacks a target
    groups: dict[int, list] = {}
    for token in view.tokens:
        offload = _OFFLOAD.match(token.text)
        if offload:
            groups.setdefault(token.unit, []).append((token, _GFX.findall(offload.group(1))))
    settings = [s for s in view.settings if (_AMD_ARCH_PYTHON_NAME if s.kind == "python" else _AMD_ARCH_SETTING).search(s.name)
                and not _NOT_A_BUILD_LIST.search(s.name)]
    for tokens in groups.values():
        names = [n.lower() for _, found in tokens for n in found]
        first, last = tokens[0][0], tokens[-1][0]
        holder = next((s for s in view.settings if s.start <= first.start < s.end or s.start < last.end <= s.end), None)
        covered = _covered_elsewhere(source, holder, view.settings) if holder else None
        yield from _stale(names, first.start, last.end, covered, pin,
                          " ".join(f"--offload-arch={n}" for n in names))
    for setting in settings:
        names = [n.lower() for n in _GFX.findall(setting.value)]
        if names:
            covered = _covered_elsewhere(source, setting, settings)
            yield from _stale(names, setting.start, setting.end, covered, pin,
                              f"{setting.name}={';'.join(names)}")


def _covered_elsewhere(source, setting, settings) -> str | None:
    """Why a list is not stale though it lacks gfx950: the file also gives the same variable a
    list with gfx950 (an append, or the branch for a newer ROCm)."""
    for other in settings:
        if other is setting or other.name != setting.name:
            continue
        if {n.lower() for n in _GFX.findall(other.value)} & _COVERS_GFX950:
            line, _ = source.position(other.start)
            return f"the file also gives `{setting.name}` a list with gfx950 (line {line})"
    return None


def _stale(names: list[str], start: int, end: int, gate, pin, shown: str) -> Iterator[Match]:
    from rocmlint.targets import supported_in

    present = set(names)
    if not present & _OLDER_CDNA or present & _COVERS_GFX950:
        return
    wanted = [(name, label) for name, label in _NEWER_TARGETS if not (name in present or (name == "gfx942" and present & _MI300))]
    if pin() is not None:
        release, where = pin()
        buildable = [(name, label) for name, label in wanted if supported_in(name, ".".join(map(str, release))) is not False]
        if not buildable:
            left_out = ", ".join(name for name, _ in wanted)
            gate = gate or (f"the build is pinned to ROCm {'.'.join(map(str, release))} ({where}), "
                            f"which cannot build for {left_out}")
        wanted = buildable or wanted
    missing = " and ".join(label for _, label in wanted)
    yield _match(start, end, gate, LIST=excerpt(shown, 60), MISSING=missing)


# --- ROCM303: the CUDA toolkit required by CMake ---------------------------------------------

_PROJECT_KEYWORDS = {"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"}


def cuda_toolkit_required(source, matcher) -> Iterator[Match]:
    for command, gate in source.build_view.cmake:
        words = [a.text for a in command.arguments]
        found = None
        if command.name == "find_package" and words and words[0] in ("CUDA", "CUDAToolkit") and "REQUIRED" in words:
            found = f"find_package({words[0]} REQUIRED)"
        elif command.name == "enable_language" and "CUDA" in words:
            found = "enable_language(CUDA)"
        elif command.name == "project" and len(words) > 1:
            languages = words[words.index("LANGUAGES") + 1 :] if "LANGUAGES" in words else words[1:]
            languages = [w for w in languages if w not in _PROJECT_KEYWORDS]
            if "CUDA" in languages and not ("VERSION" in words and "LANGUAGES" not in words):
                found = f"project({words[0]} ... CUDA)"
        if found:
            yield _match(command.start, command.end, gate, FOUND=found)


# --- ROCM304: NVIDIA libraries linked --------------------------------------------------------

# NVIDIA library -> (what it is, what a ROCm build links instead). Library mapping from the HIP
# porting guide and the ROCm libraries' CMake packages (hip::host, roc::hipblas, ...).
_NV_LIBRARIES = {
    "cudart": ("the CUDA runtime", "amdhip64 (CMake `hip::host`)"),
    "cudart_static": ("the CUDA runtime", "amdhip64 (CMake `hip::host`)"),
    "cuda": ("the CUDA driver API", "amdhip64 (CMake `hip::host`)"),
    "cuda_driver": ("the CUDA driver API", "amdhip64 (CMake `hip::host`)"),
    "cublas": ("cuBLAS", "hipblas (`roc::hipblas`) or rocblas"),
    "cublaslt": ("cuBLASLt", "hipblaslt (`roc::hipblaslt`)"),
    "curand": ("cuRAND", "hiprand (`hip::hiprand`)"),
    "cufft": ("cuFFT", "hipfft (`hip::hipfft`)"),
    "cufftw": ("cuFFTW", "hipfft (`hip::hipfft`)"),
    "cusparse": ("cuSPARSE", "hipsparse (`roc::hipsparse`)"),
    "cusolver": ("cuSOLVER", "hipsolver (`roc::hipsolver`)"),
    "cudnn": ("cuDNN", "MIOpen (`MIOpen`), a manual port"),
    "nccl": ("NCCL", "RCCL (`rccl`)"),
    "nvrtc": ("NVRTC", "hiprtc (`hiprtc::hiprtc`)"),
    "nvtoolsext": ("NVTX", "roctx64 (roctracer)"),
    "nvtx3": ("NVTX", "roctx64 (roctracer)"),
    "nvidia-ml": ("NVML", "amd_smi (AMD SMI)"),
    "nvml": ("NVML", "amd_smi (AMD SMI)"),
    "cupti": ("CUPTI", "rocprofiler-sdk"),
    "nvjitlink": ("nvJitLink", "the AMD code object tools (comgr)"),
    "culibos": ("CUDA's culibos", "nothing: HIP needs no such library"),
}
_LINK_FLAG = re.compile(r"^-l(" + "|".join(re.escape(k) for k in _NV_LIBRARIES) + r")$", re.IGNORECASE)
_CUDA_TARGET = re.compile(r"CUDA::(\w+)")
_LINK_COMMANDS = {"target_link_libraries", "link_libraries"}


def _within(source, token, hit: re.Match) -> tuple[int, int]:
    """The span of a regex hit inside a token, where the token's text is written as it is."""
    if source.text[token.start : token.end] == token.text:
        return token.start + hit.start(), token.start + hit.end()
    return token.start, token.end


def _defining_cuda_targets(view) -> list[tuple[int, int]]:
    """Offsets of the arguments of CMake commands that define a `CUDA::` target rather than
    use one: `add_library(CUDA::cublas IMPORTED)`, `set_property(TARGET CUDA::cudart ...)`,
    `target_link_libraries(CUDA::cublas INTERFACE CUDA::cudart)` in a find module
    (FindCUDAToolkit.cmake) or a package's config file. Such a file links nothing into a build."""
    spans: list[tuple[int, int]] = []
    for command, _ in view.cmake:
        arguments = [a for a in command.arguments if a.start >= 0]
        if not arguments:
            continue
        named = arguments[1] if arguments[0].text.upper() == "TARGET" and len(arguments) > 1 else arguments[0]
        if named.text.startswith("CUDA::"):
            spans.append((arguments[0].start, arguments[-1].end))
    return spans


def nvidia_libraries(source, matcher) -> Iterator[Match]:
    view = source.build_view
    definitions = _defining_cuda_targets(view) if view.cmake else []
    for token in view.tokens:
        if any(start <= token.start < end for start, end in definitions):
            continue
        for hit in _CUDA_TARGET.finditer(token.text):
            library = hit.group(1).lower().replace("_static", "")
            what, instead = _NV_LIBRARIES.get(library, ("a CUDA toolkit library", "its HIP/ROCm counterpart"))
            start, end = _within(source, token, hit)
            yield _match(start, end, token.gate, LIB=hit.group(0), WHAT=what, INSTEAD=instead)
        flag = _LINK_FLAG.match(token.text)
        if flag:
            what, instead = _NV_LIBRARIES[flag.group(1).lower()]
            yield _match(token.start, token.end, token.gate, LIB=token.text, WHAT=what, INSTEAD=instead)
    for command, gate in view.cmake:
        if command.name not in _LINK_COMMANDS:
            continue
        for argument in command.arguments:
            name = argument.text.lower()
            if any(start <= argument.start < end for start, end in definitions):
                break
            if argument.kind == "unquoted" and name in _NV_LIBRARIES and name != "cuda":
                what, instead = _NV_LIBRARIES[name]
                yield _match(argument.start, argument.end, gate, LIB=argument.text, WHAT=what, INSTEAD=instead)


# --- ROCM305: nvcc register and ptxas options ------------------------------------------------

_NVCC_REGISTER_FLAG = re.compile(r"^-{1,2}(?:maxrregcount|maxregcount)(?:[=\s]\S*)?$|^-Xptxas(?:[=\s]\S*)?$|^--ptxas-options(?:=\S*)?$")


def nvcc_register_flags(source, matcher) -> Iterator[Match]:
    for token in source.build_view.tokens:
        if _NVCC_REGISTER_FLAG.match(token.text):
            yield _match(token.start, token.end, token.gate, FLAG=excerpt(token.text, 40))


# --- ROCM306 / ROCM307: dependencies ---------------------------------------------------------

_NVML = ("NVIDIA's NVML bindings: NVML needs NVIDIA's driver, and installed beside a ROCm build of PyTorch "
         "it has broken `torch.cuda.device_count()` (pytorch/pytorch#133259)")
# canonical name (or regex) -> why it is NVIDIA-only
_NVIDIA_PACKAGES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"^(?:pynvml|nvidia-ml-py3?)$"), _NVML),
    (re.compile(r"^nvidia-.*"), "an NVIDIA package: CUDA libraries or tools that only NVIDIA GPUs use"),
    (re.compile(r"^cupy-cuda\w*$"), "CuPy built for CUDA; CuPy's ROCm build is installed separately"),
    (re.compile(r"^jax-cuda\d*-(?:plugin|pjrt)$"), "JAX's CUDA plugin; ROCm uses AMD's ROCm plugin for JAX"),
    (re.compile(r"^(?:tensorrt(?:-.*)?|torch-tensorrt)$"), "TensorRT, NVIDIA-only (ROCm's counterpart is MIGraphX)"),
    (re.compile(r"^(?:pycuda|cuda-python|cuda-bindings)$"), "bindings to the CUDA driver and runtime"),
    (re.compile(r"^onnxruntime-gpu$"), "ONNX Runtime's CUDA build (ROCm uses onnxruntime-rocm or the MIGraphX provider)"),
    (re.compile(r"^bitsandbytes-cuda\d+$"), "an old CUDA-only build of bitsandbytes"),
    (re.compile(r"^flashinfer-python$"), "FlashInfer, whose kernels are written for NVIDIA GPUs"),
    (re.compile(r"^xformers$"), "PyPI's xformers wheels are CUDA builds; ROCm builds come from the PyTorch ROCm index"),
    # RAPIDS and others publish one wheel per CUDA major release, named for it (`cuml-cu12`).
    (re.compile(r"^[a-z0-9][a-z0-9-]*-cu\d{2,3}$"), "a build for one CUDA release (`-cuXX` in its name)"),
]
# conda packages of NVIDIA's CUDA stack: the toolkit and its libraries as conda-forge and NVIDIA's
# channel split them (`cuda-nvcc`, `cuda-cudart`, `libcublas`, `libnvjitlink`, the `cuda` and
# `cuda-toolkit` metapackages, `cuda-version`), the older `cudatoolkit`, pytorch's `pytorch-cuda`
# selector and `magma-cudaXXX`, conda-forge's CUDA metapackages `pytorch-gpu`/`tensorflow-gpu`,
# and CUDA builds of other libraries (`faiss-gpu`).
_CONDA_CUDA = re.compile(
    r"^(?:cudatoolkit(?:-dev)?|pytorch-cuda|pytorch-gpu|tensorflow-gpu|faiss-gpu(?:-raft)?|magma-cuda\d+"
    r"|cuda|cuda-[a-z0-9-]+|cudnn|nccl|cutensor|cusparselt|nvidia-[a-z0-9-]+"
    r"|libcu(?:blas|fft|file|rand|solver|sparse|dnn|tensor)[a-z0-9-]*|libnv(?:jitlink|jpeg|rtc|toolsext|ptxcompiler|fatbin|vm)[a-z0-9-]*"
    r"|libnpp[a-z0-9-]*)$"
)
# A conda build string that names CUDA: `pytorch=1.12.1=py3.9_cuda11.3_cudnn8.3.2_0`, `*cuda*`.
_CONDA_CUDA_BUILD = re.compile(r"(?:^|[=\s*_])cuda\d*(?:[._*]|$)|\bcu\d{2,3}\b")
# NVIDIA's conda channel (and its per-release labels), and RAPIDS' channels, which hold CUDA
# builds only.
_NVIDIA_CHANNEL = re.compile(r"^(?:https?://conda\.anaconda\.org/)?(?:nvidia(?:/label/[^\s/]+)?|rapidsai(?:-nightly)?)/?$")


def nvidia_channel(name: str | None) -> bool:
    return bool(name) and bool(_NVIDIA_CHANNEL.match(name.strip().lower()))


_CUDA_LOCAL = re.compile(r"\+cu\d{2,3}")
_CUDA_EXTRA = re.compile(r"^cuda\d*(?:[-_].*)?$|^cu\d{2,3}$")


def nvidia_package_reason(dependency) -> str | None:
    """Why a dependency installs something only NVIDIA GPUs can use, or None."""
    local = _CUDA_LOCAL.search(dependency.specifier) or (dependency.url and _CUDA_LOCAL.search(dependency.url))
    if local:
        return f"a CUDA build (`{local.group(0)}` in its version)"
    if dependency.conda:
        nvml, why = _NVIDIA_PACKAGES[0]
        if nvml.match(dependency.name):
            return why
        if nvidia_channel(dependency.url):
            return f"a conda package from NVIDIA's `{dependency.url}` channel"
        if _CONDA_CUDA.match(dependency.name):
            return "a conda package of NVIDIA's CUDA stack"
        build = _CONDA_CUDA_BUILD.search(dependency.specifier)
        if build:
            return "a CUDA build (its conda build string names CUDA)"
        return None
    if dependency.name in ("jax", "jaxlib") and any(_CUDA_EXTRA.match(e) for e in dependency.extras):
        extra = next(e for e in dependency.extras if _CUDA_EXTRA.match(e))
        return f"JAX with its CUDA extra `[{extra}]`; ROCm uses AMD's ROCm plugin for JAX"
    for pattern, reason in _NVIDIA_PACKAGES:
        if pattern.match(dependency.name):
            return reason
    return None


def nvidia_packages(source, matcher) -> Iterator[Match]:
    for dependency in source.build_view.dependencies:
        reason = nvidia_package_reason(dependency)
        if reason:
            yield _match(dependency.start, dependency.end, dependency.gate, PACKAGE=excerpt(dependency.text, 60), WHY=reason)


# --- ROCM313 / ROCM314: conda environments -------------------------------------------------


def nvidia_conda_channels(source, matcher) -> Iterator[Match]:
    for channel in source.build_view.channels:
        if nvidia_channel(channel.name):
            what = "RAPIDS' channel, whose packages are CUDA builds" if "rapidsai" in channel.name.lower() else \
                "NVIDIA's channel, which holds the CUDA toolkit and CUDA libraries"
            yield _match(channel.start, channel.end, channel.gate, CHANNEL=excerpt(channel.name, 50), WHAT=what)


# Conda packages that mean "this environment computes on the CPU on purpose".
_CONDA_CPU_CHOICE = {"cpuonly", "pytorch-cpu"}
_CONDA_NOT_CUDA_BUILD = re.compile(r"cpu|rocm", re.IGNORECASE)


def conda_pytorch(source, matcher) -> Iterator[Match]:
    view = source.build_view
    conda = [d for d in view.dependencies if d.conda]
    if any(d.name in _CONDA_CPU_CHOICE for d in conda):
        return
    channels = [c.name for c in view.channels]
    for dependency in conda:
        if dependency.name != "pytorch" or nvidia_package_reason(dependency):
            continue  # a CUDA build is ROCM306's finding
        if _CONDA_NOT_CUDA_BUILD.search(dependency.specifier) or _CONDA_NOT_CUDA_BUILD.search(dependency.url or ""):
            continue
        if dependency.url:
            where = f"the `{dependency.url}` channel"
        elif channels:
            where = "the channels " + ", ".join(f"`{c}`" for c in channels[:3])
        else:
            where = "the default channels"
        yield _match(dependency.start, dependency.end, dependency.gate, PACKAGE=excerpt(dependency.text, 40), CHANNEL=where)


_EXACT = re.compile(r"^===?\s*([0-9][0-9A-Za-z.!]*)$")


def exact_torch_pin(dependency) -> str | None:
    """`torch==2.4.0` (exact, no local version): the pinned version, or None."""
    if dependency.conda or dependency.name != "torch" or dependency.url:
        return None
    for part in dependency.specifier.split(","):
        exact = _EXACT.match(part.strip())
        if exact and "*" not in part:
            return exact.group(1)
    return None


def torch_pins(source, matcher) -> Iterator[Match]:
    for dependency in source.build_view.dependencies:
        version = exact_torch_pin(dependency)
        if version:
            yield _match(dependency.start, dependency.end, dependency.gate, PIN=excerpt(dependency.text, 60), VERSION=version)


# --- ROCM308: package indexes of CUDA builds -------------------------------------------------

# PyTorch's per-CUDA wheel indexes (pytorch.org "Start Locally"), NVIDIA's own index, and other
# per-CUDA indexes that projects point pip at.
_CUDA_INDEX = re.compile(
    r"https?://(?:download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d{2,3}"
    r"|pypi\.nvidia\.com|pypi\.ngc\.nvidia\.com"
    r"|flashinfer\.ai/whl/cu\d+"
    r"|data\.pyg\.org/whl/torch-[\d.]+\+cu\d+"
    r"|storage\.googleapis\.com/jax-releases/jax_cuda_releases)[^\s\"'`;,)]*"
)


def cuda_indexes(source, matcher) -> Iterator[Match]:
    view = source.build_view
    seen = set()
    candidates = [(t.text, t.start, t.gate, source.text[t.start : t.end] == t.text) for t in view.tokens]
    candidates += [(s.value, s.start, s.gate, source.text[s.start : s.end] == s.value) for s in view.settings]
    for text, start, gate, exact in candidates:
        for hit in _CUDA_INDEX.finditer(text):
            at = start + hit.start() if exact else start
            if at in seen:
                continue
            seen.add(at)
            yield _match(at, at + len(hit.group(0)), gate, URL=hit.group(0))


# --- ROCM315: CUDA builds of PyTorch in uv.lock ----------------------------------------------

_PYPI = re.compile(r"^https?://(?:pypi\.org|files\.pythonhosted\.org)/")
_UV_EXTRA = re.compile(r"extra\s*==\s*'extra-(\d+)-([^']+)'")
# torchvision and torchaudio follow torch's index: the torch entry is the one to report.
_FOLLOWS_TORCH = {"torchvision", "torchaudio"}


def _locked_cuda_reason(package) -> str | None:
    local = _CUDA_LOCAL.search(package.version)
    if local and package.name not in _FOLLOWS_TORCH:
        return f"a CUDA build (`{local.group(0)}`)" + (f" from `{excerpt(package.source, 50)}`" if package.source else "")
    if package.name != "torch":
        return None
    if _CUDA_INDEX.match(package.source):
        return f"from the CUDA wheel index `{excerpt(package.source, 50)}`"
    nvidia = [name for name, _ in package.dependencies if name.startswith("nvidia-")]
    if nvidia and (not package.source or _PYPI.match(package.source)):
        return (f"from PyPI, whose Linux x86_64 wheels of torch are CUDA builds ({len(nvidia)} `nvidia-*` packages "
                "are locked with it for that platform)")
    return None


def _cuda_extra_only(package) -> str | None:
    """The CUDA-named extra every resolution of the package needs, when there is one."""
    extras = set()
    for marker in package.resolution_markers:
        named = [m for m in _UV_EXTRA.finditer(marker) if stack_of_name(m.group(2)[int(m.group(1)) + 1:]) == "cuda"]
        if not named:
            return None
        extras.update(m.group(2)[int(m.group(1)) + 1:] for m in named)
    return ", ".join(f"`{e}`" for e in sorted(extras)) if extras else None


def locked_cuda_builds(source, matcher) -> Iterator[Match]:
    locked = source.build_view.locked
    rocm = next((p for p in locked if p.name == "torch" and ("+rocm" in p.version or "rocm" in p.source.lower())), None)
    for package in locked:
        reason = _locked_cuda_reason(package)
        if reason is None:
            continue
        gate = package.gate
        if gate is None and rocm is not None:
            gate = f"the lock also holds a ROCm build of torch (`{rocm.version}`): an extra or marker picks the build per machine"
        if gate is None and (extras := _cuda_extra_only(package)):
            gate = f"locked only for the optional extra {extras}, which is for CUDA"
        yield _match(package.start, package.end, gate, PACKAGE=f"{package.name} {excerpt(package.version, 30)}", WHY=reason)


# --- ROCM309: NVIDIA base images -------------------------------------------------------------

_NVIDIA_IMAGE = re.compile(r"^(?:docker\.io/)?(?:nvidia/(?:cuda|cudagl|opengl|pytorch|vulkan)\b|nvcr\.io/nvidia/)", re.IGNORECASE)


def nvidia_images(source, matcher) -> Iterator[Match]:
    for image in source.build_view.images:
        if _NVIDIA_IMAGE.match(image.ref.strip()):
            yield _match(image.start, image.end, image.gate, IMAGE=excerpt(image.ref, 70))


# --- ROCM310: NVIDIA's container runtime -----------------------------------------------------

_CONTAINER_TOOLS = {"docker", "podman", "nerdctl", "sudo"}
_NVIDIA_RUNTIME_SETTINGS = {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA"}


def nvidia_container_runtime(source, matcher) -> Iterator[Match]:
    view = source.build_view
    first: dict[int, str] = {}
    previous: dict[int, str] = {}
    for token in view.tokens:
        tool = first.setdefault(token.unit, os.path.basename(token.text))
        text = token.text
        found = None
        if text == "--gpus" or text.startswith("--gpus="):
            # `--gpus` of docker/podman, or of a CI container's `options:`; a training script's
            # own `--gpus 8` is not the container runtime.
            if tool in _CONTAINER_TOOLS or source.language == "yaml" and tool.startswith("-"):
                found = text
        elif text == "--runtime=nvidia" or (text == "nvidia" and previous.get(token.unit) == "--runtime"):
            found = "--runtime nvidia" if text == "nvidia" else text
        elif text in ("runtime: nvidia", "driver: nvidia") or (text.startswith("gpus: ") and source.language == "yaml"):
            found = text
        elif text.startswith("nvidia.com/gpu"):
            found = text
        previous[token.unit] = text
        if found:
            yield _match(token.start, token.end, token.gate, FOUND=excerpt(found, 40))
    for setting in view.settings:
        if setting.name in _NVIDIA_RUNTIME_SETTINGS and source.language != "python":
            yield _match(setting.start, setting.end, setting.gate, FOUND=f"{setting.name}={excerpt(setting.value, 30)}")


# --- ROCM311: installing the project pulls NVIDIA builds -------------------------------------


def nvidia_pinning_installs(source, matcher) -> Iterator[Match]:
    for install in source.build_view.installs:
        if install.no_deps:
            continue
        pins = project_nvidia_pins(install.directory, type(source))
        if pins:
            yield _match(install.start, install.end, install.gate, INSTALL=excerpt(install.text, 50), PINS=", ".join(pins[:3]))


@lru_cache(maxsize=64)
def project_nvidia_pins(directory: str, source_file: type) -> tuple[str, ...]:
    """The dependencies a project declares (pyproject.toml, setup.py install_requires, and the
    requirements.txt a build reads) that install NVIDIA builds, as `file:line text`. Each file
    is read as a `source_file` (the SourceFile type of the file being checked)."""
    from rocmlint.files.tree import ProjectFiles

    found = []
    files = ProjectFiles(directory)  # nothing outside the project's folder, no pipe or device
    readers = [("pyproject.toml", "pyproject"), ("setup.py", "python")]
    texts = {}
    for name, language in readers:
        text = files.opened_text(os.path.join(directory, name), 1024 * 1024)
        if text is not None:
            texts[name] = (text, language)
    if any("requirements" in text for text, _ in texts.values()):
        text = files.opened_text(os.path.join(directory, "requirements.txt"), 1024 * 1024)
        if text is not None:
            texts["requirements.txt"] = (text, "requirements")
    for name, (text, language) in texts.items():
        source = source_file(os.path.join(directory, name), text, language)
        try:
            dependencies = source.build_view.dependencies
        except Exception:  # a file that cannot be read says nothing about the install
            continue
        for dependency in dependencies:
            if dependency.gate is not None:
                continue
            if nvidia_package_reason(dependency) or exact_torch_pin(dependency):
                line, _ = source.position(dependency.start)
                found.append(f"`{excerpt(dependency.text, 40)}` ({name}:{line})")
    return tuple(found)


# --- ROCM312: CUDA allocator tuning in the environment ---------------------------------------

_ALLOC_VARIABLES = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}
# Options of PyTorch's CUDA caching allocator (c10/cuda/CUDAAllocatorConfig.cpp) tuned for
# CUDA's fragmentation behaviour. expandable_segments is left out: it is the usual ROCm setting.
_CUDA_TUNED_KEYS = re.compile(
    r"\b(max_split_size_mb|roundup_power2_divisions|garbage_collection_threshold|backend\s*:\s*cudaMallocAsync"
    r"|pinned_use_cuda_host_register|pinned_num_register_threads|release_lock_on_cudamalloc)\b"
)


def allocator_settings(source, matcher) -> Iterator[Match]:
    if source.language == "python":
        return
    for setting in source.build_view.settings:
        if setting.name not in _ALLOC_VARIABLES:
            continue
        exact = source.text[setting.start : setting.end] == setting.value
        for hit in _CUDA_TUNED_KEYS.finditer(setting.value):
            start = setting.start + hit.start() if exact else setting.start
            end = setting.start + hit.end() if exact else setting.end
            yield _match(start, end, setting.gate, KEY=re.sub(r"\s+", "", hit.group(1)), VARIABLE=setting.name)
