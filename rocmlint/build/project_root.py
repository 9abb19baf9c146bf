"""What a project holds: the folders in it that hold other projects' code, the packages in it
built apart for NVIDIA only, and whether it builds or runs for AMD GPUs already (where it
starts: rocmlint.files.project_start). Shared by the build readers, the project model and
the project pass."""

from __future__ import annotations

import os
import re
from functools import lru_cache

from rocmlint.files.project_start import ROOT_MARKERS, find_project_root, package_top
from rocmlint.files.result_cache import external_input
from rocmlint.files.tree import ProjectFiles, note_tree

# Text in a build file that shows it has a ROCm side: ROCm, HIP as a word or a HIP tool or
# library (`hipcc`, `hipblaslt`), HIP in a capitalised identifier (`USE_HIP`, `CMAKE_HIP_FLAGS`,
# `IS_HIP_EXTENSION`), amdgpu. Not "hip" inside another word (`shipped`, `sudachipy`).
ROCM_TEXT = re.compile(
    r"(?i:rocm|amdgpu|hipify|hipcc|hipblas|hipfft|hiprand|hipsparse|hipsolver|hipcub|hiprtc)"
    r"|(?<![A-Za-z])(?i:hip)(?![A-Za-z])|(?<![A-Za-z])HIP(?=[A-Z_])|_HIP(?![a-z])"
)
# Folders of a project that hold no source of its own: version control, environments, caches,
# build output (the project model's walk and the project-kind look-up skip them).
SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__", "node_modules", "build", "dist",
     "_build", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
# Where projects keep other projects' code (besides git submodules, read from .gitmodules).
VENDOR_DIRECTORIES = frozenset(
    {"third_party", "third-party", "thirdparty", "3rdparty", "3rd_party", "vendor", "vendored", "external",
     "externals", "extern", "deps", "submodules", "subprojects"}
)



# --- NVIDIA-only packages --------------------------------------------------------------------

# What makes a folder a package built and installed on its own.
_PACKAGE_FILES = ("setup.py", "pyproject.toml")


def nvidia_only_subproject(path: str) -> str | None:
    """Why the file at `path` is in an NVIDIA-only package of a project that builds for AMD,
    or None.

    A dual-vendor project often carries a package of its own that it builds and installs apart
    from the main one and only for NVIDIA: FlashAttention's CUDA-only `csrc/layer_norm` extension,
    Liger's CUTLASS-based `liger_cute_kernels`. Such a folder has its own `setup.py` or
    `pyproject.toml`, and none of its build files names ROCm or HIP, while the project's own build
    files do. Code there never reaches an AMD user of the project; in a project with no AMD side at
    all (one being ported) nothing is gated this way.
    """
    directory = os.path.dirname(os.path.abspath(path))
    root = find_project_root(directory)
    if root is None:
        return None
    return _subproject_reason(directory, root)


@lru_cache(maxsize=4096)
def _subproject_reason(directory: str, root: str) -> str | None:
    if directory == root or not directory.startswith(root + os.sep):
        return None
    above = _subproject_reason(os.path.dirname(directory), root)
    if above is not None:
        return above
    package = next((name for name in _PACKAGE_FILES if os.path.isfile(os.path.join(directory, name))), None)
    if package is None or _builds_for_rocm(directory) or not _builds_for_rocm(root):
        return None
    relative = os.path.relpath(directory, root).replace(os.sep, "/")
    return (
        f"NVIDIA-only package: {relative}/ is built on its own ({relative}/{package}) and none of its build files "
        "names ROCm or HIP, in a project whose build does"
    )


_HASH_COMMENT = re.compile(r"(?m)#.*$")


def _head(path: str, limit: int = 1024 * 1024) -> str | None:
    """The first `limit` bytes of a file of the folder it is in, as text, through the project
    reader (rocmlint.files.tree: regular files only, no link out of the folder); None for
    anything else."""
    data = ProjectFiles(os.path.dirname(path)).read(path, limit, prefix=True)
    return data.decode("utf-8", errors="replace") if data is not None else None


# --- projects that build or run for AMD already --------------------------------------------

# Python that asks whether it runs on ROCm: a project that has it runs on AMD GPUs already.
_PYTHON_ROCM_TEST = re.compile(
    r"torch\.version\.hip|\bis_rocm\s*\(|\bis_hip\s*\(|\bIS_ROCM\b|\bIS_HIP\b|\bIS_HIP_EXTENSION\b|\buse_rocm\b"
)
# Each test above holds one of these; a plain search for them is a hundred times faster.
_PYTHON_ROCM_WORDS = ("version.hip", "is_rocm", "is_hip", "IS_ROCM", "IS_HIP", "use_rocm")
# Where to stop looking: a project that asks anywhere asks early in a walk of its Python.
_MAX_PYTHON_FILES = 4_000
_PYTHON_HEAD = 32 * 1024


@external_input  # the per-file pass of a CI file asks it: a kept result holds only while the answer does
def project_kind(path: str) -> str:
    """"amd" when the project of the file at `path` builds or runs for AMD GPUs already, else
    "nvidia": a project with no AMD side, being ported. It builds for AMD when a `setup.py`,
    `CMakeLists.txt` or `Makefile` in a folder above the file (up to the top of its project)
    names ROCm or HIP outside comments; it runs on AMD when the Python of its nearest project
    (the nearest folder with a build file, else the top of the Python package the file is in)
    asks whether it runs on ROCm (`torch.version.hip`, `is_rocm()`, `IS_HIP`, ...)."""
    return _kind_of(os.path.dirname(os.path.abspath(path)))


def folder_kind(directory: str) -> str:
    """project_kind of the files in `directory`."""
    return _kind_of(os.path.abspath(directory))


@lru_cache(maxsize=4096)
def _kind_of(directory: str) -> str:
    home = os.path.expanduser("~")
    nearest = None
    current = directory
    while current != home:
        if any(os.path.isfile(os.path.join(current, name)) for name in ROOT_MARKERS):
            nearest = nearest or current
            if _builds_for_rocm(current):
                return "amd"
        parent = os.path.dirname(current)
        if parent == current or os.path.isdir(os.path.join(current, ".git")):
            break
        current = parent
    python_root = nearest or package_top(directory)
    return "amd" if python_root is not None and _python_asks_for_rocm(python_root) else "nvidia"


# A pyproject.toml names ROCm in its prose as often as in its build: build scripts decide.
_ROCM_BUILD_FILES = ("setup.py", "CMakeLists.txt", "Makefile")


@lru_cache(maxsize=1024)
def _builds_for_rocm(directory: str) -> bool:
    texts = (_head(os.path.join(directory, name)) for name in _ROCM_BUILD_FILES)
    return any(text and ROCM_TEXT.search(_HASH_COMMENT.sub("", text)) for text in texts)





@lru_cache(maxsize=256)
def _python_asks_for_rocm(root: str) -> bool:
    seen = 0
    note_tree(root)
    for directory, folders, files in os.walk(root):
        folders[:] = [
            f for f in folders
            if f not in SKIPPED_FOLDERS and f.lower() not in VENDOR_DIRECTORIES and not f.startswith(".")
            and not os.path.isfile(os.path.join(directory, f, "pyvenv.cfg"))
        ]
        for name in files:
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > _MAX_PYTHON_FILES:
                return False
            text = _head(os.path.join(directory, name), _PYTHON_HEAD)
            if text and any(word in text for word in _PYTHON_ROCM_WORDS) and _PYTHON_ROCM_TEST.search(text):
                return True
    return False
