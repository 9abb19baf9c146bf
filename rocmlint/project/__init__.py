"""The project model: what the project's ROCm build actually compiles.

Dual-vendor projects keep CUDA-only code in files their ROCm build never compiles and say so
in their build files, not in the source. Before findings are reported, one pass over the
project reads its build files (`rocmlint.build`) and the directives of its C/C++ files
(`rocmlint.project.includes`) and answers, for each C/C++ file:

- which build compiles it: the ROCm build, the CUDA build, both, or unknown (`FileVerdict`).
  A file only the CUDA build compiles, or a header only such files include, is CUDA-only.
  Unknown means both: a file no build names is reported as before. A project whose build
  files never mention ROCm/HIP is a project being ported, and none of its files is CUDA-only.
- which project macros HIP-Clang never sees defined (PTX_AVAILABLE, defined only under
  `#if __CUDA_ARCH__ >= 530` in the NVIDIA branch of a header), which ones the project
  defines per GPU stack (`#define BNB_HIP 1` under `__HIP_PLATFORM_AMD__`), and which compiler
  macros a project header redefines for HIP (`#define __CUDA_ARCH__ 1300` in a HIP shim).
- which CUDA warp intrinsics a project HIP shim header redefines without their mask
  (`#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)`).

The model reads files and never runs anything. It is built once per project root, only for
projects that have findings in C/C++ files.
"""

from __future__ import annotations

import os
import re

from rocmlint.build import CUDA, ROCM, SOURCE_SUFFIXES, BuildFacts
from rocmlint.build.project_root import ROCM_TEXT, SKIPPED_FOLDERS, VENDOR_DIRECTORIES
from rocmlint.files.project_start import BUILD_FILE_NAMES
from rocmlint.build.budget import OutOfBudget, WorkBudget
from rocmlint.files.tree import PROJECT_FILE_LIMIT, ProjectFiles, note_tree
from rocmlint.project.model import (
    UNKNOWN_FILE,
    FileVerdict,
    Overrides,
    ProjectModel,
    vendored_directory,
)

_MAX_FILES = 200_000
# What only a build for NVIDIA GPUs names: nvcc and its options, NVIDIA targets, CMake's CUDA
# language and toolkit. A build with a ROCm side that names none of these builds for AMD only.
_NVIDIA_TOOLCHAIN = re.compile(
    r"(?<![\w-])(?i:nvcc)(?![\w-])|CUDA_ARCHITECTURES|-gencode|\bsm_\d+|\bcompute_\d+|TORCH_CUDA_ARCH_LIST|CUDAToolkit|"
    r"find_package\s*\(\s*CUDA\b|enable_language\s*\(\s*CUDA\b|LANGUAGES[^)\n]*\bCUDA\b|CUDA_HOME|cuda_home"
)
# --- building the model -----------------------------------------------------------------------


def _walk(root: str) -> tuple[list[str], list[str], list[str]]:
    """(build files, C/C++ files, Python files) under root, skipping VCS, virtual environments
    and build output."""
    build_files: list[str] = []
    sources: list[str] = []
    python_files: list[str] = []
    note_tree(root)
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIPPED_FOLDERS and not d.startswith(".") and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))
        )
        for name in sorted(filenames):
            if name in BUILD_FILE_NAMES:
                build_files.append(os.path.join(directory, name))
            elif os.path.splitext(name)[1].lower() in SOURCE_SUFFIXES:
                sources.append(os.path.join(directory, name))
            elif name.endswith(".py"):
                python_files.append(os.path.join(directory, name))
        if len(sources) > _MAX_FILES:
            break
    return build_files, sources, python_files


def _too_large(path: str, limit: int) -> str | None:
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    return f"{size} bytes is over the size limit of {limit} bytes (max-file-size)" if size > limit else None


def _without_hash_comments(text: str) -> str:
    return re.sub(r"(?m)#.*$", "", text)


