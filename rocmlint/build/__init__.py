"""Readers of build files: what each vendor's build compiles, read without running anything.

Each reader (`cmake`, `setup_py`, `makefile`) runs a build file once as the ROCm build and
once as the CUDA build (see `worlds`) and reports, per build, the source files it compiles,
the macros it defines and the include directories it adds, each with where the build file
says so. The project model (`rocmlint.project`) combines them; the build-file checks share
the same parsers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rocmlint.build.worlds import CUDA, ROCM, WORLDS

__all__ = ["BuildFacts", "Origin", "SOURCE_SUFFIXES", "ROCM", "CUDA", "WORLDS", "is_source_path"]

# Files a C/C++/CUDA/HIP build compiles or includes.
SOURCE_SUFFIXES = frozenset(
    {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cuinc"}
)


def is_source_path(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in SOURCE_SUFFIXES


@dataclass(frozen=True)
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


@dataclass
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
    nvidia_toolchain: str | None = None  # the first build file read that names an NVIDIA toolchain

    def compile(self, world: str, path: str, origin: Origin) -> None:
        self.compiled[world].setdefault(path, origin)

    def define(self, world: str, name: str, value: str | None, origin: Origin) -> None:
        self.defines[world].setdefault(name, (value, origin))

    def merge(self, other: "BuildFacts") -> None:
        for world in WORLDS:
            for path, origin in other.compiled[world].items():
                self.compiled[world].setdefault(path, origin)
            for name, entry in other.defines[world].items():
                self.defines[world].setdefault(name, entry)
        self.include_dirs |= other.include_dirs
        for path, why in other.hipified.items():
            self.hipified.setdefault(path, why)
        self.files_read.extend(f for f in other.files_read if f not in self.files_read)
        self.problems.extend(other.problems)
