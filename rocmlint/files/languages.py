"""Which language a file is, by its name. A file of no known language is never read."""

from __future__ import annotations

import fnmatch
import os

_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".cu": "cpp",
    ".cuh": "cpp",
    ".hip": "cpp",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".c": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".inl": "cpp",
    ".cmake": "cmake",
    ".mk": "make",
    ".sh": "shell",
    ".bash": "shell",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".dockerfile": "dockerfile",
    ".env": "dotenv",
}
_BY_NAME = {
    "CMakeLists.txt": "cmake",
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "Dockerfile": "dockerfile",
    "Containerfile": "dockerfile",
    "pyproject.toml": "pyproject",
    ".env": "dotenv",
    "uv.lock": "uvlock",
}
_BY_GLOB = (
    ("requirements*.txt", "requirements"),
    ("requirements*.in", "requirements"),
    ("constraints*.txt", "requirements"),
    ("Dockerfile.*", "dockerfile"),
    ("Dockerfile-*", "dockerfile"),
    ("Containerfile.*", "dockerfile"),
    ("*.Dockerfile", "dockerfile"),
    (".env.*", "dotenv"),
)
# Folders of requirements files named for what they are for (`requirements/cuda.txt`).
_REQUIREMENTS_DIRECTORIES = {"requirements", "reqs"}


def language_of(path: str) -> str | None:
    name = os.path.basename(path)
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name.endswith((".txt", ".in")) and os.path.basename(os.path.dirname(path)) in _REQUIREMENTS_DIRECTORIES:
        return "requirements"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    for pattern, language in _BY_GLOB:
        if fnmatch.fnmatchcase(name, pattern):
            return language
    return None