def _read_build(
    root: str, build_files: list[str], problems: list[str], vendored=lambda path: False, files: ProjectFiles | None = None,
    budget: WorkBudget | None = None, size_limit: int = 0,
) -> tuple[BuildFacts, bool]:
    """Read the root's build and every other build file that has a ROCm side of its own.

    All of them spend from one `budget`. A build file whose walk was cut short (a cap, or the
    budget ran out: rocmlint.build.budget) or that is larger than `size_limit` bytes (the
    per-file pass's max-file-size; 0: none) says nothing: what it builds is unknown, it gates
    no finding, and `problems` says why. So do the files its walk reached."""
    from rocmlint.build.cmake import read_cmake
    from rocmlint.build.makefile import read_makefile
    from rocmlint.build.setup_py import read_setup_py

    facts = BuildFacts()
    texts: dict[str, str | None] = {}
    files = files or ProjectFiles(root)
    budget = budget if budget is not None else WorkBudget()
    limit = min(PROJECT_FILE_LIMIT, size_limit) if size_limit else PROJECT_FILE_LIMIT

    too_large: dict[str, str] = {}

    def text_of(path: str) -> str | None:
        if path not in texts:
            texts[path] = files.text(path, limit)
            why = _too_large(path, limit) if texts[path] is None else None
            if why:
                too_large[path] = why
        if path in too_large:
            # An included file over the limit: the walk that needs it is cut short.
            budget.limit(f"{os.path.relpath(path, root)} not read: {too_large[path]}")
        return texts[path]

    def read(path: str) -> None:
        name = os.path.basename(path)
        budget.take_limits()  # only what this file's walk meets counts for it
        text = text_of(path)
        if text is None:
            why = files.refused.get(path) or _too_large(path, limit)
            problems.append(f"{path}: not read: {why}" if why else f"{path}: cannot read")
            facts.not_fully_read.append(path)
            return
        part = BuildFacts()
        try:
            if name == "CMakeLists.txt":
                read_cmake(root, [path], text_of, part, budget)
            elif name == "setup.py":
                read_setup_py(path, root, text, part, budget)
            else:
                read_makefile(path, root, text, part, budget)
        except OutOfBudget as exc:
            problems.append(f"{path}: not fully read: {exc}; what it builds is unknown")
            facts.not_fully_read.extend([path, *part.files_read])
            return
        except (RecursionError, ValueError, UnicodeError) as exc:
            problems.append(f"{path}: not read: {type(exc).__name__}: {exc}")
            facts.not_fully_read.extend([path, *part.files_read])
            return
        limits = budget.take_limits()
        if limits or part.problems:
            why = "; ".join(limits) if limits else "; ".join(p.split(": ", 1)[-1] for p in part.problems)
            problems.append(f"{path}: not fully read: {why}; what it builds is unknown")
            facts.not_fully_read.extend([path, *part.files_read])
            return
        facts.merge(part)

    top = [p for p in build_files if os.path.dirname(p) == root]
    for path in top:
        read(path)
    # Build files the root's build never reaches, shallowest first: a sub-project with a ROCm
    # side of its own is read too; one without is a build being ported (its files stay unknown).
    for path in sorted(build_files, key=lambda p: (p.count(os.sep), p)):
        if path in facts.files_read or path in facts.not_fully_read or path in top or vendored(path):
            continue  # vendored code counts only where this project's own build reaches it
        text = text_of(path)
        if text and ROCM_TEXT.search(text):
            read(path)
    # Outside comments, as for the project's kind (rocmlint.build.project_root): a build file
    # whose only word of ROCm is a comment ("# TODO: ROCm") has no ROCm side.
    has_rocm_side = any(ROCM_TEXT.search(_without_hash_comments(text_of(p) or "")) for p in facts.files_read)
    facts.problems.extend(problems)
    facts.nvidia_toolchain = next(
        (p for p in facts.files_read if _NVIDIA_TOOLCHAIN.search(_without_hash_comments(text_of(p) or ""))), None
    )
    return facts, has_rocm_side


def _source_verdicts(model: ProjectModel, facts: BuildFacts, overrides: Overrides | None) -> None:
    rocm, cuda = facts.compiled[ROCM], facts.compiled[CUDA]
    for path in set(rocm) | set(cuda):
        if path in rocm and path in cuda:
            model.verdicts[path] = FileVerdict("both")
        elif path in rocm:
            model.verdicts[path] = FileVerdict("rocm", origin=f"{rocm[path].describe()} compiles it for the ROCm build")
        elif model.has_rocm_side:
            where = cuda[path].describe()
            model.verdicts[path] = FileVerdict(
                "cuda", f"CUDA-only: {where} compiles it for the CUDA build; the ROCm build never does", f"compiled by {where}"
            )
        else:
            model.verdicts[path] = FileVerdict("both")
    if overrides is not None:
        for path in list(model.verdicts):
            if overrides.rocm_sources and overrides.rocm_sources(path):
                model.verdicts[path] = FileVerdict("rocm")


