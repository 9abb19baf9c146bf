"""Readers of build files: what each vendor's build compiles, read without running anything.

Each reader (`cmake`, `setup_py`, `makefile`) runs a build file once as the ROCm build and
once as the CUDA build (see `worlds`) and reports, per build, the source files it compiles,
the macros it defines and the include directories it adds, each with where the build file
says so. The project model (`rocmlint.project`) combines them; the build-file checks share
the same parsers.
"""

from __future__ import annotations

import os

from rocmlint.build.worlds import CUDA, ROCM, WORLDS
from rocmlint.platforms import names_cuda, names_rocm
from rocmlint.records import field, record

__all__ = ["BuildFacts", "Origin", "SOURCE_SUFFIXES", "ROCM", "CUDA", "WORLDS", "is_source_path"]

# Files a C/C++/CUDA/HIP build compiles or includes.
SOURCE_SUFFIXES = frozenset(
    {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cuinc"}
)


def is_source_path(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in SOURCE_SUFFIXES


@record
class Origin:
    """Where a build file names a source or a macro, and the condition it sits under."""

    file: str  # path of the build file, relative to the project root
    line: int
    condition: str | None = None  # the innermost condition, as written
    condition_line: int | None = None

    def describe(self) -> str:
        where = f"{self.file}:{self.line}"
        if self.condition:
            at = f", line {self.condition_line}" if self.condition_line and self.condition_line != self.line else ""
            return f"{where} (under `{self.condition}`{at})"
        return where


@record
class Item:
    """One string a build file's value may hold (a list element, a path), and where it was written."""

    text: str
    origin: Origin


@record(mutable=True)
class BuildFacts:
    """What the build files read so far say, per vendor build (ROCM / CUDA)."""

    # absolute source path -> where a build file has that build compile it
    compiled: dict[str, dict[str, Origin]] = field(default_factory=lambda: {w: {} for w in WORLDS})
    # macro name -> (value or None, where) for macros that build defines on the command line
    defines: dict[str, dict[str, tuple[str | None, Origin]]] = field(default_factory=lambda: {w: {} for w in WORLDS})
    include_dirs: set[str] = field(default_factory=set)  # absolute directories
    # absolute source path -> why the ROCm build rewrites it with hipify before compiling it
    hipified: dict[str, str] = field(default_factory=dict)
    files_read: list[str] = field(default_factory=list)  # absolute paths of the build files read
    problems: list[str] = field(default_factory=list)  # "file: why it could not be read"
    # Build files not read, or whose walk was cut short (rocmlint.build.budget), and the files
    # their walk reached: what they build is unknown, and no finding is gated on them.
    not_fully_read: list[str] = field(default_factory=list)
    nvidia_toolchain: str | None = None  # the first build file read that names an NVIDIA toolchain
    # Which build reaches each statement of a build file, and under which conditions (outermost
    # first): (absolute path, line) for CMake commands and Makefile lines, (absolute path, line,
    # column) for setup.py strings. The build-file checks gate a hit that only one build reaches.
    reached: dict[str, dict[tuple, tuple[tuple[str, int], ...]]] = field(default_factory=lambda: {w: {} for w in WORLDS})

    def reach(self, world: str, key: tuple, conditions) -> None:
        self.reached[world].setdefault(key, tuple(conditions))

    def gate(self, key: tuple) -> str | None:
        """Why only one build reaches a statement (None: both do, or neither was walked to it)."""
        rocm, cuda = self.reached[ROCM].get(key), self.reached[CUDA].get(key)
        if (rocm is None) == (cuda is None):
            return None
        only, conditions = ("CUDA", cuda) if rocm is None else ("ROCm", rocm)
        return f"{only} build only: {_describe_conditions(conditions, key)}"

    def compile(self, world: str, path: str, origin: Origin) -> None:
        self.compiled[world].setdefault(path, origin)

    def define(self, world: str, name: str, value: str | None, origin: Origin) -> None:
        self.defines[world].setdefault(name, (value, origin))

    def merge(self, other: "BuildFacts") -> None:
        for world in WORLDS:
            for key, conditions in other.reached[world].items():
                self.reached[world].setdefault(key, conditions)
            for path, origin in other.compiled[world].items():
                self.compiled[world].setdefault(path, origin)
            for name, entry in other.defines[world].items():
                self.defines[world].setdefault(name, entry)
        self.include_dirs |= other.include_dirs
        for path, why in other.hipified.items():
            self.hipified.setdefault(path, why)
        self.files_read.extend(f for f in other.files_read if f not in self.files_read)
        self.problems.extend(other.problems)
        self.not_fully_read.extend(f for f in other.not_fully_read if f not in self.not_fully_read)


def _describe_conditions(conditions: tuple[tuple[str, int], ...], key: tuple) -> str:
    """The condition that says which vendor: the outermost one that names a GPU stack, else the
    innermost one; a statement under none is reached only through how the build reads it."""
    if not conditions:
        return f"the other build never reaches line {key[1]}"
    named = [c for c in conditions if names_rocm(c[0]) or names_cuda(c[0])]
    text, line = named[0] if named else conditions[-1]
    return f"under `{text}` (line {line})"
