"""What the project model knows of one project: the types the project pass fills in and the
gates read (rocmlint.project builds it; rocmlint.project.analysis adds the C/C++ half)."""

from __future__ import annotations

import os
import re

from rocmlint.build.project_root import VENDOR_DIRECTORIES
from rocmlint.cpp.preprocessor import NO_PROJECT, MacroTable
from rocmlint.records import field, record

_HEADER_SUFFIXES = frozenset({".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".cuinc"})
# torch.utils.cpp_extension compiles every source of a ROCm build with these (COMMON_HIP_FLAGS
# in torch/utils/cpp_extension.py); HIP's own headers need __HIP_PLATFORM_AMD__ on AMD.
_HIP_BUILD_MACROS = {"__HIP_PLATFORM_AMD__": 1}
_TORCH_EXTENSION_MACROS = {"USE_ROCM": 1, "HIPBLAS_V2": 1}
# CUDA warp intrinsics that a HIP shim may redefine for AMD (whether it drops the mask matters).
_WARP_INTRINSIC = re.compile(r"^__(?:\w+_sync|shfl(?:_up|_down|_xor)?|ballot|activemask|any|all|popc|ffs)$")
# Any CUDA device intrinsic a HIP shim may supply (`#define __trap() abort()`); names ending in
# `__` are attributes and qualifiers (`__launch_bounds__`, `__align__`), not intrinsics.
_DEVICE_INTRINSIC = re.compile(r"^__[a-z]\w*(?<!__)$")
# Directory names of NVIDIA's C++ libraries that projects vendor.
_NVIDIA_LIBRARIES = frozenset({"cutlass", "cccl", "cub", "thrust", "libcudacxx", "nvbench", "cudnn-frontend", "cudnn_frontend"})


@record
class FileVerdict:
    compiled_for: str  # "rocm", "cuda", "both", "unknown", or "none" (vendored code no build reaches)
    reason: str | None = None  # for "cuda" and "none": why the ROCm build never compiles it
    origin: str | None = None  # for sources: where a build file compiles it


UNKNOWN_FILE = FileVerdict("unknown")


@record
class Shim:
    name: str
    path: str
    line: int
    drops_mask: bool | None  # None: not a warp intrinsic with a mask


@record(mutable=True)
class Overrides:
    """`[tool.rocmlint] cuda-only` / `rocm-sources`: what a build the model cannot read says."""

    cuda_only: object | None = None  # callable(path) -> bool
    rocm_sources: object | None = None
    where: str = "[tool.rocmlint]"


@record(mutable=True)
class ProjectModel:
    root: str
    has_rocm_side: bool = False
    # Why the project builds for AMD only (it has a ROCm side and no build file names an NVIDIA
    # toolchain), or None: there code written for HIP means what HIP says.
    amd_only: str | None = None
    build_files: list[str] = field(default_factory=list)
    verdicts: dict[str, FileVerdict] = field(default_factory=dict)  # absolute path -> verdict
    # include component id per file, and the macro table of each component
    component_of: dict[str, int] = field(default_factory=dict)
    tables: dict[int, MacroTable] = field(default_factory=dict)
    shims: dict[str, list[Shim]] = field(default_factory=dict)  # intrinsic -> shims
    shim_users: dict[str, frozenset[str]] = field(default_factory=dict)  # shim file -> files that include it
    # HIP shim file -> how many CUDA runtime names it renames for HIP (rocmlint.cpp.cuda_api)
    runtime_shims: dict[str, int] = field(default_factory=dict)
    includers: dict[str, frozenset[str]] = field(default_factory=dict)  # file -> files that include it (as HIP reads them)
    vendored: dict[str, str] = field(default_factory=dict)  # vendored directory -> how it is known
    hipified: dict[str, str] = field(default_factory=dict)  # file -> why the ROCm build hipifies it
    tested: dict[str, frozenset[str]] = field(default_factory=dict)  # file -> macros its conditions test
    sources: object | None = None  # the ProjectSources the pass read (directives of every file)
    # The files the CUDA build reads (compiles or includes), in a project with both builds, read
    # on first use (`cuda_reach` walks them); None where there is no such walk (no ROCm side:
    # every file is NVIDIA's).
    cuda_reach: object | None = None
    _cuda_reached: frozenset[str] | None = None
    problems: list[str] = field(default_factory=list)
    files: object | None = None  # the ProjectFiles every file of the project is read through

    def read_text(self, path: str) -> str | None:
        """A file of the project as text, or None (rocmlint.files.tree.ProjectFiles.text)."""
        if self.files is None:
            from rocmlint.files.tree import ProjectFiles

            self.files = ProjectFiles(self.root)
        return self.files.text(path)

    # --- what the gates ask -----------------------------------------------------------------

    def verdict(self, path: str) -> FileVerdict:
        return self.verdicts.get(os.path.abspath(path), UNKNOWN_FILE)

    def file_gate(self, path: str) -> str | None:
        """Why the ROCm build never compiles this file, or None."""
        verdict = self.verdict(path)
        return verdict.reason if verdict.compiled_for in ("cuda", "none") else None

    def cuda_build_gate(self, path: str) -> str | None:
        """Why the project's CUDA build never compiles this file, or None (it may)."""
        if self.amd_only:
            return self.amd_only
        verdict = self.verdict(path)
        if verdict.compiled_for == "rocm":
            where = f": {verdict.origin}" if verdict.origin else ""
            return f"ROCm-only: the CUDA build never compiles it{where}"
        directory = vendored_directory(self, os.path.abspath(path))
        if directory is not None:
            return (f"vendored: {self.relative(directory)} is {self.vendored[directory]}; the project's own includes "
                    "of it where the CUDA build compiles them are what is reported")
        if self.cuda_reach is not None and self._cuda_reached is None:
            self._cuda_reached = self.cuda_reach()
        if self._cuda_reached is not None and os.path.abspath(path) not in self._cuda_reached:
            return ("ROCm-only: no file the CUDA build compiles includes it where nvcc reads it (the CUDA build compiles "
                    "the sources its build files name for it, none named for HIP)")
        return None

    def macros_for(self, path: str) -> MacroTable:
        component = self.component_of.get(os.path.abspath(path))
        return self.tables.get(component, NO_PROJECT) if component is not None else NO_PROJECT

    def gates_for(self, path: str):
        """The file's PreprocessorGates under its project macros, from the directives the project
        pass read (no second read of the file); None for a file the pass did not read."""
        path = os.path.abspath(path)
        sources = self.sources
        if sources is None or path not in sources.directives:
            return None
        from rocmlint.cpp.gates import PreprocessorGates

        return PreprocessorGates.from_directives(
            list(sources.directives[path]), sources.line_counts[path], set(sources.guards.get(path, ())), self.macros_for(path)
        )

    def nvidia_library_gate(self, path: str) -> str | None:
        """Why a hit in a vendored copy of an NVIDIA library (CUTLASS, CCCL/CUB/Thrust) is not
        reported: such a library is replaced as a whole, and the project's own includes of it
        are what the checks report (ROCM005, ROCM213)."""
        path = os.path.abspath(path)
        directory = vendored_directory(self, path)
        if directory is None:
            return None
        parts = os.path.relpath(path, self.root).replace(os.sep, "/").lower().split("/")
        library = next((p for p in parts[:-1] if p in _NVIDIA_LIBRARIES), None)
        if library is None:
            return None
        return (
            f"vendored NVIDIA library: {self.relative(directory)} ({library}) is replaced as a whole on ROCm; "
            "the project's own includes of it are reported"
        )

    def hipify_gate(self, path: str) -> str | None:
        """Why the ROCm build rewrites this file with hipify before compiling it, or None."""
        why = self.hipified.get(os.path.abspath(path))
        return f"hipified at build time: {why}" if why else None

    def shim_for(self, path: str, callee: str, dropping_mask: bool = True) -> Shim | None:
        """The HIP shim that redefines `callee` for the files that include it (one that drops
        the warp mask, unless `dropping_mask` is False), or None."""
        path = os.path.abspath(path)
        for shim in self.shims.get(callee, ()):
            if (shim.drops_mask or not dropping_mask) and path in self.shim_users.get(shim.path, ()):
                return shim
        return None

    def runtime_shim_for(self, path: str) -> str | None:
        """Why the file's CUDA runtime names are HIP's on AMD: a HIP shim header it includes
        renames them (`#define cudaMalloc hipMalloc`), or None."""
        path = os.path.abspath(path)
        for shim_file, count in sorted(self.runtime_shims.items()):
            users = self.shim_users.get(shim_file, ())
            # A header that only users of the shim include sees the names it defines.
            includers = self.includers.get(path, ())
            if path in users or (includers and all(i in users for i in includers)):
                return f"HIP shim: {self.relative(shim_file)} renames {count} CUDA runtime names for HIP"
        return None

    def relative(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")


def vendored_directory(model: ProjectModel, path: str) -> str | None:
    """The vendored directory a file sits in (a git submodule, a directory under third_party/
    and the like, or another project copied in), or None for the project's own code."""
    from rocmlint.files.tree import is_within

    directory, child = os.path.dirname(path), None
    while is_within(directory, model.root) and directory != model.root:
        if directory in model.vendored:
            return directory
        if os.path.basename(directory) in VENDOR_DIRECTORIES:
            named = child or directory
            model.vendored.setdefault(named, f"in {model.relative(directory)}/, a directory of third-party code")
            return named
        directory, child = os.path.dirname(directory), directory
    return None