def _submodules(root: str, files: ProjectFiles) -> list[str]:
    """Directories that .gitmodules declares as git submodules."""
    text = files.text(os.path.join(root, ".gitmodules")) or ""
    return [os.path.normpath(os.path.join(root, m.group(1).strip())) for m in re.finditer(r"^\s*path\s*=\s*(.+)$", text, re.M)]


def _library_directories(model: ProjectModel, facts: BuildFacts, sources: list[str]) -> None:
    """Another project copied into this one (a git submodule in a source archive, which keeps
    no .gitmodules): the highest directory below the root that the build uses only for an
    include directory inside it, that holds sources of its own elsewhere (tests, examples,
    tools), and none of whose sources the build compiles."""
    compiled = set(facts.compiled[ROCM]) | set(facts.compiled[CUDA])
    include_dirs = sorted(facts.include_dirs)
    for include_dir in include_dirs:
        parts = os.path.relpath(include_dir, model.root).split(os.sep)
        if any(part in VENDOR_DIRECTORIES for part in parts):
            continue  # known by its place already
        library = None
        candidate = os.path.dirname(include_dir)
        while candidate.startswith(model.root + os.sep) and os.path.basename(candidate) not in VENDOR_DIRECTORIES:
            prefix = candidate + os.sep
            inside = [p for p in sources if p.startswith(prefix)]
            if any(p in compiled for p in inside):
                break
            others = [p for p in inside if not any(p.startswith(d + os.sep) for d in include_dirs)]
            if others:
                library = candidate
            candidate = os.path.dirname(candidate)
        if library is not None and library not in model.vendored:
            model.vendored[library] = (
                f"another project's code, whose headers this build uses ({model.relative(include_dir)}/)"
            )


def build_model(
    root: str, overrides: Overrides | None = None, known: dict | None = None, build_file_size_limit: int = 0,
    budget: WorkBudget | None = None,
) -> ProjectModel:
    """Read a project's build files and C/C++ directives (see the module docstring). `known`:
    directives of files the scan has already read (absolute path -> FileDirectives).
    `build_file_size_limit`: a larger build file is not read (the per-file pass's
    max-file-size; 0: no limit but the project pass's own). `budget`: the work the build
    readers may do (rocmlint.build.budget; a new one of PROJECT_STEPS by default)."""
    root = os.path.abspath(root)
    model = ProjectModel(root)
    model.files = files = ProjectFiles(root)
    model.vendored = {path: "a git submodule" for path in _submodules(root, files)}
    build_files, sources, python_files = _walk(root)
    budget = budget if budget is not None else WorkBudget()
    facts, model.has_rocm_side = _read_build(
        root, build_files, model.problems, lambda path: vendored_directory(model, path) is not None, files, budget,
        build_file_size_limit,
    )
    if sources:
        from rocmlint.build.setup_py import read_extension_builders

        unread_setups = [
            p for p in build_files
            if os.path.basename(p) == "setup.py" and p not in facts.files_read and p not in facts.not_fully_read
        ]
        own_python = [p for p in python_files + unread_setups if vendored_directory(model, p) is None]
        try:
            read_extension_builders(root, own_python, sources, files.text, facts, budget, model.problems)
        except OutOfBudget as exc:
            model.problems.append(f"{root}: not fully read (the torch extension builders in it): {exc}; what they build is unknown")
    model.build_files = [model.relative(p) for p in facts.files_read]
    # A build file not fully read may name an NVIDIA toolchain: then nothing says AMD only.
    if model.has_rocm_side and facts.files_read and facts.nvidia_toolchain is None and not facts.not_fully_read:
        model.amd_only = (
            f"the project in {os.path.basename(root)}/ builds for AMD only: none of its {len(model.build_files)} build "
            "files names an NVIDIA toolchain (nvcc, sm_XX, the CUDA language)"
        )
    _library_directories(model, facts, sources)
    _source_verdicts(model, facts, overrides)
    if sources and python_files:
        from rocmlint.project.python_jit import jit_cuda_only

        own_python = [p for p in python_files if vendored_directory(model, p) is None]
        for path, why in jit_cuda_only(root, own_python, sources, files.text).items():
            if model.verdicts.get(path, UNKNOWN_FILE).compiled_for in ("unknown", "both") and path not in facts.compiled[ROCM]:
                model.verdicts[path] = FileVerdict("cuda", why, "compiled just in time for NVIDIA")
    from rocmlint.project.analysis import analyse_sources

    analyse_sources(model, facts, sources, overrides, known)
    return model
